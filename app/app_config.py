"""memlens's own settings, typed: LLM providers, embedder, recall and trim defaults.

Stored through :class:`app.settings.AppSettings` (QSettings) under the keys below;
anything unset or unreadable gives the default. An API key is never stored: a
provider keeps the *name* of the environment variable that holds it, and the key
is read when a request is sent: from that variable, else from the OS keychain
(:mod:`core.safety.secrets`). A field that looks like a key (a label, a URL with a
password or ``?key=``, a model name) is a problem that blocks saving, and what is
written or read back is scrubbed of anything key-shaped.
"""

from __future__ import annotations

import logging
import math
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from core.context.trim import PROTECTED_RECENT, RESERVE_TOKENS
from core.embed import EMBEDDERS
from core.io import jsonio
from core.io.limits import MAX_LINE_BYTES, set_max_line_bytes
from core.llm.providers import ANTHROPIC_URL
from core.recall.hybrid import SearchConfig
from core.safety.redact import redact
from core.safety.secrets import is_blank_after_scrub, key_source, looks_like_secret, scrub

if TYPE_CHECKING:
    from collections.abc import Mapping

    from app.settings import AppSettings

log = logging.getLogger(__name__)

ProviderKind = Literal["openai", "anthropic"]
KeyStatus = Literal["set (environment)", "set (keychain)", "not set", "not needed"]
KINDS: tuple[ProviderKind, ...] = ("openai", "anthropic")
KIND_LABELS = {"openai": "OpenAI-compatible", "anthropic": "Anthropic"}
OPENAI_URL = "https://api.openai.com/v1"

# QSettings keys
LLM_PROVIDERS = "llm/providers"
EMBEDDER = "embed/embedder"
RECALL_MIN_SCORE = "recall/minScore"
RECALL_VECTOR_WEIGHT = "recall/vectorWeight"
RECALL_BM25_WEIGHT = "recall/bm25Weight"
RECALL_DECAY = "recall/decay"
RECALL_HARD_CAP = "recall/hardCapTokens"
TRIM_PROTECTED_RECENT = "trim/protectedRecent"
TRIM_RESERVE = "trim/reserveTokens"
SAFETY_CONNECT_TIMEOUT = "safety/connectTimeout"
SAFETY_READ_TIMEOUT = "safety/readTimeout"
SAFETY_TOTAL_TIMEOUT = "safety/totalTimeout"
SAFETY_BACKUPS_KEEP = "safety/backupsKeep"
SAFETY_BACKUPS_DAYS = "safety/backupsDays"
SAFETY_MAX_LINE_BYTES = "safety/maxLineBytes"
KEYS = (
    LLM_PROVIDERS,
    EMBEDDER,
    RECALL_MIN_SCORE,
    RECALL_VECTOR_WEIGHT,
    RECALL_BM25_WEIGHT,
    RECALL_DECAY,
    RECALL_HARD_CAP,
    TRIM_PROTECTED_RECENT,
    TRIM_RESERVE,
    SAFETY_CONNECT_TIMEOUT,
    SAFETY_READ_TIMEOUT,
    SAFETY_TOTAL_TIMEOUT,
    SAFETY_BACKUPS_KEEP,
    SAFETY_BACKUPS_DAYS,
    SAFETY_MAX_LINE_BYTES,
)

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def key_name_problem(name: str) -> str | None:
    """Why *name* cannot be a key variable's name (None when it can; "" means no key).

    Catches a key pasted where its variable's name belongs, so it is never stored.
    """
    if not name:
        return None
    looks_secret = (
        redact(name) != name
        or name.startswith(("sk-", "sk_", "xai-", "gsk_", "ghp_", "AKIA"))
        or (
            len(name) >= 20
            and any(c.islower() for c in name)
            and any(c.isupper() for c in name)
            and any(c.isdigit() for c in name)
        )
    )
    if looks_secret:
        return (
            "this looks like a key itself: enter the NAME of the environment variable "
            "that holds it (e.g. OPENAI_API_KEY)"
        )
    if not _NAME.match(name):
        return "a variable name has letters, digits and _ only, and does not start with a digit"
    return None


def key_status(name: str, environ: Mapping[str, str] | None = None) -> KeyStatus:
    """Where the key of variable *name* is found: the environment first, then the keychain.

    The value is never returned. *environ* defaults to the process environment.
    """
    if not name:
        return "not needed"
    if key_name_problem(name) is not None:
        return "not set"
    source = key_source(name, os.environ if environ is None else environ)
    if source == "environment":
        return "set (environment)"
    return "set (keychain)" if source == "keychain" else "not set"


SECRET_FIELD_PROBLEM = (
    "holds what looks like a key or password; memlens never stores one "
    "(keep keys in the environment or the OS keychain)"
)


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """An LLM endpoint memlens can call.

    Parameters
    ----------
    label
        What pickers show.
    kind
        ``openai`` (any OpenAI-compatible server) or ``anthropic``.
    base_url
        The API root (``http://127.0.0.1:11434/v1``); "" for Anthropic's default.
    model
        The preferred model.
    fallback_models
        Tried in order when the model cannot answer (unknown model, bad answer).
    key_env
        Name of the environment variable holding the key ("" sends no key).
    """

    label: str
    kind: ProviderKind = "openai"
    base_url: str = ""
    model: str = ""
    fallback_models: tuple[str, ...] = ()
    key_env: str = ""

    @property
    def models(self) -> tuple[str, ...]:
        """The model, then the fallbacks."""
        return (self.model, *self.fallback_models)

    @property
    def url(self) -> str:
        """The base URL the client uses."""
        if self.kind == "anthropic":
            return self.base_url or ANTHROPIC_URL
        return self.base_url

    def spec(self, model: str | None = None) -> str:
        """The ``--llm`` spec of *model* (default: :attr:`model`).

        ``anthropic:MODEL`` cannot carry a base URL: use :meth:`make_client` for
        an Anthropic endpoint other than the default.
        """
        name = model if model is not None else self.model
        return f"anthropic:{name}" if self.kind == "anthropic" else f"openai:{self.url}:{name}"

    def specs(self) -> list[str]:
        """The specs of the model and of each fallback, in order."""
        return [self.spec(m) for m in self.models]

    def problems(self) -> list[str]:
        """What is wrong with this provider (empty when it is usable)."""
        out: list[str] = []
        if not self.label.strip():
            out.append("the label is empty")
        if self.kind not in KINDS:
            out.append(f"unknown kind {self.kind!r}")
        if self.kind == "openai" and not self.base_url:
            out.append("an OpenAI-compatible provider needs a base URL")
        if self.base_url and not re.match(r"^https?://[^\s/:]+", self.base_url):
            out.append("the base URL must start with http:// or https://")
        if not self.model.strip():
            out.append("the model is empty")
        if any(not m.strip() or any(c.isspace() for c in m) for m in self.models if m):
            out.append("a model name cannot contain spaces")
        problem = key_name_problem(self.key_env)
        if problem:
            out.append(f"key variable: {problem}")
        out.extend(f"the {name} {SECRET_FIELD_PROBLEM}" for name in self.secret_fields())
        return out

    def secret_fields(self) -> list[str]:
        """The fields (``label``, ``base URL``, ``model``, ``fallback models``) holding a key."""
        fields = {
            "label": [self.label],
            "base URL": [self.base_url],
            "model": [self.model],
            "fallback models": list(self.fallback_models),
        }
        return [name for name, texts in fields.items() if any(map(looks_like_secret, texts))]

    def scrubbed(self) -> ProviderSpec:
        """A copy without anything key-shaped in its fields (itself when clean)."""
        if not self.secret_fields():
            return self
        return ProviderSpec(
            label=scrub(self.label),
            kind=self.kind,
            base_url=scrub(self.base_url),
            model=scrub(self.model),
            fallback_models=tuple(
                scrub(m) for m in self.fallback_models if not is_blank_after_scrub(m)
            ),
            key_env=self.key_env,
        )

    @property
    def display_label(self) -> str:
        """The label for pickers and messages (masked if it looks like a key)."""
        return scrub(self.label) or "(no label)"

    def key_status(self, environ: Mapping[str, str] | None = None) -> KeyStatus:
        """Whether the key variable is set (see :func:`key_status`)."""
        return key_status(self.key_env, environ)

    def to_json(self) -> dict[str, Any]:
        """The stored form (names only, never a key: key-shaped text is scrubbed)."""
        clean = self.scrubbed()
        key_env = self.key_env if key_name_problem(self.key_env) is None else ""
        return {
            "label": clean.label,
            "kind": clean.kind,
            "baseUrl": clean.base_url,
            "model": clean.model,
            "fallbackModels": list(clean.fallback_models),
            "keyEnv": key_env,
        }

    @classmethod
    def from_json(cls, obj: Any) -> ProviderSpec:
        """Read the stored form.

        Raises
        ------
        ValueError
            When *obj* is not a provider.
        """
        if not isinstance(obj, dict):
            raise ValueError("a provider must be an object")
        kind = obj.get("kind", "openai")
        if kind not in KINDS:
            raise ValueError(f"unknown provider kind {kind!r}")
        text = {k: obj.get(k, "") for k in ("label", "baseUrl", "model", "keyEnv")}
        if not all(isinstance(v, str) for v in text.values()):
            raise ValueError("label, baseUrl, model and keyEnv must be strings")
        fallbacks = obj.get("fallbackModels", [])
        if not isinstance(fallbacks, list) or not all(isinstance(m, str) for m in fallbacks):
            raise ValueError("fallbackModels must be a list of strings")
        key_env = text["keyEnv"] if key_name_problem(text["keyEnv"]) is None else ""
        return cls(
            label=text["label"],
            kind=kind,
            base_url=text["baseUrl"],
            model=text["model"],
            fallback_models=tuple(m for m in fallbacks if m.strip()),
            key_env=key_env,
        ).scrubbed()


DEFAULT_PROVIDERS: tuple[ProviderSpec, ...] = (
    ProviderSpec(
        "Anthropic",
        "anthropic",
        "",
        "claude-sonnet-4-5",
        ("claude-haiku-4-5",),
        "ANTHROPIC_API_KEY",
    ),
    ProviderSpec("OpenAI", "openai", OPENAI_URL, "gpt-4o-mini", (), "OPENAI_API_KEY"),
    ProviderSpec("Local (Ollama)", "openai", "http://127.0.0.1:11434/v1", "llama3.1:8b"),
)


@dataclass(frozen=True, slots=True)
class RecallDefaults:
    """The recall knobs memlens starts with (the agent's defaults unless changed)."""

    min_score: float = 0.7
    vector_weight: float = 0.7
    bm25_weight: float = 0.3
    decay: float = 0.995
    hard_cap_tokens: int = 4000

    def search_config(self, base: SearchConfig | None = None) -> SearchConfig:
        """*base* (default: the agent's) with these knobs."""
        return (base or SearchConfig()).with_(
            min_score=self.min_score,
            vector_weight=self.vector_weight,
            bm25_weight=self.bm25_weight,
            decay=self.decay,
        )


@dataclass(frozen=True, slots=True)
class TrimDefaults:
    """The smart-trim knobs memlens starts with."""

    protected_recent: int = PROTECTED_RECENT
    reserve_tokens: int = RESERVE_TOKENS


@dataclass(frozen=True, slots=True)
class SafetyDefaults:
    """Limits that keep writes and reads safe: model-call time, backups, line size."""

    connect_timeout: float = 10.0
    """Seconds to connect to a summariser."""
    read_timeout: float = 60.0
    """Seconds between bytes of one answer."""
    total_timeout: float = 120.0
    """Seconds for all the model calls of one compaction."""
    backups_keep: int = 10
    """Backups kept per file; older ones are pruned (0: keep all)."""
    backups_days: int = 30
    """Backups older than this many days are pruned (0: never by age)."""
    max_line_bytes: int = MAX_LINE_BYTES
    """A JSONL line longer than this is reported and skipped, never read whole."""


@dataclass(frozen=True, slots=True)
class AppConfig:
    """Everything the settings dialog edits."""

    providers: tuple[ProviderSpec, ...] = DEFAULT_PROVIDERS
    embedder: str = "hash"
    recall: RecallDefaults = field(default_factory=RecallDefaults)
    trim: TrimDefaults = field(default_factory=TrimDefaults)
    safety: SafetyDefaults = field(default_factory=SafetyDefaults)


# --- reading and writing ------------------------------------------------------------


def _float(settings: AppSettings, key: str, default: float, lo: float, hi: float) -> float:
    try:
        value = float(settings.value(key, default))
    except (TypeError, ValueError):
        return default
    return min(hi, max(lo, value)) if math.isfinite(value) else default


def _int(settings: AppSettings, key: str, default: int, lo: int, hi: int) -> int:
    try:
        value = int(float(settings.value(key, default)))
    except (TypeError, ValueError, OverflowError):
        return default
    return min(hi, max(lo, value))


def llm_providers(settings: AppSettings) -> list[ProviderSpec]:
    """The configured providers (the defaults when none were ever saved).

    A saved empty list stays empty; entries that cannot be read are skipped.
    """
    raw = settings.value(LLM_PROVIDERS, None)
    if raw is None or raw == "":
        return list(DEFAULT_PROVIDERS)
    try:
        items = jsonio.loads(str(raw))
    except ValueError:
        log.warning("settings %s is not JSON; using the default providers", LLM_PROVIDERS)
        return list(DEFAULT_PROVIDERS)
    if not isinstance(items, list):
        return list(DEFAULT_PROVIDERS)
    out: list[ProviderSpec] = []
    for item in items:
        try:
            out.append(ProviderSpec.from_json(item))
        except ValueError as exc:
            log.warning("a saved LLM provider was skipped: %s", exc)
    return out


def embedder_name(settings: AppSettings) -> str:
    """``hash`` or ``transformer``."""
    name = str(settings.value(EMBEDDER, "hash") or "hash")
    return name if name in EMBEDDERS else "hash"


def recall_defaults(settings: AppSettings) -> RecallDefaults:
    """The saved recall knobs, each within its range."""
    d = RecallDefaults()
    return RecallDefaults(
        min_score=_float(settings, RECALL_MIN_SCORE, d.min_score, 0.0, 1.0),
        vector_weight=_float(settings, RECALL_VECTOR_WEIGHT, d.vector_weight, 0.0, 1.0),
        bm25_weight=_float(settings, RECALL_BM25_WEIGHT, d.bm25_weight, 0.0, 1.0),
        decay=_float(settings, RECALL_DECAY, d.decay, 0.0, 1.0),
        hard_cap_tokens=_int(settings, RECALL_HARD_CAP, d.hard_cap_tokens, 1, 10_000_000),
    )


def trim_defaults(settings: AppSettings) -> TrimDefaults:
    """The saved trim knobs, each within its range."""
    d = TrimDefaults()
    return TrimDefaults(
        protected_recent=_int(settings, TRIM_PROTECTED_RECENT, d.protected_recent, 0, 1000),
        reserve_tokens=_int(settings, TRIM_RESERVE, d.reserve_tokens, 0, 10_000_000),
    )


def safety_defaults(settings: AppSettings) -> SafetyDefaults:
    """The saved safety limits, each within its range."""
    d = SafetyDefaults()
    return SafetyDefaults(
        connect_timeout=_float(settings, SAFETY_CONNECT_TIMEOUT, d.connect_timeout, 0.5, 600.0),
        read_timeout=_float(settings, SAFETY_READ_TIMEOUT, d.read_timeout, 1.0, 3600.0),
        total_timeout=_float(settings, SAFETY_TOTAL_TIMEOUT, d.total_timeout, 1.0, 3600.0),
        backups_keep=_int(settings, SAFETY_BACKUPS_KEEP, d.backups_keep, 0, 100_000),
        backups_days=_int(settings, SAFETY_BACKUPS_DAYS, d.backups_days, 0, 100_000),
        max_line_bytes=_int(settings, SAFETY_MAX_LINE_BYTES, d.max_line_bytes, 64 * 1024, 1 << 31),
    )


def apply_safety(safety: SafetyDefaults) -> None:
    """Make the core readers use these limits (the longest line they parse).

    The default line size sets no override, so ``MEMLENS_MAX_LINE_BYTES`` still
    applies unless the user chose another size.
    """
    line = safety.max_line_bytes
    set_max_line_bytes(None if line == MAX_LINE_BYTES else line)


def prepare_settings(settings: AppSettings) -> list[str]:
    """At start: clean the settings file of secrets, then apply the safety limits.

    Returns the settings keys that held a secret since *settings* was opened
    (empty when none did); the caller shows the warning
    (:func:`app.settings.secrets_warning`).
    """
    settings.clean_secrets()
    apply_safety(safety_defaults(settings))
    return settings.take_cleaned()


def load_app_config(settings: AppSettings) -> AppConfig:
    """All of memlens's settings (defaults for anything unset).

    The settings file is cleaned of secrets first (:meth:`AppSettings.clean_secrets`).
    """
    settings.clean_secrets()
    return AppConfig(
        providers=tuple(llm_providers(settings)),
        embedder=embedder_name(settings),
        recall=recall_defaults(settings),
        trim=trim_defaults(settings),
        safety=safety_defaults(settings),
    )


def save_app_config(settings: AppSettings, config: AppConfig) -> None:
    """Store *config*; nothing key-shaped is written (see :meth:`ProviderSpec.to_json`)."""
    providers = jsonio.dumps([p.to_json() for p in config.providers]).decode("utf-8")
    settings.set_values(
        [
            (LLM_PROVIDERS, providers),
            (EMBEDDER, config.embedder if config.embedder in EMBEDDERS else "hash"),
            (RECALL_MIN_SCORE, config.recall.min_score),
            (RECALL_VECTOR_WEIGHT, config.recall.vector_weight),
            (RECALL_BM25_WEIGHT, config.recall.bm25_weight),
            (RECALL_DECAY, config.recall.decay),
            (RECALL_HARD_CAP, config.recall.hard_cap_tokens),
            (TRIM_PROTECTED_RECENT, config.trim.protected_recent),
            (TRIM_RESERVE, config.trim.reserve_tokens),
            (SAFETY_CONNECT_TIMEOUT, config.safety.connect_timeout),
            (SAFETY_READ_TIMEOUT, config.safety.read_timeout),
            (SAFETY_TOTAL_TIMEOUT, config.safety.total_timeout),
            (SAFETY_BACKUPS_KEEP, config.safety.backups_keep),
            (SAFETY_BACKUPS_DAYS, config.safety.backups_days),
            (SAFETY_MAX_LINE_BYTES, config.safety.max_line_bytes),
        ]
    )
    settings.sync()
