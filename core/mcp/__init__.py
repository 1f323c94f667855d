"""``memlens mcp DATA``: the memory memlens reads, offered read-only over MCP.

:mod:`core.mcp.tools` answers the six tools (``memory_search``, ``memory_get``,
``knowledge_search``, ``recall_preview``, ``sessions_list``, ``session_context``) with
the same core code the app and the CLI use; :mod:`core.mcp.schemas` declares them;
:mod:`core.mcp.server` serves them over stdio with the official ``mcp`` SDK. Nothing
here writes to the agent's files.
"""
