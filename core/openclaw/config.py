"""Read ``~/.openclaw/openclaw.json`` (JSON5): memory-context, compaction, context windows.

memlens never writes this file. Two sections are validated strictly, as OpenClaw's
zod schema does (``.strict()``): ``agents.defaults.memoryContext`` (from the
memory-context pull request #14362) and ``agents.defaults.compaction``. Every unknown
key and every wrong type or range there is a problem whose message starts with the
full key path; all of them are collected. Everything else in the file is kept in
:attr:`OpenClawConfig.raw` untouched and unchecked.

The key set of ``agents.defaults.compaction`` was read from the zod schema of
openclaw/openclaw, ``src/config/zod-schema.agent-defaults.ts``: commit 4370a36b
(mode, reserveTokensFloor, maxHistoryShare, memoryFlush{enabled,
softThresholdTokens, prompt, systemPrompt}), commit 00463892 (adds reserveTokens,
keepRecentTokens, customInstructions, identifierPolicy, identifierInstructions,
recentTurnsPreserve, qualityGuard, postIndexSync, postCompactionSections, model,
timeoutSeconds, memoryFlush.forceFlushTranscriptBytes) and the newest stored version
(adds provider, midTurnPrecheck, memoryFlush.model, truncateAfterCompaction,
maxActiveTranscriptBytes, notifyUser). memlens accepts that union, so a config valid
for any of those OpenClaw versions is valid here.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import json5

from core.problems import FormatError, Problem

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

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


# --- the strict schema -------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value: Any) -> bool:
    # JSON has one number type: 4000.0 is the integer 4000 (zod's .int() agrees).
    return _is_number(value) and float(value).is_integer()


def _positive_int(value: Any) -> int | None:
    return int(value) if _is_int(value) and value >= 1 else None


@dataclass(frozen=True, slots=True)
class _Leaf:
    """A value check: *ok* tells whether a value is valid, *need* says what is."""

    ok: Callable[[Any], bool]
    need: str
    convert: Callable[[Any], Any] | None = None


@dataclass(frozen=True, slots=True)
class _Obj:
    """A strict object: every key must be one of *fields*."""

    fields: Mapping[str, _Leaf | _Obj]
    need: str = "must be an object"

    def ok(self, value: Any) -> bool:
        return isinstance(value, dict)


_BOOL = _Leaf(lambda v: isinstance(v, bool), "must be true or false")
_STR = _Leaf(lambda v: isinstance(v, str), "must be a string")
_STR_LIST = _Leaf(
    lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "must be an array of strings",
)
_BYTE_SIZE_RE = re.compile(r"^\d+(\.\d+)?\s*(b|k|kb|kib|m|mb|mib|g|gb|gib|t|tb|tib)?$", re.I)
_BYTE_SIZE = _Leaf(
    lambda v: (
        (_is_int(v) and v >= 0) or (isinstance(v, str) and bool(_BYTE_SIZE_RE.match(v.strip())))
    ),
    'must be a byte count or a size string like "2mb"',
)


def _enum(*values: str) -> _Leaf:
    need = "must be one of " + ", ".join(f'"{v}"' for v in values)
    return _Leaf(lambda v: isinstance(v, str) and v in values, need)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _num(lo: float, hi: float | None = None, *, integer: bool = False) -> _Leaf:
    kind = "an integer" if integer else "a number"
    need = f"must be {kind} " + (
        f">= {_fmt(lo)}" if hi is None else f"between {_fmt(lo)} and {_fmt(hi)}"
    )

    def ok(v: Any) -> bool:
        good = _is_int(v) if integer else _is_number(v)
        return good and v >= lo and (hi is None or v <= hi)

    return _Leaf(ok, need, int if integer else float)


def _int(lo: int, hi: int | None = None) -> _Leaf:
    return _num(lo, hi, integer=True)


MEMORY_CONTEXT_SCHEMA = _Obj(
    {
        "enabled": _BOOL,
        "hardCapTokens": _int(1),
        "embeddingModel": _enum("hash", "transformer"),
        "redaction": _BOOL,
        "knowledgeExtraction": _BOOL,
        "autoRecallMinScore": _num(0, 1),
        "maxSegments": _int(1),
        "crossSession": _BOOL,
        "evictionDays": _int(0),
        "storagePath": _STR,
    }
)

COMPACTION_SCHEMA = _Obj(
    {
        "mode": _enum("default", "safeguard"),
        "provider": _STR,
        "reserveTokens": _int(0),
        "keepRecentTokens": _int(1),
        "reserveTokensFloor": _int(0),
        "maxHistoryShare": _num(0.1, 0.9),
        "customInstructions": _STR,
        "identifierPolicy": _enum("strict", "off", "custom"),
        "identifierInstructions": _STR,
        "recentTurnsPreserve": _int(0, 12),
        "qualityGuard": _Obj({"enabled": _BOOL, "maxRetries": _int(0)}),
        "midTurnPrecheck": _Obj({"enabled": _BOOL}),
        "postIndexSync": _enum("off", "async", "await"),
        "postCompactionSections": _STR_LIST,
        "model": _STR,
        "timeoutSeconds": _int(1),
        "memoryFlush": _Obj(
            {
                "enabled": _BOOL,
                "model": _STR,
                "softThresholdTokens": _int(0),
                "forceFlushTranscriptBytes": _BYTE_SIZE,
                "prompt": _STR,
                "systemPrompt": _STR,
            }
        ),
        "truncateAfterCompaction": _BOOL,
        "maxActiveTranscriptBytes": _BYTE_SIZE,
        "notifyUser": _BOOL,
    }
)


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else repr(value[:37] + "...")
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return str(value)


class _Checker:
    """Walks a section against its schema, collecting one problem per fault."""

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        self.text = text
        self.problems: list[Problem] = []

    def report(
        self,
        path: tuple[str, ...],
        message: str,
        severity: Literal["error", "warning"] = "error",
        label: str | None = None,
    ) -> None:
        line = _key_line(self.text, path)
        where = label if label is not None else ".".join(path)
        self.problems.append(Problem(self.name, line, f"{where}: {message}", severity))

    def walk(self, value: Any, spec: _Obj, path: tuple[str, ...]) -> None:
        for key, item in value.items():
            sub = spec.fields.get(key)
            where = (*path, str(key))
            if sub is None:
                self.report(where, "unknown key")
                continue
            if not sub.ok(item):
                self.report(where, f"{sub.need}, got {_describe(item)}")
            elif isinstance(sub, _Obj):
                self.walk(item, sub, where)


def _key_line(text: str, path: tuple[str, ...]) -> int:
    """Best-effort 1-based line of the last key of *path* (0 when not found).

    JSON5 parsers give no positions for values, so the keys are searched for in
    order, each after the previous one: right for any config a person writes.
    """
    pos = 0
    found: re.Match[str] | None = None
    for key in path:
        k = re.escape(key)
        pattern = rf"(?<![\w$])(?:\"{k}\"|'{k}'|{k})\s*:"
        found = re.compile(pattern).search(text, pos)
        if found is None:
            return 0
        pos = found.end()
    return text.count("\n", 0, found.start()) + 1 if found is not None else 0


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
        Every fault found; ``error`` ones are listed by :func:`raise_for_errors`.
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

_JSON5_POS = re.compile(r"^<string>:(\d+) (.*)$", re.S)


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
        When the file cannot be read, is not JSON5, or is not an object. Faults
        in the validated sections do not raise: see :func:`raise_for_errors`.
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as fh:
            data = fh.read()
    except FileNotFoundError as exc:
        if not missing_ok:
            raise FormatError(name, "cannot read: file not found") from exc
        cfg = parse_openclaw_config("{}", name)
        info = Problem(name, 0, "file not found; using the defaults", "info")
        return OpenClawConfig(name, cfg.raw, cfg.memory_context, cfg.compaction, None, (), (info,))
    except OSError as exc:
        raise FormatError(name, f"cannot read: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(name, f"invalid UTF-8 at byte {exc.start + 1}") from exc
    return parse_openclaw_config(text, name)


def parse_openclaw_config(text: str, name: str = "openclaw.json") -> OpenClawConfig:
    """Parse and validate the JSON5 *text* of an ``openclaw.json``.

    Raises
    ------
    FormatError
        On a JSON5 syntax error (with line and column) or a top level that is
        not an object.
    """
    text = text.removeprefix("\ufeff")
    try:
        raw = json5.loads(text)
    except ValueError as exc:
        m = _JSON5_POS.match(str(exc))
        if m is not None:
            raise FormatError(name, f"invalid JSON5: {m.group(2)}", int(m.group(1))) from exc
        raise FormatError(name, f"invalid JSON5: {exc}") from exc
    if not isinstance(raw, dict):
        raise FormatError(name, "the top level must be an object")

    checker = _Checker(name, text)
    agents = _section(raw, ("agents",), checker)
    defaults = _section(agents, ("agents", "defaults"), checker)
    memory_raw = _section(defaults, ("agents", "defaults", "memoryContext"), checker)
    compaction_raw = _section(defaults, ("agents", "defaults", "compaction"), checker)
    checker.walk(memory_raw, MEMORY_CONTEXT_SCHEMA, ("agents", "defaults", "memoryContext"))
    checker.walk(compaction_raw, COMPACTION_SCHEMA, ("agents", "defaults", "compaction"))

    context_tokens: int | None = None
    if "contextTokens" in defaults:
        value = defaults["contextTokens"]
        context_tokens = _positive_int(value)
        if context_tokens is None:
            checker.report(
                ("agents", "defaults", "contextTokens"),
                f"must be an integer >= 1, got {_describe(value)}",
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


def _section(parent: dict[str, Any], path: tuple[str, ...], checker: _Checker) -> dict[str, Any]:
    if path[-1] not in parent:
        return {}
    value = parent[path[-1]]
    if not isinstance(value, dict):
        checker.report(path, f"must be an object, got {_describe(value)}")
        return {}
    return value


def _snake(key: str) -> str:
    return re.sub(r"([A-Z])", r"_\1", key).lower()


def _build(record: type[_R], section: dict[str, Any], schema: _Obj) -> _R:
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
        if isinstance(spec, _Obj):
            sub = value if isinstance(value, dict) else {}
            values[name] = _build(_NESTED[key], sub, spec)
        elif key in section and spec.ok(value):
            values[name] = spec.convert(value) if spec.convert is not None else value
    return record(**values)


def _models(raw: dict[str, Any], checker: _Checker) -> tuple[ModelEntry, ...]:
    # Outside the strict sections: faults here are warnings, the entry is skipped.
    models = raw.get("models")
    providers = models.get("providers") if isinstance(models, dict) else None
    out: list[ModelEntry] = []
    for provider, pcfg in providers.items() if isinstance(providers, dict) else ():
        items = pcfg.get("models") if isinstance(pcfg, dict) else None
        path = ("models", "providers", str(provider), "models")
        for i, item in enumerate(items if isinstance(items, list) else ()):
            label = f"models.providers.{provider}.models[{i}]"
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                checker.report(path, "needs a string id; entry ignored", "warning", label)
                continue
            sizes = {k: _positive_int(item.get(k)) for k in ("contextWindow", "contextTokens")}
            for key, size in sizes.items():
                if key in item and size is None:
                    got = _describe(item[key])
                    message = f"must be an integer >= 1, got {got}; ignored"
                    checker.report((*path, key), message, "warning", f"{label}.{key}")
            out.append(
                ModelEntry(
                    str(provider), item["id"], sizes["contextWindow"], sizes["contextTokens"]
                )
            )
    return tuple(out)


def raise_for_errors(config: OpenClawConfig) -> None:
    """Raise if *config* has any error, listing every one of them.

    Raises
    ------
    FormatError
        Naming the file, with one line per error (``line N: path: message``).
    """
    errors = config.errors
    if not errors:
        return
    lines = [f"line {p.line}: {p.message}" if p.line else p.message for p in errors]
    noun = "error" if len(errors) == 1 else "errors"
    raise FormatError(config.path, f"{len(errors)} config {noun}:\n" + "\n".join(lines))


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
