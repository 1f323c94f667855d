"""Knowledge fact review and editing.

The fact table, detail with history and sources, the edit dialog, undo, and the
review queue of proposed operations.
"""
