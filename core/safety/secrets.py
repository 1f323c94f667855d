"""API keys: read from the environment or the OS keychain, never from a file memlens writes.

A provider names the environment variable that holds its key (``OPENAI_API_KEY``).
:func:`resolve_key` returns that variable's value; when it is unset, the OS
keychain entry stored under the service ``memlens`` and the variable's name
(:func:`store_key`). The keychain is reached through :mod:`keyring`; any failure
of it (no backend, a locked keychain, no D-Bus) is reported as a reason string,
never raised to the caller who only reads, and no value is ever logged.

The second half finds what looks like a secret in text memlens would store
(:func:`looks_like_secret`, :func:`scrub`, :func:`is_secret_name`): the settings
dialog refuses such a value and a settings file that holds one is cleaned.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from core.safety.redact import redact

if TYPE_CHECKING:
    from collections.abc import Mapping

    from keyring.backend import KeyringBackend

log = logging.getLogger(__name__)

SERVICE = "memlens"
"""The keychain service every memlens key is stored under (the username is the variable)."""
_PROBE = "__memlens_probe__"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

KeySource = Literal["environment", "keychain"]


class KeychainError(Exception):
    """The OS keychain could not do what was asked; the message says why (never a key)."""


@dataclass(frozen=True, slots=True)
class KeychainStatus:
    """Whether the OS keychain can be used.

    Attributes
    ----------
    available
        True when keys can be stored and read.
    reason
        The backend's name when available, else why it is not (for a tooltip).
    """

    available: bool
    reason: str


def _backend() -> KeyringBackend:
    import keyring

    return keyring.get_keyring()


def _describe(exc: BaseException, value: str | None = None) -> str:
    """*exc* as a one-line reason, without *value* or anything key-shaped."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if value:
        text = text.replace(value, "[REDACTED]")
    text = scrub(text)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _unusable(backend: KeyringBackend) -> str | None:
    """Why *backend* cannot hold keys (None when it can)."""
    from keyring.backends import chainer, fail, null

    if isinstance(backend, fail.Keyring):
        return (
            "no OS keychain was found (keyring has no backend here: a desktop keychain "
            "such as GNOME Keyring, KWallet, the macOS Keychain or Windows Credential "
            "Manager is needed)"
        )
    if isinstance(backend, null.Keyring):
        return "the keychain is switched off (keyring's null backend is selected)"
    if isinstance(backend, chainer.ChainerBackend) and not backend.backends:
        return "no OS keychain was found (keyring has no usable backend)"
    return None


def _name_of(backend: KeyringBackend) -> str:
    name = getattr(backend, "name", "") or type(backend).__name__
    return str(name)


def keychain_status() -> KeychainStatus:
    """Whether the OS keychain can be used, and its name or why not. Never raises."""
    try:
        backend = _backend()
        problem = _unusable(backend)
        if problem is not None:
            return KeychainStatus(False, problem)
        backend.get_password(SERVICE, _PROBE)  # a locked or unreachable keychain fails here
    except Exception as exc:  # any backend failure (D-Bus, locked, missing) is a reason
        return KeychainStatus(False, f"the OS keychain cannot be used ({_describe(exc)})")
    return KeychainStatus(True, f"OS keychain: {_name_of(backend)}")


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise KeychainError(
            "a key is stored under the NAME of its environment variable (letters, digits, _)"
        )


def keychain_key(name: str) -> str | None:
    """The key stored in the keychain for variable *name* (None if none or unavailable)."""
    if not _NAME.match(name):
        return None
    try:
        backend = _backend()
        if _unusable(backend) is not None:
            return None
        value = backend.get_password(SERVICE, name)
    except Exception as exc:  # a failing keychain reads as "not there"
        log.debug("keychain lookup of %s failed: %s", name, _describe(exc))
        return None
    value = (value or "").strip()
    return value or None


def resolve_key(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The key of variable *name*: the environment first, then the OS keychain.

    Parameters
    ----------
    name
        The environment variable's name (``OPENAI_API_KEY``); also the keychain
        entry's username under the service :data:`SERVICE`.
    environ
        Where variables are looked up (default: the process environment).

    Returns
    -------
    str or None
        The key with surrounding blanks removed; None when neither holds one.
        Never raises and never logs the key.
    """
    if not name:
        return None
    env = os.environ if environ is None else environ
    value = env.get(name, "").strip()
    if value:
        return value
    return keychain_key(name)


def key_source(name: str, environ: Mapping[str, str] | None = None) -> KeySource | None:
    """Where :func:`resolve_key` would find the key of *name* (None: nowhere)."""
    if not name:
        return None
    env = os.environ if environ is None else environ
    if env.get(name, "").strip():
        return "environment"
    return "keychain" if keychain_key(name) is not None else None


def store_key(name: str, value: str) -> None:
    """Store *value* in the OS keychain as the key of variable *name*.

    Raises
    ------
    KeychainError
        When *name* is not a variable name, *value* is blank or holds blanks, or
        the keychain refuses (the message says why and never holds the key).
    """
    _check_name(name)
    value = value.strip()
    if not value:
        raise KeychainError("the key is empty")
    if any(c.isspace() for c in value):
        raise KeychainError("a key has no spaces or line breaks: paste the key alone")
    try:
        backend = _backend()
        problem = _unusable(backend)
        if problem is not None:
            raise KeychainError(problem)
        backend.set_password(SERVICE, name, value)
    except KeychainError:
        raise
    except Exception as exc:
        raise KeychainError(f"the keychain refused the key ({_describe(exc, value)})") from None
    log.info("the key of %s was stored in the OS keychain (%s)", name, _name_of(backend))


def delete_key(name: str) -> bool:
    """Remove the keychain entry of variable *name*; False when there was none.

    Raises
    ------
    KeychainError
        When the keychain cannot be used.
    """
    _check_name(name)
    from keyring.errors import PasswordDeleteError

    try:
        backend = _backend()
        problem = _unusable(backend)
        if problem is not None:
            raise KeychainError(problem)
        if backend.get_password(SERVICE, name) is None:
            return False
        backend.delete_password(SERVICE, name)
    except KeychainError:
        raise
    except PasswordDeleteError:
        return False
    except Exception as exc:
        raise KeychainError(f"the keychain could not remove the key ({_describe(exc)})") from None
    log.info("the key of %s was removed from the OS keychain", name)
    return True


# --- what looks like a secret -----------------------------------------------------------

REDACTED = "[REDACTED]"

# Key shapes by prefix, for when redact() lets one through (kept here so the test
# holds whatever redact() learns).
_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"sk-(?:ant-|proj-|or-)?[A-Za-z0-9_\-]{8,}"
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}"
    r"|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|glpat-[A-Za-z0-9_\-]{16,}"
    r"|xox[abposre]-[A-Za-z0-9\-]{8,}|xapp-[A-Za-z0-9\-]{8,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{30,}"
    r"|npm_[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{20,}|gsk_[A-Za-z0-9]{16,}|xai-[A-Za-z0-9]{16,}"
    r"|pypi-[A-Za-z0-9_\-]{16,}|dop_v1_[a-f0-9]{16,}|shp(?:at|ss|ca)_[a-fA-F0-9]{16,}"
    r"|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"
    r")",
    re.A,
)
_PEM = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S
)
_URL_PASSWORD = re.compile(r"(://[^\s/:@?#]+):[^\s/@?#]*@", re.A)
_URL_USERINFO_TOKEN = re.compile(r"://([^\s/:@?#]{16,})@", re.A)
_QUERY_SECRET = re.compile(
    r"([?&;])((?:api[_\-]?key|apikey|key|access[_\-]?token|auth[_\-]?token|token|secret"
    r"|client[_\-]?secret|password|passwd|pwd|sig|signature|auth)=)[^&#\s]+",
    re.I | re.A,
)
_SECRET_NAMES = frozenset(
    {
        "apikey",
        "key",
        "token",
        "accesstoken",
        "authtoken",
        "refreshtoken",
        "bearertoken",
        "idtoken",
        "secret",
        "clientsecret",
        "secretkey",
        "accesskey",
        "secretaccesskey",
        "privatekey",
        "password",
        "passwd",
        "passphrase",
        "authorization",
        "bearer",
        "credential",
        "credentials",
    }
)


def is_secret_name(name: str) -> bool:
    """Whether a setting or JSON field called *name* holds a secret (``apiKey``, ``token``).

    Only the last ``/`` or ``.`` segment counts, compared without ``_``/``-``/case,
    so ``llm/apiKey`` and ``OPENAI_API_KEY`` are secret names and ``keyEnv`` or
    ``hardCapTokens`` are not.
    """
    last = re.split(r"[/.]", name)[-1]
    flat = re.sub(r"[_\-\s]", "", last).lower()
    return flat in _SECRET_NAMES or flat.endswith(("apikey", "secret", "password", "token"))


def looks_like_secret(text: str) -> bool:
    """Whether *text* holds something key-shaped.

    True when :func:`core.safety.redact.redact` would change it, when it holds a known
    key prefix (``sk-``, ``ghp_``, ``AKIA``, ``AIza``, ``hf_``, a JWT, a PEM
    private key), a password in a URL (``https://user:pw@host``) or a secret in a
    URL query (``?api_key=``, ``?key=``, ``&token=``).
    """
    if not text:
        return False
    return bool(
        redact(text) != text
        or _PREFIXED.search(text)
        or _PEM.search(text)
        or _URL_PASSWORD.search(text)
        or _URL_USERINFO_TOKEN.search(text)
        or _QUERY_SECRET.search(text)
    )


def has_key_shape(text: str) -> bool:
    """Whether *text* holds a known key shape (a prefix, a PEM key, a URL credential).

    Narrower than :func:`looks_like_secret`: long hex or base64 runs alone, which
    file names can have, do not count.
    """
    return bool(
        _PREFIXED.search(text)
        or _PEM.search(text)
        or _URL_PASSWORD.search(text)
        or _QUERY_SECRET.search(text)
    )


def scrub(text: str) -> str:
    """*text* without its secrets: URL passwords and secret query values dropped, keys masked.

    ``https://u:pw@host/v1?key=abc&x=1`` becomes ``https://u@host/v1?x=1``; a key
    anywhere else becomes ``[REDACTED]``. Text with no secret comes back unchanged.
    """
    if not looks_like_secret(text):
        return text
    text = _URL_PASSWORD.sub(r"\1@", text)
    text = _URL_USERINFO_TOKEN.sub("://", text)
    text = _QUERY_SECRET.sub(lambda m: "" if m.group(1) != "?" else "?", text)
    text = re.sub(r"\?&+", "?", text)
    text = re.sub(r"\?(?=$|#)", "", text)
    text = _PEM.sub(REDACTED, text)
    text = _PREFIXED.sub(REDACTED, redact(text))
    return text


def is_blank_after_scrub(text: str) -> bool:
    """Whether nothing but masks and blanks is left of *text* once :func:`scrub` ran."""
    rest = re.sub(r"\[REDACTED[A-Z_0-9]*\]", "", scrub(text))
    return not rest.strip(" \t\r\n\"':=,;")
