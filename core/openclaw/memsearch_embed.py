"""Memory-search settings from ``openclaw.json`` and the query embedder.

OpenClaw 2026.9.6 resolves its memory search from ``memory.search`` with a
per-agent override in ``agents.list[].memory.search``
(``produceMemorySearchConfig``, ``dist/memory-search-*.mjs``): ``provider``
(``auto`` or unset means ``openai``; ``none`` means keyword-only), ``model``,
``remote.{baseUrl, apiKey, headers}``, ``query.{maxResults, minScore}``,
``sources``, ``store.fts.tokenizer``, ``outputDimensionality``.

memlens embeds the query itself only through OpenAI-style ``/embeddings``
endpoints (``openai`` and ``openai-compatible``). The API key comes from the
config (a literal, ``${VAR}`` or an ``{source: "env", id}`` reference) or from
``OPENAI_API_KEY`` in the environment / OS keychain; it lives only in the request
headers, never in a message or a file.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from core.io import jsonio
from core.safety.secrets import resolve_key

if TYPE_CHECKING:
    from collections.abc import Mapping

    import httpx

DEFAULT_MAX_RESULTS = 6
CHUNK_TOKENS = 400
CHUNK_OVERLAP = 80
MULTIMODAL_MAX_FILE_BYTES = 10 * 1024 * 1024
MODALITIES = ("image", "audio")
DEFAULT_MIN_SCORE = 0.35
OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_DEFAULT_MODEL = "text-embedding-3-small"
_ENV_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


class EmbedError(Exception):
    """The query could not be embedded; the message says why (never holds a key)."""


class QueryEmbedder(Protocol):
    """Turns a query into one vector (float64 values, any length)."""

    provider: str
    model: str

    def embed_query(self, text: str) -> list[float]:
        """Embed *text*.

        Raises
        ------
        EmbedError
            When the endpoint cannot be reached or answers something unusable.
        """
        ...


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """What a memory search needs from the config (defaults without one)."""

    provider: str = "openai"
    model: str = ""
    base_url: str | None = None
    api_key_ref: Any = None
    """The config's ``remote.apiKey`` as written (resolved at embed time)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    max_results: int = DEFAULT_MAX_RESULTS
    min_score: float = DEFAULT_MIN_SCORE
    sources: tuple[str, ...] = ("memory",)
    enabled: bool = True
    output_dims: int | None = None
    from_config: bool = False
    # what OpenClaw compares with the index's meta (core.openclaw.memindex_identity)
    indexed_sources: tuple[str, ...] = ("memory", "sessions")
    """The sources OpenClaw indexes (``sources`` + sessions when it remembers across
    conversations, the default); ``sources`` are the ones it searches."""
    extra_paths: tuple[str | tuple[str, str], ...] = ()
    """``extraPaths`` (defaults' then the agent's): a path, or ``(path, pattern)``."""
    multimodal_enabled: bool = False
    multimodal_modalities: tuple[str, ...] = ()
    multimodal_max_bytes: int = MULTIMODAL_MAX_FILE_BYTES
    chunk_tokens: int = CHUNK_TOKENS
    chunk_overlap: int = CHUNK_OVERLAP
    fts_tokenizer: str = "unicode61"
    vector_enabled: bool = True
    input_type: str | None = None
    query_input_type: str | None = None
    document_input_type: str | None = None
    provider_entry: bool = False
    """``models.providers`` has an entry for the provider (its settings join the key)."""
    header_refs: bool = False
    """A ``remote.headers`` value is a secret reference, not a string."""

    @property
    def keyword_only(self) -> bool:
        """True when OpenClaw would not embed at all (provider ``none``)."""
        return self.provider.strip().lower() == "none"


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def agent_entry(raw: Mapping[str, Any], agent_id: str) -> dict[str, Any] | None:
    """The agent's config entry: ``agents.entries[<id>]`` or ``agents.list[]`` by id.

    OpenClaw 2026.9.6 reads either roster (``resolveAgentEntry``); ids compare in
    lower case.
    """
    agents = _obj(raw.get("agents"))
    entries = agents.get("entries")
    if "entries" in agents and entries is not None:
        for key, entry in _obj(entries).items():
            if isinstance(entry, dict) and str(key).lower() == agent_id.lower():
                return entry
        return None
    listed = agents.get("list")
    if isinstance(listed, list):
        for entry in listed:
            if isinstance(entry, dict) and str(entry.get("id", "")).lower() == agent_id.lower():
                return entry
    return None


def _agent_override(raw: Mapping[str, Any], agent_id: str) -> dict[str, Any]:
    entry = agent_entry(raw, agent_id) or {}
    return _obj(_obj(entry.get("memory")).get("search"))


def _pick(over: Mapping[str, Any], base: Mapping[str, Any], *keys: str) -> Any:
    for src in (over, base):
        value: Any = src
        for k in keys:
            value = _obj(value).get(k)
        if value is not None:
            return value
    return None


def settings_from_config(raw: Mapping[str, Any] | None, agent_id: str = "main") -> SearchSettings:
    """:class:`SearchSettings` from a parsed ``openclaw.json`` (None: the defaults)."""
    if not raw:
        return SearchSettings()
    base = _obj(_obj(raw.get("memory")).get("search"))
    over = _agent_override(raw, agent_id)
    enabled = _pick(over, base, "enabled")
    provider = _pick(over, base, "provider")
    provider = provider.strip() if isinstance(provider, str) else ""
    if provider in ("", "auto"):
        provider = "openai"
    model = _pick(over, base, "model")
    if not isinstance(model, str):
        model = OPENAI_DEFAULT_MODEL if provider == "openai" else ""
    base_url = _pick(over, base, "remote", "baseUrl")
    headers = _pick(over, base, "remote", "headers")
    max_results = _pick(over, base, "query", "maxResults")
    min_score = _pick(over, base, "query", "minScore")
    sources = _pick(over, base, "sources")
    dims = _pick(over, base, "outputDimensionality")
    want = [s for s in sources if s in ("memory", "sessions")] if isinstance(sources, list) else []
    return SearchSettings(
        provider=provider,
        model=model,
        base_url=base_url if isinstance(base_url, str) and base_url else None,
        api_key_ref=_pick(over, base, "remote", "apiKey"),
        headers={str(k): str(v) for k, v in _obj(headers).items()},
        max_results=int(max_results)
        if isinstance(max_results, (int, float)) and not isinstance(max_results, bool)
        else DEFAULT_MAX_RESULTS,
        min_score=min(1.0, max(0.0, float(min_score)))
        if isinstance(min_score, (int, float)) and not isinstance(min_score, bool)
        else DEFAULT_MIN_SCORE,
        sources=tuple(dict.fromkeys(want)) or ("memory",),
        enabled=enabled is not False,
        output_dims=int(dims) if isinstance(dims, int) and not isinstance(dims, bool) else None,
        from_config=True,
        **_identity_fields(raw, base, over, provider),
    )


def _remembers(raw: Mapping[str, Any], base: Mapping[str, Any], over: Mapping[str, Any]) -> bool:
    """``resolveRememberAcrossConversations``: explicit, else a ``main`` DM scope everywhere."""
    explicit = _pick(over, base, "rememberAcrossConversations")
    if explicit is not None:
        return bool(explicit)
    scope = _obj(raw.get("session")).get("dmScope")
    bindings = raw.get("bindings")
    scoped = isinstance(bindings, list) and any(
        isinstance(b, dict) and isinstance(b.get("session"), dict) and "dmScope" in b["session"]
        for b in bindings
    )
    return scope in (None, "main") and not scoped


def _normal_sources(sources: Any, sessions: bool) -> tuple[str, ...]:
    """``normalizeSources``: memory and (when enabled) sessions, memory by default."""
    given = sources if isinstance(sources, list) and sources else ["memory"]
    out = [s for s in dict.fromkeys(given) if s == "memory" or (s == "sessions" and sessions)]
    return tuple(out) or ("memory",)


def _extra_paths(base: Mapping[str, Any], over: Mapping[str, Any]) -> tuple[Any, ...]:
    """``normalizeConfiguredMemoryExtraPaths`` of the defaults' then the agent's paths."""
    found: dict[str, str | tuple[str, str]] = {}
    for src in (base, over):
        entries = src.get("extraPaths")
        for entry in entries if isinstance(entries, list) else []:
            raw_path = entry if isinstance(entry, str) else _obj(entry).get("path")
            if not isinstance(raw_path, str) or not raw_path.strip():
                continue
            pattern = _obj(entry).get("pattern") if isinstance(entry, dict) else None
            pattern = pattern.strip() if isinstance(pattern, str) else ""
            path = raw_path.strip()
            found[f"{path}\0{pattern}"] = (path, pattern) if pattern else path
    return tuple(found.values())


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _identity_fields(
    raw: Mapping[str, Any], base: Mapping[str, Any], over: Mapping[str, Any], provider: str
) -> dict[str, Any]:
    """The settings OpenClaw's index identity check compares (``produceMemorySearchConfig``)."""
    remember = _remembers(raw, base, over)
    configured = _pick(over, base, "sources")
    session_memory = _pick(over, base, "experimental", "sessionMemory") is True
    wants_sessions = isinstance(configured, list) and "sessions" in configured
    searched = _normal_sources(configured, session_memory or (remember and wants_sessions))
    indexed = _normal_sources(
        [*searched, "sessions"] if remember else configured, remember or session_memory
    )
    enabled = _pick(over, base, "multimodal", "enabled") is True
    modalities = _pick(over, base, "multimodal", "modalities")
    if not enabled:
        modalities = ()
    elif not isinstance(modalities, list) or "all" in modalities:
        modalities = MODALITIES
    else:
        modalities = tuple(m for m in dict.fromkeys(modalities) if m in MODALITIES)
    max_bytes = _pick(over, base, "multimodal", "maxFileBytes")
    tokenizer = _pick(over, base, "store", "fts", "tokenizer")
    headers = _pick(over, base, "remote", "headers")
    providers = _obj(_obj(raw.get("models")).get("providers"))
    return {
        "indexed_sources": indexed,
        "extra_paths": _extra_paths(base, over),
        "multimodal_enabled": enabled,
        "multimodal_modalities": tuple(modalities),
        "multimodal_max_bytes": max(1, math.floor(max_bytes))
        if isinstance(max_bytes, (int, float))
        and not isinstance(max_bytes, bool)
        and math.isfinite(max_bytes)
        else MULTIMODAL_MAX_FILE_BYTES,
        "fts_tokenizer": tokenizer if isinstance(tokenizer, str) else "unicode61",
        "vector_enabled": _pick(over, base, "store", "vector", "enabled") is not False,
        "input_type": _text(_pick(over, base, "inputType")),
        "query_input_type": _text(_pick(over, base, "queryInputType")),
        "document_input_type": _text(_pick(over, base, "documentInputType")),
        "provider_entry": any(str(k).strip().lower() == provider.lower() for k in providers),
        "header_refs": any(not isinstance(v, str) for v in _obj(headers).values()),
    }


def _resolve_api_key(ref: Any, provider: str, environ: Mapping[str, str]) -> str | None:
    if isinstance(ref, str) and ref.strip():
        m = _ENV_REF.match(ref.strip())
        return resolve_key(m.group(1), environ) if m else ref.strip()
    if isinstance(ref, dict):
        if ref.get("source") == "env" and isinstance(ref.get("id"), str):
            return resolve_key(ref["id"], environ)
        return None
    return resolve_key("OPENAI_API_KEY", environ) if provider == "openai" else None


class OpenAIQueryEmbedder:
    """``POST {baseUrl}/embeddings`` with ``{"model", "input": [query]}``."""

    def __init__(
        self,
        settings: SearchSettings,
        *,
        environ: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.provider = settings.provider
        self.model = settings.model
        self._settings = settings
        self._environ = os.environ if environ is None else environ
        self._timeout = timeout
        self._transport = transport
        base = settings.base_url or (OPENAI_BASE_URL if settings.provider == "openai" else None)
        self.base_url = base.rstrip("/") if base else None

    def embed_query(self, text: str) -> list[float]:
        """Embed *text* (see :class:`QueryEmbedder`)."""
        if self.base_url is None:
            raise EmbedError(f"memory.search provider {self.provider!r} has no remote.baseUrl")
        key = _resolve_api_key(self._settings.api_key_ref, self.provider, self._environ)
        if key is None and self.provider == "openai":
            raise EmbedError("no API key (set OPENAI_API_KEY or memory.search.remote.apiKey)")
        headers = {"Content-Type": "application/json", **self._settings.headers}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body: dict[str, Any] = {"model": self.model, "input": [text]}
        if self._settings.output_dims:
            body["dimensions"] = self._settings.output_dims
        url = f"{self.base_url}/embeddings"
        import httpx  # here: its import costs 0.3 s, and most searches never embed remotely

        try:
            with httpx.Client(timeout=self._timeout, transport=self._transport) as client:
                response = client.post(url, content=jsonio.dumps(body), headers=headers)
        except httpx.HTTPError as exc:
            raise EmbedError(f"cannot reach {url}: {type(exc).__name__}") from None
        if response.status_code != 200:
            raise EmbedError(f"{url} answered HTTP {response.status_code}")
        try:
            data = jsonio.loads(response.content)
            vector = data["data"][0]["embedding"]
        except (jsonio.JSONDecodeError, KeyError, IndexError, TypeError):
            raise EmbedError(f"{url} answered without an embedding") from None
        if not isinstance(vector, list) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in vector
        ):
            raise EmbedError(f"{url} answered an embedding that is not a list of numbers")
        # sanitizeAndNormalizeEmbedding: non-finite values become 0 (cosine ignores the scale)
        return [float(v) if math.isfinite(v) else 0.0 for v in vector]


def embedder_for(
    settings: SearchSettings, *, environ: Mapping[str, str] | None = None
) -> tuple[QueryEmbedder | None, str | None]:
    """The embedder OpenClaw's config names, or None and the reason memlens cannot embed."""
    if settings.keyword_only:
        return None, 'memory.search.provider is "none": OpenClaw searches keyword-only'
    if settings.provider not in ("openai", "openai-compatible"):
        return None, (
            f"memlens cannot embed with memory.search.provider {settings.provider!r}"
            " (only openai and openai-compatible endpoints)"
        )
    if settings.provider == "openai-compatible" and not settings.base_url:
        return None, "memory.search.remote.baseUrl is not set for the openai-compatible provider"
    return OpenAIQueryEmbedder(settings, environ=environ), None
