from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSortFilterProxyModel, Qt

from widgets.common.record_model import Column, RecordRole, RecordTableModel, SortRole


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    n: int


def _model():
    return RecordTableModel(
        [Column("Name", lambda r: r.name), Column("N", lambda r: r.n, align_right=True)]
    )


def test_model_passes_qtmodeltester(qtmodeltester):
    model = _model()
    model.set_records([Row("b", 2000), Row("a", 1)])
    qtmodeltester.check(model)


def test_display_sort_and_record_roles(qtbot):
    model = _model()
    model.set_records([Row("b", 2000), Row("a", 1), Row("c", 30)])
    idx = model.index(0, 1)
    assert model.data(idx) == "2,000"
    assert model.data(idx, SortRole) == 2000
    assert model.data(idx, RecordRole) == Row("b", 2000)
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(model)
    proxy.setSortRole(SortRole)
    proxy.sort(1, Qt.SortOrder.AscendingOrder)
    assert [proxy.index(r, 0).data() for r in range(3)] == ["a", "c", "b"]  # numeric, not text
    model.set_records([])
    assert proxy.rowCount() == 0


def test_thousands_separators_only_where_asked(qtbot):
    from widgets.common.record_model import Column, RecordTableModel

    model = RecordTableModel(
        [Column("Line", lambda r: r, thousands=False), Column("Tokens", lambda r: r)]
    )
    model.set_records([12345])
    assert model.index(0, 0).data() == "12345"
    assert model.index(0, 1).data() == "12,345"


def test_append_rows_inserts_rows_and_keeps_the_selection_and_scroll(qtbot, qtmodeltester):
    from PySide6.QtCore import QItemSelectionModel
    from PySide6.QtWidgets import QTableView

    model = _model()
    model.set_records([Row(f"r{i}", i) for i in range(200)])
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(300, 150)
    view.show()
    qtbot.waitExposed(view)
    # the selection set through the selection model: QTableView.selectRow reads the
    # keyboard modifiers, and a modifier another test left pressed turns it into a toggle
    flags = QItemSelectionModel.SelectionFlag
    view.selectionModel().setCurrentIndex(model.index(120, 0), flags.ClearAndSelect | flags.Rows)
    bar = view.verticalScrollBar()
    bar.setValue(60)
    resets, inserted = [], []
    model.modelReset.connect(lambda: resets.append(1))
    model.rowsInserted.connect(lambda _p, first, last: inserted.append((first, last)))
    model.append_rows([Row("new", 1), Row("newer", 2)])
    model.append_rows([])
    assert inserted == [(200, 201)] and resets == []
    assert model.rowCount() == 202 and model.record(201) == Row("newer", 2)
    assert view.currentIndex().row() == 120 and view.selectionModel().isRowSelected(120)
    assert bar.value() == 60
    qtmodeltester.check(model)
