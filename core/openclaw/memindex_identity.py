"""Whether OpenClaw would search a memory index as it is: its identity check.

OpenClaw 2026.9.6 compares the index's meta (``memory_index_meta_v1``) with the
agent's memory-search config before every search
(``extensions/memory-core/manager-runtime.js``: ``resolveMemoryIndexIdentityState``,
``resolveConfigurationIndexIdentityState``, ``resolveContentScopeIdentityState``).
An index written for another embedding provider, model, provider settings (the
``providerKey``: a SHA-256 of the provider's cache-key data), sources, extra paths,
chunking or FTS tokenizer is *paused*: OpenClaw's ``memory_search`` tool answers
``disabled``/``unavailable`` with the reason (``buildPausedMemoryIndexUnavailableResult``
in ``dist/tools-*.mjs``) and ``openclaw memory search`` finds nothing and warns that
the index is stale, until ``openclaw memory index`` rebuilds it. One exception: an
index whose only difference is an older chunking implementation is still searched,
keyword-only, while the rebuild is pending.

Pure and read-only: :func:`index_identity` takes the meta and the settings
(:class:`core.openclaw.memsearch_embed.SearchSettings`) and returns OpenClaw's
diagnostic; :func:`unavailable_answer` the tool's answer when paused. A provider
key memlens cannot reproduce (providers other than ``openai-compatible`` and
``none``, secret-reference headers) is not compared, as OpenClaw does while it
does not know the key (``providerKeyKnown: false``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.openclaw.memsearch_text import locale_sort_key

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from core.openclaw.memsearch_embed import SearchSettings

PROVENANCE_VERSION = 1
"""The ``provenanceVersion`` OpenClaw 2026.9.6 writes."""
CHUNKING_VERSION = 5
"""The ``chunkingVersion`` OpenClaw 2026.9.6 writes."""
FTS_ONLY_MODEL = "fts-only"
COMPATIBLE = "openai-compatible"
_SENSITIVE = ("authorization", "proxy-authorization")
_ENV_REF = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")


@dataclass(frozen=True, slots=True)
class IndexIdentity:
    """OpenClaw's ``indexIdentity`` state: ``valid``, ``missing`` or ``mismatched``."""

    status: str
    reason: str | None = None
    code: str | None = None
    owner: str | None = None
    """``openclaw`` (the index format) or ``configuration`` (the config changed)."""
    version_order: str | None = None
    """``older`` / ``newer`` for the version codes."""
    chunking_version_only: bool = False
    fts_available: bool = True

    @property
    def valid(self) -> bool:
        """True when OpenClaw searches the index as it is."""
        return self.status == "valid"

    @property
    def keyword_only(self) -> bool:
        """``chunkingUpgradeKeywordOnly``: OpenClaw serves the existing keyword index.

        Only the chunking implementation is older, and the FTS table is there.
        """
        return (
            self.status == "mismatched"
            and self.owner == "openclaw"
            and self.code == "chunking_version"
            and self.version_order == "older"
            and self.chunking_version_only
            and self.fts_available
        )

    @property
    def paused(self) -> bool:
        """True when OpenClaw's search answers nothing but why it is paused."""
        return not self.valid and not self.keyword_only

    def to_json(self) -> dict[str, Any]:
        """The state as OpenClaw's ``status.custom.indexIdentity`` spells it."""
        out: dict[str, Any] = {"status": self.status}
        if self.status != "valid":
            out.update({"reason": self.reason, "code": self.code, "owner": self.owner})
        if self.version_order:
            out["versionOrder"] = self.version_order
        if self.chunking_version_only:
            out["chunkingVersionOnly"] = True
        return out


VALID = IndexIdentity("valid")


def hash_json(value: Any) -> str:
    """``hashText(JSON.stringify(value))``: SHA-256 hex of the compact JSON."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _strip(value: Any) -> str | None:
    text = value.strip() if isinstance(value, str) else ""
    return text or None


def expected_model(settings: SearchSettings) -> str | None:
    """The model the provider would embed with (None: memlens cannot tell)."""
    if settings.keyword_only:
        return FTS_ONLY_MODEL
    model = settings.model.strip()
    if settings.provider == COMPATIBLE:
        for prefix in (f"{COMPATIBLE}/",):
            if model.startswith(prefix):
                return model[len(prefix) :] or None
        return model or None
    if settings.provider == "openai":
        model = model or "text-embedding-3-small"
        base = (settings.base_url or "https://api.openai.com/v1").lower()
        native = re.match(r"^[a-z]+://api\.openai\.com\.*(?::\d+)?(?:/|$)", base) is not None
        return model[7:] if model.startswith("openai/") and native else model
    return model or None


def provider_key(settings: SearchSettings) -> str | None:
    """The ``providerKey`` OpenClaw would write for *settings* (None: not known here).

    ``openai-compatible``'s cache-key data (``src/plugins/core-embedding-providers.ts``):
    provider, base URL without trailing slashes, model, dimensions, input types and
    the request headers but the secret ones; ``none``'s is ``{provider, model}``.
    """
    if settings.keyword_only:
        return hash_json({"provider": "none", "model": FTS_ONLY_MODEL})
    if settings.provider != COMPATIBLE or settings.provider_entry or settings.header_refs:
        return None
    base = _strip(settings.base_url)
    model = expected_model(settings)
    if base is None or model is None:
        return None
    data: dict[str, Any] = {"provider": COMPATIBLE, "baseUrl": base.rstrip("/"), "model": model}
    if settings.output_dims is not None:
        data["dimensions"] = settings.output_dims
    for key, value in (
        ("inputType", settings.input_type),
        ("queryInputType", settings.query_input_type),
        ("documentInputType", settings.document_input_type),
    ):
        if value:
            data[key] = value
    headers = {"accept": "application/json", "content-type": "application/json"}
    for name, value in settings.headers.items():
        low = name.strip().lower()
        if not low or not value.strip():
            continue
        if _ENV_REF.match(value.strip()):
            return None  # a secret reference: its value is not memlens's to resolve
        headers[low] = value.strip()
    data["headers"] = {
        k: v
        for k, v in headers.items()
        if k not in _SENSITIVE and not any(s in k for s in ("api-key", "token", "secret"))
    }
    return hash_json(data)


def scope_hash(settings: SearchSettings, workspace: str | os.PathLike[str] | None) -> str | None:
    """``resolveConfiguredScopeHash``: the extra paths and multimodal settings.

    None when a relative extra path needs a workspace memlens does not know.
    """
    entries: list[Any] = []
    for entry in settings.extra_paths:
        path, pattern = (entry, "") if isinstance(entry, str) else entry
        path = os.path.expanduser(path)
        if not os.path.isabs(path):
            if workspace is None:
                return None
            path = os.path.join(os.fspath(workspace), path)
        path = os.path.normpath(path).replace("\\", "/")
        entries.append({"path": path, "pattern": pattern.replace("\\", "/")} if pattern else path)
    entries.sort(key=lambda e: locale_sort_key(json.dumps(e, separators=(",", ":"))))
    return hash_json(
        {
            "extraPaths": entries,
            "multimodal": {
                "enabled": settings.multimodal_enabled,
                "modalities": sorted(settings.multimodal_modalities),
                "maxFileBytes": settings.multimodal_max_bytes,
            },
        }
    )


def _sources(meta: Mapping[str, Any]) -> list[str]:
    raw = meta.get("sources")
    if not isinstance(raw, list):
        return ["memory"]
    return sorted({s for s in raw if s in ("memory", "sessions")}) or ["memory"]


def _configured(code: str, reason: str) -> IndexIdentity:
    return IndexIdentity("mismatched", reason, code, "configuration")


def _content_scope(
    meta: Mapping[str, Any], settings: SearchSettings, scope: str | None
) -> IndexIdentity:
    """``resolveContentScopeIdentityState``."""
    wanted = sorted({s for s in settings.indexed_sources if s in ("memory", "sessions")})
    if _sources(meta) != (wanted or ["memory"]):
        return _configured("sources", "index sources changed")
    if scope is not None and meta.get("scopeHash") != scope:
        return _configured("scope", "index scope changed")
    if meta.get("chunkTokens") != settings.chunk_tokens or (
        meta.get("chunkOverlap") != settings.chunk_overlap
    ):
        return _configured("chunking", "index chunking changed")
    if (meta.get("ftsTokenizer") or "unicode61") != settings.fts_tokenizer:
        return _configured("fts_tokenizer", "index FTS tokenizer changed")
    return VALID


def _version(meta: Mapping[str, Any], key: str) -> float:
    value = meta.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def index_identity(
    meta: Mapping[str, Any] | None,
    settings: SearchSettings,
    *,
    workspace: str | os.PathLike[str] | Path | None = None,
    has_chunks: bool = True,
    fts_available: bool = True,
) -> IndexIdentity:
    """OpenClaw's identity state of an index with *meta* under *settings*.

    *meta* is the parsed ``memory_index_meta_v1`` (None when there is none);
    *has_chunks* whether the index holds chunks; *fts_available* whether it has
    its FTS table (the chunking-only exception needs it).
    """
    state = _identity(meta, settings, workspace, has_chunks)
    if state.chunking_version_only and not fts_available:
        return IndexIdentity(
            state.status, state.reason, state.code, state.owner, state.version_order,
            chunking_version_only=True, fts_available=False,
        )  # fmt: skip
    return state


def _identity(
    meta: Mapping[str, Any] | None,
    settings: SearchSettings,
    workspace: str | os.PathLike[str] | None,
    has_chunks: bool,
) -> IndexIdentity:
    if meta is None:
        return IndexIdentity("missing", "index metadata is missing", "metadata_missing", "openclaw")
    provenance, chunking = _version(meta, "provenanceVersion"), _version(meta, "chunkingVersion")
    if provenance > PROVENANCE_VERSION or chunking > CHUNKING_VERSION:
        code = "provenance_version" if provenance > PROVENANCE_VERSION else "chunking_version"
        reason = (
            "the index was written by a newer OpenClaw version; upgrade OpenClaw or reindex"
            " explicitly"
        )
        return IndexIdentity("mismatched", reason, code, "openclaw", "newer")
    if provenance < PROVENANCE_VERSION:
        reason = "index provenance classifier changed"
        return IndexIdentity("mismatched", reason, "provenance_version", "openclaw", "older")
    scope = scope_hash(settings, workspace)
    if chunking < CHUNKING_VERSION:
        only = _content_scope(meta, settings, scope).valid
        return IndexIdentity(
            "mismatched", "index chunking implementation changed", "chunking_version",
            "openclaw", "older", chunking_version_only=only,
        )  # fmt: skip
    return _configuration(meta, settings, scope, has_chunks)


def _configuration(
    meta: Mapping[str, Any], settings: SearchSettings, scope: str | None, has_chunks: bool
) -> IndexIdentity:
    """``resolveConfigurationIndexIdentityState``."""
    model = expected_model(settings)
    if model is not None and meta.get("model") != model:
        return _configured(
            "model", f"index was built for model {meta.get('model')}, expected {model}"
        )
    provider = "none" if settings.keyword_only else settings.provider
    if meta.get("provider") != provider:
        return _configured(
            "provider", f"index was built for provider {meta.get('provider')}, expected {provider}"
        )
    key = provider_key(settings)
    if model is not None and key is not None and meta.get("providerKey") != key:
        return _configured("provider_settings", "index provider settings changed")
    content = _content_scope(meta, settings, scope)
    if not content.valid:
        return content
    vector_ready = not settings.keyword_only and settings.vector_enabled
    if vector_ready and has_chunks and not meta.get("vectorDims"):
        return _configured("vector_dims", "index vector dimensions are missing")
    return VALID


# -- what OpenClaw says when the index is paused -----------------------------------------


def rebuild_guidance(settings: SearchSettings, agent: str | None) -> str:
    """``formatMemoryIndexRebuildGuidance``."""
    command = "openclaw memory status --index" + (f" --agent {agent.strip()}" if agent else "")
    cost = (
        "Rebuilding uses keyword indexing only and does not call an embedding provider."
        if settings.keyword_only
        else "Rebuilding may call the configured embedding provider and can incur provider cost."
    )
    return f"{command}. {cost}"


def _cause(identity: IndexIdentity) -> str:
    if identity.owner == "configuration":
        return f"the current memory configuration no longer matches the index ({identity.reason})"
    if identity.code == "metadata_missing":
        return (
            f"the memory index metadata is missing ({identity.reason}); no configuration"
            " change is needed"
        )
    if identity.version_order == "newer":
        return identity.reason or ""
    return (
        f"this OpenClaw version changed the memory index format ({identity.reason}); no"
        " configuration change is needed"
    )


def unavailable_answer(
    identity: IndexIdentity, settings: SearchSettings, agent: str | None
) -> dict[str, Any]:
    """The ``memory_search`` tool's answer for a paused index.

    ``buildMemorySearchUnavailableResult`` with ``resolveMemoryIndexSearchDiagnostic``'s
    error, warning and action.
    """
    guidance = rebuild_guidance(settings, agent)
    reason = identity.reason or "memory search unavailable"
    warning = f"Tell the user: memory search is paused because {_cause(identity)}."
    if identity.version_order == "newer":
        action = f"Tell the user to upgrade OpenClaw or reindex explicitly: {guidance}"
    else:
        action = f"Tell the user to run: {guidance}"
    return {
        "results": [],
        "disabled": True,
        "unavailable": True,
        "error": reason,
        "warning": warning,
        "action": action,
        "debug": {"warning": warning, "action": action, "error": reason},
    }


def staleness(
    identity: IndexIdentity, settings: SearchSettings, agent: str | None
) -> dict[str, Any]:
    """``resolveMemorySearchStaleness``: what ``openclaw memory search`` adds to its answer."""
    guidance = rebuild_guidance(settings, agent)
    newer = identity.version_order == "newer"
    return {
        "stale": True,
        "warning": f"Memory index is stale: {identity.reason} (owner: {identity.owner}, code:"
        f" {identity.code}). Search results may be incomplete.",
        "action": f"Upgrade OpenClaw or reindex explicitly: {guidance}" if newer
        else f"Run: {guidance}",
    }  # fmt: skip
