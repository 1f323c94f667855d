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
from typing import TYPE_CHECKING, Any, Literal

import json5

from core.problems import FormatError, Problem

if TYPE_CHECKING:
    from collections.abc import Mapping

DEFAULT_CONTEXT_WINDOW = 200_000
AUTO_RECALL_MIN_SCORE = 0.35
"""Default ``autoRecallMinScore``: the minimum hybrid score of OpenClaw's own memory
search (formats.md section 5), so both recall paths filter alike."""
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


@dataclass(frozen=True, slots=True)
class _Bool:
    def check(self, value: Any) -> str | None:
        return None if isinstance(value, bool) else "must be true or false"


@dataclass(frozen=True, slots=True)
class _Str:
    def check(self, value: Any) -> str | None:
        return None if isinstance(value, str) else "must be a string"


@dataclass(frozen=True, slots=True)
class _StrList:
    def check(self, value: Any) -> str | None:
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return None if ok else "must be an array of strings"


@dataclass(frozen=True, slots=True)
class _Enum:
    values: tuple[str, ...]

    def check(self, value: Any) -> str | None:
        if isinstance(value, str) and value in self.values:
            return None
        return "must be one of " + ", ".join(f'"{v}"' for v in self.values)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value: Any) -> bool:
    # JSON has one number type: 4000.0 is the integer 4000 (zod's .int() agrees).
    return _is_number(value) and float(value).is_integer()


@dataclass(frozen=True, slots=True)
class _Num:
    lo: float | None = None
    hi: float | None = None
    integer: bool = False

    def check(self, value: Any) -> str | None:
        ok = _is_int(value) if self.integer else _is_number(value)
        if ok and (self.lo is None or value >= self.lo) and (self.hi is None or value <= self.hi):
            return None
        kind = "an integer" if self.integer else "a number"
        if self.lo is not None and self.hi is not None:
            return f"must be {kind} between {_fmt(self.lo)} and {_fmt(self.hi)}"
        if self.lo is not None:
            return f"must be {kind} >= {_fmt(self.lo)}"
        return f"must be {kind}"


_BYTE_SIZE = re.compile(r"^\d+(\.\d+)?\s*(b|k|kb|kib|m|mb|mib|g|gb|gib|t|tb|tib)?$", re.I)


@dataclass(frozen=True, slots=True)
class _ByteSize:
    def check(self, value: Any) -> str | None:
        if _is_int(value) and value >= 0:
            return None
        if isinstance(value, str) and _BYTE_SIZE.match(value.strip()):
            return None
        return 'must be a byte count or a size string like "2mb"'


@dataclass(frozen=True, slots=True)
class _Obj:
    fields: Mapping[str, _Spec]

    def check(self, value: Any) -> str | None:
        return None if isinstance(value, dict) else "must be an object"


_Spec = _Bool | _Str | _StrList | _Enum | _Num | _ByteSize | _Obj


def _positive_int(value: Any) -> int | None:
    return int(value) if _is_int(value) and value >= 1 else None


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _int(lo: int | None = None, hi: int | None = None) -> _Num:
    return _Num(lo, hi, integer=True)


MEMORY_CONTEXT_SCHEMA = _Obj(
    {
        "enabled": _Bool(),
        "hardCapTokens": _int(1),
        "embeddingModel": _Enum(("hash", "transformer")),
        "redaction": _Bool(),
        "knowledgeExtraction": _Bool(),
        "autoRecallMinScore": _Num(0, 1),
        "maxSegments": _int(1),
        "crossSession": _Bool(),
        "evictionDays": _int(0),
        "storagePath": _Str(),
    }
)

COMPACTION_SCHEMA = _Obj(
    {
        "mode": _Enum(("default", "safeguard")),
        "provider": _Str(),
        "reserveTokens": _int(0),
        "keepRecentTokens": _int(1),
        "reserveTokensFloor": _int(0),
        "maxHistoryShare": _Num(0.1, 0.9),
        "customInstructions": _Str(),
        "identifierPolicy": _Enum(("strict", "off", "custom")),
        "identifierInstructions": _Str(),
        "recentTurnsPreserve": _int(0, 12),
        "qualityGuard": _Obj({"enabled": _Bool(), "maxRetries": _int(0)}),
        "midTurnPrecheck": _Obj({"enabled": _Bool()}),
        "postIndexSync": _Enum(("off", "async", "await")),
        "postCompactionSections": _StrList(),
        "model": _Str(),
        "timeoutSeconds": _int(1),
        "memoryFlush": _Obj(
            {
                "enabled": _Bool(),
                "model": _Str(),
                "softThresholdTokens": _int(0),
                "forceFlushTranscriptBytes": _ByteSize(),
                "prompt": _Str(),
                "systemPrompt": _Str(),
            }
        ),
        "truncateAfterCompaction": _Bool(),
        "maxActiveTranscriptBytes": _ByteSize(),
        "notifyUser": _Bool(),
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
        self, path: tuple[str, ...], message: str, severity: Literal["error", "warning"] = "error"
    ) -> None:
        line = _key_line(self.text, path)
        self.problems.append(Problem(self.name, line, f"{'.'.join(path)}: {message}", severity))

    def walk(self, value: Any, spec: _Obj, path: tuple[str, ...]) -> None:
        for key, item in value.items():
            sub = spec.fields.get(key)
            where = (*path, str(key))
            if sub is None:
                self.report(where, "unknown key")
                continue
            error = sub.check(item)
            if error is not None:
                self.report(where, f"{error}, got {_describe(item)}")
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
        memory_context=_memory_context(memory_raw),
        compaction=_compaction(compaction_raw),
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


def _valid(section: dict[str, Any], key: str, spec: _Spec, default: Any) -> Any:
    """Return *key*'s value if it passed validation, else the default (already reported)."""
    if key not in section or spec.check(section[key]) is not None:
        return default
    value = section[key]
    if isinstance(spec, _Num) and spec.integer:
        return int(value)
    if isinstance(spec, _Num):
        return float(value)
    return value


def _memory_context(s: dict[str, Any]) -> MemoryContextConfig:
    d = MemoryContextConfig()
    f = MEMORY_CONTEXT_SCHEMA.fields
    return MemoryContextConfig(
        **{
            attr: _valid(s, key, f[key], getattr(d, attr))
            for key, attr in (
                ("enabled", "enabled"),
                ("hardCapTokens", "hard_cap_tokens"),
                ("embeddingModel", "embedding_model"),
                ("redaction", "redaction"),
                ("knowledgeExtraction", "knowledge_extraction"),
                ("autoRecallMinScore", "auto_recall_min_score"),
                ("maxSegments", "max_segments"),
                ("crossSession", "cross_session"),
                ("evictionDays", "eviction_days"),
                ("storagePath", "storage_path"),
            )
        }
    )


def _compaction(s: dict[str, Any]) -> CompactionConfig:
    d = CompactionConfig()
    f = COMPACTION_SCHEMA.fields
    flush_spec = f["memoryFlush"]
    assert isinstance(flush_spec, _Obj)
    flush_raw = _valid(s, "memoryFlush", flush_spec, {})
    df, ff = MemoryFlushConfig(), flush_spec.fields
    flush = MemoryFlushConfig(
        **{
            attr: _valid(flush_raw, key, ff[key], getattr(df, attr))
            for key, attr in (
                ("enabled", "enabled"),
                ("softThresholdTokens", "soft_threshold_tokens"),
                ("prompt", "prompt"),
                ("systemPrompt", "system_prompt"),
                ("forceFlushTranscriptBytes", "force_flush_transcript_bytes"),
                ("model", "model"),
            )
        }
    )
    return CompactionConfig(
        mode=_valid(s, "mode", f["mode"], d.mode),
        reserve_tokens=_valid(s, "reserveTokens", f["reserveTokens"], d.reserve_tokens),
        keep_recent_tokens=_valid(
            s, "keepRecentTokens", f["keepRecentTokens"], d.keep_recent_tokens
        ),
        reserve_tokens_floor=_valid(
            s, "reserveTokensFloor", f["reserveTokensFloor"], d.reserve_tokens_floor
        ),
        max_history_share=_valid(s, "maxHistoryShare", f["maxHistoryShare"], d.max_history_share),
        memory_flush=flush,
    )


def _models(raw: dict[str, Any], checker: _Checker) -> tuple[ModelEntry, ...]:
    # Outside the strict sections: faults here are warnings, the entry is skipped.
    models = raw.get("models")
    providers = models.get("providers") if isinstance(models, dict) else None
    if not isinstance(providers, dict):
        return ()
    out: list[ModelEntry] = []
    for provider, pcfg in providers.items():
        items = pcfg.get("models") if isinstance(pcfg, dict) else None
        if not isinstance(items, list):
            continue
        for i, item in enumerate(items):
            path = ("models", "providers", str(provider), "models")
            where = f"models.providers.{provider}.models[{i}]"
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                checker.problems.append(
                    Problem(
                        checker.name,
                        _key_line(checker.text, path),
                        f"{where}: needs a string id; entry ignored",
                        "warning",
                    )
                )
                continue
            sizes: dict[str, int | None] = {}
            for key in ("contextWindow", "contextTokens"):
                value = item.get(key)
                sizes[key] = _positive_int(value)
                if key in item and sizes[key] is None:
                    checker.problems.append(
                        Problem(
                            checker.name,
                            _key_line(checker.text, (*path, key)),
                            f"{where}.{key}: must be an integer >= 1, got "
                            f"{_describe(value)}; ignored",
                            "warning",
                        )
                    )
            entry = ModelEntry(
                str(provider), item["id"], sizes["contextWindow"], sizes["contextTokens"]
            )
            out.append(entry)
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
