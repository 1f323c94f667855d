"""Read ``~/.openclaw/openclaw.json`` (JSON5): memory-context, compaction, context windows.

memlens never writes this file. Two sections are validated strictly, as OpenClaw's
zod schema does (:mod:`core.openclaw.config_schema`); every fault there is a problem
and all of them are collected. Everything else in the file is kept in
:attr:`OpenClawConfig.raw` untouched and unchecked. The JSON5 decoding, with its
error positions, is :mod:`core.openclaw.config_json5`.
"""

from __future__ import annotations

import gc
import os
import re
import stat
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from core.io.problems import FormatError, Problem
from core.openclaw.config_json5 import decode_json5, value_start
from core.openclaw.config_schema import (
    COMPACTION_SCHEMA,
    MEMORY_CONTEXT_SCHEMA,
    ObjectSpec,
    SchemaChecker,
    describe_value,
    positive_int_or_none,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

DEFAULT_CONTEXT_WINDOW = 200_000
AUTO_RECALL_MIN_SCORE = 0.7
"""Default ``autoRecallMinScore``, as the memory-context runtime reads it
(``memCtxCfg.autoRecallMinScore ?? 0.7`` in ``pi-embedded-runner/extensions.ts``)."""
PI_RESERVE_TOKENS = 16_384
KEEP_RECENT_TOKENS = 20_000

# Context windows of a few well-known models, used when the config names none.
# Keys match the model id without its provider, by longest prefix (dated ids).
MODEL_REGISTRY: dict[str, int] = {
    "claude-opus-4": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-haiku-4": 200_000,
    "claude-3-5-sonnet": 200_000,
    "claude-3-7-sonnet": 200_000,
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
    "deepseek-chat": 128_000,
    "deepseek-reasoner": 128_000,
}

WindowSource = Literal["config", "registry", "default", "cap"]


# --- typed records ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemoryContextConfig:
    """``agents.defaults.memoryContext``, with the defaults of formats.md section 4."""

    enabled: bool = True
    hard_cap_tokens: int = 4000
    embedding_model: Literal["hash", "transformer"] = "hash"
    redaction: bool = True
    knowledge_extraction: bool = True
    auto_recall_min_score: float = AUTO_RECALL_MIN_SCORE
    max_segments: int = 20_000
    cross_session: bool = False
    eviction_days: int = 90
    storage_path: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryFlushConfig:
    """``agents.defaults.compaction.memoryFlush``."""

    enabled: bool = True
    soft_threshold_tokens: int = 4000
    prompt: str | None = None
    system_prompt: str | None = None
    force_flush_transcript_bytes: int | str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class CompactionConfig:
    """``agents.defaults.compaction`` (the keys memlens computes with).

    ``reserve_tokens`` and ``keep_recent_tokens`` default to pi's values; the other
    keys OpenClaw accepts are validated and left in :attr:`OpenClawConfig.raw`.
    """

    mode: Literal["default", "safeguard"] = "default"
    reserve_tokens: int = PI_RESERVE_TOKENS
    keep_recent_tokens: int = KEEP_RECENT_TOKENS
    reserve_tokens_floor: int = 20_000
    max_history_share: float = 0.5
    memory_flush: MemoryFlushConfig = field(default_factory=MemoryFlushConfig)
    custom_instructions: str | None = None
    """``customInstructions``: read by OpenClaw versions before 2026.9 (2026.9.6's
    ``openclaw doctor`` removes it); memlens still puts it in its summary prompts."""
    identifier_policy: Literal["strict", "off", "custom"] | None = None
    """``identifierPolicy`` (unset: ``strict``; ``custom`` is gone in 2026.9.6)."""
    identifier_instructions: str | None = None
    """``identifierInstructions``, the text of the ``custom`` policy."""

    @property
    def effective_reserve_tokens(self) -> int:
        """``max(reserveTokens, reserveTokensFloor)``, as OpenClaw applies it."""
        return max(self.reserve_tokens, self.reserve_tokens_floor)


@dataclass(frozen=True, slots=True)
class ModelEntry:
    """One ``models.providers.<provider>.models[]`` entry."""

    provider: str
    id: str
    context_window: int | None = None
    context_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class OpenClawConfig:
    """What memlens reads from ``openclaw.json``.

    Attributes
    ----------
    path
        The file name, as given.
    raw
        The whole parsed document (never modified).
    problems
        Every fault found; ``error`` ones are what :attr:`errors` lists.
    """

    path: str
    raw: dict[str, Any]
    memory_context: MemoryContextConfig
    compaction: CompactionConfig
    context_tokens: int | None
    models: tuple[ModelEntry, ...]
    problems: tuple[Problem, ...]

    @property
    def errors(self) -> tuple[Problem, ...]:
        """The problems of severity ``error``."""
        return tuple(p for p in self.problems if p.severity == "error")

    def context_window_for(self, model_id: str | None) -> tuple[int, WindowSource]:
        """Shortcut for :func:`context_window_for` on this config."""
        return context_window_for(self, model_id)


_R = TypeVar("_R", MemoryContextConfig, MemoryFlushConfig, CompactionConfig)
_NESTED: dict[str, type[MemoryFlushConfig]] = {"memoryFlush": MemoryFlushConfig}


# --- loading ---------------------------------------------------------------------


@contextmanager
def _gc_off() -> Iterator[None]:
    """The cyclic collector off while a config is built (2x faster on a 24 MB file).

    Not :func:`core.io.jsonio.gc_paused`: that one freezes everything alive when the
    app asks it to, and a config is read first thing in a load, while the window
    may still be releasing the place it had open.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_openclaw_config(
    path: str | os.PathLike[str], *, missing_ok: bool = False
) -> OpenClawConfig:
    """Read and validate ``openclaw.json``.

    Parameters
    ----------
    path
        The config file.
    missing_ok
        When true, a missing file gives the defaults (with an ``info`` problem).

    Raises
    ------
    FormatError
        When the file cannot be read, is not JSON5 (:class:`ConfigSyntaxError`:
        line and column), or is not an object. Faults in the validated sections
        do not raise: see :attr:`OpenClawConfig.errors`.
    """
    name = os.fspath(path)
    try:
        if not stat.S_ISREG(os.stat(name).st_mode):
            raise FormatError(name, "cannot read: not a regular file")
        with open(name, "rb") as fh:
            data = fh.read()
    except FileNotFoundError as exc:
        if not missing_ok:
            raise FormatError(name, "cannot read: file not found") from exc
        cfg = parse_openclaw_config("{}", name)
        info = Problem(name, 0, "file not found; using the defaults", "info")
        return OpenClawConfig(name, cfg.raw, cfg.memory_context, cfg.compaction, None, (), (info,))
    except (OSError, ValueError) as exc:
        raise FormatError(name, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(name, f"invalid UTF-8 at byte {exc.start + 1}", line) from None
    with _gc_off():
        raw, notes = decode_json5(text, name, data)
        return build_openclaw_config(raw, text, name, notes)


def parse_openclaw_config(text: str, name: str = "openclaw.json") -> OpenClawConfig:
    """Parse and validate the JSON5 *text* of an ``openclaw.json``.

    Raises
    ------
    FormatError
        As :func:`decode_json5`, or when the top level is not an object.
    """
    with _gc_off():
        raw, notes = decode_json5(text, name)
        return build_openclaw_config(raw, text, name, notes)


def build_openclaw_config(
    raw: Any, text: str, name: str, notes: Iterable[Problem] = ()
) -> OpenClawConfig:
    """Validate *raw*, the parsed *text* of the config file *name*.

    *notes* are problems found while parsing, listed first.

    Raises
    ------
    FormatError
        When the top level is not an object.
    """
    if not isinstance(raw, dict):
        line, column = value_start(text)
        message = f"the top level must be an object, got {describe_value(raw)} at column {column}"
        raise FormatError(name, message, line)

    checker = SchemaChecker(name, text)
    checker.problems.extend(notes)
    agents = _section(raw, ("agents",), checker)
    defaults = _section(agents, ("agents", "defaults"), checker)
    memory_raw = _section(defaults, ("agents", "defaults", "memoryContext"), checker)
    compaction_raw = _section(defaults, ("agents", "defaults", "compaction"), checker)
    checker.walk(memory_raw, MEMORY_CONTEXT_SCHEMA, ("agents", "defaults", "memoryContext"))
    checker.walk(compaction_raw, COMPACTION_SCHEMA, ("agents", "defaults", "compaction"))

    context_tokens: int | None = None
    if "contextTokens" in defaults:
        value = defaults["contextTokens"]
        context_tokens = positive_int_or_none(value)
        if context_tokens is None:
            checker.report(
                ("agents", "defaults", "contextTokens"),
                f"must be an integer >= 1, got {describe_value(value)}",
            )

    return OpenClawConfig(
        path=name,
        raw=raw,
        memory_context=_build(MemoryContextConfig, memory_raw, MEMORY_CONTEXT_SCHEMA),
        compaction=_build(CompactionConfig, compaction_raw, COMPACTION_SCHEMA),
        context_tokens=context_tokens,
        models=_models(raw, checker),
        problems=tuple(checker.problems),
    )


def _section(
    parent: dict[str, Any], path: tuple[str, ...], checker: SchemaChecker
) -> dict[str, Any]:
    if path[-1] not in parent:
        return {}
    value = parent[path[-1]]
    if not isinstance(value, dict):
        checker.report(path, f"must be an object, got {describe_value(value)}")
        return {}
    return value


def _snake(key: str) -> str:
    return re.sub(r"([A-Z])", r"_\1", key).lower()


def _build(record: type[_R], section: dict[str, Any], schema: ObjectSpec) -> _R:
    """Make *record* from a validated *section*.

    Each field is read from the key of the same name in camelCase; a missing or
    invalid value (already reported) keeps the field's default.
    """
    values: dict[str, Any] = {}
    for key, spec in schema.fields.items():
        name = _snake(key)
        if name not in record.__dataclass_fields__:
            continue  # validated, kept in raw, not typed
        value = section.get(key)
        if isinstance(spec, ObjectSpec):
            sub = value if isinstance(value, dict) else {}
            values[name] = _build(_NESTED[key], sub, spec)
        elif key in section and spec.ok(value):
            values[name] = spec.convert(value) if spec.convert is not None else value
    return record(**values)


def _models(raw: dict[str, Any], checker: SchemaChecker) -> tuple[ModelEntry, ...]:
    # Outside the strict sections: faults here are warnings, the entry is skipped.
    models = raw.get("models")
    providers = models.get("providers") if isinstance(models, dict) else None
    out: list[ModelEntry] = []
    for provider, pcfg in providers.items() if isinstance(providers, dict) else ():
        items = pcfg.get("models") if isinstance(pcfg, dict) else None
        name = str(provider)
        path = ("models", "providers", name, "models")
        for i, item in enumerate(items if isinstance(items, list) else ()):
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                label = f"models.providers.{provider}.models[{i}]"
                checker.report(path, "needs a string id; entry ignored", "warning", label)
                continue
            window = positive_int_or_none(item.get("contextWindow"))
            tokens = positive_int_or_none(item.get("contextTokens"))
            if (window is None and "contextWindow" in item) or (
                tokens is None and "contextTokens" in item
            ):  # rare: the loop above runs for every one of maybe 100,000 models
                for key, size in (("contextWindow", window), ("contextTokens", tokens)):
                    if size is None and key in item:
                        label = f"models.providers.{provider}.models[{i}].{key}"
                        message = (
                            f"must be an integer >= 1, got {describe_value(item[key])}; ignored"
                        )
                        checker.report((*path, key), message, "warning", label)
            out.append(ModelEntry(name, item["id"], window, tokens))
    return tuple(out)


# --- context window --------------------------------------------------------------


def _registry_window(model: str) -> int | None:
    best = ""
    for key in MODEL_REGISTRY:
        if model.startswith(key) and len(key) > len(best):
            best = key
    return MODEL_REGISTRY[best] if best else None


def _configured_window(models: tuple[ModelEntry, ...], model_id: str) -> int | None:
    provider, _, bare = model_id.partition("/")
    candidates = [m for m in models if m.id == model_id]
    if not candidates and bare:
        candidates = [m for m in models if m.provider == provider and m.id == bare]
    for m in candidates:
        # OpenClaw reads the budget as contextTokens ?? contextWindow.
        size = m.context_tokens if m.context_tokens is not None else m.context_window
        if size is not None:
            return size
    return None


def context_window_for(
    config: OpenClawConfig | None, model_id: str | None
) -> tuple[int, WindowSource]:
    """Return the context window of *model_id* and where it came from.

    Rule (algorithms.md section 2): the config's
    ``models.providers.*.models[].contextTokens`` or ``contextWindow``, else the
    built-in :data:`MODEL_REGISTRY`, else 200,000; the result is capped by
    ``agents.defaults.contextTokens`` (source ``"cap"`` when the cap applied).

    Parameters
    ----------
    config
        The loaded config, or None for the registry and default only.
    model_id
        ``"provider/model"`` or a bare model id; None gives the default.
    """
    window: int | None = None
    source: WindowSource = "default"
    if model_id:
        if config is not None:
            window = _configured_window(config.models, model_id)
            source = "config"
        if window is None:
            bare = model_id.rsplit("/", 1)[-1]
            window = _registry_window(bare.lower())
            source = "registry"
    if window is None:
        window, source = DEFAULT_CONTEXT_WINDOW, "default"
    cap = config.context_tokens if config is not None else None
    if cap is not None and cap < window:
        return cap, "cap"
    return window, source
