"""The shape of widgets/: no worker classes of their own, no attribute hiding a Qt method."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

from PySide6.QtCore import QObject

import widgets

ROOT = Path(widgets.__file__).parent


WORKER_MARKS = ("QRunnable", "QThreadPool", "QThread(", "threading.Thread", "moveToThread")


def test_no_worker_classes_remain_in_widgets_or_app():
    """Background work goes through widgets/common/jobs.py only (one runner)."""
    offenders = [
        f"{path.relative_to(ROOT.parent)}: {mark}"
        for folder in (ROOT, ROOT.parent / "app")
        for path in folder.rglob("*.py")
        if path != ROOT / "common" / "jobs.py"
        for mark in WORKER_MARKS
        if mark in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


def _qt_classes():
    for info in pkgutil.walk_packages(widgets.__path__, "widgets."):
        module = importlib.import_module(info.name)
        tree = ast.parse(inspect.getsource(module))
        for node in ast.walk(tree):
            cls = getattr(module, node.name, None) if isinstance(node, ast.ClassDef) else None
            if inspect.isclass(cls) and issubclass(cls, QObject) and cls.__module__ == info.name:
                qt = next(b for b in cls.__mro__ if b.__module__.startswith("PySide6"))
                yield f"{info.name}.{node.name}", node, set(dir(qt))


def _is_override(func: ast.FunctionDef) -> bool:
    return any(getattr(d, "id", getattr(d, "attr", "")) == "override" for d in func.decorator_list)


def test_no_attribute_or_method_shadows_a_qt_method(qapp):
    shadowing = []
    for name, node, qt_names in _qt_classes():
        assigned = {
            sub.attr
            for sub in ast.walk(node)
            if isinstance(sub, ast.Attribute)
            and isinstance(sub.ctx, ast.Store)
            and isinstance(sub.value, ast.Name)
            and sub.value.id == "self"
        }
        for stmt in node.body:
            if isinstance(stmt, ast.Assign | ast.AnnAssign):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                assigned |= {t.id for t in targets if isinstance(t, ast.Name)}
            elif isinstance(stmt, ast.FunctionDef) and not stmt.name.startswith("__"):
                if stmt.name in qt_names and not _is_override(stmt):
                    shadowing.append(f"{name}.{stmt.name}() (not an @override)")
        shadowing += [f"{name}.{attr}" for attr in sorted(assigned & qt_names)]
    assert shadowing == []
