"""OpenClaw-specific views.

The session row and config, transcript search and the memory index (status, files,
chunks, search).
"""
