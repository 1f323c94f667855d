"""Compaction: planning, summarisation (LLM or offline), knowledge extraction, runs."""
