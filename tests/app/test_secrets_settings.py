"""Secrets never stored: keys in the OS keychain via the dialog, key-shaped fields refused,
a settings file holding a key cleaned on load with a visible warning; the Safety tab."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QMessageBox, QPlainTextEdit, QWidget

from app.app_config import (
    LLM_PROVIDERS,
    AppConfig,
    ProviderSpec,
    SafetyDefaults,
    load_app_config,
    prepare_settings,
    save_app_config,
)
from app.settings import AppSettings
from app.settings_dialog import SettingsDialog
from core.io import limits
from core.safety.secrets import SERVICE
from tests.core.test_secrets import LockedKeyring, MemoryKeyring

SECRET = "sk-ant-api03-Zq8vY2mN4kLp7Rt1Xw9BcD3fGh6Jk0Lm"
GH = "ghp_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78"
PASSWORD = "hunter2-Pa55w0rd"
QUERY_KEY = "q9Z8y7X6w5V4u3T2"


@pytest.fixture
def use_keyring():
    before = keyring.get_keyring()

    def install(backend):
        keyring.set_keyring(backend)
        return backend

    yield install
    keyring.set_keyring(before)


@pytest.fixture
def memory(use_keyring):
    return use_keyring(MemoryKeyring())


@pytest.fixture(autouse=True)
def _line_limit_restored():
    yield
    limits.set_max_line_bytes(None)


def _ini(folder: Path) -> Path:
    return folder / "memlens" / "memlens.ini"


def _settings() -> AppSettings:
    return AppSettings(
        QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "memlens", "memlens")
    )


def _dialog(qtbot, settings, **kw):
    dlg = SettingsDialog(settings, **kw)
    qtbot.addWidget(dlg)
    return dlg


def _texts(widget: QWidget) -> str:
    """Every text a screenshot or a screen reader could show."""
    out = [widget.toolTip(), widget.windowTitle()]
    for w in [widget, *widget.findChildren(QWidget)]:
        out += [w.toolTip(), w.windowTitle(), w.statusTip(), w.whatsThis()]
        if isinstance(w, QLineEdit | QLabel):
            out.append(w.text())
        if isinstance(w, QLineEdit):
            out.append(w.placeholderText())
        if isinstance(w, QPlainTextEdit):
            out.append(w.toPlainText())
    model = widget.providers_page.model
    for r in range(model.rowCount()):
        for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            out.append(str(model.index(r).data(role)))
    return "\n".join(out)


def _files(*roots: Path) -> list[Path]:
    return [p for root in roots for p in root.rglob("*") if p.is_file()]


# --- the key goes to the keychain, never to the settings file --------------------------


def test_a_key_stored_from_the_dialog_is_in_the_keychain_only(
    qtbot, memory, isolated_settings, caplog, monkeypatch
):
    caplog.set_level(logging.DEBUG)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    settings = _settings()
    dlg = _dialog(qtbot, settings)  # the process environment: ANTHROPIC_API_KEY unset
    page = dlg.providers_page
    page.select(0)
    assert page.key_edit.text() == "ANTHROPIC_API_KEY"
    assert "not set" in page.key_status.text()
    assert page.store_key_button.isEnabled() and not page.remove_key_button.isEnabled()

    qtbot.mouseClick(page.store_key_button, Qt.MouseButton.LeftButton)
    key_dialog = page.key_dialog
    assert key_dialog is not None and key_dialog.isVisible()
    assert key_dialog.key_edit.echoMode() == QLineEdit.EchoMode.Password
    qtbot.keyClicks(key_dialog.key_edit, SECRET)
    key_dialog.accept()

    assert memory.entries == {(SERVICE, "ANTHROPIC_API_KEY"): SECRET}
    assert key_dialog.key_edit.text() == ""  # the key stays in no widget
    assert page.key_status.text().endswith("set (keychain)")
    assert "stored in the OS keychain" in page.keychain_label.text()
    assert page.remove_key_button.isEnabled()
    assert SECRET not in _texts(dlg)
    dlg.show()
    qtbot.waitExposed(dlg)
    dlg.grab().save(str(isolated_settings / "settings-shot.png"))

    dlg.accept()
    settings.sync()
    # read the bytes before anything opens the file again (opening it cleans it)
    files = _files(isolated_settings, Path(os.environ["MEMLENS_DATA_DIR"]))
    assert _ini(isolated_settings) in files
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    assert load_app_config(_settings()).providers[0].key_env == "ANTHROPIC_API_KEY"
    assert "ANTHROPIC_API_KEY" in caplog.text and SECRET not in caplog.text


def test_the_environment_wins_over_the_keychain_and_a_key_can_be_removed(
    qtbot, memory, isolated_settings
):
    memory.entries[(SERVICE, "MY_LLM_KEY")] = SECRET
    env = {"MY_LLM_KEY": "from-the-environment"}
    dlg = _dialog(qtbot, _settings(), environ=env)
    page = dlg.providers_page
    page.select(1)
    page.key_edit.clear()
    qtbot.keyClicks(page.key_edit, "MY_LLM_KEY")
    assert page.key_status.text().endswith("set (environment)")
    env.clear()
    page.key_edit.textEdited.emit("MY_LLM_KEY")
    assert page.key_status.text().endswith("set (keychain)")

    asked: list[str] = []
    page.confirm_remove = lambda _parent, name: asked.append(name) is None and False
    qtbot.mouseClick(page.remove_key_button, Qt.MouseButton.LeftButton)
    assert asked == ["MY_LLM_KEY"] and (SERVICE, "MY_LLM_KEY") in memory.entries  # declined
    page.confirm_remove = lambda _parent, _name: True
    qtbot.mouseClick(page.remove_key_button, Qt.MouseButton.LeftButton)
    assert memory.entries == {}
    assert "removed from the OS keychain" in page.keychain_label.text()
    assert "not set" in page.key_status.text() and not page.remove_key_button.isEnabled()


def test_without_a_keychain_the_action_is_disabled_with_the_reason(qtbot, use_keyring):
    use_keyring(fail.Keyring())
    dlg = _dialog(qtbot, _settings(), environ={})
    page = dlg.providers_page
    page.select(0)
    assert not page.store_key_button.isEnabled() and not page.remove_key_button.isEnabled()
    assert "no OS keychain was found" in page.store_key_button.toolTip()
    assert "Keychain unavailable" in page.keychain_label.text()
    assert "not set" in page.key_status.text()
    qtbot.mouseClick(page.store_key_button, Qt.MouseButton.LeftButton)
    assert page.key_dialog is None


def test_a_keychain_that_refuses_shows_why_and_keeps_nothing(qtbot, memory, use_keyring):
    dlg = _dialog(qtbot, _settings(), environ={})
    page = dlg.providers_page
    page.select(0)
    qtbot.mouseClick(page.store_key_button, Qt.MouseButton.LeftButton)
    key_dialog = page.key_dialog
    use_keyring(LockedKeyring())  # locked between opening the dialog and storing
    qtbot.keyClicks(key_dialog.key_edit, SECRET)
    key_dialog.accept()
    assert key_dialog.isVisible() and "Not stored" in key_dialog.error_label.text()
    assert SECRET not in key_dialog.error_label.text()
    key_dialog.reject()
    assert key_dialog.key_edit.text() == "" and SECRET not in _texts(dlg)


# --- a key-shaped value in any other field is refused ----------------------------------


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("label_edit", SECRET, "label"),
        ("url_edit", f"https://me:{PASSWORD}@proxy.example.com/v1", "base URL"),
        ("url_edit", f"https://api.example.com/v1?api_key={QUERY_KEY}", "base URL"),
        ("url_edit", f"https://api.example.com/v1?key={QUERY_KEY}", "base URL"),
        ("model_edit", GH, "model"),
        ("fallback_edit", f"gpt-4o, {SECRET}", "fallback models"),
    ],
)
def test_a_key_shaped_value_disables_ok(qtbot, isolated_settings, field, value, named):
    settings = _settings()
    dlg = _dialog(qtbot, settings, environ={})
    page = dlg.providers_page
    page.select(1)
    edit = getattr(page, field)
    edit.clear()
    qtbot.keyClicks(edit, value)
    assert not dlg.ok_button.isEnabled()
    assert f"{named} holds what looks like a key or password" in dlg.problem_label.text()
    assert dlg.problem_label.isVisible() or not dlg.isVisible()
    secret_part = value.split(", ")[-1] if field == "fallback_edit" else value
    for shown in (dlg.problem_label.text(), page.problem_label.text()):
        assert secret_part not in shown
    assert SECRET not in str(page.model.index(1).data(Qt.ItemDataRole.DisplayRole))
    dlg.accept()  # refused
    assert dlg.result() == 0 and settings.value(LLM_PROVIDERS) is None
    settings.sync()
    ini = _ini(isolated_settings)
    assert not ini.exists() or secret_part.encode() not in ini.read_bytes()


def test_save_never_writes_a_key_shaped_value():
    spec = ProviderSpec(
        SECRET, "openai", f"https://me:{PASSWORD}@h.example/v1?key={QUERY_KEY}", "m", (GH,)
    )
    settings = _settings()
    save_app_config(settings, AppConfig(providers=(spec,)))
    raw = str(settings.value(LLM_PROVIDERS))
    for secret in (SECRET, PASSWORD, QUERY_KEY, GH):
        assert secret not in raw
    (saved,) = load_app_config(settings).providers
    assert saved.base_url == "https://me@h.example/v1" and saved.fallback_models == ()


# --- a settings file that holds a key is cleaned on load --------------------------------

DIRTY = f"""[General]
token={GH}

[llm]
apiKey={SECRET}
providers="[{{\\"label\\":\\"Proxy\\",\\"kind\\":\\"openai\\",\\"baseUrl\\":\\"https://me:{PASSWORD}@proxy.example.com/v1?key={QUERY_KEY}\\",\\"model\\":\\"gpt-4o\\",\\"apiKey\\":\\"{SECRET}x\\",\\"keyEnv\\":\\"OPENAI_API_KEY\\"}}]"

[places]
last=/srv/agents
recent=/srv/agents, {GH}x

[recall]
hardCapTokens=2500

[view]
theme=dark
"""
SECRETS = (SECRET, GH, PASSWORD, QUERY_KEY)


def _seed(folder: Path) -> Path:
    ini = _ini(folder)
    ini.parent.mkdir(parents=True, exist_ok=True)
    ini.write_text(DIRTY)
    assert all(s.encode() in ini.read_bytes() for s in SECRETS)
    return ini


def test_a_settings_file_holding_keys_is_cleaned_on_load(isolated_settings, caplog):
    ini = _seed(isolated_settings)
    settings = _settings()
    cleaned = prepare_settings(settings)
    assert sorted(cleaned) == ["llm/apiKey", "llm/providers", "places/recent", "token"]
    data = ini.read_bytes()  # rewritten at once, before anything else saves
    for secret in SECRETS:
        assert secret.encode() not in data, secret
    # what was not a secret stays
    again = _settings()
    assert (
        again.theme == "dark"
        and again.recent == ["/srv/agents"]
        and again.last_place == "/srv/agents"
    )
    assert load_app_config(again).recall.hard_cap_tokens == 2500
    (proxy,) = load_app_config(again).providers
    assert proxy.base_url == "https://me@proxy.example.com/v1"
    assert proxy.key_env == "OPENAI_API_KEY" and proxy.model == "gpt-4o"
    # the log says which keys, never what they held
    assert "llm/apiKey" in caplog.text and str(ini) in caplog.text
    assert not any(s in caplog.text for s in SECRETS)
    assert prepare_settings(again) == []  # clean now


def test_opening_or_loading_the_settings_cleans_the_file(isolated_settings):
    ini = _seed(isolated_settings)
    settings = _settings()  # opening the file is enough
    assert not any(s.encode() in ini.read_bytes() for s in SECRETS)
    assert "llm/apiKey" in settings.take_cleaned() and settings.take_cleaned() == []
    time.sleep(0.01)
    ini.write_text(DIRTY)  # another program writes a key while memlens runs
    (proxy,) = load_app_config(settings).providers
    assert not any(s.encode() in ini.read_bytes() for s in SECRETS)
    assert proxy.base_url == "https://me@proxy.example.com/v1"
    assert "llm/providers" in settings.take_cleaned()


def test_the_app_warns_at_start_when_it_cleaned_the_settings(qtbot, isolated_settings):
    from app.main_window import MainWindow

    ini = _seed(isolated_settings)
    window = MainWindow(_settings())
    qtbot.addWidget(window)
    box = window.secrets_warning
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert "llm/apiKey" in box.text() and "llm/providers" in box.text()
    assert "environment variable or the OS keychain" in box.text()
    assert not any(s in box.text() for s in SECRETS)
    assert not any(s.encode() in ini.read_bytes() for s in SECRETS)
    box.close()
    clean = MainWindow(_settings())
    qtbot.addWidget(clean)
    assert clean.secrets_warning is None


def test_the_dialog_cleans_a_file_edited_while_memlens_runs(qtbot, isolated_settings):
    ini = _seed(isolated_settings)
    dlg = _dialog(qtbot, _settings(), environ={})
    assert dlg.cleaned_label.isVisibleTo(dlg) and "llm/apiKey" in dlg.cleaned_label.text()
    assert not any(s in _texts(dlg) for s in SECRETS)
    assert not any(s.encode() in ini.read_bytes() for s in SECRETS)


# --- the Safety tab ---------------------------------------------------------------------


def test_safety_fields_round_trip_and_apply(qtbot, isolated_settings):
    wanted = SafetyDefaults(
        connect_timeout=5.5,
        read_timeout=90.0,
        total_timeout=300.0,
        backups_keep=3,
        backups_days=7,
        max_line_bytes=16 * 1024 * 1024,
    )
    dlg = _dialog(qtbot, _settings(), environ={})
    page = dlg.safety_page
    assert dlg.config().safety == SafetyDefaults()
    for box in (
        page.connect_timeout,
        page.read_timeout,
        page.total_timeout,
        page.backups_keep,
        page.backups_days,
        page.max_line,
    ):
        assert len(box.toolTip()) > 30
    page.connect_timeout.setValue(5.5)
    page.read_timeout.setValue(90)
    page.total_timeout.setValue(300)
    page.backups_keep.setValue(3)
    page.backups_days.setValue(7)
    page.max_line.setValue(16)
    assert dlg.config().safety == wanted
    dlg.accept()
    assert limits.max_line_bytes() == 16 * 1024 * 1024
    assert load_app_config(_settings()).safety == wanted
    second = _dialog(qtbot, _settings(), environ={})
    assert second.config().safety == wanted
    assert second.safety_page.max_line.text() == "16 MB"
    second.safety_page.backups_keep.setValue(0)
    assert second.safety_page.backups_keep.text() == "keep all"
    limits.set_max_line_bytes(None)
    prepare_settings(_settings())  # at start
    assert limits.max_line_bytes() == 16 * 1024 * 1024


def test_an_odd_line_size_is_kept_to_the_byte(qtbot):
    settings = _settings()
    save_app_config(settings, AppConfig(safety=SafetyDefaults(max_line_bytes=3_000_000)))
    dlg = _dialog(qtbot, settings, environ={})
    assert dlg.safety_page.max_line.value() == 3
    assert dlg.config().safety.max_line_bytes == 3_000_000


def test_layout_blobs_and_plain_values_survive_cleaning():
    from PySide6.QtCore import QByteArray

    settings = _settings()
    blob = QByteArray(bytes(range(256)) * 4)
    settings.set_blob("geometry", blob)
    settings.set_values([("recall/minScore", 0.55), ("llm/keyEnv", "OPENAI_API_KEY")])
    settings.add_recent("/srv/agents")
    settings.sync()
    assert settings.clean_secrets() == []
    again = _settings()
    assert again.blob("geometry") == blob and again.recent == ["/srv/agents"]
    assert again.value("llm/keyEnv") == "OPENAI_API_KEY"


def test_an_existing_place_is_kept_unless_its_name_holds_a_key(tmp_path):
    hashed = tmp_path / ("0123456789abcdef" * 3)  # a hex run, as in a cache folder: no key
    keyed = tmp_path / SECRET
    hashed.mkdir()
    keyed.mkdir()
    settings = _settings()
    settings.add_recent(str(keyed))
    settings.add_recent(str(hashed))
    assert settings.clean_secrets() == ["places/recent"]
    assert settings.recent == [str(hashed)] and settings.last_place == str(hashed)
