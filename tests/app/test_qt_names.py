"""No attribute or method of ours shadows a Qt method (``MainWindow.actions`` once did).

Every QObject subclass defined in ``app`` and ``widgets`` is checked: its class
attributes (unless they override a Qt virtual on purpose, marked ``@override``) and
the instance attributes of the live objects a main window with data open holds.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from PySide6.QtCore import QObject, SignalInstance

import app
import widgets
from app.main_window import MainWindow

OURS = ("app.", "widgets.")


def _modules() -> list[str]:
    names = []
    for package in (app, widgets):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            names.append(info.name)
    return names


def _qt_base(cls: type) -> type:
    return next(c for c in cls.__mro__ if c.__module__.startswith(("PySide6", "shiboken6")))


def _qt_names(cls: type) -> set[str]:
    return set(dir(_qt_base(cls)))


def _our_classes() -> list[type]:
    found: dict[str, type] = {}
    for name in _modules():
        if name.endswith("__main__"):
            continue
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == name and issubclass(cls, QObject):
                found[f"{name}.{cls.__qualname__}"] = cls
    return list(found.values())


def _shadowing_class_attributes(cls: type) -> list[str]:
    qt = _qt_names(cls)
    bad = []
    for klass in cls.__mro__:
        if not klass.__module__.startswith(OURS):
            continue
        for attr, value in vars(klass).items():
            if attr.startswith("__") or attr not in qt:
                continue
            if getattr(value, "__override__", False) or attr == "staticMetaObject":
                continue  # a Qt virtual overridden on purpose
            bad.append(f"{klass.__module__}.{klass.__qualname__}.{attr}")
    return bad


def _reachable(root: QObject) -> list[QObject]:
    """Our QObjects among *root*'s children and attributes, and theirs, transitively."""
    seen: dict[int, QObject] = {}
    todo = [root, *root.findChildren(QObject)]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or not type(obj).__module__.startswith(OURS):
            continue
        seen[id(obj)] = obj
        for value in vars(obj).values():
            values = value.values() if isinstance(value, dict) else value
            items = values if isinstance(values, (list, tuple, set)) else [value]
            todo.extend(v for v in items if isinstance(v, QObject))
    return list(seen.values())


def test_our_qobject_classes_are_found():
    names = {c.__name__ for c in _our_classes()}
    assert {"MainWindow", "Inspector", "Actions", "Navigator", "JobRunner"} <= names


@pytest.mark.parametrize("cls", _our_classes(), ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_no_class_attribute_shadows_a_qt_method(cls):
    assert _shadowing_class_attributes(cls) == []


def test_no_instance_attribute_shadows_a_qt_method(qtbot, fixtures_dir):
    window = MainWindow()
    qtbot.addWidget(window)
    window.open_path(str(fixtures_dir))
    qtbot.waitUntil(lambda: window.data is not None and window.settled(), timeout=30_000)
    window.menu_actions.by_name["settings"].trigger()  # the settings dialog and its pages
    ours = _reachable(window)
    assert {type(o).__name__ for o in ours} >= {
        "MainWindow",
        "Inspector",
        "Manager",
        "Navigator",
        "SettingsDialog",
    }
    bad = sorted(
        {
            f"{type(o).__module__}.{type(o).__qualname__}.{attr}"
            for o in ours
            for attr, value in vars(o).items()
            # PySide keeps a connected Qt signal's bound instance in __dict__: not ours
            if attr in _qt_names(type(o)) and not isinstance(value, SignalInstance)
        }
    )
    assert bad == []


def test_the_check_would_see_a_shadowing_attribute():
    class Shadowing(QObject):
        __module__ = "app.example"

        def children(self) -> list[QObject]:  # shadows QObject.children
            return []

    assert [a.rsplit(".", 1)[1] for a in _shadowing_class_attributes(Shadowing)] == ["children"]
