"""Smart trim: protections, the three layers, tool pairing in four shapes, properties."""

from __future__ import annotations

import copy
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from core.context.trim import SUMMARY_PREFIX, TrimResult, clear_caches, message_text, smart_trim
from core.recall.block import strip_prefixes
from core.recall.bm25 import BM25Index, bm25_scores
from core.recall.token_table import TABLE, TokenTable
from core.recall.tokenize import tokenize
from core.safety.redact import redact
from core.transcript import context_at, load_transcript
from core.transcript.normalize import normalize_message
from core.transcript.recalled_block import MARKER

PAD = "filler " * 300  # 2,100 chars: 700 tokens
WINDOW = 20_000  # hard cap 2,000, safe limit 20,000 - 4,000 - 2,000 = 14,000


def user(text):
    return {"role": "user", "content": text}


def assistant(text):
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def msgs(*raws):
    return [normalize_message(r) for r in raws]


# -- the four tool-call shapes -------------------------------------------------------------


def pi_call(ids, text=""):
    calls = [
        {"type": "toolCall", "id": i, "name": "read", "arguments": {"path": "a.py"}} for i in ids
    ]
    return [{"role": "assistant", "content": [{"type": "text", "text": text}, *calls]}]


def pi_results(ids, text):
    return [
        {
            "role": "toolResult",
            "toolCallId": i,
            "toolName": "read",
            "content": [{"type": "text", "text": text}],
        }
        for i in ids
    ]


def anthropic_call(ids, text=""):
    calls = [{"type": "tool_use", "id": i, "name": "read", "input": {"path": "a.py"}} for i in ids]
    return [{"role": "assistant", "content": [{"type": "text", "text": text}, *calls]}]


def anthropic_results(ids, text):
    return [
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": i, "content": text} for i in ids],
        }
    ]


def openai_call(ids, text=""):
    calls = [
        {"type": "functionCall", "call_id": i, "name": "read", "arguments": '{"path": "a.py"}'}
        for i in ids
    ]
    return [{"role": "assistant", "content": [{"type": "text", "text": text}, *calls]}]


def openai_results(ids, text):
    return [{"role": "tool", "tool_call_id": i, "content": text} for i in ids]


def bedrock_call(ids, text=""):
    calls = [
        {"type": "toolUse", "toolUseId": i, "name": "read", "input": {"path": "a.py"}} for i in ids
    ]
    return [{"role": "assistant", "content": [{"type": "text", "text": text}, *calls]}]


def bedrock_results(ids, text):
    blocks = [
        {"type": "toolResult", "toolUseId": i, "content": [{"type": "text", "text": text}]}
        for i in ids
    ]
    return [{"role": "user", "content": blocks}]


SHAPES = {
    "pi": (pi_call, pi_results),
    "anthropic": (anthropic_call, anthropic_results),
    "openai": (openai_call, openai_results),
    "bedrock": (bedrock_call, bedrock_results),
}


def later_call(shape):
    """A later tool call (it takes the "last tool call" protection) with its result."""
    call, results = SHAPES[shape]
    return [*call(["zz"], "stripe"), *results(["zz"], "stripe webhook")]


def recent_tail():
    """Six short user/assistant turns: the protected tail, about stripe webhooks."""
    out = []
    for k in range(3):
        out += [user(f"stripe webhook question {k}"), assistant(f"stripe webhook answer {k}")]
    return out


def decisions_by_index(result: TrimResult):
    return {d.index: d for d in result.decisions}


# -- skipping ---------------------------------------------------------------------------------


def test_under_the_safe_limit_nothing_runs():
    context = msgs(user("hello there, stripe webhooks"), assistant("sure"))
    result = smart_trim(context, window=WINDOW)
    assert not result.ran
    assert "within the safe limit of 14,000" in result.skipped_reason
    assert [d.decision for d in result.decisions] == ["kept", "kept"]
    assert all(d.layer is None for d in result.decisions)
    assert result.tokens_before == result.tokens_after
    assert result.kept_messages() == context


def test_a_short_query_skips_even_over_the_limit():
    context = msgs(*[assistant(PAD) for _ in range(30)], user("ok"))
    result = smart_trim(context, window=WINDOW)
    assert result.tokens_before > result.safe_limit
    assert not result.ran and result.query == "ok"
    assert "shorter than 3 characters" in result.skipped_reason
    assert len(result.kept_messages()) == len(context)
    assert not smart_trim(context, "  ab  ", window=WINDOW).ran  # stripped before counting


def test_safe_limit_and_hard_cap_follow_the_budget():
    result = smart_trim(msgs(user("hello")), window=200_000)
    assert (result.hard_cap, result.safe_limit) == (4000, 192_000)
    result = smart_trim(msgs(user("hello")), window=20_000, reserve_tokens=1000, hard_cap=500)
    assert result.safe_limit == 18_500


def test_tokens_are_memory_context_estimates_of_the_text():
    context = msgs(
        user("abcd"),
        user([{"type": "text", "text": "ab"}, {"type": "text", "text": "cd"}]),
        user(""),
    )
    result = smart_trim(context, window=WINDOW)
    assert [d.tokens for d in result.decisions] == [2, 2, 1]  # "ab cd" is 5 chars
    assert message_text(context[1]) == "ab cd"


# -- layer 1: protections ---------------------------------------------------------------------


def test_every_message_gets_a_decision():
    context = msgs(*[user(PAD) for _ in range(40)], *recent_tail())
    result = smart_trim(context, window=WINDOW)
    assert result.ran
    assert [d.index for d in result.decisions] == list(range(len(context)))
    assert [d.role for d in result.decisions] == [m.role for m in context]
    assert all(d.reason for d in result.decisions)


def test_system_recalled_and_recent_messages_are_protected():
    recalled = user(f"{MARKER}\n\n<detail>\nold stuff {PAD}\n</detail>\n\n</recalled-context>")
    context = msgs(
        {"role": "system", "content": "You are pi. " + PAD},
        recalled,
        *[user(PAD) for _ in range(40)],
        *recent_tail(),
    )
    result = smart_trim(context, window=WINDOW)
    by = decisions_by_index(result)
    assert by[0].decision == "protected" and by[0].reason == "system message" and by[0].layer == 1
    assert by[1].decision == "protected" and by[1].reason == "recalled-context block"
    tail = range(len(context) - 6, len(context))
    assert all(by[i].decision == "protected" and "last 6" in by[i].reason for i in tail)
    assert by[len(context) - 7].decision != "protected"
    assert result.tokens_after <= result.safe_limit


def test_protected_recent_counts_only_user_and_assistant():
    tail = [*pi_call(["t1"], "look"), *pi_results(["t1"], "stripe webhook data")]
    context = msgs(*[user(PAD) for _ in range(40)], *recent_tail(), *tail)
    result = smart_trim(context, window=WINDOW, protected_recent=2)
    by = decisions_by_index(result)
    n = len(context)
    assert by[n - 2].reason == "one of the last 2 user/assistant messages"  # the call
    assert by[n - 3].reason == "one of the last 2 user/assistant messages"
    assert by[n - 1].reason == f"tool partner of protected message #{n - 2}"
    assert by[n - 4].decision != "protected"


@pytest.mark.parametrize(
    ("head", "protected"),
    [
        ([{"role": "compactionSummary", "summary": "x"}], True),  # normalised role, index 0
        ([user("first"), user(SUMMARY_PREFIX + "\n\n<summary>\nwork\n</summary>")], True),
        ([user("first"), user("notes <read-files>\na.py\n</read-files>")], True),
        ([{"role": "system", "content": "sys"}, user("a"), user(SUMMARY_PREFIX + " x")], False),
        ([user("a"), {"role": "system", "content": "sys"}, user(SUMMARY_PREFIX + " x")], True),
        ([user("a"), user("b"), user("c"), user(SUMMARY_PREFIX + " x")], False),
    ],
)
def test_a_compaction_summary_is_protected_near_the_top(head, protected):
    raws = list(head)
    if raws[0].get("role") == "compactionSummary":
        context = [
            _summary_message("x " + PAD),
            *msgs(*[user(PAD) for _ in range(40)], *recent_tail()),
        ]
        index = 0
    else:
        index = len(raws) - 1
        raws[index] = {**raws[index], "content": raws[index]["content"] + " " + PAD}
        context = msgs(*raws, *[user(PAD) for _ in range(40)], *recent_tail())
    by = decisions_by_index(smart_trim(context, window=WINDOW))
    assert (
        by[index].decision == "protected" and "compaction summary" in by[index].reason
    ) is protected


def _summary_message(summary):
    from core.transcript.normalize import summary_message

    return summary_message(
        "compactionSummary", summary, "2026-01-01T00:00:00Z", {"type": "compaction"}
    )


def test_the_last_tool_call_and_its_results_are_protected():
    calls = [*pi_call(["a", "b"]), *pi_results(["a", "b"], "irrelevant output " + PAD)]
    context = msgs(
        *[user(PAD) for _ in range(30)], *calls, *[user(PAD) for _ in range(10)], *recent_tail()
    )
    result = smart_trim(context, window=WINDOW)
    by = decisions_by_index(result)
    assert by[30].reason == "the last tool call"
    assert by[31].reason == by[32].reason == "tool partner of protected message #30"
    assert result.tokens_after <= result.safe_limit


def test_a_protected_call_keeps_an_old_result_and_a_protected_result_its_call():
    # The call sits among the last 6 user/assistant messages; its result is long and irrelevant.
    context = msgs(
        *[user(PAD) for _ in range(30)],
        *anthropic_call(["x"], "stripe webhook check"),
        *anthropic_results(["x"], "unrelated " + PAD),
        *recent_tail()[1:],
    )
    by = decisions_by_index(smart_trim(context, window=WINDOW))
    assert by[30].decision == by[31].decision == "protected"


# -- layer 2: BM25 ------------------------------------------------------------------------------


def test_lowest_bm25_scores_go_first():
    context = msgs(
        user("discuss stripe webhook integration " + PAD),
        assistant("docker compose production deployment " + PAD),
        user("stripe webhook signature " + PAD),
        assistant("docker volumes and compose networks " + PAD),
        *[assistant("cache parser " + PAD) for _ in range(18)],
        *recent_tail(),
    )
    result = smart_trim(context, "stripe webhook", window=WINDOW)
    by = decisions_by_index(result)
    trimmed = [d.index for d in result.decisions if d.decision == "trimmed_bm25"]
    assert trimmed[:2] == [1, 3]  # the docker ones score 0, the oldest first among ties
    assert by[1].bm25_score == 0.0 and by[0].bm25_score > 0
    assert by[1].layer == 2 and "least relevant (1 of 22)" in by[1].reason
    kept = [d for d in result.decisions if d.decision == "kept"]
    assert kept and all(k.bm25_score >= max(by[i].bm25_score for i in trimmed) for k in kept)
    assert result.safe_limit - 700 < result.tokens_after <= result.safe_limit  # stops at the limit


def test_the_default_query_is_the_last_three_user_messages():
    context = msgs(
        *[user(PAD) for _ in range(30)],
        user("one"),
        user(f"{MARKER} recalled"),
        user("two"),
        user("three"),
        user("[Mon 2026-01-05 10:00 UTC] four"),
    )
    result = smart_trim(context, window=WINDOW)
    assert result.query == "two\nthree\nfour"


def test_bm25_scores_equal_the_index_and_rank_bm25():
    texts = [
        "stripe webhook retry",
        "docker compose up",
        "the stripe api key",
        "",
        "webhook webhook handler",
        "getUserName in src/core/agent-session.ts",
    ]
    query = tokenize("stripe webhook getUserName the")
    clear_caches()
    ours = bm25_scores(texts, query)
    assert np.array_equal(bm25_scores(texts, query), ours)  # memoised, the same figures
    index = BM25Index()
    index.add_many([tokenize(t) for t in texts])
    np.testing.assert_allclose(ours, index.scores(query), rtol=1e-12)
    np.testing.assert_allclose(
        ours, BM25Okapi([tokenize(t) for t in texts]).get_scores(query), rtol=1e-9, atol=1e-12
    )


_TEXT = st.text(
    alphabet=st.sampled_from(list("abcU Z_.-/:@9 \t\n\u3000\xa0\x1c語言模型éß")), max_size=60
)


@given(_TEXT)
def test_table_tokens_equal_the_tokenizer(text):
    clear_caches()
    tokens = tokenize(text)
    assert TABLE.counts(text) == dict(Counter(tokens))
    assert TABLE.terms([text])[0].length == len(tokens)
    assert TABLE.counts(text) == dict(Counter(tokens))  # memoised


_WORDS = st.sampled_from(
    [
        "stripe",
        "webhook",
        "the",
        "getUserName",
        "src/a_b.ts",
        "x",
        "数据库",
        "Café",
        "a..b",
        "(c,d)",
    ]
)
_DOC = st.lists(_WORDS, max_size=8).map(" ".join)


@given(st.lists(st.lists(_DOC, max_size=6), min_size=1, max_size=4), st.lists(_WORDS, max_size=5))
def test_batches_share_one_table_and_score_as_rank_bm25(batches, query_words):
    table = TokenTable()
    query = tokenize(" ".join(query_words))
    for texts in batches:  # each batch meets chunks and texts of the earlier ones
        for text, terms in zip(texts, table.terms(texts), strict=True):
            tokens = tokenize(text)
            assert terms.length == len(tokens) and terms.ids.tolist() == sorted(terms.ids.tolist())
            assert dict(
                zip([table.names[i] for i in terms.ids], terms.counts.tolist(), strict=True)
            ) == dict(Counter(tokens))
        ours = bm25_scores(texts, query, table)
        if any(tokenize(t) for t in texts):
            oracle = BM25Okapi([tokenize(t) for t in texts]).get_scores(query)
            np.testing.assert_allclose(ours, oracle, rtol=1e-9, atol=1e-12)
        else:
            assert not ours.any()


def test_the_table_starts_again_past_its_bounds(monkeypatch):
    from core.recall import token_table

    table = TokenTable()
    table.terms(["alpha beta", "gamma"])
    assert table.names == ["alpha", "beta", "gamma"]  # in order of first appearance
    monkeypatch.setattr(token_table, "_MAX_CHUNKS", 2)
    (terms,) = table.terms(["delta epsilon delta"])
    assert table.names == ["delta", "epsilon"] and terms.ids.tolist() == [0, 1]
    assert terms.counts.tolist() == [2, 1] and terms.length == 3


# -- layer 3: age -------------------------------------------------------------------------------


def test_blank_messages_go_by_age_once_bm25_has_nothing_left():
    images = [
        {"role": "user", "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]}
        for _ in range(5)
    ]
    context = msgs(*images, *[user(PAD) for _ in range(20)], *recent_tail())
    tail = sum(-(-len(message_text(m)) // 3) for m in context[-6:])
    # The limit leaves room for the protected tail and three blank messages.
    result = smart_trim(
        context, "stripe webhook", window=WINDOW, reserve_tokens=WINDOW - 2000 - tail - 3
    )
    by = decisions_by_index(result)
    assert all(by[i].decision == "trimmed_bm25" for i in range(5, 25))
    assert [by[i].decision for i in range(5)] == ["trimmed_age"] * 2 + ["kept"] * 3
    assert by[0].layer == 3 and "oldest unprotected" in by[0].reason
    assert by[4].layer == 3 and by[4].bm25_score is None
    assert result.tokens_after <= result.safe_limit


# -- pairing, in the four shapes ----------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_a_trimmed_result_takes_its_call(shape):
    call, results = SHAPES[shape]
    context = msgs(
        *call(["c1"], "stripe webhook signature check " * 20),
        *results(["c1"], "unrelated docker output " + PAD),
        *[user(PAD) for _ in range(19)],
        *later_call(shape),
        *recent_tail(),
    )
    result = smart_trim(context, "stripe webhook", window=WINDOW)
    by = decisions_by_index(result)
    assert by[1].decision == "trimmed_bm25"
    assert by[0].decision == "removed_pairing" and by[0].layer == "pairing"
    assert by[0].reason == "a result of its tool call (#1) was removed (trimmed_bm25)"
    assert_pairing(context, result)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_trimmed_call_takes_all_its_results(shape):
    call, results = SHAPES[shape]
    context = msgs(
        *call(["c1", "c2"], "docker compose " + PAD),
        *results(["c1", "c2"], "stripe webhook payload " * 30),
        *[user(PAD) for _ in range(19)],
        *later_call(shape),
        *recent_tail(),
    )
    result = smart_trim(context, "stripe webhook", window=WINDOW)
    by = decisions_by_index(result)
    assert by[0].decision == "trimmed_bm25"
    first = len(results(["c1", "c2"], ""))
    for i in range(1, 1 + first):
        assert by[i].decision == "removed_pairing"
        assert by[i].reason == "its tool call (#0) was removed (trimmed_bm25)"
    assert_pairing(context, result)


@pytest.mark.parametrize("shape", SHAPES)
def test_an_orphaned_result_is_dropped(shape):
    _, results = SHAPES[shape]
    context = msgs(
        *results(["gone"], "stripe webhook"), *[user(PAD) for _ in range(22)], *recent_tail()
    )
    by = decisions_by_index(smart_trim(context, "stripe webhook", window=WINDOW))
    assert by[0].role == "toolResult"
    assert by[0].decision == "removed_pairing"
    assert by[0].reason == "orphaned tool result: its call is not in the context"


def test_a_call_without_its_result_stays_and_says_so():
    context = msgs(
        *pi_call(["lost"], "stripe webhook " * 5),
        *[user(PAD) for _ in range(22)],
        *later_call("pi"),
        *recent_tail(),
    )
    by = decisions_by_index(smart_trim(context, "stripe webhook", window=WINDOW))
    assert by[0].decision in ("kept", "protected")
    assert by[0].reason.endswith("no result for lost (the agent adds a synthetic one)")


def test_a_result_without_an_id_pairs_by_position():
    context = msgs(
        *pi_call(["c1"], "stripe webhook " * 5),
        {"role": "toolResult", "content": [{"type": "text", "text": "docker " + PAD}]},
        *[user(PAD) for _ in range(19)],
        *later_call("pi"),
        *recent_tail(),
    )
    by = decisions_by_index(smart_trim(context, "stripe webhook", window=WINDOW))
    assert by[1].decision == "trimmed_bm25" and by[0].decision == "removed_pairing"


# -- output -----------------------------------------------------------------------------------


def test_raw_dicts_come_back_untouched_and_in_order():
    raws = [
        *pi_call(["a"], "x"),
        *pi_results(["a"], PAD),
        *[user(PAD) for _ in range(30)],
        *recent_tail(),
    ]
    before = copy.deepcopy(raws)
    context = msgs(*raws)
    result = smart_trim(context, window=WINDOW)
    kept = result.kept_raw()
    assert raws == before
    ids = [id(r) for r in raws]
    assert all(any(k is r for r in raws) for k in kept)
    assert [ids.index(id(k)) for k in kept] == sorted(ids.index(id(k)) for k in kept)
    assert [m.raw for m in result.kept_messages()] == kept


def archived(result: TrimResult) -> list[tuple[int, str, str]]:
    """What the agent archives of a trim: removed user and assistant text, redacted.

    Text blocks, channel prefixes stripped, blank text and recalled blocks skipped
    (memory-context's archiving of trimmed messages; memlens only shows the trim).
    """
    out = []
    for m, d in zip(result.messages, result.decisions, strict=True):
        if not d.removed or m.role not in ("user", "assistant"):
            continue
        text = " ".join(b.text for b in m.blocks if b.kind == "text")
        if not text.strip() or MARKER in text:
            continue
        clean = strip_prefixes(text)
        if clean:
            out.append((d.index, m.role, redact(clean)))
    return out


def test_archive_candidates_are_redacted_user_and_assistant_text():
    secret = "a" * 40
    recalled = user(f"{MARKER} old {PAD}")
    context = msgs(
        recalled,
        user(f"[Mon 2026-01-05 10:00 UTC] deploy with token={secret} {PAD}"),
        *pi_call(["a"], "reading " + PAD),
        *pi_results(["a"], "tool output " + PAD),
        *[assistant("x " + PAD) for _ in range(30)],
        *later_call("pi"),
        *recent_tail(),
    )
    result = smart_trim(
        context, "stripe webhook", window=WINDOW, reserve_tokens=WINDOW - 2000 - 2000
    )
    out = archived(result)
    removed = {d.index for d in result.decisions if d.removed}
    assert {1, 2, 3} <= removed
    assert [index for index, _, _ in out] == sorted(
        i for i in removed if context[i].role in ("user", "assistant")
    )
    index, role, content = out[0]
    assert index == 1 and role == "user"
    assert content.startswith("deploy with token=[REDACTED]")
    assert all(MARKER not in c for _, _, c in out)
    assert 3 not in [i for i, _, _ in out]  # tool results are not archived


def test_idempotent_on_a_simple_context():
    context = msgs(
        *[user(PAD) for _ in range(20)],
        *[assistant("stripe " + PAD) for _ in range(20)],
        *recent_tail(),
    )
    first = smart_trim(context, window=WINDOW)
    assert first.ran and first.tokens_after <= first.safe_limit
    second = smart_trim(first.kept_messages(), window=WINDOW)
    assert not any(d.removed for d in second.decisions)


# -- invariants, checked from the input rather than from the decisions --------------------------


def call_ids(m):
    return [b.tool_id for b in m.tool_calls()] if m.role == "assistant" else []


def assert_pairing(context, result):
    kept = {d.index for d in result.decisions if not d.removed}
    owner = {}
    answers = {}  # result message -> call messages it answers
    for i, m in enumerate(context):
        if m.role == "toolResult" or any(b.kind == "tool_result" for b in m.blocks):
            answers[i] = {owner[t] for t in m.result_ids() if t in owner}
        for t in call_ids(m):
            owner[t] = i
    for r, calls in answers.items():
        if r not in kept:
            continue
        assert calls or not result.ran, f"orphaned result #{r} kept"
        assert calls <= kept, f"result #{r} kept without its call"
    for r, calls in answers.items():
        for c in calls:
            if c in kept:
                assert r in kept, f"call #{c} kept without its result #{r}"


# -- property tests ----------------------------------------------------------------------------

WORDS = [
    "stripe",
    "webhook",
    "docker",
    "compose",
    "cache",
    "parser",
    "invoice",
    "retry",
    "the",
    "a",
]


@st.composite
def conversations(draw):
    words = st.lists(st.sampled_from(WORDS), max_size=120).map(" ".join)
    raws = []
    if draw(st.booleans()):
        raws.append({"role": "system", "content": draw(words)})
    if draw(st.booleans()):
        raws.append(user(SUMMARY_PREFIX + " " + draw(words)))
    serial = 0
    for _ in range(draw(st.integers(0, 20))):
        kind = draw(st.sampled_from(["user", "assistant", "tools", "tools", "recalled", "orphan"]))
        if kind == "user":
            raws.append(user(draw(words)))
        elif kind == "assistant":
            raws.append(assistant(draw(words)))
        elif kind == "recalled":
            raws.append(user(f"{MARKER} {draw(words)}"))
        elif kind == "orphan":
            shape = draw(st.sampled_from(sorted(SHAPES)))
            raws += SHAPES[shape][1]([f"ghost{serial}"], draw(words))
            serial += 1
        else:
            shape = draw(st.sampled_from(sorted(SHAPES)))
            call, results = SHAPES[shape]
            ids = [f"{shape}{serial + k}" for k in range(draw(st.integers(1, 3)))]
            serial += len(ids)
            raws += call(ids, draw(words))
            if draw(st.booleans()):  # interleaved text between the call and its results
                raws.append(assistant(draw(words)))
            answered = [i for i in ids if draw(st.integers(0, 5))]  # sometimes a result is missing
            if shape in ("anthropic", "bedrock") and draw(st.booleans()):
                raws += results(answered, draw(words)) if answered else []
            else:
                for i in answered:
                    raws += results([i], draw(words))
    return msgs(*raws)


TRIM_ARGS = st.fixed_dictionaries(
    {
        "window": st.integers(50, 2500),
        "reserve_tokens": st.integers(0, 300),
        "protected_recent": st.integers(0, 8),
    }
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), TRIM_ARGS, st.sampled_from([None, "stripe webhook", "zz"]))
def test_properties_of_the_trim(context, args, query):
    result = smart_trim(context, query, **args)
    assert [d.index for d in result.decisions] == list(range(len(context)))
    kept = [d.index for d in result.decisions if not d.removed]
    out = result.kept_messages()
    assert [context[i] for i in kept] == out  # a subsequence of the input, same objects
    assert result.tokens_after == sum(result.decisions[i].tokens for i in kept)
    if not result.ran:
        assert out == context
        return

    # Protected messages stay, checked from the input itself.
    must = {i for i, m in enumerate(context) if m.role == "system" or MARKER in message_text(m)}
    talkers = [i for i, m in enumerate(context) if m.role in ("user", "assistant")]
    if args["protected_recent"]:
        must |= set(talkers[-args["protected_recent"] :])
    calls = [i for i, m in enumerate(context) if call_ids(m)]
    if calls:
        must.add(calls[-1])
    assert must <= set(kept)
    assert all(not d.removed for d in result.decisions if d.decision == "protected")

    assert_pairing(context, result)

    protected_tokens = sum(d.tokens for d in result.decisions if d.decision == "protected")
    if protected_tokens <= result.safe_limit:
        assert result.tokens_after <= result.safe_limit

    again = smart_trim(out, query, **args)
    assert not any(d.removed for d in again.decisions), "a second run trimmed more"


# -- the real session ---------------------------------------------------------------------------


def test_the_pi_fixture_at_its_leaf(fixtures_dir):
    session = load_transcript(fixtures_dir / "before-compaction.jsonl")
    context = [item.message for item in context_at(session)]
    result = smart_trim(context, window=100_000)
    assert len(context) == 446
    assert result.ran
    assert (result.tokens_before, result.tokens_after, result.safe_limit) == (
        116_294,
        83_601,
        92_000,
    )
    assert result.query == "ls\nwhat did i just execute?\nok"
    assert result.counts() == {
        "protected": 9,
        "trimmed_bm25": 114,
        "removed_pairing": 55,
        "kept": 268,
    }
    assert result.decisions[0].reason == "compaction summary at the top of the context"
    assert_pairing(context, result)
    assert len(archived(result)) == 54
    again = smart_trim(result.kept_messages(), window=100_000)
    assert not again.ran and again.tokens_before == 83_601
