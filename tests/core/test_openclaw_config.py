from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from core.io.problems import FormatError
from core.openclaw.config import (
    AUTO_RECALL_MIN_SCORE,
    DEFAULT_CONTEXT_WINDOW,
    CompactionConfig,
    MemoryContextConfig,
    MemoryFlushConfig,
    context_window_for,
    load_openclaw_config,
    parse_openclaw_config,
)
from core.openclaw.config_json5 import ConfigSyntaxError

if TYPE_CHECKING:
    from pathlib import Path

JSON5_CONFIG = """\
// openclaw.json, as people write it
{
  gateway: { port: 18789, },          // unknown sections stay untouched
  agents: {
    defaults: {
      contextTokens: 150000,
      memoryContext: {
        enabled: false,
        hardCapTokens: 6000,
        embeddingModel: 'transformer',
        redaction: false,
        knowledgeExtraction: false,
        autoRecallMinScore: 0.5,
        maxSegments: 1000,
        crossSession: true,
        evictionDays: 30,
        storagePath: "~/mem",
      },
      compaction: {
        mode: "safeguard",
        reserveTokens: 12000,
        keepRecentTokens: 30000,
        reserveTokensFloor: 24000,
        maxHistoryShare: 0.6,
        identifierPolicy: "strict",
        postCompactionSections: ["Session Startup"],
        qualityGuard: { enabled: true, maxRetries: 2 },
        memoryFlush: {
          enabled: false,
          softThresholdTokens: 8000,
          forceFlushTranscriptBytes: "2mb",
          prompt: "Write notes.",
          systemPrompt: "Nearing compaction.",
        },
      },
    },
  },
  /* a block comment */
  models: {
    providers: {
      local: {
        baseUrl: "http://127.0.0.1:8080",
        models: [
          { id: "qwen-coder", contextWindow: 32768 },
          { id: "big", contextWindow: 1000000, contextTokens: 500000 },
        ],
      },
    },
  },
}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "openclaw.json"
    path.write_text(text, encoding="utf-8")
    return path


def messages(text: str) -> list[str]:
    return [p.message for p in parse_openclaw_config(text).errors]


# --- JSON5 and typed values ------------------------------------------------------


def test_json5_features_and_typed_values(tmp_path: Path) -> None:
    cfg = load_openclaw_config(write(tmp_path, JSON5_CONFIG))
    assert cfg.problems == ()
    assert cfg.raw["gateway"] == {"port": 18789}
    assert cfg.memory_context == MemoryContextConfig(
        enabled=False,
        hard_cap_tokens=6000,
        embedding_model="transformer",
        redaction=False,
        knowledge_extraction=False,
        auto_recall_min_score=0.5,
        max_segments=1000,
        cross_session=True,
        eviction_days=30,
        storage_path="~/mem",
    )
    assert cfg.compaction == CompactionConfig(
        mode="safeguard",
        reserve_tokens=12000,
        keep_recent_tokens=30000,
        reserve_tokens_floor=24000,
        max_history_share=0.6,
        memory_flush=MemoryFlushConfig(
            enabled=False,
            soft_threshold_tokens=8000,
            prompt="Write notes.",
            system_prompt="Nearing compaction.",
            force_flush_transcript_bytes="2mb",
        ),
        identifier_policy="strict",
    )
    assert cfg.compaction.effective_reserve_tokens == 24000
    assert cfg.context_tokens == 150000
    assert not cfg.errors


def test_defaults_when_sections_absent() -> None:
    cfg = parse_openclaw_config("{}")
    assert cfg.problems == ()
    mc = cfg.memory_context
    assert mc.enabled is True
    assert mc.hard_cap_tokens == 4000
    assert mc.embedding_model == "hash"
    assert mc.redaction is True
    assert mc.knowledge_extraction is True
    assert mc.auto_recall_min_score == AUTO_RECALL_MIN_SCORE == 0.7
    assert mc.max_segments == 20000
    assert mc.cross_session is False
    assert mc.eviction_days == 90
    assert mc.storage_path is None
    c = cfg.compaction
    assert (c.mode, c.reserve_tokens_floor, c.max_history_share) == ("default", 20000, 0.5)
    assert (c.reserve_tokens, c.keep_recent_tokens) == (16384, 20000)
    assert c.effective_reserve_tokens == 20000
    assert c.memory_flush == MemoryFlushConfig(enabled=True, soft_threshold_tokens=4000)
    assert cfg.context_tokens is None


def test_partial_sections_keep_other_defaults() -> None:
    cfg = parse_openclaw_config(
        "{agents: {defaults: {memoryContext: {hardCapTokens: 2000.0},"
        " compaction: {memoryFlush: {softThresholdTokens: 1}}}}}"
    )
    assert cfg.problems == ()
    assert cfg.memory_context.hard_cap_tokens == 2000
    assert isinstance(cfg.memory_context.hard_cap_tokens, int)
    assert cfg.memory_context.max_segments == 20000
    assert cfg.compaction.memory_flush.soft_threshold_tokens == 1
    assert cfg.compaction.memory_flush.enabled is True


def test_bom_is_accepted() -> None:
    assert parse_openclaw_config("\ufeff{agents: {}}").problems == ()


# --- strict validation -------------------------------------------------------------


def test_unknown_key_in_memory_context_names_its_path() -> None:
    text = "{agents: {defaults: {memoryContext: {hardCapToken: 4000}}}}"
    assert messages(text) == ["agents.defaults.memoryContext.hardCapToken: unknown key"]


def test_unknown_keys_in_compaction_and_memory_flush() -> None:
    text = """{
      agents: {
        defaults: {
          compaction: {
            reserveTokenFloor: 1,
            memoryFlush: { softThreshold: 3 },
            qualityGuard: { retries: 1 },
          },
        },
      },
    }"""
    assert messages(text) == [
        "agents.defaults.compaction.reserveTokenFloor: unknown key",
        "agents.defaults.compaction.memoryFlush.softThreshold: unknown key",
        "agents.defaults.compaction.qualityGuard.retries: unknown key",
    ]


@pytest.mark.parametrize(
    ("section", "key", "value", "expected"),
    [
        ("memoryContext", "enabled", '"yes"', "must be true or false, got 'yes'"),
        ("memoryContext", "hardCapTokens", "0", "must be an integer >= 1, got 0"),
        ("memoryContext", "hardCapTokens", "10.5", "must be an integer >= 1, got 10.5"),
        ("memoryContext", "hardCapTokens", "true", "must be an integer >= 1, got true"),
        (
            "memoryContext",
            "embeddingModel",
            '"bert"',
            'must be one of "hash", "transformer", got \'bert\'',
        ),
        ("memoryContext", "redaction", "1", "must be true or false, got 1"),
        ("memoryContext", "knowledgeExtraction", "null", "must be true or false, got null"),
        (
            "memoryContext",
            "autoRecallMinScore",
            "1.5",
            "must be a number between 0 and 1, got 1.5",
        ),
        (
            "memoryContext",
            "autoRecallMinScore",
            "NaN",
            "must be a number between 0 and 1, got nan",
        ),
        ("memoryContext", "maxSegments", '"many"', "must be an integer >= 1, got 'many'"),
        ("memoryContext", "crossSession", "[]", "must be true or false, got an array"),
        ("memoryContext", "evictionDays", "-1", "must be an integer >= 0, got -1"),
        ("memoryContext", "storagePath", "42", "must be a string, got 42"),
        (
            "compaction",
            "mode",
            '"aggressive"',
            'must be one of "default", "safeguard", got \'aggressive\'',
        ),
        ("compaction", "reserveTokensFloor", "-5", "must be an integer >= 0, got -5"),
        ("compaction", "reserveTokens", '"16k"', "must be an integer >= 0, got '16k'"),
        ("compaction", "keepRecentTokens", "0", "must be an integer >= 1, got 0"),
        (
            "compaction",
            "maxHistoryShare",
            "0.95",
            "must be a number between 0.1 and 0.9, got 0.95",
        ),
        (
            "compaction",
            "maxHistoryShare",
            "0.05",
            "must be a number between 0.1 and 0.9, got 0.05",
        ),
        ("compaction", "memoryFlush", "true", "must be an object, got true"),
        (
            "compaction",
            "recentTurnsPreserve",
            "13",
            "must be an integer between 0 and 12, got 13",
        ),
        (
            "compaction",
            "postCompactionSections",
            "[1]",
            "must be an array of strings, got an array",
        ),
        (
            "compaction",
            "maxActiveTranscriptBytes",
            '"lots"',
            "must be a byte count or a size string like \"2mb\", got 'lots'",
        ),
    ],
)
def test_wrong_types_and_ranges_name_their_path(
    section: str, key: str, value: str, expected: str
) -> None:
    text = f"{{agents: {{defaults: {{{section}: {{{key}: {value}}}}}}}}}"
    cfg = parse_openclaw_config(text)
    assert [p.message for p in cfg.errors] == [f"agents.defaults.{section}.{key}: {expected}"]
    # The bad value never reaches the typed record: the default is used.
    defaults = parse_openclaw_config("{}")
    assert cfg.memory_context == defaults.memory_context
    assert cfg.compaction == defaults.compaction


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("softThresholdTokens", "-1", "must be an integer >= 0, got -1"),
        ("enabled", '"no"', "must be true or false, got 'no'"),
        ("prompt", "[]", "must be a string, got an array"),
        ("systemPrompt", "{}", "must be a string, got an object"),
    ],
)
def test_memory_flush_errors(key: str, value: str, expected: str) -> None:
    text = f"{{agents: {{defaults: {{compaction: {{memoryFlush: {{{key}: {value}}}}}}}}}}}"
    assert messages(text) == [f"agents.defaults.compaction.memoryFlush.{key}: {expected}"]


def test_sections_that_are_not_objects() -> None:
    text = "{agents: {defaults: {memoryContext: 'on', compaction: null, contextTokens: 0}}}"
    assert messages(text) == [
        "agents.defaults.memoryContext: must be an object, got 'on'",
        "agents.defaults.compaction: must be an object, got null",
        "agents.defaults.contextTokens: must be an integer >= 1, got 0",
    ]
    assert messages("{agents: {defaults: 3}}") == ["agents.defaults: must be an object, got 3"]


def test_all_errors_are_collected_with_lines(tmp_path: Path) -> None:
    text = """\
{
  agents: {
    defaults: {
      memoryContext: {
        hardCapToken: 4000,
        embeddingModel: "bert",
        enabled: "yes",
      },
      compaction: {
        maxHistoryShare: 2,
        memoryFlush: {
          softThresholdTokens: "x",
          flushNow: true,
        },
      },
    },
  },
  unrelated: { anything: [1, 2, 3] },
}
"""
    cfg = load_openclaw_config(write(tmp_path, text))
    got = [(p.line, p.message) for p in cfg.errors]
    assert got == [
        (5, "agents.defaults.memoryContext.hardCapToken: unknown key"),
        (
            6,
            "agents.defaults.memoryContext.embeddingModel: "
            'must be one of "hash", "transformer", got \'bert\'',
        ),
        (7, "agents.defaults.memoryContext.enabled: must be true or false, got 'yes'"),
        (
            10,
            "agents.defaults.compaction.maxHistoryShare: "
            "must be a number between 0.1 and 0.9, got 2",
        ),
        (
            12,
            "agents.defaults.compaction.memoryFlush.softThresholdTokens: "
            "must be an integer >= 0, got 'x'",
        ),
        (13, "agents.defaults.compaction.memoryFlush.flushNow: unknown key"),
    ]
    assert all(p.file == str(tmp_path / "openclaw.json") for p in cfg.errors)
    assert len(cfg.errors) == 6


def test_unknown_keys_elsewhere_are_allowed() -> None:
    text = """{
      somethingNew: { deep: { x: 1 } },
      agents: { defaults: { workspace: "~/w", heartbeat: { every: "30m" } }, list: [] },
      channels: { telegram: { enabled: true } },
    }"""
    cfg = parse_openclaw_config(text)
    assert cfg.problems == ()
    assert cfg.raw["somethingNew"] == {"deep": {"x": 1}}
    assert cfg.raw["agents"]["defaults"]["heartbeat"] == {"every": "30m"}


def test_all_real_compaction_keys_are_accepted() -> None:
    text = """{agents: {defaults: {compaction: {
      mode: "default", provider: "p", reserveTokens: 1, keepRecentTokens: 1,
      reserveTokensFloor: 0, maxHistoryShare: 0.1, customInstructions: "c",
      identifierPolicy: "custom", identifierInstructions: "i", recentTurnsPreserve: 12,
      qualityGuard: {enabled: false, maxRetries: 0}, midTurnPrecheck: {enabled: true},
      postIndexSync: "await", postCompactionSections: [], model: "m", timeoutSeconds: 900,
      memoryFlush: {enabled: true, model: "m", softThresholdTokens: 0,
                    forceFlushTranscriptBytes: 1048576, prompt: "p", systemPrompt: "s"},
      truncateAfterCompaction: true, maxActiveTranscriptBytes: "20 MB", notifyUser: false,
    }}}}"""
    cfg = parse_openclaw_config(text)
    assert cfg.problems == ()
    assert cfg.compaction.memory_flush.force_flush_transcript_bytes == 1048576
    assert cfg.compaction.memory_flush.model == "m"


# --- file-level errors ---------------------------------------------------------------


def test_json5_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "{\n  agents: {\n    defaults: {,}\n  }\n}\n")
    with pytest.raises(FormatError) as info:
        load_openclaw_config(path)
    assert info.value.file == str(path)
    assert info.value.line == 3
    assert isinstance(info.value, ConfigSyntaxError) and info.value.column == 16
    assert str(info.value) == (
        f"{path}:3: invalid JSON5 at line 3, column 16: expected a key, found ','"
    )


def test_top_level_must_be_an_object(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="top level must be an object"):
        load_openclaw_config(write(tmp_path, "[1, 2]"))


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(FormatError, match="not found"):
        load_openclaw_config(path)
    cfg = load_openclaw_config(path, missing_ok=True)
    assert cfg.memory_context == MemoryContextConfig()
    assert [p.severity for p in cfg.problems] == ["info"]
    assert not cfg.errors


def test_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "openclaw.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(FormatError, match="invalid UTF-8"):
        load_openclaw_config(path)


def test_file_is_never_written(tmp_path: Path) -> None:
    path = write(tmp_path, JSON5_CONFIG)
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    load_openclaw_config(path)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["openclaw.json"]


# --- context windows -------------------------------------------------------------------


def test_context_window_from_config() -> None:
    cfg = parse_openclaw_config(JSON5_CONFIG.replace("contextTokens: 150000,", ""))
    assert cfg.context_window_for("qwen-coder") == (32768, "config")
    assert cfg.context_window_for("local/qwen-coder") == (32768, "config")
    # contextTokens wins over contextWindow, as in OpenClaw.
    assert context_window_for(cfg, "local/big") == (500000, "config")


def test_context_window_from_registry_and_default() -> None:
    cfg = parse_openclaw_config("{}")
    assert cfg.context_window_for("anthropic/claude-sonnet-4-5-20250929") == (200000, "registry")
    assert cfg.context_window_for("openai/gpt-4o-mini") == (128000, "registry")
    assert cfg.context_window_for("gpt-4.1") == (1047576, "registry")
    assert cfg.context_window_for("some/unknown-model") == (DEFAULT_CONTEXT_WINDOW, "default")
    assert cfg.context_window_for(None) == (200000, "default")
    assert context_window_for(None, "gpt-5") == (400000, "registry")
    # A model of another provider with the same bare id is not a config match.
    other = parse_openclaw_config(JSON5_CONFIG)
    assert other.context_window_for("remote/qwen-coder") == (150000, "cap")


def test_context_window_capped_by_context_tokens() -> None:
    cfg = parse_openclaw_config(JSON5_CONFIG)  # agents.defaults.contextTokens = 150000
    assert cfg.context_window_for("local/big") == (150000, "cap")
    assert cfg.context_window_for("gpt-4.1") == (150000, "cap")
    assert cfg.context_window_for("unknown") == (150000, "cap")
    # Below the cap the window and its source are kept.
    assert cfg.context_window_for("local/qwen-coder") == (32768, "config")
    assert cfg.context_window_for("gpt-4o") == (128000, "registry")


def test_bad_model_entries_are_warnings_and_skipped() -> None:
    text = """{models: {providers: {p: {models: [
      {name: "no id"},
      {id: "m", contextWindow: "big"},
    ]}}}}"""
    cfg = parse_openclaw_config(text)
    assert cfg.errors == ()
    assert [p.severity for p in cfg.problems] == ["warning", "warning"]
    assert "models.providers.p.models[0]: needs a string id" in cfg.problems[0].message
    assert "models.providers.p.models[1].contextWindow" in cfg.problems[1].message
    assert cfg.context_window_for("p/m") == (200000, "default")
