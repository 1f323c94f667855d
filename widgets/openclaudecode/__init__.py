"""OpenClaudeCode views: its memory (``memory_fts``) searched read-only."""
