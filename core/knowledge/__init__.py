"""Knowledge facts as people work with them.

Planned edits (edit, supersede, delete, restore) as exact lines to append, a fact's
history and chain, where a fact came from (likely sources; the provenance record
memlens writes and reads, and the facts of a compaction's messages), and the review
queue of proposed fact operations. The on-disk log itself is :mod:`core.store.knowledge`.
"""
