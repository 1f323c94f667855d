"""Writing a compaction: ids the agent can resolve, archive first, backups never overwritten."""

from __future__ import annotations

import json

import orjson
import pytest

from core.compaction.refusals import CompactionRefused
from core.compaction.run import compact
from core.compaction.write import write_compaction
from core.io.problems import FormatError
from core.store.segments import load_segments
from core.transcript import load_transcript

from .build import STAMP, chain, entry, lines, user, write_file


def backups(folder):
    return sorted(p.name for p in folder.iterdir() if "memlens-backup" in p.name)


def test_refuses_a_leaf_without_an_id(tmp_path):
    objs = chain(8)
    objs.append(
        {"type": "message", "parentId": "00000008", "timestamp": STAMP, "message": user("last")}
    )
    p = tmp_path / "s.jsonl"
    before = write_file(p, lines(objs))
    s = load_transcript(p)
    run = compact(s, keep_recent_tokens=2000)
    assert run.entry is not None and s.by_id[run.entry["parentId"]].synthetic_id
    with pytest.raises(CompactionRefused, match=r"the leaf \(#9, line 10\) has no id in the file"):
        write_compaction(run, s, force=True)
    assert p.read_bytes() == before and backups(tmp_path) == []


def test_entries_on_a_run_together_line_are_out_of_the_compaction_as_pi(tmp_path):
    """pi drops a line of objects run together: memlens compacts what pi loads.

    The leaf is the last entry pi parses (its session manager opens there), so the
    compaction hangs under it; a plan never keeps or summarises an entry pi cannot
    see (tests/oracle/test_pi_oracle.py has pi read such a file).
    """
    raw = lines(chain(10))
    p = tmp_path / "s.jsonl"
    write_file(p, [*raw[:-2], raw[-2] + raw[-1]])  # the last two entries glued
    s = load_transcript(p)
    assert s.leaf is not None and s.leaf.id == "00000008"
    run = write_compaction(compact(s, keep_recent_tokens=1500), s, force=True)
    last = orjson.loads(p.read_bytes().splitlines()[-1])
    assert run.written and last["parentId"] == "00000008"
    # entries after a glued line restart the context, as pi's walk does
    raw = lines(chain(12))
    p2 = tmp_path / "t.jsonl"
    write_file(p2, [*raw[:8], raw[8] + raw[9], *raw[10:]])  # entries 8 and 9
    s = load_transcript(p2)
    run = compact(s, keep_recent_tokens=200)
    planned = [*run.plan.summarize, *run.plan.kept, *run.plan.turn_prefix]
    assert planned and {i.entry.id for i in planned} <= {"0000000a", "0000000b", "0000000c"}


def test_refuses_a_first_kept_entry_the_agent_cannot_see(tmp_path):
    raw = lines(chain(12))
    p = tmp_path / "t.jsonl"
    before = write_file(p, [*raw[:8], raw[8] + raw[9], *raw[10:]])
    s = load_transcript(p)
    run = compact(s, keep_recent_tokens=200)
    assert run.entry is not None
    # a plan made before memlens knew the line was damaged (or by hand)
    run.plan.first_kept_entry_id = "00000009"
    with pytest.raises(CompactionRefused, match=r"first kept entry .* run together"):
        write_compaction(run, s, force=True)
    assert p.read_bytes() == before and backups(tmp_path) == []


def test_a_sound_file_is_still_written(tmp_path):
    p = tmp_path / "s.jsonl"
    write_file(p, lines(chain(10)))
    s = load_transcript(p)
    assert not any(e.recovered or e.synthetic_id for e in s.entries)
    run = write_compaction(compact(s, keep_recent_tokens=1500), s, force=True)
    last = orjson.loads(p.read_bytes().splitlines()[-1])
    assert run.written and last["parentId"] == "0000000a" and last["type"] == "compaction"


def test_archive_is_written_before_the_compaction_entry(tmp_path):
    p = tmp_path / "s.jsonl"
    before = write_file(p, lines(chain(20)))
    store = tmp_path / "store"
    store.mkdir()
    (store / "segments.jsonl").mkdir()  # the archive cannot be written
    s = load_transcript(p)
    run = compact(s, keep_recent_tokens=3000)
    assert run.segments
    with pytest.raises(FormatError, match=r"segments\.jsonl: (cannot read|not a regular file)"):
        write_compaction(run, s, store_dir=store, force=True)
    assert p.read_bytes() == before  # no compaction without its archive
    assert backups(tmp_path) == []
    (store / "segments.jsonl").rmdir()
    run = write_compaction(run, s, store_dir=store, force=True)
    assert run.written and run.segments_appended == len(run.segments)
    assert len(load_segments(store / "segments.jsonl", eviction_days=0).segments) == len(
        run.segments
    )


def test_two_writes_in_one_second_keep_both_backups(tmp_path):
    p = tmp_path / "s.jsonl"
    original = write_file(p, lines(chain(20)))
    seen = []
    for n in range(2):
        s = load_transcript(p)
        run = write_compaction(compact(s, keep_recent_tokens=3000), s, force=True)
        seen.append(run.backup)
        with open(p, "a") as fh:  # the agent goes on
            fh.write(json.dumps(entry(100 + n, run.entry["id"], user("more " * 2000))) + "\n")
    assert seen[0] != seen[1] and len(backups(tmp_path)) == 2
    assert seen[0].read_bytes() == original


def test_make_backup_never_overwrites(tmp_path):
    from core.io.fsutil import make_backup

    p = tmp_path / "f.json"
    made = []
    for n in range(3):
        p.write_bytes(b"v%d" % n)
        made.append(make_backup(p))
    assert len(set(made)) == 3
    assert [b.read_bytes() for b in made] == [b"v0", b"v1", b"v2"]
    # a name taken by something else is skipped, not replaced
    taken = made[0].with_name(made[0].name + ".7")
    taken.write_bytes(b"not ours")
    assert make_backup(p).read_bytes() == b"v2" and taken.read_bytes() == b"not ours"


class _Down:
    """A summariser whose every call fails, as a model that is down."""

    name = "openai:http://127.0.0.1:9/v1:m"
    endpoint = "http://127.0.0.1:9/v1"

    def summarize(self, messages, **kw):
        raise RuntimeError("model unavailable")

    summarize_turn_prefix = summarize

    def merge(self, summaries, **kw):
        raise RuntimeError("model unavailable")


def test_a_failed_summary_is_refused_before_the_backup(tmp_path):
    from core.compaction.call_log import FALLBACK_PREFIX
    from core.compaction.run import SummaryFailed

    p = tmp_path / "s.jsonl"
    before = write_file(p, lines(chain(20)))
    s = load_transcript(p)
    run = compact(s, summarizer=_Down(), keep_recent_tokens=3000)
    assert run.summary.degraded and run.summary.fallback == 2  # the agent's ladder, walked
    assert "Summary unavailable due to size limits." in run.summary.summary
    assert run.entry["summary"].startswith(FALLBACK_PREFIX)
    with pytest.raises(
        SummaryFailed,
        match=r"call 1 of \d+ \(summarising chunk 1 of 1\) to "
        r"openai:http://127\.0\.0\.1:9/v1:m failed: model unavailable",
    ):
        write_compaction(run, s, force=True)
    assert p.read_bytes() == before and backups(tmp_path) == []
    write_compaction(run, s, force=True, allow_fallback=True)
    added = p.read_bytes()[len(before) :]
    assert orjson.loads(added)["summary"].splitlines()[0].startswith(FALLBACK_PREFIX)
    assert len(backups(tmp_path)) == 1
