"""Topic tags and entities as memory-context computes them."""

from __future__ import annotations

from core.store.tagging import extract_entities, extract_topics


def test_topics_need_boundaries_for_english_not_for_chinese():
    assert extract_topics("Fix the Python code; the API endpoint fails") == ["programming", "api"]
    assert extract_topics("encode decoded codes") == []  # no word boundary around "code"
    assert extract_topics("(code)") == ["programming"]
    assert extract_topics("我们的数据库很慢") == ["database"]
    assert extract_topics("Switch to DARK MODE in settings") == ["settings"]
    assert extract_topics("") == []


def test_topics_in_definition_order():
    text = "the config for the chat about the database and python"
    assert extract_topics(text) == ["programming", "database", "chat", "settings"]
    assert extract_topics("settings") == []  # "setting" needs a boundary after it


def test_entities_in_agent_order_with_offsets():
    text = "see https://x.com/a and bob@ex.com, $AAPL 600519 costs $1,200 on 2025-01-02 for openclaw/openclaw MemLens 请张三"
    got = [(e.type, e.value) for e in extract_entities(text)]
    assert got == [
        ("url", "https://x.com/a"),
        ("email", "bob@ex.com"),
        ("stock", "600519"),
        ("stock", "$AAPL"),
        ("amount", "$1,200"),
        ("date", "2025-01-02"),
        ("person", "张三"),
        ("project", "openclaw/openclaw"),
        ("project", "MemLens"),
    ]
    ents = extract_entities(text)
    assert ents[0].offset == 4
    # after the URL and email are blanked with one space each, offsets shift like the agent's
    rest = text.replace("https://x.com/a", " ").replace("bob@ex.com", " ")
    assert ents[2].offset == rest.index("600519")


def test_entity_offsets_are_utf16():
    (e,) = [x for x in extract_entities("😀 see https://a.io") if x.type == "url"]
    assert e.offset == 7  # the emoji is 2 UTF-16 units


def test_entities_deduplicated_by_type_and_value():
    ents = extract_entities("2025-01-02 and again 2025-01-02")
    assert [(e.type, e.value) for e in ents] == [("date", "2025-01-02")]


def test_whitespace_is_javascripts_s():
    # JS \s holds U+00A0, U+3000, U+FEFF, U+2028...; not U+0085 or U+001C (Python's \s does)
    def urls(text):
        return [e.value for e in extract_entities(text) if e.type == "url"]

    assert urls("see https://x.io/a\u00a0next") == ["https://x.io/a"]
    assert urls("see https://x.io/a\u3000b") == ["https://x.io/a"]
    assert urls("https://x.io/a\ufeffb") == ["https://x.io/a"]
    assert urls("https://x.io/a\u2028b") == ["https://x.io/a"]
    assert urls("https://x.io/a\x85b") == ["https://x.io/a\x85b"]
    assert urls("https://x.io/a\x1cb") == ["https://x.io/a\x1cb"]

    def people(text):
        return [e.value for e in extract_entities(text) if e.type == "person"]

    assert people("联系\u3000张三") == ["张三"]
    assert people("联系\u00a0张三") == ["张三"]
    assert people("告诉\ufeff李四") == ["李四"]
    assert people("联系\x85张三") == []
    amounts = [e.value for e in extract_entities("$5\u00a0M and $3\x85K") if e.type == "amount"]
    assert amounts == ["$5\u00a0M", "$3"]


def test_the_ascii_shortcut_tags_exactly_as_the_patterns_do():
    """ASCII texts skip the boundary patterns of topics none of whose words they contain."""
    import random

    from core.store.tagging import TOPIC_KEYWORDS, _topic_patterns

    words = [w for kws in TOPIC_KEYWORDS.values() for w in kws]
    words += ["API", "node.js", "e-mail", "dark  mode", "recode", "codes", "x"]
    seps = [" ", ",", ".", "(", ")", "\n", "\t", "-", "_", "/", ":", "'", "，"]
    rng = random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice(words) + rng.choice(seps) for _ in range(rng.randint(0, 6)))
        text = text.upper() if rng.random() < 0.3 else text
        patterns = [t for t, p, _ in _topic_patterns() if p.search(text.lower())]
        assert extract_topics(text) == patterns, text
