"""OpenClaw-specific views: the session row and config, transcript search and the
memory index (status, files, chunks, search).
"""
