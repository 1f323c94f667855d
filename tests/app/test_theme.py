from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.theme import apply_theme
from widgets.common.palette import is_dark

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication


@pytest.fixture
def app(qapp):
    old_palette, old_scheme = qapp.palette(), QGuiApplication.styleHints().colorScheme()
    yield qapp
    QGuiApplication.styleHints().setColorScheme(old_scheme)
    qapp.setPalette(old_palette)


@pytest.mark.parametrize(
    ("scheme", "dark"), [(Qt.ColorScheme.Dark, True), (Qt.ColorScheme.Light, False)]
)
def test_system_theme_follows_the_platform_scheme(app: QApplication, scheme, dark):
    assert apply_theme(app, "system", scheme) is dark
    assert is_dark(app.palette()) is dark


def test_explicit_themes_override_the_system(app: QApplication):
    assert apply_theme(app, "dark", Qt.ColorScheme.Light) and is_dark(app.palette())
    assert not apply_theme(app, "light", Qt.ColorScheme.Dark) and not is_dark(app.palette())
