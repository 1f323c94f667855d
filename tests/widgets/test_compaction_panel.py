from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import orjson
import pytest
from PySide6.QtCore import Qt

from core.compaction.plan import plan_compaction
from core.compaction.prompts import REQUIRED_HEADINGS
from core.compaction.provider import OFFLINE, ProviderChoice
from core.compaction.run import plan_json
from core.compaction.target import target_for, target_from_dataset
from core.dataset.load import load_dataset
from core.transcript.loader import load_transcript
from tests.demo_copy import demo_copy
from tests.llm_server import Reply
from widgets.compaction.panel import CompactionPanel

NOW = 1_760_000_000_000
DEMO_SESSION = "128b2f33"  # 1,656 entries, 3 compactions: a previous summary to compare with
OLD = time.time() - 3600


class Recorder:
    """A confirm callback that records what it was shown."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.calls: list[list] = []

    def __call__(self, writes):  # type: ignore[no-untyped-def]
        self.calls.append(list(writes))
        return self.answer


def _age(path: Path) -> None:
    os.utime(path, (OLD, OLD))  # not modified "in the last few seconds"


@pytest.fixture
def fixture_copy(tmp_path, fixtures_dir):
    dest = tmp_path / "before-compaction.jsonl"
    shutil.copyfile(fixtures_dir / "before-compaction.jsonl", dest)
    _age(dest)
    return dest


@pytest.fixture
def demo(tmp_path):
    home = tmp_path / "home"
    demo_copy(home, now_ms=NOW, segments=300)
    data = load_dataset(home)
    session = data.session(DEMO_SESSION)
    _age(Path(session.path))
    return data, session


def _snapshot(*paths: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() if p.exists() else b"" for p in paths}


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".memlens-backup-*"))


def _panel(qtbot, confirm=None) -> CompactionPanel:  # type: ignore[no-untyped-def]
    panel = CompactionPanel(confirm=confirm)
    qtbot.addWidget(panel)
    panel.resize(1200, 900)
    return panel


def _planned(qtbot, panel, target):  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(panel.cut_point_changed, timeout=10_000) as blocker:
        panel.set_target(target)
    return blocker.args[0]


def _run(qtbot, panel):  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(panel.summary_ready, timeout=20_000) as blocker:
        panel.run()
    return blocker.args[0]


def _demo_files(data, session):  # type: ignore[no-untyped-def]
    store = data.discovery.memory_context
    return Path(session.path), store / "segments.jsonl", store / "knowledge.jsonl"


# -- plan ---------------------------------------------------------------------------------------


def test_plan_shown_matches_core_plan(qtbot, fixture_copy):
    session = load_transcript(fixture_copy)
    target = target_for(session)
    panel = _panel(qtbot)
    cut = _planned(qtbot, panel, target)
    core = plan_compaction(session, **target.settings.kwargs())
    assert plan_json(panel.plan()) == plan_json(core)
    assert cut == core.first_kept_entry_id == "109b7c2b"
    assert panel.figures["before"].text() == f"{core.tokens_before:,}"
    assert panel.figures["summarised"].text() == f"~{core.tokens_summarized:,}"
    assert panel.figures["kept"].text() == f"~{core.tokens_kept:,}"
    assert panel.figures["after"].text() == f"~{core.expected_tokens_after():,}"
    assert panel.figures["calls"].text() == str(core.calls)
    assert panel.figures["chunks"].text().startswith(f"{len(core.chunks)} ")
    rows = {panel.plan_model.record(r).fate: panel.plan_model.record(r) for r in range(4)}
    # OpenClaw's safeguard prunes only when what stays exceeds window x share x 1.2
    assert rows["dropped"].messages == len(core.history_dropped) == 0
    assert rows["summarised"].messages == len(core.summarize)
    assert rows["turn prefix"].messages == len(core.turn_prefix) == 7
    assert rows["kept"].messages == len(core.kept) == 55
    assert rows["kept"].tokens == core.tokens_kept
    assert sum(r.calls for r in rows.values()) == core.calls
    assert panel.plan_model.index(3, 1).data() == "55"
    assert "109b7c2b" in panel.cut_label.text() and "#947" in panel.cut_label.text()
    assert "split" in panel.cut_label.text()
    assert panel.run_button.isEnabled() and not panel.write_button.isEnabled()
    with qtbot.waitSignal(panel.cut_point_changed) as again:
        panel.show_cut_button.click()
    assert again.args == ["109b7c2b"]


def test_plan_with_nothing_to_summarise(qtbot, demo):
    data, _ = demo
    short = data.session("4079021e")
    panel = _panel(qtbot)
    assert _planned(qtbot, panel, target_from_dataset(data, short)) == ""
    assert "nothing to summarise" in panel.plan_title.text().lower()
    assert not panel.run_button.isEnabled()
    assert panel.plan_model.rowCount() == 0


# -- run, summary, comparison -------------------------------------------------------------------


def test_offline_run_shows_sections_and_diff(qtbot, fixture_copy):
    session = load_transcript(fixture_copy)
    panel = _panel(qtbot)
    _planned(qtbot, panel, target_for(session))
    result = _run(qtbot, panel)
    text = result.summary.summary
    assert result.summary.provider == "offline"
    shown = panel.summary_text()
    for heading in REQUIRED_HEADINGS:
        assert heading in text
        assert heading[3:] in shown  # rendered as a heading, without the marks
    titles = [panel.sections_model.record(r).title for r in range(panel.sections_model.rowCount())]
    assert [h[3:] for h in REQUIRED_HEADINGS] == [
        t for t in titles if t in {h[3:] for h in REQUIRED_HEADINGS}
    ][:5]
    assert "all required headings present" in panel.summary_header.text()
    assert "Offline summary" in panel.summary_header.text()
    # side by side: the previous compaction's summary left, the new one right
    previous = panel.plan().previous_summary
    assert previous
    left, right = panel.diff_view.left.toPlainText(), panel.diff_view.right.toPlainText()
    for line in previous.splitlines()[:12]:
        assert line in left
    for line in text.splitlines()[:12]:
        assert line in right
    rows = panel.diff_view.rows()
    assert "\n".join(r.left for r in rows if r.left is not None) == "\n".join(previous.splitlines())
    assert "\n".join(r.right for r in rows if r.right is not None) == "\n".join(text.splitlines())
    assert len(left.splitlines()) == len(right.splitlines()) == len(rows)  # aligned rows
    assert "added" in panel.diff_view.stats_label.text()
    # nothing is written by a run
    assert panel.write_button.isEnabled() and panel.discard_button.isEnabled()
    assert "(" in panel.tabs.tabText(2)


def test_section_click_scrolls_to_it(qtbot, fixture_copy):
    panel = _panel(qtbot)
    panel.show()
    _planned(qtbot, panel, target_for(load_transcript(fixture_copy)))
    _run(qtbot, panel)
    last = panel.sections_model.rowCount() - 1
    panel.summary_view.verticalScrollBar().setValue(0)
    panel.sections_table.clicked.emit(panel.sections_model.index(last, 0))
    assert panel.summary_view.verticalScrollBar().value() > 0


def test_html_in_summary_is_escaped(qtbot, demo):
    data, session = demo
    panel = _panel(qtbot)
    _planned(qtbot, panel, target_from_dataset(data, session))
    result = _run(qtbot, panel)
    # the file lists are <read-files>/<modified-files> tags: shown as text, not swallowed
    if result.plan.modified_files:
        assert "<modified-files>" in panel.summary_text()
        assert "<modified-files>" in panel.diff_view.right.toPlainText()


# -- write ----------------------------------------------------------------------------------------


def test_write_appends_one_compaction_as_new_leaf(qtbot, demo):
    data, session = demo
    transcript, segments, knowledge = _demo_files(data, session)
    before = _snapshot(transcript, segments, knowledge)
    confirm = Recorder(True)
    panel = _panel(qtbot, confirm)
    _planned(qtbot, panel, target_from_dataset(data, session))
    result = _run(qtbot, panel)
    assert result.facts, "the demo session should propose facts"
    assert _snapshot(transcript, segments, knowledge) == before  # the run wrote nothing
    with (
        qtbot.waitSignal(panel.written, timeout=10_000) as done,
        qtbot.waitSignal(panel.facts_proposed, timeout=10_000) as facts,
    ):
        panel.write()
    run = done.args[0]
    assert run.written and run is result
    after = transcript.read_bytes()
    assert after.startswith(before[transcript])
    added = after[len(before[transcript]) :]
    assert added.endswith(b"\n") and added.count(b"\n") == 1
    entry = orjson.loads(added)
    assert entry["type"] == "compaction"
    assert entry["parentId"] == session.leaf.id
    assert entry["id"] not in session.by_id
    assert entry["firstKeptEntryId"] == panel.plan().first_kept_entry_id
    assert entry["summary"] == result.summary.summary
    reloaded = load_transcript(transcript)
    assert reloaded.leaf.id == entry["id"] and reloaded.leaf.type == "compaction"
    # backup of the transcript as it was
    backups = _backups(transcript)
    assert backups == [run.backup]
    assert backups[0].read_bytes() == before[transcript]
    # the archive: exactly the planned segment lines; facts only proposed
    seg_after = segments.read_bytes()
    assert seg_after.startswith(before[segments])
    new_lines = seg_after[len(before[segments]) :].decode().splitlines()
    assert len(new_lines) == run.segments_appended > 0
    assert knowledge.read_bytes() == before[knowledge]
    assert facts.args[0] == result.facts
    # each proposal's provenance travels with it, for the facts the queue accepts
    assert facts.args[1] == result.fact_sources and facts.args[1]
    # what confirm was shown is what was written
    (writes,) = confirm.calls
    by_action = {(w.action, Path(w.path).name): w for w in writes}
    assert by_action[("append", transcript.name)].lines == (added.decode().rstrip("\n"),)
    assert list(by_action[("append", "segments.jsonl")].lines) == new_lines
    assert any(w.action == "backup" for w in writes)
    assert not any(Path(w.path).name == "knowledge.jsonl" for w in writes)
    # after the write: nothing more to write or discard
    assert not panel.write_button.isEnabled() and not panel.discard_button.isEnabled()
    assert not panel.run_button.isEnabled()  # the session changed: reload before another run
    assert entry["id"] in panel.message_label.text()
    # the app reloads the session: its leaf is now the compaction, nothing more to do
    assert _planned(qtbot, panel, target_from_dataset(data, reloaded)) == ""
    assert "already a compaction" in panel.plan_title.text()
    assert not panel.run_button.isEnabled()


def test_confirm_false_writes_nothing(qtbot, demo):
    data, session = demo
    files = _demo_files(data, session)
    before = _snapshot(*files)
    confirm = Recorder(False)
    panel = _panel(qtbot, confirm)
    _planned(qtbot, panel, target_from_dataset(data, session))
    _run(qtbot, panel)
    panel.write()
    qtbot.waitUntil(lambda: len(confirm.calls) == 1 and not panel.is_busy(), timeout=10_000)
    assert _snapshot(*files) == before
    assert _backups(files[0]) == []
    assert "not confirmed" in panel.state_label.text()
    assert panel.write_button.isEnabled()  # the user may still write it


def test_discard_writes_nothing(qtbot, demo):
    data, session = demo
    files = _demo_files(data, session)
    before = _snapshot(*files)
    confirm = Recorder(True)
    panel = _panel(qtbot, confirm)
    _planned(qtbot, panel, target_from_dataset(data, session))
    _run(qtbot, panel)
    with qtbot.waitSignal(panel.discarded):
        panel.discard_button.click()
    assert panel.result() is None
    assert panel.summary_text() == ""
    assert panel.segments_model.rowCount() == 0 and panel.facts_model.rowCount() == 0
    assert not panel.write_button.isEnabled()
    panel.write()  # nothing left to write
    assert confirm.calls == []
    assert _snapshot(*files) == before and _backups(files[0]) == []
    assert "nothing was written" in panel.state_label.text().lower()


def test_v1_transcript_write_is_refused(qtbot, fixture_copy):
    before = fixture_copy.read_bytes()
    confirm = Recorder(True)
    panel = _panel(qtbot, confirm)
    _planned(qtbot, panel, target_for(load_transcript(fixture_copy)))
    _run(qtbot, panel)
    panel.write()  # the refusals read files: decided in the prepare job
    qtbot.waitUntil(lambda: "v1 transcript" in panel.message_label.text(), timeout=10_000)
    assert panel.message_label.isVisibleTo(panel)
    assert confirm.calls == [] and fixture_copy.read_bytes() == before
    assert _backups(fixture_copy) == []


def test_recently_modified_refused_until_forced(qtbot, demo):
    data, session = demo
    transcript = Path(session.path)
    os.utime(transcript)  # "the agent just wrote"
    before = transcript.read_bytes()
    confirm = Recorder(True)
    panel = _panel(qtbot, confirm)
    _planned(qtbot, panel, target_from_dataset(data, session))
    _run(qtbot, panel)
    panel.write()
    qtbot.waitUntil(lambda: "mid-turn" in panel.message_label.text(), timeout=10_000)
    assert "Write even if" in panel.message_label.text()
    assert confirm.calls == [] and transcript.read_bytes() == before
    panel.force_check.setChecked(True)
    with qtbot.waitSignal(panel.written, timeout=10_000):
        panel.write()
    assert transcript.read_bytes().startswith(before)
    assert transcript.read_bytes().count(b"\n") == before.count(b"\n") + 1


def test_no_confirm_no_write(qtbot, demo):
    data, session = demo
    before = Path(session.path).read_bytes()
    panel = _panel(qtbot)
    _planned(qtbot, panel, target_from_dataset(data, session))
    _run(qtbot, panel)
    panel.write()
    assert "no confirmation" in panel.message_label.text()
    assert Path(session.path).read_bytes() == before


# -- providers, cancel ----------------------------------------------------------------------------


def test_providers_offline_first_and_key_status(qtbot, monkeypatch):
    secret = "sk-test-0123456789abcdef0123456789"
    monkeypatch.setenv("MEMLENS_TEST_KEY", secret)
    monkeypatch.delenv("MEMLENS_MISSING_KEY", raising=False)
    panel = _panel(qtbot)
    panel.set_providers(
        [
            ProviderChoice("Claude", "anthropic:claude-sonnet-4-5", "MEMLENS_TEST_KEY"),
            ProviderChoice("Local", "openai:http://127.0.0.1:9/v1:llama3.1:8b"),
            ProviderChoice(
                "OpenAI", "openai:https://api.openai.com/v1:gpt-4o", "MEMLENS_MISSING_KEY"
            ),
            ProviderChoice("Broken", "gemini:foo"),
        ]
    )
    combo = panel.provider_combo
    assert [combo.itemText(i) for i in range(combo.count())] == [
        OFFLINE.label,
        "Claude",
        "Local",
        "OpenAI",
        "Broken",
    ]
    assert panel.provider() == OFFLINE and combo.currentIndex() == 0
    panel.set_provider(1)
    assert "$MEMLENS_TEST_KEY is set" in panel.key_label.text()
    assert secret not in panel.key_label.text()
    panel.set_provider(2)
    assert "no API key" in panel.key_label.text()
    panel.set_provider(3)
    assert "$MEMLENS_MISSING_KEY is not set" in panel.key_label.text()
    panel.set_provider(4)
    assert "unknown LLM spec" in panel.key_label.text()
    assert not panel.run_button.isEnabled()
    # a new list keeps the selection when it is still offered
    panel.set_provider(1)
    panel.set_providers([ProviderChoice("Claude again", "anthropic:claude-sonnet-4-5", "X")])
    assert panel.provider().label == "Claude again"


def _model_replies(calls: int, facts: str = '{"facts": []}', finish: str = "stop") -> list[Reply]:
    """A summary for each of *calls* summary calls, then the knowledge extraction's answer."""
    body = "\n\n".join(f"{h}\n- from the model" for h in REQUIRED_HEADINGS)
    summary = Reply(200, {"choices": [{"message": {"content": body}, "finish_reason": "stop"}]})
    extraction = {"choices": [{"message": {"content": facts}, "finish_reason": finish}]}
    return [summary] * calls + [Reply(200, extraction)]


def test_llm_provider_summarises(qtbot, demo, server):
    data, session = demo
    panel = _panel(qtbot)
    panel.set_providers([ProviderChoice("Local", f"openai:{server.url}/v1:test-model")])
    panel.set_provider(1)
    _planned(qtbot, panel, target_from_dataset(data, session))
    server.add(*_model_replies(panel.plan().calls))
    result = _run(qtbot, panel)
    assert result.summary.provider.startswith("openai:") and result.summary.fallback == 0
    assert "- from the model" in panel.summary_text()
    assert "Summary by openai:" in panel.summary_header.text()
    assert len(server.seen) == panel.plan().calls + 1  # summary calls + knowledge extraction
    assert all(s.path == "/v1/chat/completions" for s in server.seen)


def test_cancel_stops_a_slow_llm_at_once(qtbot, demo, server):
    data, session = demo
    files = _demo_files(data, session)
    before = _snapshot(*files)
    answer = {"choices": [{"message": {"content": "late"}, "finish_reason": "stop"}]}
    server.add(Reply(200, answer, delay=8.0))
    panel = _panel(qtbot, Recorder(True))
    _shown_and_planned(qtbot, panel, demo, ("Slow", f"openai:{server.url}/v1:slow-model"))
    panel.run_button.setFocus()
    qtbot.keyClick(panel.run_button, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert panel.is_busy() and panel.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: len(server.seen) == 1, timeout=5_000)  # the request is in flight
    assert panel.progress.isVisible()
    qtbot.keyClick(panel.run_button, Qt.Key.Key_Escape)
    # well before the server answers (8 s)
    qtbot.waitUntil(lambda: not panel.is_busy(), timeout=3_000)
    assert "Cancelled" in panel.state_label.text()
    assert panel.result() is None and not panel.write_button.isEnabled()
    assert panel.run_button.isEnabled()  # ready to run again
    assert _snapshot(*files) == before
    assert len(server.seen) == 1  # no retry, no further call after the cancel


# -- a failed summary (issue 13) ------------------------------------------------------------------


def _shown_and_planned(qtbot, panel, demo, provider):  # type: ignore[no-untyped-def]
    """*panel* on screen with the one *provider* ``(label, spec)`` chosen, the demo planned."""
    data, session = demo
    panel.set_providers([ProviderChoice(*provider)])
    panel.set_provider(1)
    panel.show()
    qtbot.waitExposed(panel)
    _planned(qtbot, panel, target_from_dataset(data, session))


def _fail_then(server, *replies):  # type: ignore[no-untyped-def]
    server.replies.clear()
    server.add(*replies)


def _failed_run(qtbot, panel):  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(panel.summary_failed, timeout=30_000) as blocker:
        panel.run_button.setFocus()
        qtbot.keyClick(panel.run_button, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    return blocker.args[0]


def test_a_failed_summary_shows_why_and_write_is_disabled_until_retry(qtbot, demo, server):
    data, session = demo
    files = _demo_files(data, session)
    before = _snapshot(*files)
    denied = Reply(401, {"error": {"message": "invalid api key"}})
    _fail_then(server, *[denied] * 30)
    confirm = Recorder(True)
    panel = _panel(qtbot, confirm)
    _shown_and_planned(qtbot, panel, demo, ("Local", f"openai:{server.url}/v1:test-model"))
    with qtbot.waitSignal(panel.failed, timeout=30_000) as failed:
        result = _failed_run(qtbot, panel)
    failure = result.failure
    assert failure is not None and failure.kind == "auth" and failure.index == 1
    # which call, against which endpoint, and why; with the attempt log
    assert panel.failure_box.isVisible()
    shown = panel.failure_label.text()
    assert "summarising chunk 1 of 1" in shown and f"{server.url}/v1" in shown
    assert "HTTP 401" in shown and "invalid api key" in shown
    assert "HTTP 401" in failed.args[0] and "nothing was written" in panel.message_label.text()
    model = panel.calls_model
    assert model.rowCount() == len(result.call_log) >= 2
    assert model.index(0, 2).data() == "failed: auth (HTTP 401)"
    assert model.index(0, 5).data() == f"openai:{server.url}/v1:test-model"
    # the summary shown is the fallback and says so; it cannot be written with Write
    assert panel.summary_text().startswith("[memlens fallback summary:")
    assert "fallback: the summariser failed" in panel.summary_header.text()
    assert not panel.write_button.isEnabled() and not panel.write_action.isEnabled()
    assert panel.fallback_button.isEnabled() and panel.retry_button.isEnabled()
    assert panel.other_button.isEnabled() and panel.discard_button.isEnabled()
    panel.write()  # Ctrl+S is refused too, at once
    assert panel.message_label.text().startswith("Not written:")
    assert panel._active is None  # no job started
    qtbot.wait(100)
    assert confirm.calls == [] and _snapshot(*files) == before
    assert _backups(files[0]) == []
    # Retry (keyboard): the summariser answers this time; the failure goes away
    _fail_then(server, *_model_replies(panel.plan().calls))
    panel.retry_button.setFocus()
    with qtbot.waitSignal(panel.summary_ready, timeout=30_000) as ready:
        qtbot.keyClick(panel.retry_button, Qt.Key.Key_Space)
    assert ready.args[0].failure is None
    assert not panel.failure_box.isVisible() and panel.write_button.isEnabled()
    assert not panel.fallback_button.isEnabled()


def test_an_extraction_answer_read_in_part_is_a_failure_with_its_own_fallback(qtbot, demo, server):
    """The summary is real, the facts answer was cut: nothing is written unless asked for."""
    data, session = demo
    files = _demo_files(data, session)
    before = _snapshot(*files)
    panel = _panel(qtbot, Recorder(True))
    _shown_and_planned(qtbot, panel, demo, ("Local", f"openai:{server.url}/v1:test-model"))
    cut = '{"facts": [{"type": "decision", "content": "Use SQLite"}, {"ty'
    _fail_then(server, *_model_replies(panel.plan().calls, cut, "length"))
    result = _failed_run(qtbot, panel)
    assert not result.summary_failed and result.failure.kind == "unreadable"
    assert panel.failure_box.title().startswith("Knowledge extraction failed")
    assert "without the missing facts" in panel.fallback_button.text()
    assert "output-token limit" in panel.failure_label.text()
    assert "Knowledge extraction failed" in panel.message_label.text()
    assert not panel.write_button.isEnabled() and panel.fallback_button.isEnabled()
    panel.write()
    qtbot.wait(100)
    assert _snapshot(*files) == before


def test_write_the_fallback_anyway_is_explicit_and_says_so(qtbot, demo, server):
    _, session = demo
    transcript = Path(session.path)
    before = transcript.read_bytes()
    _fail_then(server, *[Reply(500, {"error": {"message": "boom"}}, {"retry-after": "0"})] * 60)
    confirm = Recorder(True)
    panel = _panel(qtbot, confirm)
    _shown_and_planned(qtbot, panel, demo, ("Down", f"openai:{server.url}/v1:down"))
    result = _failed_run(qtbot, panel)
    assert result.failure.kind == "server"
    assert panel.failure_box.title().startswith("Summary failed")
    assert "fallback summary" in panel.fallback_button.text()
    panel.fallback_button.setFocus()
    with qtbot.waitSignal(panel.written, timeout=10_000) as done:
        qtbot.keyClick(panel.fallback_button, Qt.Key.Key_Space)
    assert done.args[0] is result and len(confirm.calls) == 1  # the usual confirm preview
    added = transcript.read_bytes()[len(before) :]
    assert added.count(b"\n") == 1
    entry = orjson.loads(added)
    first = entry["summary"].splitlines()[0]
    assert first.startswith("[memlens fallback summary: the summariser openai:")
    assert "HTTP 500" in first and "not a real summary" in first
    (writes,) = confirm.calls
    shown = next(w for w in writes if w.action == "append" and Path(w.path) == transcript)
    assert "[memlens fallback summary:" in shown.lines[0]
    assert "FALLBACK" in shown.summary
    assert "Fallback compaction" in panel.message_label.text()


def test_another_summariser_after_a_failure(qtbot, demo, server):
    _fail_then(server, *[Reply(401, {"error": {"message": "no"}})] * 30)
    panel = _panel(qtbot)
    _shown_and_planned(qtbot, panel, demo, ("Local", f"openai:{server.url}/v1:m"))
    _failed_run(qtbot, panel)
    qtbot.mouseClick(panel.other_button, Qt.MouseButton.LeftButton)
    assert panel.provider_combo.hasFocus()  # the keyboard picks from here
    qtbot.keyClick(panel.provider_combo, Qt.Key.Key_Home)  # offline
    assert panel.provider().offline
    result = _run(qtbot, panel)
    assert result.failure is None and panel.write_button.isEnabled()
    assert not panel.failure_box.isVisible()


def test_timeouts_reach_the_run(qtbot, demo):
    from core.compaction.provider import Timeouts

    panel = _panel(qtbot)
    assert panel.timeouts() == Timeouts()
    panel.set_timeouts(Timeouts(connect=3, read=7, total=11))
    assert panel.timeouts() == Timeouts(3, 7, 11)
