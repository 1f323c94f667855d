"""The built-in demo: a realistic, reproducible OpenClaw home written from a seed.

Sessions with compactions and branches, a memory store, facts with history, and the
vocabulary their text is made of (projects, code, conversation). The quick start opens
the app on it.
"""
