"""Knowledge fact review and editing.

The fact table, detail with history, sources and provenance, the edit dialog, undo,
the review queue of proposed operations, and the list of the facts that came from a
compaction's messages.
"""
