"""Knowledge extraction: the conversation, the prompt, lenient parsing, proposals."""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson
import pytest

from core.compaction.extract import (
    MAX_CHARS,
    MAX_FACTS,
    MIN_MESSAGES,
    TRUNCATED,
    conversation_text,
    extract_knowledge,
    extraction_prompt,
    parse_facts,
)
from core.io.jobs import Cancelled
from core.llm.base import LLMError
from core.recall.updater import Candidate
from core.store.knowledge import FACT_TYPES, load_knowledge
from core.transcript.normalize import normalize_message

SECRET = "sk_live_abcdefghijklmnop1234"
FACT = {"type": "decision", "content": "Use SQLite for the cache", "context": "cache design"}


def user(text):
    return normalize_message({"role": "user", "content": text})


def assistant(text, *calls):
    content = [{"type": "text", "text": text}] if text else []
    content += [{"type": "toolCall", "id": c, "name": "read", "arguments": {}} for c in calls]
    return normalize_message({"role": "assistant", "content": content})


def tool_result(cid, text):
    return normalize_message(
        {"role": "toolResult", "toolCallId": cid, "content": [{"type": "text", "text": text}]}
    )


def messages():
    return [
        user("We need a cache for the embeddings. Which store should we use?"),
        assistant("Let me look at the options.", "c1"),
        tool_result("c1", "FILE CONTENTS: sqlite3 is in the standard library"),
        assistant("We decided to use SQLite instead of Redis: it ships with Python."),
        user(f"Good. My api_key={SECRET}, keep the cache in ~/.cache/memlens/embed.db."),
        assistant("I implemented the cache in core/embed/cache.py with a WAL journal."),
    ]


@dataclass
class Answer:
    text: str
    truncated: bool = False


@dataclass
class ScriptedClient:
    """A test double speaking the LLM client protocol: returns scripted answers."""

    answers: list[str]
    name: str = "test:scripted"
    truncated: bool = False
    calls: list[dict] = field(default_factory=list)

    def complete(self, messages, *, system=None, max_tokens=1024, temperature=0.2, cancelled=None):
        self.calls.append({"messages": list(messages), "system": system, "max_tokens": max_tokens})
        return Answer(self.answers.pop(0), self.truncated)

    def close(self):
        pass


class FailingClient(ScriptedClient):
    def complete(self, messages, **kwargs):
        raise LLMError("rate_limit", "slow down", client=self.name)


def knowledge(tmp_path, *facts):
    path = tmp_path / "knowledge.jsonl"
    path.write_bytes(
        b"".join(
            orjson.dumps({"id": f"f{i}", "timestamp": 100 + i, **f}) + b"\n"
            for i, f in enumerate(facts)
        )
    )
    return path, load_knowledge(path)


# -- conversation and prompt -------------------------------------------------------------
def test_conversation_text_is_user_and_assistant_text_only():
    text = conversation_text(messages())
    paragraphs = text.split("\n\n")
    assert paragraphs[0].startswith("User: We need a cache")
    assert paragraphs[1] == "Assistant: Let me look at the options."
    assert "FILE CONTENTS" not in text
    assert SECRET not in text and "api_key=[REDACTED]" in text
    assert [p.split(":")[0] for p in paragraphs] == [
        "User",
        "Assistant",
        "Assistant",
        "User",
        "Assistant",
    ]


def test_conversation_text_keeps_the_first_8000_chars():
    msgs = [
        user("first " + "alpha " * 500),
        assistant("beta " * 600),
        user("gamma " * 500),
        assistant("last"),
    ]
    text = conversation_text(msgs)
    assert len(text) == MAX_CHARS + len(TRUNCATED)
    assert text.startswith("User: first ")
    assert text.endswith(TRUNCATED) and "last" not in text
    short = conversation_text(msgs[:1])
    assert not short.endswith(TRUNCATED)


def test_extraction_prompt():
    system, user_text = extraction_prompt("User: hello")
    assert '{"facts": [{"type": "...", "content": "...", "context": "..."}]}' in system
    for ftype in FACT_TYPES:
        assert f"- {ftype}:" in system
    assert "At most 15 facts" in system
    for word in ("secrets", "greetings", "temporary debugging", "raw file contents", "verbatim"):
        assert word in system
    assert user_text.startswith("Conversation:") and "User: hello" in user_text


# -- parsing -------------------------------------------------------------------------------
PLAIN = '{"facts": [{"type": "decision", "content": "Use SQLite for the cache", "context": "cache design"}]}'


@pytest.mark.parametrize(
    "answer",
    [
        PLAIN,
        f"```json\n{PLAIN}\n```",
        f"Here are the facts I found:\n\n{PLAIN}\n\nLet me know if you need more.",
        f"Sure!\n```\n{PLAIN}\n```\nDone.",
        '[{"type": "decision", "content": "Use SQLite for the cache", "context": "cache design"}]',
        '{"facts": [{"type": "decision", "content": "Use SQLite for the cache", "context": "cache design",},],}',
        '{"facts": [{"type": "Decision", "content": "  Use SQLite for the cache ", "context": "cache design"}]}',
    ],
    ids=["plain", "fenced", "prose", "bare-fence", "list", "trailing-commas", "case"],
)
def test_parse_facts_damaged_forms(answer):
    facts, notes, unreadable = parse_facts(answer)
    assert facts == [Candidate("decision", "Use SQLite for the cache", "cache design")]
    assert notes == [] and unreadable is None  # read whole


def test_parse_facts_truncated_answer_keeps_complete_facts():
    answer = (
        '```json\n{"facts": [\n'
        '  {"type": "decision", "content": "Use SQLite", "context": "cache"},\n'
        '  {"type": "config", "content": "Cache at ~/.cache/memlens/embed.db"},\n'
        '  {"type": "issue", "content": "WAL mode fails on NF'
    )
    facts, notes, unreadable = parse_facts(answer)
    assert facts == [
        Candidate("decision", "Use SQLite", "cache"),
        Candidate("config", "Cache at ~/.cache/memlens/embed.db"),
    ]
    assert any("recovered 2" in n for n in notes)
    assert unreadable == "the answer was not complete JSON; recovered 2 complete fact(s)"


def test_parse_facts_drops_with_notes():
    answer = orjson.dumps(
        {
            "facts": [
                {"type": "decision", "content": "Keep it"},
                {"type": "opinion", "content": "Python is nice"},
                {"type": "issue", "content": "   "},
                {"type": "issue"},
                "not an object",
                {"type": "task-state", "content": "Parser done", "context": 3},
            ]
        }
    ).decode()
    facts, notes, unreadable = parse_facts(answer)
    assert facts == [Candidate("decision", "Keep it"), Candidate("task_state", "Parser done")]
    assert unreadable is None  # facts dropped one by one: the answer itself was read whole
    assert len(notes) == 4
    assert "unknown type 'opinion'" in notes[0]
    assert "no content" in notes[1] and "no content" in notes[2]
    assert "not an object" in notes[3]


def test_parse_facts_caps_at_15():
    answer = orjson.dumps(
        {"facts": [{"type": "config", "content": f"setting {i}"} for i in range(20)]}
    ).decode()
    facts, notes, _ = parse_facts(answer)
    assert len(facts) == MAX_FACTS
    assert facts[-1].content == "setting 14"
    assert notes == [f"5 fact(s) beyond the limit of {MAX_FACTS} dropped"]


@pytest.mark.parametrize("answer", ["", "I could not find any facts.", "{not json at all"])
def test_parse_facts_nothing_readable(answer):
    facts, notes, unreadable = parse_facts(answer)
    assert facts == [] and len(notes) == 1 and unreadable == notes[0]


def test_parse_facts_empty_list_is_fine():
    assert parse_facts('{"facts": []}') == ([], [], None)


# -- extract_knowledge ----------------------------------------------------------------------
def test_too_few_messages_are_skipped(tmp_path):
    _, log = knowledge(tmp_path)
    client = ScriptedClient([PLAIN])
    result = extract_knowledge(messages()[:4], log, client=client)
    assert len(messages()[:4]) == MIN_MESSAGES - 1
    assert result.skipped and "at least 5" in result.skipped
    assert result.candidates == () and result.operations == ()
    assert client.calls == []


def test_with_a_client_proposes_without_writing(tmp_path):
    path, log = knowledge(tmp_path, FACT)
    before = path.read_bytes()
    answer = orjson.dumps(
        {
            "facts": [
                FACT,  # already known
                {"type": "config", "content": f"Cache api_key={SECRET}", "context": "cache"},
                {"type": "implementation", "content": "Cache lives in core/embed/cache.py"},
                {"type": "mood", "content": "The user is happy"},
            ]
        }
    ).decode()
    client = ScriptedClient([f"```json\n{answer}\n```"])
    result = extract_knowledge(messages(), log, client=client)
    assert result.source == "test:scripted" and result.skipped is None
    assert [c.type for c in result.candidates] == ["decision", "config", "implementation"]
    assert result.candidates[1].content == "Cache api_key=[REDACTED]"
    assert [op.op for op in result.operations] == ["NONE", "ADD", "ADD"]
    assert any("unknown type 'mood'" in n for n in result.notes)
    # The model saw one user message and the system prompt, with secrets masked.
    (call,) = client.calls
    assert len(call["messages"]) == 1 and call["messages"][0].role == "user"
    assert "Technical" not in call["system"] and "JSON only" in call["system"]
    assert SECRET not in call["messages"][0].content
    assert "FILE CONTENTS" not in call["messages"][0].content
    # Proposals only.
    assert path.read_bytes() == before
    assert list(log.facts) == ["f0"]


def test_truncated_answer_is_noted(tmp_path):
    _, log = knowledge(tmp_path)
    client = ScriptedClient(['{"facts": [{"type": "decision", "content": "Use SQLite"}, {"ty'])
    client.truncated = True
    result = extract_knowledge(messages(), log, client=client)
    assert [c.content for c in result.candidates] == ["Use SQLite"]
    assert result.notes[0] == "the answer stopped at the output-token limit"
    assert result.unreadable == (
        "the answer stopped at the output-token limit; "
        "the answer was not complete JSON; recovered 1 complete fact(s)"
    )
    whole = extract_knowledge(messages(), log, client=ScriptedClient([PLAIN]))
    assert whole.unreadable is None and whole.candidates


def test_failed_call_is_skipped(tmp_path):
    _, log = knowledge(tmp_path)
    result = extract_knowledge(messages(), log, client=FailingClient([]))
    assert result.skipped is not None and "slow down" in result.skipped
    assert result.source == "test:scripted"


def test_cancelled(tmp_path):
    _, log = knowledge(tmp_path)
    with pytest.raises(Cancelled):
        extract_knowledge(messages(), log, client=ScriptedClient([PLAIN]), cancelled=lambda: True)


def test_offline_extraction(tmp_path):
    path, log = knowledge(tmp_path)
    before = path.read_bytes()
    result = extract_knowledge(messages(), log)
    assert result.source == "offline" and result.skipped is None
    contents = [c.content for c in result.candidates]
    assert "We decided to use SQLite instead of Redis: it ships with Python." in contents
    assert any("core/embed/cache.py" in c for c in contents)
    assert all(SECRET not in c and "[REDACTED" not in c for c in contents)
    assert all(op.op == "ADD" for op in result.operations)
    assert len(result.operations) == len(result.candidates)
    assert path.read_bytes() == before
    assert extract_knowledge(messages(), log) == result
