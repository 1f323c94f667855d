"""Navigation: search everywhere (Ctrl+K), Back/Forward, ``memlens://`` references.

Installed on the main window by :func:`install_navigation` (issue 17, item 13): a
**Go** menu before Help with Search Everywhere (Ctrl+K), Back (Alt+Left, the mouse's
back button), Forward (Alt+Right), Copy Reference (Ctrl+Shift+C) and Open Reference.
:class:`Navigation` records the places the user visits (an entry, a fact picked in
Facts, a segment explained in Recall) in a :class:`app.nav_history.History`, builds the
search index in a job, and goes to a :class:`core.refs.reference.Reference`: it opens
the reference's place if another is open, waits for the views to have it (a database
session read in the background, the memory indexed for a segment), then selects the
session, entry, fact or segment through the views' own selection methods.

Provenance (issue 20, item 4) goes through the same history: the facts view's
Provenance tab leads to a source message or to the compaction that summarised it
(:meth:`Navigation.go_to_entry`, the summary line that keeps the fact marked), and a
compaction's "Facts From These Messages" (:meth:`Navigation.list_facts`, a job)
lists the facts that came from the messages it summarised, each leading to Facts.
Back returns along the way. The :class:`core.knowledge.provenance.ProvenanceIndex`
is made from snapshots of the sessions on the GUI thread and used in jobs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Slot
from PySide6.QtGui import QKeySequence, QMouseEvent
from PySide6.QtWidgets import QApplication, QInputDialog, QMenu
from typing_extensions import override

from app.layout import TABS
from app.nav_history import History, Visit
from core.knowledge.provenance import Provenance, ProvenanceIndex
from core.refs.reference import BadReference, Reference, parse_reference
from core.refs.resolve import reference_to, same_path
from core.refs.search import search_items, search_source, session_items
from widgets.facts.provenance_pane import FactsFromCompaction
from widgets.nav.search_popup import SearchPopup

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtWidgets import QMainWindow, QTabWidget

    from app.actions import Actions
    from app.inspector import Inspector
    from app.manager import Manager
    from app.status import StatusBar
    from core.dataset.load import DataSet
    from core.dataset.open_recall import RecallData
    from core.knowledge.provenance import FactLink
    from core.refs.search import SearchItem
    from core.store.knowledge import Fact
    from widgets.common.jobs import Job, JobRunner
    from widgets.common.state import AppState
    from widgets.facts.view import FactsView
    from widgets.recall.preview import RecallPreview
    from widgets.session.message_view import MessageView
    from widgets.session.navigator import Navigator

TICK_MS = 25
"""How often a pending go-to checks whether the views have what it needs."""
WAIT_TICKS = 120_000 // TICK_MS
"""A go-to gives up after two minutes (a huge load, the memory never indexed)."""
DEFAULT_TABS = {"entry": "message", "fact": "facts", "segment": "recall"}


class NavShell(Protocol):
    """What navigation uses of the main window."""

    state: AppState
    status: StatusBar
    runner: JobRunner
    inspector: Inspector
    navigator: Navigator
    facts_view: FactsView
    message_view: MessageView
    recall_view: RecallPreview
    tabs: QTabWidget
    menu_actions: Actions
    manager: Manager
    load_job: Job | None
    recall_data: RecallData | None
    recall_job: Job | None

    @property
    def place(self) -> str:
        """The place open (or opening)."""

    @property
    def data(self) -> DataSet | None:
        """The open data set."""

    def open_path(self, path: str) -> None:
        """Open a data directory or transcript."""

    def show_view(self, name: str) -> None:
        """Bring a view forward."""

    def settled(self) -> bool:
        """Nothing is loading, arriving or being indexed."""


@dataclass(slots=True)
class _Going:
    """A go-to under way: where, and how far it got."""

    ref: Reference
    tab: str
    record: bool
    opening: bool
    before: DataSet | None
    session_picked: bool = False
    ticks: int = 0
    after: Callable[[], Any] | None = None
    """Done once arrived (marking a summary line)."""


def install_navigation(window: QMainWindow) -> Navigation:
    """Give *window* (an :class:`app.main_window.MainWindow`) its Go menu and navigation."""
    shell: NavShell = window  # type: ignore[assignment]  # the window is the shell
    return Navigation(shell, window)


class Navigation(QObject):
    """The Go menu's actions, the history of places visited and going to a reference."""

    def __init__(self, shell: NavShell, main: QMainWindow) -> None:
        super().__init__(main)
        self.shell = shell
        self.main = main
        self.history = History()
        self.popup = SearchPopup(main)
        self.popup.item_chosen.connect(self._on_popup_item_chosen)
        self._going: _Going | None = None
        self._timer = QTimer(self, interval=TICK_MS)
        self._timer.timeout.connect(self._step)
        self._index: list[SearchItem] = []
        self._index_of: tuple[int, ...] | None = None
        self._index_key = f"navigation.index@{id(self):x}"
        self._handle_filtered = False
        self._build_menu()
        shell.state.entry_changed.connect(self._on_entry_changed)
        shell.facts_view.current_fact_changed.connect(self._on_current_fact_changed)
        shell.recall_view.why_box.segment_picked.connect(self._on_segment_picked)
        self._facts_key = f"navigation.facts@{id(self):x}"
        self.facts_dialog: FactsFromCompaction | None = None
        shell.facts_view.set_provenance_source(self.trace_provenance)
        shell.facts_view.message_requested.connect(self.go_to_entry)
        shell.facts_view.compaction_requested.connect(self.go_to_entry)
        shell.message_view.facts_requested.connect(self.list_facts)
        main.installEventFilter(self)  # to filter its native window's mouse once shown
        self._update_actions()

    # -- the Go menu ------------------------------------------------------------------
    def _build_menu(self) -> None:
        actions = self.shell.menu_actions
        menu = QMenu("&Go", self.main)
        self.main.menuBar().insertMenu(actions.menus["help"].menuAction(), menu)
        actions.menus["go"] = menu
        menu.addAction(actions.add("search", "&Search Everywhere…", "Ctrl+K", self.search))
        menu.addSeparator()
        back = actions.add("back", "&Back", "Alt+Left", self.go_back)
        forward = actions.add("forward", "&Forward", "Alt+Right", self.go_forward)
        for action, standard in ((back, QKeySequence.StandardKey.Back),
                                 (forward, QKeySequence.StandardKey.Forward)):  # fmt: skip
            keys = [action.shortcut()]
            keys += [k for k in QKeySequence.keyBindings(standard) if k not in keys]
            action.setShortcuts(keys)
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(
            actions.add("copy_reference", "&Copy Reference", "Ctrl+Shift+C", self.copy_reference)
        )
        menu.addAction(actions.add("open_reference", "&Open Reference…", None, self._ask_reference))
        self.back_action, self.forward_action = back, forward

    def _update_actions(self) -> None:
        self.back_action.setEnabled(self.history.can_go_back)
        self.forward_action.setEnabled(self.history.can_go_forward)

    # -- where we are -----------------------------------------------------------------
    def current_tab(self) -> str:
        """The name of the inspector tab in front (as :data:`app.layout.TABS`, lower case)."""
        return TABS[self.shell.tabs.currentIndex()].lower()

    def current_reference(self, kind: str = "") -> Reference | None:
        """The reference of what is selected (None when nothing is open).

        With *kind* (``entry``, ``fact``, ``segment``), of that; else the fact or the
        segment of the tab in front, or the selected entry (or session).
        """
        shell, data = self.shell, self.shell.data
        if data is None:
            return None
        path = os.path.abspath(shell.place)
        tab = self.current_tab()
        fact = shell.facts_view.current_id()
        if (kind or tab) in ("fact", "facts") and fact:
            return reference_to(path, fact=fact)
        segment = shell.recall_view.why_box.edit.text().split()
        if (kind or tab) in ("segment", "recall") and segment:
            return reference_to(path, segment=segment[0])
        session = shell.state.session
        if session is None:
            return reference_to(path)
        return reference_to(path, data, session, entry=shell.state.entry)

    def _record(self, kind: str) -> None:
        if self._going is not None:
            return  # a go-to in progress records where it arrives, once
        ref = self.current_reference(kind)
        if ref is not None and ref.kind == kind:
            self.history.push(Visit(ref, self.current_tab()))
            self._update_actions()

    @Slot(object)
    def _on_entry_changed(self, entry: str | None) -> None:
        if entry is not None:
            self._record("entry")

    @Slot(str)
    def _on_current_fact_changed(self, _fact: str) -> None:
        if self.current_tab() == "facts" and self.shell.facts_view.isVisible():
            self._record("fact")  # picked by the user, not by a load selecting row 0

    @Slot(str)
    def _on_segment_picked(self, _segment: str) -> None:
        self._record("segment")

    # -- actions ----------------------------------------------------------------------
    @Slot()
    def go_back(self) -> None:
        """Go to the place visited before this one."""
        visit = self.history.back()
        self._update_actions()
        if visit is not None:
            self.go(visit.reference, visit.tab, record=False)

    @Slot()
    def go_forward(self) -> None:
        """Go to the place Back left."""
        visit = self.history.forward()
        self._update_actions()
        if visit is not None:
            self.go(visit.reference, visit.tab, record=False)

    @Slot()
    def copy_reference(self) -> str:
        """Put the reference of what is selected on the clipboard; returns it ("" if none)."""
        ref = self.current_reference()
        if ref is None:
            self.shell.status.say("Nothing to copy a reference to: open a data directory first")
            return ""
        text = str(ref)
        QApplication.clipboard().setText(text)
        self.shell.status.say(f"Copied {text}")
        return text

    @Slot()
    def _ask_reference(self) -> None:
        dialog = QInputDialog(self.main)
        dialog.setWindowTitle("Open Reference")
        dialog.setLabelText("A memlens:// reference (Go > Copy Reference makes one):")
        clip = QApplication.clipboard().text().strip()
        dialog.setTextValue(clip if clip.startswith("memlens://") else "")
        dialog.textValueSelected.connect(self.open_reference)
        dialog.open()

    @Slot(str)
    def open_reference(self, text: str) -> bool:
        """Go to the place a ``memlens://`` *text* names; False (said) when malformed."""
        try:
            ref = parse_reference(text)
        except BadReference as exc:
            self.shell.status.say(f"Cannot open the reference: {exc}")
            return False
        self.go(ref)
        return True

    # -- search everywhere -----------------------------------------------------------
    @Slot()
    def search(self) -> None:
        """Show the search-everywhere popup over the window."""
        data = self.shell.data
        if data is None:
            self.popup.set_items([], "open a data directory first")
        elif self._index_of == _generation(data):
            self.popup.set_items(self._index)
        else:
            source = search_source(os.path.abspath(self.shell.place), data)
            self.popup.set_items(session_items(source), "indexing entries, facts, segments…")
            stamp = _generation(data)
            self.shell.runner.submit(
                "indexing for search",
                lambda *, progress, cancelled: search_items(source, cancelled),
                key=self._index_key,  # a newer index drops this one
                done=lambda items: self._on_indexed(stamp, items),
            )
        self.popup.popup()

    def _on_indexed(self, stamp: tuple[int, ...], items: list[SearchItem]) -> None:
        data = self.shell.data
        if data is None or _generation(data) != stamp:
            return  # another place, or live mode added to it: the next search indexes again
        self._index, self._index_of = items, stamp
        if self.popup.isVisible():
            self.popup.set_items(items)

    @Slot(object)
    def _on_popup_item_chosen(self, item: SearchItem) -> None:
        self.go(item.reference)

    # -- going to a reference -----------------------------------------------------------
    def go(
        self,
        ref: Reference,
        tab: str = "",
        *,
        record: bool = True,
        after: Callable[[], Any] | None = None,
    ) -> None:
        """Open *ref*'s place if needed, then select what it names (in a few event-loop turns).

        *tab* is the inspector tab to show (default: the one for the kind of place);
        *record* adds the place reached to the history (Back/Forward do not); *after*
        runs once the place is shown.
        """
        shell = self.shell
        opening = shell.data is None or not same_path(shell.place, ref.path)
        self._going = _Going(ref, tab, record, opening, shell.data, after=after)
        if opening:
            shell.open_path(ref.path)
        self._timer.start()
        self._step()

    def _ready(self, going: _Going) -> bool | None:
        """Whether the views show the place's data set (None: it did not open)."""
        shell, data = self.shell, self.shell.data
        if not same_path(shell.place, going.ref.path):
            return None  # the user opened something else meanwhile, or the load failed
        if going.opening and (data is None or data is going.before):
            return None if shell.load_job is None and shell.settled() else False
        if data is None:
            return None
        if shell.inspector.data is not data:
            return False
        # the window selects a first session after a load: pick ours after that
        navigator = shell.navigator
        return (
            not data.summaries
            or navigator.current() is not None
            or bool(navigator.filter_box.text())
        )

    @Slot()
    def _step(self) -> None:
        going = self._going
        if going is None:
            self._timer.stop()
            return
        going.ticks += 1
        if going.ticks > WAIT_TICKS:
            self._stop(f"Gave up waiting to show {going.ref}")
            return
        ready = self._ready(going)
        if ready is None:
            self._stop(f"Could not open {going.ref.path} for {going.ref}")
            return
        if not ready:
            return
        ref = going.ref
        inspector = self.shell.inspector
        if ref.session and not going.session_picked:
            if not self._pick_session(ref.session):
                self._stop(f"Session {ref.session} is not in {ref.path}")
                return
            going.session_picked = True
        shown = inspector.session
        if ref.session and (shown is None or ref.session not in (shown.id, shown.path)):
            return  # a database session is being read
        if ref.segment and self.shell.recall_data is None:
            if self.shell.recall_job is None and self.shell.settled():
                self._stop(f"Segment {ref.segment}: the memory of {ref.path} is not indexed")
            return
        self._arrive(going)

    def _pick_session(self, key: str) -> bool:
        navigator = self.shell.navigator
        if navigator.select_session(key):
            return True
        if navigator.filter_box.text():
            navigator.filter_box.clear()  # the filter hid it
            return navigator.select_session(key)
        return False

    def _arrive(self, going: _Going) -> None:
        """Select the entry, fact or segment and bring its tab forward."""
        ref, shell = going.ref, self.shell
        tab = going.tab or DEFAULT_TABS.get(ref.kind, "")
        problem = ""
        if ref.entry and shell.inspector.session is not None:
            try:
                entry = shell.inspector.session.entry(ref.entry)
            except KeyError as exc:
                problem = str(exc.args[0])
            else:
                shell.inspector.show_entry(entry.id)
        elif ref.fact:
            problem = self._select_fact(ref.fact)
        elif ref.segment:
            problem = self._explain_segment(ref.segment)
        if tab:
            shell.show_view(tab)
        if going.after is not None and not problem:
            going.after()
        self._stop(problem or f"Showing {ref.kind} {getattr(ref, ref.kind, '') or ref.path}")
        if going.record and not problem:
            self._record(ref.kind if ref.kind in DEFAULT_TABS else "entry")

    def _select_fact(self, fact: str) -> str:
        log = self.shell.facts_view.log()
        try:
            fact_id = log.resolve(fact) if log is not None else ""
        except KeyError as exc:
            return str(exc.args[0])
        if not fact_id or not self.shell.facts_view.select_fact(fact_id):
            return f"Fact {fact} is not in the knowledge log shown"
        return ""

    def _explain_segment(self, segment: str) -> str:
        recall = self.shell.recall_data
        store = recall.store if recall is not None else None
        if store is None:
            return f"Segment {segment}: no memory-context store is open"
        ids = [s.id for s in store.live() if s.id == segment or s.id.startswith(segment)]
        if segment not in ids and len(ids) != 1:
            return f"Segment {segment} is not in the warm store"
        self.shell.recall_view.explain_segment(segment if segment in ids else ids[0])
        return ""

    # -- provenance ---------------------------------------------------------------------
    def provenance_index(self) -> ProvenanceIndex | None:
        """The provenance index of the open data (the manager's, on its message index)."""
        return self.shell.manager.provenance_index()

    def trace_provenance(self, fact: Fact) -> Callable[[], Provenance]:
        """The work (for a job) that traces *fact*'s provenance in the open data."""
        index = self.provenance_index()
        if index is None:
            return lambda: Provenance(fact.id, "none")
        return lambda: index.of_fact(fact)

    @Slot(str, str)
    @Slot(str, str, int)
    def go_to_entry(self, session_id: str, entry_id: str, line: int = 0) -> None:
        """Show entry *entry_id* of session *session_id*; *line*: mark that summary line."""
        data = self.shell.data
        session = next((s for s in data.sessions if s.id == session_id), None) if data else None
        if data is None or session is None:
            self.shell.status.say(f"Session {session_id} is not open")
            return
        if self.current_tab() == "facts":
            self._record("fact")  # Back returns to the fact (a first row is never "picked")
        ref = reference_to(os.path.abspath(self.shell.place), data, session.path, entry=entry_id)
        view = self.shell.message_view
        self.go(ref, "message", after=(lambda: view.highlight_summary_line(line)) if line else None)

    @Slot(str, int)
    def list_facts(self, compaction_id: str, line: int = 0) -> None:
        """List the facts from the messages compaction *compaction_id* summarised (a job)."""
        data, session = self.shell.data, self.shell.inspector.session
        log = data.knowledge if data is not None else None
        index = self.provenance_index()
        if session is None or log is None or index is None:
            self.shell.status.say("No knowledge log is open: no facts to list")
            return
        facts, session_id = list(log.facts.values()), session.id
        title = f"Compaction {compaction_id}" + (f", summary line {line}" if line else "")

        def job(**_job: object) -> list[FactLink]:
            return index.from_compaction(facts, session_id, compaction_id, line=line or None)

        self.shell.status.say(f"Looking for the facts of {title.lower()}…")
        self.shell.runner.submit(
            "facts from a compaction",
            job,
            key=self._facts_key,
            done=lambda links: self._show_facts(links, title),
            failed=self.shell.status.say,
        )

    def _show_facts(self, links: list[FactLink], title: str) -> None:
        if self.facts_dialog is None:
            self.facts_dialog = FactsFromCompaction(self.main)
            self.facts_dialog.fact_chosen.connect(self._on_fact_chosen)
        self.facts_dialog.set_links(links, title)
        self.facts_dialog.show()  # a tool window over the main one: no raise needed
        self.shell.status.say(f"{title}: {len(links)} fact(s) from its messages")

    @Slot(str)
    def _on_fact_chosen(self, fact_id: str) -> None:
        self.go(reference_to(os.path.abspath(self.shell.place), fact=fact_id), "facts")

    def _stop(self, message: str) -> None:
        self._going = None
        self._timer.stop()
        self.shell.status.say(message)

    # -- the mouse's back and forward buttons ------------------------------------------
    @override
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.main and event.type() == QEvent.Type.Show:
            handle = self.main.windowHandle()
            if handle is not None and not self._handle_filtered:
                handle.installEventFilter(self)  # sees every click before the widgets
                self._handle_filtered = True
        elif event.type() == QEvent.Type.MouseButtonPress and isinstance(event, QMouseEvent):
            if event.button() == Qt.MouseButton.BackButton:
                self.go_back()
                return True
            if event.button() == Qt.MouseButton.ForwardButton:
                self.go_forward()
                return True
        return super().eventFilter(watched, event)


def _generation(data: DataSet) -> tuple[int, ...]:
    """What the search index was built from: a change means it is out of date."""
    log, load = data.knowledge, data.segments
    return (
        id(data),
        len(data.summaries),
        len(data.sessions),
        sum(len(s.entries) for s in data.sessions),
        len(log.facts) if log is not None else -1,
        len(load.segments) if load is not None else -1,
    )
