"""Rule-based topic tags and entities of memory-context (topic.ts, entity.ts).

Topics: English keywords need a whitespace/punctuation boundary, Chinese ones
match anywhere. Entities: URLs and emails first, then, on the text with those
blanked out, stocks, amounts, dates, Chinese names after a prefix and projects.
Offsets are JavaScript string offsets, as the agent stores them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import regex

from core.io.jsstr import JS_SPACE, js_len

TOPIC_KEYWORDS: dict[str, tuple[str, ...]] = {
    "programming": (
        "code", "coding", "programming", "developer", "software", "function", "variable",
        "编程", "代码", "程序", "开发", "软件", "函数", "变量",
        "typescript", "javascript", "python", "rust", "golang", "java", "react", "vue", "node",
    ),
    "api": ("api", "endpoint", "rest", "graphql", "webhook", "接口", "请求", "响应"),
    "database": ("database", "sql", "mongodb", "postgres", "mysql", "redis", "数据库", "查询"),
    "ai": (
        "ai", "machine learning", "ml", "llm", "gpt", "claude", "model", "embedding",
        "人工智能", "机器学习", "模型", "神经网络", "深度学习",
    ),
    "finance": (
        "money", "payment", "invoice", "budget", "expense", "revenue", "profit",
        "钱", "支付", "发票", "预算", "费用", "收入", "利润",
        "stock", "股票", "基金", "投资", "理财",
    ),
    "project": (
        "project", "task", "milestone", "deadline", "sprint", "kanban",
        "项目", "任务", "里程碑", "截止", "进度",
    ),
    "schedule": (
        "meeting", "calendar", "appointment", "schedule", "reminder",
        "会议", "日历", "预约", "日程", "提醒",
    ),
    "travel": (
        "flight", "hotel", "trip", "travel", "vacation", "booking",
        "航班", "酒店", "旅行", "旅游", "度假", "预订",
    ),
    "health": (
        "health", "doctor", "medicine", "exercise", "sleep", "diet",
        "健康", "医生", "药", "运动", "睡眠", "饮食",
    ),
    "email": (
        "email", "mail", "inbox", "send", "reply", "forward",
        "邮件", "收件箱", "发送", "回复", "转发",
    ),
    "chat": (
        "message", "chat", "conversation", "discord", "slack", "telegram", "wechat",
        "消息", "聊天", "对话", "微信", "飞书",
    ),
    "settings": (
        "setting", "config", "preference", "theme", "dark mode", "light mode",
        "设置", "配置", "偏好", "主题", "深色", "浅色",
    ),
}  # fmt: skip

# JavaScript's \s, which is neither Python's \s nor, with re.A, ASCII whitespace.
_JS_S = JS_SPACE


def _topic_pattern(keywords: tuple[str, ...]) -> regex.Pattern[str]:
    words = [regex.escape(k) for k in keywords if not re.search("[\u4e00-\u9fff]", k)]
    cjk = [regex.escape(k) for k in keywords if re.search("[\u4e00-\u9fff]", k)]
    alts = []
    if words:
        alts.append(rf"(?:^|[{_JS_S}\p{{P}}])(?:{'|'.join(words)})(?=[{_JS_S}\p{{P}}]|$)")
    if cjk:
        alts.append("|".join(cjk))
    # JS has no multiline flag here: ^ and $ are the ends of the whole text.
    return regex.compile("|".join(alts), regex.I | regex.V0)


@cache
def _topic_patterns() -> list[tuple[str, regex.Pattern[str], tuple[str, ...]]]:
    # compiled on first use (20 ms): ``memlens mcp`` imports this and seldom tags
    return [
        (topic, _topic_pattern(kws), tuple(k for k in kws if k.isascii()))
        for topic, kws in TOPIC_KEYWORDS.items()
    ]


def extract_topics(text: str) -> list[str]:
    """Topic tags of *text*, in the agent's definition order."""
    if not text:
        return []
    lowered = text.lower()
    if lowered.isascii():
        # An ASCII text matches a topic only where one of its ASCII keywords is a
        # substring: test that first (in C) and run the boundary pattern only then.
        return [
            topic
            for topic, pattern, ascii_words in _topic_patterns()
            if any(w in lowered for w in ascii_words) and pattern.search(lowered)
        ]
    return [topic for topic, pattern, _ in _topic_patterns() if pattern.search(lowered)]


@dataclass(frozen=True, slots=True)
class Entity:
    """An entity found in a segment (offset in UTF-16 units, as the agent's)."""

    type: str
    value: str
    offset: int

    def to_json(self) -> dict[str, object]:
        """The shape of ``metadata.entities[]`` in segments.jsonl."""
        return {"type": self.type, "value": self.value, "offset": self.offset}


_A = re.A
URL_RE = re.compile(rf"https?://[^{_JS_S}<>\"')\]]+", re.I | _A)
EMAIL_RE = re.compile(r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}", _A)
_RULES: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("stock", re.compile(r"(?:SH|SZ|sh|sz)?[0-9]{6}(?=\b|[^\d])", _A), 0),
    ("stock", re.compile(r"\$[A-Z]{1,5}\b", _A), 0),
    ("amount", re.compile(r"¥[\d,]+(?:\.\d+)?(?:万|亿)?|[\d,]+(?:\.\d+)?(?:万|亿)?[元块]", _A), 0),
    ("amount", re.compile(rf"\$[\d,]+(?:\.\d+)?(?:[{_JS_S}]?[KkMmBb])?", _A), 0),
    ("date", re.compile(r"\d{4}[-/]\d{1,2}[-/]\d{1,2}", _A), 0),
    ("date", re.compile(r"\d{1,4}年\d{1,2}月\d{1,2}[日号]", _A), 0),
    ("date", re.compile(r"(?:今天|昨天|明天|前天|后天|上周|下周|上个月|下个月)"), 0),
    (
        "person",
        re.compile(
            rf"(?:@|找|问|跟|给|叫|是|让|请|联系|通知|告诉|转告|抄送|cc)[{_JS_S}]*([一-龥]{{2,4}})",
            _A,
        ),
        1,
    ),
    ("project", re.compile(r"[a-zA-Z0-9_-]+/[a-zA-Z0-9._-]+", _A), 0),
    ("project", re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+){1,4}\b", _A), 0),
)


def _offset(text: str, index: int) -> int:
    return index if text.isascii() else js_len(text[:index])


def extract_entities(text: str) -> list[Entity]:
    """Entities of *text*, deduplicated by type and value, in the agent's order."""
    if not text:
        return []
    found: list[Entity] = []
    for kind, pattern in (("url", URL_RE), ("email", EMAIL_RE)):
        found.extend(
            Entity(kind, m.group(0), _offset(text, m.start())) for m in pattern.finditer(text)
        )
    rest = EMAIL_RE.sub(" ", URL_RE.sub(" ", text))
    for kind, pattern, group in _RULES:
        for m in pattern.finditer(rest):
            value = m.group(group) if group else m.group(0)
            found.append(Entity(kind, value.strip() if group else value, _offset(rest, m.start())))
    seen: set[tuple[str, str]] = set()
    out = []
    for e in found:
        key = (e.type, e.value)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out
