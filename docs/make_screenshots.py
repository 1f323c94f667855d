"""Regenerate docs/screenshots/*.png from the demo data (offscreen Qt).

python docs/make_screenshots.py            # every view, on a large (2560x1440) screen
python docs/make_screenshots.py --laptop   # the default layout on a 1366x768 screen
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def offscreen_screen(width: int, height: int) -> str:
    """``QT_QPA_PLATFORM`` for an offscreen screen of *width* x *height* (a JSON description).

    The window fits itself to its screen, so the screen decides what a shot shows.
    """
    config = Path(tempfile.mkdtemp(prefix="memlens-shots-screen-")) / "screen.json"
    screen = {"name": "shots", "x": 0, "y": 0, "width": width, "height": height}
    config.write_text(json.dumps({"screens": [{**screen, "logicalDpi": 96, "dpr": 1}]}))
    return f"offscreen:configfile={config}"


LAPTOP = "--laptop" in sys.argv[1:]
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":  # before Qt starts
    os.environ["QT_QPA_PLATFORM"] = offscreen_screen(*((1366, 768) if LAPTOP else (2560, 1440)))
# Rendering never adds to the user's own activity log.
os.environ.setdefault("MEMLENS_DATA_DIR", tempfile.mkdtemp(prefix="memlens-shots-"))
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QEventLoop, QSettings, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from app.demo_data import demo_dir  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from app.settings_dialog import SettingsDialog  # noqa: E402
from app.theme import apply_theme  # noqa: E402
from core.compaction.provider import ProviderChoice  # noqa: E402
from core.compaction.write import planned_writes  # noqa: E402
from core.io.fsutil import make_backup  # noqa: E402
from core.io.writes import always  # noqa: E402
from widgets.common.write_preview import WritePreviewDialog  # noqa: E402

# MEMLENS_SCREENSHOTS_DIR: render elsewhere (tests/test_screenshots.py keeps the script working).
OUT = Path(os.environ.get("MEMLENS_SCREENSHOTS_DIR") or ROOT / "docs" / "screenshots")


def _wait_for(predicate, timeout_ms: int = 30000) -> None:
    loop = QEventLoop()
    timer = QTimer(interval=20)
    waited = 0

    def tick() -> None:
        nonlocal waited
        waited += 20
        if predicate() or waited > timeout_ms:
            loop.quit()

    timer.timeout.connect(tick)
    timer.start()
    loop.exec()
    timer.stop()


def _settle(app: QApplication, ms: int = 400) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()
    app.processEvents()


def _busiest(window: MainWindow) -> str:
    """The demo session with the most compactions (then messages): the richest timeline."""
    assert window.data is not None
    best = max(window.data.summaries, key=lambda s: (s.compactions, s.messages))
    return best.id


def _save(widget: QWidget, name: str) -> None:
    widget.grab().save(str(OUT / name))
    print(OUT / name)


def _memory_views(app: QApplication, window: MainWindow) -> None:
    """Facts, compaction (a dry run: nothing is written), review queue, dialogs."""
    window.show_view("facts")
    facts = window.facts_view
    sizes = window.splitter.sizes()
    window.splitter.setSizes([150, 0, 1100])  # the facts get the height (as a user drags it)
    active = [f for f in window.data.knowledge.facts.values() if f.status == "active"]  # type: ignore[union-attr]
    facts.select_fact(
        max(active, key=lambda f: len(window.data.knowledge.history.get(f.id, ()))).id
    )  # type: ignore[union-attr]
    facts.show_sources_tab()
    facts.wait_for_sources(60_000)
    _settle(app, 600)
    facts.splitter.setSizes([330, 560])  # the table, and the detail with the fact's sources
    _settle(app, 300)
    _save(window, "facts.png")
    facts.detail.tabs.setCurrentWidget(facts.detail.provenance)  # where the fact came from
    _wait_for(lambda: bool(facts.detail.provenance.rows()), 20_000)
    _settle(app, 400)
    _save(window, "provenance.png")
    window.splitter.setSizes(sizes)
    # Two real writes to the demo copy (a type change and its undo) fill the activity log.
    facts.editing.set_type_selected("decision")
    _settle(app, 300)
    window.menu_actions.by_name["undo"].trigger()
    _settle(app, 300)
    window.show_view("activity")
    window.activity_dock.raise_()
    window.resizeDocks([window.activity_dock], [300], Qt.Orientation.Vertical)
    _settle(app, 600)
    _save(window, "activity.png")
    window.resizeDocks([window.activity_dock], [120], Qt.Orientation.Vertical)
    window.problem_dock.raise_()
    window.show_view("compaction")
    panel = window.compaction_panel
    _wait_for(lambda: panel.plan() is not None and not panel.is_busy())
    panel.run()
    _wait_for(lambda: panel.result() is not None and not panel.is_busy())
    _settle(app, 600)
    _save(window, "compaction.png")
    result = panel.result()
    session = window.inspector.session
    if result is not None and session is not None:
        window.review_queue.add_proposals(result.facts, source="compaction")
        window.show_view("review")
        _settle(app, 600)
        _save(window, "review-queue.png")
        writes = planned_writes(result, session, store_dir=window.data.discovery.memory_context)  # type: ignore[union-attr]
        dialog = WritePreviewDialog(writes, window)
        dialog.resize(1100, 640)
        dialog.show()
        _settle(app, 400)
        _save(dialog, "write-preview.png")
        dialog.reject()
    settings = SettingsDialog(
        window.settings, window.data.config if window.data else None, parent=window
    )
    settings.resize(900, 640)
    settings.show()
    _settle(app, 400)
    _save(settings, "settings-providers.png")
    settings.tabs.setCurrentWidget(settings.safety_page)
    _settle(app, 300)
    _save(settings, "settings-safety.png")
    settings.reject()
    _failed_compaction(app, window)
    _backups(app, window)


class _Refusing(BaseHTTPRequestHandler):
    """A summariser endpoint that always answers 500 (the failed-summary screenshot)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = b'{"error": {"message": "upstream model crashed", "type": "server_error"}}'
        self.send_response(500)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def _failed_compaction(app: QApplication, window: MainWindow) -> None:
    """A summariser answering 500: the failure, its attempt log and the three ways on."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        panel = window.compaction_panel
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        panel.set_providers([ProviderChoice("Local (llama.cpp)", f"openai:{url}:qwen2.5-7b")])
        panel.set_provider(1)
        window.show_view("compaction")
        _wait_for(lambda: panel.plan() is not None and not panel.is_busy())
        panel.run()
        _wait_for(lambda: panel.result() is not None and not panel.is_busy(), 60_000)
        _settle(app, 600)
        _save(panel, "compaction-failed.png")  # the whole panel: the failure box is below the fold
    finally:
        server.shutdown()
        server.server_close()


def _backups(app: QApplication, window: MainWindow) -> None:
    """The Backups tab after two real backups of a demo transcript (the demo copy)."""
    session = window.inspector.session
    if session is not None:
        make_backup(session.path)
        make_backup(session.path)
    window.backups.show_backups()
    window.resizeDocks([window.activity_dock], [300], Qt.Orientation.Vertical)
    _wait_for(lambda: window.backups.view.table.model().rowCount() >= 2, 10_000)
    _settle(app, 600)
    _save(window, "backups.png")
    window.resizeDocks([window.activity_dock], [120], Qt.Orientation.Vertical)
    window.problem_dock.raise_()


FIXTURE = ROOT / "tests" / "data" / "openclaw-2026.9.6"


def _openclaw(app: QApplication) -> None:
    """The OpenClaw tab on the home the real OpenClaw 2026.9.6 wrote (read-only).

    Its config's embedding provider is the fake server of the recording run, on that
    run's port (the index's provider key includes it): the same server answers there
    again, so the search shown is hybrid, with OpenClaw's vectors; keyword-only when
    the port is taken.
    """
    import json

    from tests.oracle.fake_llm import FakeLLM, recorded_port

    expected = json.loads((FIXTURE / "expected.json").read_text(encoding="utf-8"))
    search = next(c for c in expected["commands"] if c["label"] == "memory search and_words")
    port = recorded_port(FIXTURE / "home" / ".openclaw" / "openclaw.json")
    embeddings = FakeLLM(embedding_dim=8, port=port)
    try:
        embeddings.start()
    except OSError as exc:
        print(f"the recorded embedding port is taken ({exc}): a keyword-only search shown")
    try:
        _openclaw_views(app, search)
    finally:
        embeddings.stop()


def _openclaw_views(app: QApplication, search: dict[str, Any]) -> None:
    window = MainWindow()
    window.resize(1700, 1250)
    window.show()
    window.open_path(str(FIXTURE / "home" / ".openclaw"))
    _wait_for(lambda: window.settled() and window.inspector.session is not None, 60_000)
    data = window.data
    assert data is not None
    alpha = next(s for s in data.summaries if s.id == "alpha")
    window.navigator.select_session(alpha.path)
    window.show_view("openclaw")
    view = window.openclaw_view
    view.tabs.setCurrentWidget(view.row_page)
    _settle(app, 800)
    _save(window, "openclaw-session-row.png")
    memory = view.memory_view
    assert memory is not None
    view.tabs.setCurrentWidget(memory)
    _wait_for(lambda: memory.snapshot is not None, 20_000)
    memory.query_edit.setText("orders_prod database")
    memory.set_now_ms(search["started_ms"])  # the clock of OpenClaw's own search
    memory.run_search()
    _wait_for(lambda: memory.result is not None, 20_000)
    _settle(app, 600)
    _save(window, "openclaw-memory.png")
    window.close()


def _openclaudecode(app: QApplication) -> None:
    """An OpenClaudeCode home (seed design 004): its sessions by key, its memory_fts search."""
    window = MainWindow()
    window.resize(1700, 1250)
    window.show()
    window.open_path(str(ROOT / "tests" / "data" / "openclaudecode" / "home"))
    _wait_for(lambda: window.settled() and window.data is not None, 60_000)
    window.navigator.select_session(next(s.path for s in window.data.summaries if s.compactions))
    window.show_view("openclaw")
    page = window.occ_memory_view
    window.openclaw_view.tabs.setCurrentWidget(page)
    page.query.setText("deploy window")
    page.search()
    _wait_for(lambda: page.model.rowCount() > 0, 20_000)
    _settle(app, 600)
    _save(window, "openclaudecode-memory.png")
    window.close()


def _forensics(app: QApplication, window: MainWindow) -> None:
    """The loss audit of the busiest session's last compaction, and its what-if replay."""
    sizes = window.splitter.sizes()
    window.splitter.setSizes([150, 0, 1100])  # these views get the height (as a user drags it)
    window.show_view("compaction")
    panel = window.compaction_panel
    panel.tabs.setCurrentWidget(panel.audit_view)
    panel.audit_view.compare_check.setChecked(True)  # the agent's summary beside memlens's
    _wait_for(lambda: panel.audit_view.outcome is not None and not panel.audit_view.busy())
    _settle(app, 600)
    _save(window, "loss-audit.png")
    panel.tabs.setCurrentIndex(0)  # the Compaction shot shows its summary
    window.show_view("what-if")
    view = window.whatif_view
    index = view.preset_combo.findData("128k")
    view.preset_combo.setCurrentIndex(max(index, 0))  # what if it ran on a 128k model
    view.run()
    _wait_for(lambda: view.result() is not None and not view._runner.busy(view._key), 60_000)
    _wait_for(lambda: not view._runner.busy(view._audit_key), 120_000)  # each one's loss
    lost = [view.model.index(r, 3).data() or 0 for r in range(view.model.rowCount())]
    view.table.setCurrentIndex(view.model.index(lost.index(max(lost)), 0))  # lost the most
    _settle(app, 600)
    _save(window, "whatif.png")
    window.splitter.setSizes(sizes)


def _recall_lab(app: QApplication) -> None:
    """The recall lab on one conversation of LoCoMo's dev half (labels beside the store)."""
    import orjson

    source = ROOT.parent / "shared" / "datasets" / "locomo-dev"
    if not (source / "segments.jsonl").is_file():
        print(f"skipped recall-lab.png: {source} is not here")
        return
    rows = [orjson.loads(x) for x in (source / "segments.jsonl").read_bytes().splitlines() if x]
    session = rows[0]["sessionId"]
    home = Path(tempfile.mkdtemp(prefix="memlens-shots-lab-"))
    store = home / "memory" / "context"
    store.mkdir(parents=True)
    kept = b"".join(orjson.dumps(r) + b"\n" for r in rows if r["sessionId"] == session)
    (store / "segments.jsonl").write_bytes(kept)
    labels = [x for x in (source / "labels.jsonl").read_bytes().splitlines() if session in str(x)]
    (store / "labels.jsonl").write_bytes(b"\n".join(labels) + b"\n")
    (home / "openclaw.json").write_text("{agents: {defaults: {memoryContext: {}}}}")
    window = MainWindow()
    window.resize(1700, 1250)
    window.show()
    window.open_path(str(home))
    lab = window.lab_view
    _wait_for(lambda: bool(lab.labels()), 60_000)
    window.show_view("recall lab")
    window.splitter.setSizes([160, 0, 1000])  # the lab gets the height (as a user drags it)
    lab.run()
    _wait_for(lambda: lab.last_run is not None, 300_000)
    _settle(app, 600)
    _save(window, "recall-lab.png")
    window.close()


def _first_run(app: QApplication) -> None:
    """The welcome page, over a made-up home holding an OpenClaw home and pi sessions."""
    import shutil

    from app.settings import AppSettings
    from core.demo.build import write_demo

    home = Path(os.environ["HOME"])
    write_demo(home / ".openclaw", segments=400)
    pi = home / ".pi" / "agent" / "sessions" / "--home-dev-shop-api--"
    pi.mkdir(parents=True)
    for transcript in sorted((home / ".openclaw" / "agents").glob("*/sessions/*.jsonl"))[:5]:
        shutil.copyfile(transcript, pi / transcript.name)
    settings = AppSettings()
    for place in (str(home / ".pi" / "agent" / "sessions"), str(home / ".openclaw")):
        settings.add_recent(place)
    settings.store.remove("places/last")
    window = MainWindow(settings)
    window.resize(1300, 860)
    window.show()
    _wait_for(lambda: window.homes_scanned)
    _settle(app, 400)
    _save(window, "first-run.png")
    window.close()
    settings.clear_recent()


LAPTOP_SHOTS = ("message", "context", "recall", "trim", "facts", "review", "compaction", "openclaw")


def laptop() -> int:
    """The default layout on a 1366x768 screen, untouched: every tab, light and dark.

    The window opens as a user's would (fitted to the screen, docks and splitter at
    their defaults), so these show what a laptop user meets first.
    """
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tempfile.mkdtemp())
    os.environ["HOME"] = tempfile.mkdtemp(prefix="memlens-shots-home-")
    out = OUT / "laptop"
    out.mkdir(parents=True, exist_ok=True)
    demo = demo_dir()
    window = MainWindow(confirm=always)
    window.show()
    window.open_path(str(demo))
    _wait_for(lambda: window.data is not None and window.recall_data is not None)
    window.navigator.select_session(_busiest(window))
    _settle(app, 800)
    for theme in ("light", "dark"):
        apply_theme(app, theme)
        window.inspector.refresh()
        for view in LAPTOP_SHOTS:
            window.show_view(view)
            _settle(app, 300)
            name = out / f"{view}{'-dark' if theme == 'dark' else ''}.png"
            window.grab().save(str(name))
            print(name)
    window.close()
    return 0


def main() -> int:
    """Render every view and save it under docs/screenshots."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    # Never read or change the user's own settings while rendering.
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tempfile.mkdtemp())
    apply_theme(app, "light")
    OUT.mkdir(parents=True, exist_ok=True)
    # A made-up home: the first-run scan looks here, never in the real one.
    os.environ["HOME"] = tempfile.mkdtemp(prefix="memlens-shots-home-")
    demo = demo_dir()  # generated before any window records writes
    _first_run(app)
    window = MainWindow(confirm=always)  # the demo copy; the write preview is shot on its own
    window.resize(1700, 1250)
    window.show()
    window.open_path(str(demo))
    _wait_for(lambda: window.data is not None and window.recall_data is not None)
    window.navigator.select_session(_busiest(window))
    _settle(app, 800)
    shots = [("main-window.png", "message"), ("context.png", "context"),
             ("recall.png", "recall"), ("trim.png", "trim")]  # fmt: skip
    for name, view in shots:
        window.show_view(view)
        if view == "trim":  # a small window so the simulation has something to trim
            params = window.trim_view.parameters()
            window.trim_view.set_parameters(replace(params, window=48_000))
            window.trim_view.run()
            _settle(app, 1500)
        _settle(app)
        window.grab().save(str(OUT / name))
        print(OUT / name)
    _forensics(app, window)
    _memory_views(app, window)
    apply_theme(app, "dark")
    window.inspector.refresh()
    window.show_view("message")
    _settle(app, 600)
    window.grab().save(str(OUT / "main-window-dark.png"))
    print(OUT / "main-window-dark.png")
    window.close()
    apply_theme(app, "light")
    _openclaw(app)
    _openclaudecode(app)
    _recall_lab(app)
    return 0


if __name__ == "__main__":
    if LAPTOP:
        sys.exit(laptop())
    sys.exit(main())
