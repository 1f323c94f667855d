"""The built-in demo: a realistic, reproducible OpenClaw home (sessions with
compactions and branches, a memory store, facts with history) written from a seed, and the
vocabulary its text is made of. The quick start opens the app on it.
"""
