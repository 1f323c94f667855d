"""Reading and writing files an agent also uses, safely.

Regular files only, one JSON library (orjson), complete lines only when following a
growing file, appends as one whole-line ``write`` made by a helper process, atomic
rewrites with a backup, the write plans shown before a write, limits on what is parsed,
and the small value types shared by every layer (problems, progress and cancellation,
JavaScript string semantics, times for people).
"""
