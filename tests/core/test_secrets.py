"""core.safety.secrets: keys from the environment or the OS keychain; what looks like a secret."""

from __future__ import annotations

import logging

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail, null
from keyring.errors import KeyringLocked, PasswordDeleteError

from core.safety.secrets import (
    SERVICE,
    KeychainError,
    delete_key,
    is_blank_after_scrub,
    is_secret_name,
    key_source,
    keychain_key,
    keychain_status,
    looks_like_secret,
    resolve_key,
    scrub,
    store_key,
)

SECRET = "sk-ant-api03-Zq8vY2mN4kLp7Rt1Xw9BcD3fGh6J"


class MemoryKeyring(KeyringBackend):
    """An OS keychain held in a dict.

    A test double: no OS keychain (Secret Service, KWallet, macOS Keychain) can run
    here, and keyring itself ships only the ``fail`` and ``null`` backends. It goes
    through keyring's real API (``keyring.set_keyring``), so core.safety.secrets is
    exercised exactly as with a desktop keychain.
    """

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.entries.pop((service, username), None) is None:
            raise PasswordDeleteError("not there")


class LockedKeyring(KeyringBackend):
    """A keychain that is locked or unreachable (a D-Bus failure): every call fails."""

    priority = 1  # type: ignore[assignment]

    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringLocked("Failed to unlock the collection")

    def set_password(self, service: str, username: str, password: str) -> None:
        # a careless backend that repeats what it was given
        raise RuntimeError(f"org.freedesktop.DBus.Error.ServiceUnknown while storing {password}")

    def delete_password(self, service: str, username: str) -> None:
        raise RuntimeError("org.freedesktop.DBus.Error.ServiceUnknown")


@pytest.fixture
def use_keyring():
    """Install a backend for one test; the one before comes back afterwards."""
    before = keyring.get_keyring()

    def install(backend: KeyringBackend) -> KeyringBackend:
        keyring.set_keyring(backend)
        return backend

    yield install
    keyring.set_keyring(before)


@pytest.fixture
def memory(use_keyring) -> MemoryKeyring:
    return use_keyring(MemoryKeyring())


def test_resolve_order_environment_then_keychain(memory):
    store_key("MY_KEY", f"  {SECRET}\n")
    assert memory.entries == {(SERVICE, "MY_KEY"): SECRET}
    assert resolve_key("MY_KEY", {}) == SECRET
    assert key_source("MY_KEY", {}) == "keychain"
    assert resolve_key("MY_KEY", {"MY_KEY": "from-env"}) == "from-env"
    assert key_source("MY_KEY", {"MY_KEY": "from-env"}) == "environment"
    assert resolve_key("MY_KEY", {"MY_KEY": "   "}) == SECRET  # blank is unset
    assert resolve_key("OTHER", {}) is None and key_source("OTHER", {}) is None
    assert resolve_key("", {"": "x"}) is None


def test_resolve_reads_the_process_environment_by_default(memory, monkeypatch):
    monkeypatch.setenv("MEMLENS_TEST_KEY", "env-value")
    store_key("MEMLENS_TEST_KEY", SECRET)
    assert resolve_key("MEMLENS_TEST_KEY") == "env-value"
    monkeypatch.delenv("MEMLENS_TEST_KEY")
    assert resolve_key("MEMLENS_TEST_KEY") == SECRET


def test_store_and_delete(memory):
    assert keychain_status().available and "MemoryKeyring" in keychain_status().reason
    store_key("K1", SECRET)
    assert keychain_key("K1") == SECRET
    assert delete_key("K1") is True
    assert keychain_key("K1") is None and delete_key("K1") is False
    for name, value in (("not a name", SECRET), ("1ABC", SECRET), (SECRET, SECRET)):
        with pytest.raises(KeychainError, match="NAME"):
            store_key(name, value)
    for value in ("", "   ", "two words"):
        with pytest.raises(KeychainError):
            store_key("K1", value)
    assert memory.entries == {}
    assert keychain_key("bad name") is None


@pytest.mark.parametrize("backend", [fail.Keyring(), null.Keyring()])
def test_no_keychain_is_a_reason_not_a_crash(use_keyring, backend, monkeypatch):
    use_keyring(backend)
    status = keychain_status()
    assert not status.available and "keychain" in status.reason
    assert resolve_key("NOPE_KEY", {}) is None and key_source("NOPE_KEY", {}) is None
    monkeypatch.setenv("NOPE_KEY", "from-env")
    assert resolve_key("NOPE_KEY") == "from-env"  # the environment still works
    with pytest.raises(KeychainError, match="keychain"):
        store_key("NOPE_KEY", SECRET)
    with pytest.raises(KeychainError, match="keychain"):
        delete_key("NOPE_KEY")


def test_a_locked_keychain_says_why_and_never_echoes_the_key(use_keyring, caplog):
    use_keyring(LockedKeyring())
    caplog.set_level(logging.DEBUG)
    status = keychain_status()
    assert not status.available and "KeyringLocked" in status.reason
    assert resolve_key("LOCKED_KEY", {}) is None
    with pytest.raises(KeychainError) as info:
        store_key("LOCKED_KEY", SECRET)
    assert "ServiceUnknown" in str(info.value) and SECRET not in str(info.value)
    with pytest.raises(KeychainError, match="could not remove"):
        delete_key("LOCKED_KEY")
    assert SECRET not in caplog.text


def test_no_key_is_ever_logged(memory, caplog):
    caplog.set_level(logging.DEBUG)
    store_key("LOGGED_KEY", SECRET)
    assert resolve_key("LOGGED_KEY", {}) == SECRET
    assert key_source("LOGGED_KEY", {}) == "keychain"
    delete_key("LOGGED_KEY")
    assert "LOGGED_KEY" in caplog.text  # the name is logged ...
    assert SECRET not in caplog.text  # ... never the key


@pytest.mark.parametrize(
    "text",
    [
        SECRET,
        "sk-proj-abcdefghijklmnopqrstuvwx",
        "sk_live_abcdefghijklmnop",
        "ghp_abcdefghijklmnopqrstuvwxyz0123",
        "github_pat_11ABCDEFG0123456789_abcdefghij",
        "xoxb-1234567890-abcdefghij",
        "AKIAIOSFODNN7EXAMPLE",
        "AIzaSyA1234567890abcdefghijklmnopqrstu",
        "npm_abcdefghijklmnopqrstuvwxyz0123",
        "hf_abcdefghijklmnopqrstuvwxyz",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----",
        "https://user:hunter2@proxy.example.com/v1",
        "https://api.example.com/v1?api_key=abc123",
        "https://api.example.com/v1?x=1&key=abc123",
        "https://api.example.com/v1?token=abc",
        "my model sk-or-v1-abcdefghijklmnop",
        "a3f9c2e1b4d5a6f7e8d9c0b1a2f3e4d5",
    ],
)
def test_key_shaped_text(text):
    assert looks_like_secret(text)
    cleaned = scrub(text)
    assert not looks_like_secret(cleaned), cleaned


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Anthropic",
        "Local (Ollama)",
        "https://api.openai.com/v1",
        "http://127.0.0.1:11434/v1",
        "http://user@proxy.example.com/v1",
        "https://api.example.com/v1?x=1",
        "claude-sonnet-4-5",
        "gpt-4o-mini",
        "llama3.1:8b",
        "Qwen2.5-Coder-32B-Instruct",
        "ANTHROPIC_API_KEY",
        "/home/alice/.openclaw/agents/main",
        "dark",
    ],
)
def test_ordinary_text_is_not_a_secret(text):
    assert not looks_like_secret(text)
    assert scrub(text) == text


def test_scrub_keeps_what_is_not_secret():
    assert scrub("https://u:pw@host.example/v1?key=abc&x=1") == "https://u@host.example/v1?x=1"
    assert scrub("https://host.example/v1?x=1&api_key=abc") == "https://host.example/v1?x=1"
    assert scrub(f"label {SECRET}") == "label [REDACTED]"
    assert is_blank_after_scrub(SECRET) and is_blank_after_scrub(f' "{SECRET}" ')
    assert not is_blank_after_scrub(f"label {SECRET}")


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("llm/apiKey", True),
        ("api_key", True),
        ("OPENAI_API_KEY", True),
        ("token", True),
        ("accessToken", True),
        ("client_secret", True),
        ("password", True),
        ("keyEnv", False),
        ("recall/hardCapTokens", False),
        ("trim/reserveTokens", False),
        ("baseUrl", False),
        ("label", False),
    ],
)
def test_secret_names(name, secret):
    assert is_secret_name(name) == secret


def test_llm_client_sends_the_key_from_the_keychain(memory, monkeypatch, server):
    """With the variable unset, the HTTP client takes the key from the keychain at call time."""
    from core.compaction.provider import ProviderChoice, provider_key_status
    from core.llm import LLMError
    from tests.core.test_llm import HELLO, oa_ok, openai

    name = "MEMLENS_KEYCHAIN_ONLY_KEY"
    monkeypatch.delenv(name, raising=False)
    choice = ProviderChoice("x", "openai:http://127.0.0.1:9/v1:m", name)
    assert provider_key_status(choice, {}) == "missing"
    store_key(name, SECRET)
    assert provider_key_status(choice, {}) == "set"
    server.add(oa_ok())
    openai(server, api_key_env=name).complete(HELLO)
    assert server.seen[-1].headers["authorization"] == f"Bearer {SECRET}"
    delete_key(name)
    with pytest.raises(LLMError) as info:
        openai(server, api_key_env=name).complete(HELLO)
    assert "keychain" in str(info.value) and SECRET not in str(info.value)
    assert len(server.seen) == 1  # nothing sent without a key
