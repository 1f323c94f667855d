from __future__ import annotations

import pytest

from app.app_config import ProviderSpec, RecallDefaults, key_name_problem, key_status
from core.llm import OpenAICompatibleClient, parse_llm_spec


def test_specs_parse_back():
    local = ProviderSpec(
        "Local", "openai", "http://127.0.0.1:11434/v1", "llama3.1:8b", ("qwen2.5:7b",)
    )
    for spec, model in zip(local.specs(), local.models, strict=True):
        client = parse_llm_spec(spec)
        assert isinstance(client, OpenAICompatibleClient) and client.model == model
        client.close()
    claude = ProviderSpec("Claude", "anthropic", "", "claude-sonnet-4-5", (), "X_KEY")
    assert claude.spec() == "anthropic:claude-sonnet-4-5"
    assert claude.problems() == [] and local.problems() == []


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("", True),
        ("OPENAI_API_KEY", True),
        ("my_key2", True),
        ("2KEY", False),
        ("MY-KEY", False),
        ("sk-ant-api03-abcdefghijklmnop", False),
        ("gsk_AbCdEf1234567890XyZw", False),
        ("a3f9c2e1b4d5a6f7e8d9c0b1a2f3e4d5", False),
    ],
)
def test_key_names(name, ok):
    assert (key_name_problem(name) is None) == ok


def test_key_status_never_returns_the_value():
    env = {"K": "secret-value"}
    assert key_status("K", env) == "set (environment)"
    assert key_status("OTHER", env) == "not set"
    assert key_status("", env) == "not needed"
    assert key_status("sk-proj-abcdefghijklmnopqrstuvwxyz", env) == "not set"


def test_a_key_in_the_name_field_is_never_stored():
    spec = ProviderSpec("x", "openai", "http://h/v1", "m", (), "sk-proj-abcdefghijklmnopqrstuvwxyz")
    assert spec.to_json()["keyEnv"] == ""
    assert (
        ProviderSpec.from_json(
            {**spec.to_json(), "keyEnv": "sk-proj-abcdefghijklmnopqrstuvwxyz"}
        ).key_env
        == ""
    )


def test_recall_defaults_to_search_config():
    cfg = RecallDefaults(0.5, 0.6, 0.4, 0.99, 1000).search_config()
    assert (cfg.min_score, cfg.vector_weight, cfg.bm25_weight, cfg.decay) == (0.5, 0.6, 0.4, 0.99)
    assert cfg.limit == 8
