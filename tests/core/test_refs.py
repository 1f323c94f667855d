"""memlens:// references (issue 17, item 13): format, parse, resolve, search, ``memlens open``."""

from __future__ import annotations

import json

import pytest

from core.cli.main import run_cli
from core.dataset.load import load_dataset
from core.refs.reference import BadReference, Reference, format_reference, parse_reference
from core.refs.resolve import MissingTarget, reference_to, resolve, same_path, session_key
from core.refs.search import rank_items, search_items, search_source, session_items


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from core.demo.build import write_demo

    root = write_demo(tmp_path_factory.mktemp("refs") / "home with space", segments=60).root
    return root, load_dataset(root)


@pytest.mark.parametrize(
    "ref",
    [
        Reference("/data/home"),
        Reference("/data/home", "s-1"),
        Reference("/data/my home/ü&x=y?#", "s 1/2", entry="#42"),
        Reference("/data/home", "/data/home/agents/a/s.jsonl", entry="e&1"),
        Reference("/data/home", fact="f+1%"),
        Reference("/data/home", "s-1", segment="seg=2"),
        Reference("/data/db.sqlite", "/data/db.sqlite#abc", entry="x"),
    ],
)
def test_a_reference_round_trips(ref):
    text = format_reference(ref)
    assert text.startswith("memlens://open?path=/data/")
    assert " " not in text and "+" not in text.split("?", 1)[1].replace("%2B", "")
    assert parse_reference(text) == ref
    assert str(parse_reference(f"  {text}\n")) == text


def test_parameters_in_any_order_and_unknown_ones_are_read():
    ref = parse_reference("memlens://open?entry=e1&future=1&session=s&path=%2Fd%20x")
    assert ref == Reference("/d x", "s", entry="e1") and ref.kind == "entry"
    assert Reference("/d", fact="f").kind == "fact" and Reference("/d").kind == "place"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("https://open?path=/d", "must start with memlens://"),
        ("memlens://view?path=/d", "unknown reference host 'view'"),
        ("memlens://open?session=s", "no path"),
        ("memlens://open?path=relative/dir", "is not absolute"),
        ("memlens://open?path=/d&entry=e", "without a session"),
        ("memlens://open?path=/d&fact=f&segment=s", "fact and segment together"),
        ("memlens://open?path=/d&path=/e", "'path' is given twice"),
    ],
)
def test_a_malformed_reference_says_what_is_wrong(text, says):
    with pytest.raises(BadReference, match=says):
        parse_reference(text)


def test_resolve_names_each_kind_of_place(demo):
    root, data = demo
    session = data.sessions[0]
    entry = session.messages()[3]
    place = resolve(data, reference_to(str(root), data, session.path, entry=entry.id))
    assert (place.session_path, place.entry_id, place.entry_index) == (
        session.path,
        entry.id,
        entry.index,
    )
    assert place.preview and place.preview[:20] in " ".join(entry.message.text().split())
    by_index = resolve(data, Reference(str(root), session.id, entry=f"#{entry.index}"))
    assert by_index.entry_id == entry.id
    fact = next(iter(data.knowledge.facts.values()))
    assert resolve(data, Reference(str(root), fact=fact.id[:8])).fact_id == fact.id
    seg = data.segments.segments[5]
    place = resolve(data, Reference(str(root), segment=seg.id))
    assert (place.segment_id, place.session_id) == (seg.id, seg.session_id)
    assert resolve(data, Reference(str(root), session.id)).session_path == session.path


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ({"session": "nope"}, "session 'nope' is not in"),
        ({"entry": "nope"}, "entry 'nope' is not in session"),
        ({"entry": "#99999"}, "no object #99999"),
        ({"fact": "nope"}, "fact 'nope' is not in"),
        ({"segment": "nope"}, "segment 'nope' is not in"),
    ],
)
def test_resolve_names_what_is_missing(demo, target, says):
    root, data = demo
    session = target.pop("session", data.sessions[0].id)
    with pytest.raises(MissingTarget, match=says):
        resolve(data, Reference(str(root), session if "entry" in target or not target else None,
                                **target))  # fmt: skip


def test_a_session_is_named_by_its_id_unless_another_shares_it(demo):
    _root, data = demo
    s = data.summaries[0]
    assert session_key(data, s.path) == s.id
    twin = type(s)(**{**{f: getattr(s, f) for f in s.__dataclass_fields__}, "path": "/x.jsonl"})
    data.summaries.append(twin)
    try:
        assert session_key(data, s.path) == s.path
    finally:
        data.summaries.remove(twin)
    assert same_path(str(data.discovery.path) + "/", str(data.discovery.path))


def test_search_finds_sessions_entries_facts_and_segments(demo):
    root, data = demo
    items = search_items(search_source(str(root), data))
    kinds = {i.kind for i in items}
    assert kinds == {"session", "entry", "fact", "segment"}
    assert items[: len(data.summaries)] == session_items(search_source(str(root), data))
    # every item's reference resolves to its place
    for item in items[:: max(1, len(items) // 40)]:
        assert resolve(data, item.reference).reference == item.reference
    s = data.sessions[1]
    assert rank_items(items, s.id[:8])[0].reference.session == s.id
    fact = next(f for f in data.knowledge.facts.values() if f.status == "active")
    words = " ".join(fact.content.split()[:3]).upper()
    assert any(i.reference.fact == fact.id for i in rank_items(items, words)[:10])
    entry = next(e for e in s.messages() if len(e.message.text()) > 40)
    phrase = " ".join(entry.message.text().split()[:6])
    assert any(i.reference.entry == entry.id for i in rank_items(items, phrase))
    assert rank_items(items, "") == items[:200]
    assert rank_items(items, "zzqqxx-no-such-thing") == []


def test_a_one_word_query_falls_back_to_letters_in_order():
    items = session_items(search_source("/d", _Data()))
    assert [i.title for i in rank_items(items, "cmpctn")] == ["compaction run — s2"]


class _Data:
    """The least a search source needs: two sessions, nothing else."""

    def __init__(self):
        from core.dataset.load import SessionSummary

        def summary(sid, name):
            return SessionSummary("main", sid, f"/d/{sid}.jsonl", 3, 1, 1, 0, {}, 1, None, 1, 1,
                                  0.0, 1, name=name)  # fmt: skip

        self.summaries = [summary("s1", "first try"), summary("s2", "compaction run")]
        self.sessions, self.knowledge, self.segments = [], None, None


def test_memlens_open_print_resolves_and_prints(demo, capsys):
    root, data = demo
    session = data.sessions[0]
    entry = session.messages()[2]
    ref = format_reference(reference_to(str(root), data, session.path, entry=entry.id))
    assert run_cli(["open", "--print", ref]) == 0
    out = capsys.readouterr().out
    assert ref in out and f"entry #{entry.index}" in out and session.path in out
    assert run_cli(["open", "--no-gui", "--json", ref]) == 0
    found = json.loads(capsys.readouterr().out)
    assert (found["kind"], found["entry"], found["session_path"]) == ("entry", entry.id,
                                                                        session.path)  # fmt: skip


@pytest.mark.parametrize(
    ("suffix", "says"),
    [
        ("&fact=nope", "fact 'nope' is not in"),
        ("&session=nope", "session 'nope' is not in"),
        ("&segment=nope", "segment 'nope' is not in"),
    ],
)
def test_memlens_open_exits_2_naming_what_is_missing(demo, capsys, suffix, says):
    root, _data = demo
    ref = format_reference(Reference(str(root))) + suffix
    assert run_cli(["open", "--print", ref]) == 2
    err = capsys.readouterr().err
    assert says in err and str(root) in err


def test_memlens_open_exits_2_on_a_bad_reference_or_path(tmp_path, capsys):
    assert run_cli(["open", "--print", "memlens://open?session=x"]) == 2
    assert "no path" in capsys.readouterr().err
    gone = tmp_path / "gone"
    assert run_cli(["open", "--print", format_reference(Reference(str(gone)))]) == 2
    assert f"{gone}: no such file or folder" in capsys.readouterr().err


def test_memlens_open_starts_the_app_through_the_registered_opener(demo, capsys):
    from core.cli import open as cli_open

    root, _data = demo
    ref = format_reference(Reference(str(root), fact=next(iter(_data.knowledge.facts))))
    opened = []
    saved = list(cli_open._opener)
    cli_open.set_gui_opener(lambda text: opened.append(text) or 0)
    try:
        assert run_cli(["open", ref]) == 0
    finally:
        cli_open._opener[:] = saved
    assert opened == [ref] and ref in capsys.readouterr().out
