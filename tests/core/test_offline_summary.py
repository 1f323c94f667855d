"""The offline provider: extractive summaries, merges and rule-based facts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.compaction.offline import (
    EMPTY,
    HEADINGS,
    LABEL,
    MAX_FACTS,
    MAX_ITEM_CHARS,
    MAX_ITEMS,
    extract_facts_offline,
    offline_merge,
    offline_summary,
    parse_summary,
)
from core.store.knowledge import FACT_TYPES
from core.transcript import load_transcript
from core.transcript.normalize import normalize_message

FIXTURE = Path("/work/shared/fixtures/pi-v1/before-compaction.jsonl")
SECRET = "sk_live_abcdefghijklmnop1234"


def user(text):
    return normalize_message({"role": "user", "content": text})


def assistant(text, *calls):
    content = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "toolCall", "id": cid, "name": name, "arguments": args}
        for cid, name, args in calls
    ]
    return normalize_message({"role": "assistant", "content": content})


def result(cid, text, *, error=False):
    return normalize_message(
        {
            "role": "toolResult",
            "toolCallId": cid,
            "toolName": "bash",
            "content": [{"type": "text", "text": text}],
            "isError": error,
        }
    )


def conversation():
    return [
        user(
            "Please fix the login crash in src/auth/login.py. We must never log passwords. "
            "Always run pytest before committing."
        ),
        assistant(
            "I looked at it. We decided to use bcrypt instead of md5 for hashing. "
            "The crash is `TypeError: 'NoneType' object is not subscriptable` raised by "
            "check_password().",
            ("c1", "bash", {"command": "cat config/app.json"}),
        ),
        result("c1", "ENOENT: no such file or directory, open 'config/app.json'", error=True),
        result("c0", "We decided to use Redis instead of Memcached", error=False),
        user(
            f"See https://example.com/docs/auth for the spec. My api_key={SECRET} is in "
            "my env, don't commit it."
        ),
        assistant(
            "TODO: add a regression test for Session.refresh. Fixed in commit 3fa9c21 for "
            "v1.4.2. I'll update docs/README.md next.\n\n"
            "```python\nconst x = decided  # we'll use this instead of that\n```"
        ),
        user("Can you also check the rate limiter? And what about the retry budget?"),
    ]


def section(summary, heading):
    return parse_summary(summary)[heading]


def test_label_and_headings_in_order():
    text = offline_summary(conversation())
    assert text.splitlines()[0] == LABEL
    heads = re.findall(r"^## (.+)$", text, re.M)
    assert heads == list(HEADINGS)


def test_each_section_is_filled_from_the_conversation():
    text = offline_summary(conversation())
    decisions = " ".join(section(text, "Decisions"))
    assert "bcrypt instead of md5" in decisions
    assert "Redis" not in text  # tool output is not the conversation
    assert "const x" not in text  # nor is fenced code
    todos = " ".join(section(text, "Open TODOs"))
    assert "regression test for Session.refresh" in todos
    assert "update docs/README.md" in todos
    rules = " ".join(section(text, "Constraints/Rules"))
    assert "must never log passwords" in rules
    assert "Always run pytest before committing" in rules
    asks = " ".join(section(text, "Pending user asks"))
    assert "check the rate limiter?" in asks
    ids = " ".join(section(text, "Exact identifiers"))
    for ident in (
        "src/auth/login.py",
        "check_password()",
        "TypeError: 'NoneType' object is not subscriptable",
        "https://example.com/docs/auth",
        "ENOENT: no such file or directory",
        "Session.refresh",
        "3fa9c21",
        "v1.4.2",
    ):
        assert ident in ids, ident


def test_empty_sections_say_none():
    text = offline_summary([user("hello"), assistant("Hi! How can I help?")])
    for heading in ("Decisions", "Open TODOs", "Constraints/Rules", "Exact identifiers"):
        assert f"## {heading}\n{EMPTY}\n" in text
    assert offline_summary([]).count(EMPTY) == 5


def test_secrets_are_redacted():
    text = offline_summary(conversation())
    assert SECRET not in text
    assert "api_key=[REDACTED]" in text
    facts = extract_facts_offline(conversation())
    assert all(SECRET not in c.content and "[REDACTED" not in c.content for c in facts)


def test_deterministic():
    assert offline_summary(conversation()) == offline_summary(conversation())
    assert extract_facts_offline(conversation()) == extract_facts_offline(conversation())


def test_previous_summary_is_carried_forward():
    previous = (
        "## Decisions\n- Use PostgreSQL 16 for storage\n\n## Open TODOs\n(none)\n\n"
        "## Constraints/Rules\n- Keep the public API stable\n  across releases\n\n"
        "## Exact identifiers\n- `db/schema.sql`\n"
    )
    text = offline_summary(conversation(), previous_summary=previous)
    decisions = section(text, "Decisions")
    assert decisions[0] == "Use PostgreSQL 16 for storage"
    assert any("bcrypt" in d for d in decisions)
    assert section(text, "Constraints/Rules")[0] == "Keep the public API stable across releases"
    assert "`db/schema.sql`" in section(text, "Exact identifiers")
    # Carrying a summary forward into itself adds nothing.
    again = offline_summary(conversation(), previous_summary=text)
    assert again == text


def test_merge_unions_by_heading_in_order():
    first = offline_summary(conversation()[:3])
    second = offline_summary(conversation()[3:])
    merged = offline_merge([first, second])
    assert merged.splitlines()[0] == LABEL
    assert re.findall(r"^## (.+)$", merged, re.M) == list(HEADINGS)
    for heading in HEADINGS:
        union = list(dict.fromkeys(section(first, heading) + section(second, heading)))
        assert len(union) <= MAX_ITEMS
        assert section(merged, heading) == union
    assert section(merged, "Decisions") and section(merged, "Open TODOs")
    assert offline_merge([first, first]) == first
    assert offline_merge([]).count(EMPTY) == 5


def test_caps_per_section():
    msgs = [user(f"We must never touch module_{i} in production, it is shared.") for i in range(20)]
    msgs += [
        assistant(f"We decided to use backend number {i} instead of the old one.")
        for i in range(20)
    ]
    msgs.append(user("Something about " + "very long words " * 40 + " we must always check it."))
    text = offline_summary(msgs)
    decisions = section(text, "Decisions")
    assert len(decisions) == MAX_ITEMS
    assert "backend number 19" in decisions[-1]  # the most recent decisions are kept
    rules = section(text, "Constraints/Rules")
    assert len(rules) == MAX_ITEMS
    assert "module_0 " in rules[0]  # the first rules are kept
    for heading in HEADINGS:
        assert all(len(i) <= MAX_ITEM_CHARS for i in section(text, heading))


def test_checked_items_are_not_open():
    msgs = [
        assistant("Plan:\n- [ ] write the parser\n- [ ] add the CLI flag"),
        user("ok"),
        assistant("Progress:\n- [x] write the parser\n- [ ] add the CLI flag"),
    ]
    todos = section(offline_summary(msgs), "Open TODOs")
    assert todos == ["add the CLI flag"]


def test_unanswered_user_messages_are_pending():
    msgs = [
        user("Set up the build."),
        assistant("Done, the build works."),
        user("Now rename the package to memlens-core."),
        user("Also bump the version."),
    ]
    asks = section(offline_summary(msgs), "Pending user asks")
    assert asks == ["Now rename the package to memlens-core.", "Also bump the version."]


def test_offline_facts_by_type():
    msgs = [
        user("Hi there, thanks!"),
        assistant("We decided to use SQLite instead of Postgres for the local cache."),
        assistant("I implemented the retry loop in core/llm/retry.py with exponential back-off."),
        user("The server listens on port 8080 and the config sets LOG_LEVEL=debug."),
        assistant("The upload fails with `ValueError: bad header` on empty files."),
        assistant("The parser work is completed and merged into main."),
        assistant("The ingest service talks to the indexer through a Redis queue."),
        assistant("Let me check the logs for a moment to see what happens."),
        assistant("Is this the right approach for the cache layer?"),
        result("c9", "We decided to use MongoDB instead of files everywhere."),
    ]
    facts = extract_facts_offline(msgs)
    by_type = {c.type: c.content for c in facts}
    assert set(by_type) == set(FACT_TYPES)
    assert "SQLite instead of Postgres" in by_type["decision"]
    assert "core/llm/retry.py" in by_type["implementation"]
    assert "port 8080" in by_type["config"]
    assert "ValueError: bad header" in by_type["issue"]
    assert "completed and merged" in by_type["task_state"]
    assert "talks to the indexer" in by_type["architecture"]
    text = " ".join(c.content for c in facts)
    assert "MongoDB" not in text and "Let me check" not in text and "Hi there" not in text
    assert "right approach" not in text


def test_offline_facts_drop_secrets_and_cap():
    msgs = [user(f"Set the config option api_key={SECRET} for the staging server.")]
    msgs += [
        assistant(f"We decided to use library number {i} instead of writing our own.")
        for i in range(30)
    ]
    facts = extract_facts_offline(msgs)
    assert len(facts) == MAX_FACTS
    assert all("api_key" not in c.content for c in facts)
    assert "library number 29" in facts[-1].content  # newest kept, conversation order


@pytest.mark.skipif(not FIXTURE.exists(), reason="shared fixture not present")
def test_real_transcript():
    session = load_transcript(FIXTURE)
    messages = [e.message for e in session.messages()][:300]
    text = offline_summary(messages)
    assert text.splitlines()[0] == LABEL
    assert re.findall(r"^## (.+)$", text, re.M) == list(HEADINGS)
    ids = " ".join(section(text, "Exact identifiers"))
    assert "packages/coding-agent/src/main.ts" in ids
    assert "AgentSession" in ids
    assert "e2e tests for AgentSession" in " ".join(section(text, "Constraints/Rules"))
    assert text == offline_summary(messages)
    facts = extract_facts_offline(messages)
    assert 0 < len(facts) <= MAX_FACTS
    assert all(c.type in FACT_TYPES for c in facts)
