from __future__ import annotations

import os
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QPlainTextEdit, QWidget

from app.app_config import (
    DEFAULT_PROVIDERS,
    LLM_PROVIDERS,
    AppConfig,
    ProviderSpec,
    RecallDefaults,
    TrimDefaults,
    load_app_config,
)
from app.settings import AppSettings
from app.settings_dialog import SettingsDialog
from core.openclaw.config import load_openclaw_config

SECRET = "sk-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0ZZ"

CONFIG = """{
  // the agent's config, JSON5
  agents: {
    defaults: {
      memoryContext: {
        enabled: true,
        hardCapTokens: 6000,
        embeddingModel: "hash",
      },
      compaction: {
        mode: "safeguard",
        reserveTokens: 30000,
        bogusKey: 1,
        maxHistoryShare: 2,
        memoryFlush: { enabled: true, softThresholdTokens: 5000 },
      },
    },
  },
}
"""


@pytest.fixture(autouse=True)
def _no_os_keychain():
    """These tests never read the user's real keychain: keyring's no-backend stand-in."""
    before = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(before)


@pytest.fixture
def settings(isolated_settings):
    return AppSettings()


@pytest.fixture
def openclaw(tmp_path):
    path = tmp_path / "openclaw.json"
    path.write_text(CONFIG)
    return load_openclaw_config(path)


def _dialog(qtbot, settings, **kw):
    dlg = SettingsDialog(settings, **kw)
    qtbot.addWidget(dlg)
    return dlg


def test_defaults_when_nothing_is_saved(qtbot, settings):
    dlg = _dialog(qtbot, settings, environ={})
    assert dlg.config() == AppConfig()
    assert dlg.providers_page.providers() == list(DEFAULT_PROVIDERS)
    assert dlg.search_page.min_score.value() == pytest.approx(0.7)
    assert dlg.search_page.protected_recent.value() == 6
    assert dlg.ok_button.isEnabled()


def test_round_trip_through_the_settings_file(qtbot, settings, isolated_settings):
    wanted = AppConfig(
        providers=(
            ProviderSpec(
                "Local vLLM",
                "openai",
                "http://127.0.0.1:8000/v1",
                "qwen2.5:14b",
                ("qwen2.5:7b",),
                "",
            ),
            ProviderSpec("Claude", "anthropic", "", "claude-opus-4-1", (), "MY_ANTHROPIC_KEY"),
        ),
        embedder="transformer",
        recall=RecallDefaults(0.55, 0.6, 0.4, 0.99, 2500),
        trim=TrimDefaults(4, 8000),
    )
    dlg = _dialog(qtbot, settings, environ={})
    dlg.set_config(wanted)
    assert dlg.config() == wanted
    with qtbot.waitSignal(dlg.saved) as blocker:
        dlg.accept()
    assert blocker.args == [wanted]
    # a fresh QSettings reads the same values back from the ini file
    again = AppSettings(
        QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "memlens", "memlens")
    )
    assert load_app_config(again) == wanted
    second = _dialog(qtbot, again, environ={})
    assert second.config() == wanted
    assert second.search_page.embedder_box.currentText() == "transformer"
    assert second.search_page.decay.value() == pytest.approx(0.99)


def test_editing_a_provider_in_the_form(qtbot, settings):
    dlg = _dialog(qtbot, settings, environ={})
    page = dlg.providers_page
    page.select(2)  # Local (Ollama)
    page.model_edit.clear()
    qtbot.keyClicks(page.model_edit, "mistral:7b")
    page.fallback_edit.clear()
    qtbot.keyClicks(page.fallback_edit, "llama3.1:8b,  qwen2.5:7b ,")
    assert page.providers()[2].model == "mistral:7b"
    assert page.providers()[2].fallback_models == ("llama3.1:8b", "qwen2.5:7b")
    assert page.providers()[2].specs() == [
        "openai:http://127.0.0.1:11434/v1:mistral:7b",
        "openai:http://127.0.0.1:11434/v1:llama3.1:8b",
        "openai:http://127.0.0.1:11434/v1:qwen2.5:7b",
    ]
    # add, move up, remove
    qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    assert page.model.rowCount() == 4 and page.current_row() == 3
    page.label_edit.clear()
    qtbot.keyClicks(page.label_edit, "Groq")
    page.kind_box.setCurrentIndex(page.kind_box.findData("anthropic"))
    assert (
        page.providers()[3].kind == "anthropic"
        and page.providers()[3].key_env == "ANTHROPIC_API_KEY"
    )
    qtbot.mouseClick(page.up_button, Qt.MouseButton.LeftButton)
    assert [p.label for p in page.providers()] == ["Anthropic", "OpenAI", "Groq", "Local (Ollama)"]
    assert page.current_row() == 2
    qtbot.mouseClick(page.remove_button, Qt.MouseButton.LeftButton)
    assert [p.label for p in page.providers()] == ["Anthropic", "OpenAI", "Local (Ollama)"]


def test_invalid_provider_blocks_ok(qtbot, settings):
    dlg = _dialog(qtbot, settings, environ={})
    page = dlg.providers_page
    page.select(1)
    page.url_edit.clear()
    qtbot.keyClicks(page.url_edit, "api.openai.com")
    assert not dlg.ok_button.isEnabled()
    assert "http:// or https://" in page.problem_label.text()
    assert "OpenAI: the base URL" in dlg.problem_label.text()
    dlg.accept()  # refused
    assert settings.value(LLM_PROVIDERS) is None and dlg.result() == 0
    page.url_edit.clear()
    qtbot.keyClicks(page.url_edit, "https://api.openai.com/v1")
    assert dlg.ok_button.isEnabled() and dlg.problem_label.text() == ""


def test_key_indicator_follows_the_variable_name(qtbot, settings):
    env = {"MY_LLM_KEY": SECRET, "BLANK_KEY": "  "}
    dlg = _dialog(qtbot, settings, environ=env)
    page = dlg.providers_page
    page.select(0)
    page.key_edit.clear()
    qtbot.keyClicks(page.key_edit, "MY_LLM_KE")
    assert "not set" in page.key_status.text()
    qtbot.keyClicks(page.key_edit, "Y")
    assert page.key_status.text().endswith("set (environment)")
    assert "not set" not in page.key_status.text()
    page.key_edit.clear()
    qtbot.keyClicks(page.key_edit, "BLANK_KEY")
    assert "not set" in page.key_status.text()
    page.key_edit.clear()
    page.key_edit.textEdited.emit("")
    assert "no key is sent" in page.key_status.text()


def _texts(widget: QWidget) -> str:
    out = [widget.toolTip(), widget.windowTitle()]
    for w in widget.findChildren(QWidget):
        out.append(w.toolTip())
        if isinstance(w, QLineEdit | QLabel):
            out.append(w.text())
        if isinstance(w, QLineEdit):
            out.append(w.placeholderText())
        if isinstance(w, QPlainTextEdit):
            out.append(w.toPlainText())
    for view in (widget.providers_page.model,):
        for r in range(view.rowCount()):
            out.append(str(view.index(r).data(Qt.ItemDataRole.ToolTipRole)))
    return "\n".join(out)


def test_the_dialog_never_writes_a_key_value(
    qtbot, settings, isolated_settings, tmp_path, monkeypatch, openclaw
):
    monkeypatch.setenv("MY_LLM_KEY", SECRET)
    dlg = _dialog(qtbot, settings, openclaw=openclaw)  # the real environment
    page = dlg.providers_page
    page.select(0)
    page.key_edit.clear()
    qtbot.keyClicks(page.key_edit, "MY_LLM_KEY")
    assert page.key_status.text().endswith("set (environment)")
    assert SECRET not in _texts(dlg)
    # a key pasted where the variable's name belongs is refused, never saved
    page.select(1)
    page.key_edit.clear()
    qtbot.keyClicks(page.key_edit, SECRET)
    assert "looks like a key itself" in page.problem_label.text()
    assert not dlg.ok_button.isEnabled()
    dlg.accept()
    assert settings.value(LLM_PROVIDERS) is None
    page.key_edit.clear()
    qtbot.keyClicks(page.key_edit, "OPENAI_API_KEY")
    dlg.accept()
    settings.sync()
    assert load_app_config(settings).providers[0].key_env == "MY_LLM_KEY"
    files = [
        p
        for root in (isolated_settings, tmp_path, Path(os.environ["MEMLENS_DATA_DIR"]))
        for p in root.rglob("*")
        if p.is_file()
    ]
    assert any(p.name == "memlens.ini" for p in files)
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path


def test_openclaw_tab_lists_the_problems_with_path_and_line(qtbot, settings, openclaw):
    dlg = _dialog(qtbot, settings, openclaw=openclaw, environ={})
    view = dlg.openclaw_view
    rows = {
        (
            p.severity,
            p.line,
            view.problem_model.index(r, 2).data(),
            view.problem_model.index(r, 3).data(),
        )
        for r, p in enumerate(view.problems())
    }
    lines = CONFIG.splitlines()
    bogus_line = next(i for i, t in enumerate(lines, 1) if "bogusKey" in t)
    share_line = next(i for i, t in enumerate(lines, 1) if "maxHistoryShare" in t)
    assert ("error", bogus_line, "agents.defaults.compaction.bogusKey", "unknown key") in rows
    assert (
        "error",
        share_line,
        "agents.defaults.compaction.maxHistoryShare",
        "must be a number between 0.1 and 0.9, got 2",
    ) in rows
    assert view.problem_model.index(0, 1).data() == str(min(bogus_line, share_line))
    assert "2 errors" in view.status_label.text()
    text = view.source_view.toPlainText()
    assert "// agents.defaults.memoryContext" in text and '"hardCapTokens": 6000' in text
    assert '"bogusKey": 1' in text and view.source_view.isReadOnly()
    effective = {s.path: (s.value, s.source) for s in view.settings_model._rows}
    assert effective["memoryContext.hardCapTokens"] == (6000, "file")
    assert effective["memoryContext.autoRecallMinScore"] == (0.7, "default")
    assert effective["compaction.mode"] == ("safeguard", "file")
    assert effective["compaction.maxHistoryShare"] == (0.5, "invalid: default")
    assert effective["compaction.memoryFlush.softThresholdTokens"] == (5000, "file")
    assert view.settings_model.index(1, 1).data() == "6,000"
    assert effective["compaction (effective reserve)"] == (30000, "max(reserve, floor)")
    assert str(openclaw.path) in view.file_label.text()


def test_openclaw_reload_and_errors(qtbot, settings, openclaw):
    dlg = _dialog(qtbot, settings, openclaw=openclaw, environ={})
    path = Path(openclaw.path)
    path.write_text("{agents: {defaults: {compaction: {mode: 'default'}}}}")
    qtbot.mouseClick(dlg.reload_button, Qt.MouseButton.LeftButton)
    assert dlg.openclaw_view.problems() == [] and "Valid." in dlg.openclaw_view.status_label.text()
    path.write_text("{agents: ")
    qtbot.mouseClick(dlg.reload_button, Qt.MouseButton.LeftButton)
    assert "Cannot read it" in dlg.openclaw_view.status_label.text()
    assert str(path) in dlg.openclaw_view.status_label.text()
    assert dlg.reload_button.isEnabled()
    none = _dialog(qtbot, settings, environ={})
    assert (
        "none loaded" in none.openclaw_view.file_label.text() and not none.reload_button.isEnabled()
    )
    broken = _dialog(qtbot, settings, openclaw_error="openclaw.json:3: invalid JSON5", environ={})
    assert "invalid JSON5" in broken.openclaw_view.status_label.text()


def test_restore_defaults_and_junk_in_the_settings_file(qtbot, settings):
    settings.set_values(
        [
            (
                LLM_PROVIDERS,
                '[{"label":"ok","kind":"openai","baseUrl":"http://h/v1","model":"m"}, 5, {"kind":"nope"}]',
            ),
            ("recall/minScore", "lots"),
            ("recall/decay", "7"),
            ("trim/protectedRecent", "-3"),
            ("embed/embedder", "word2vec"),
        ]
    )
    cfg = load_app_config(settings)
    assert [p.label for p in cfg.providers] == ["ok"]
    assert (
        cfg.recall.min_score == 0.7 and cfg.recall.decay == 1.0 and cfg.trim.protected_recent == 0
    )
    assert cfg.embedder == "hash"
    settings.set_values([(LLM_PROVIDERS, "not json")])
    assert load_app_config(settings).providers == DEFAULT_PROVIDERS
    settings.set_values([(LLM_PROVIDERS, "[]")])
    assert load_app_config(settings).providers == ()
    dlg = _dialog(qtbot, settings, environ={})
    assert dlg.providers_page.providers() == [] and not dlg.providers_page.form.isEnabled()
    qtbot.mouseClick(dlg.defaults_button, Qt.MouseButton.LeftButton)
    assert dlg.config() == AppConfig()


def test_screenshots(qtbot, settings, openclaw, tmp_path):
    dlg = _dialog(qtbot, settings, openclaw=openclaw, environ={"ANTHROPIC_API_KEY": SECRET})
    dlg.show()
    qtbot.waitExposed(dlg)
    for i, name in enumerate(("providers", "search", "safety", "openclaw")):
        dlg.tabs.setCurrentIndex(i)
        assert dlg.grab().save(str(tmp_path / f"settings-{name}.png"))
