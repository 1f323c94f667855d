from __future__ import annotations

import pytest

from core.recall.tokenize import tokenize


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Fix the Parser.", ["fix", "the", "parser"]),
        (
            "src/core/agent-session.ts",
            ["src/core/agent-session.ts", "src", "core", "agent", "session", "ts"],
        ),
        ("getUserName", ["getusername", "get", "user", "name"]),
        ("user_name", ["user_name", "user", "name"]),
        ("HTTPServer", ["httpserver", "http", "server"]),
        ("ENOENT", ["enoent"]),
        ("数据库查询", ["数据", "据库", "库查", "查询"]),
        ("我", ["我"]),
        ("abc数据", ["abc", "数据"]),
        ("ÉCOLE café", ["école", "café"]),
        ("", []),
    ],
)
def test_tokenize(text, tokens):
    assert tokenize(text) == tokens
