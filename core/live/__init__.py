"""Live mode without Qt: follow a data directory while the agent writes to it.

:mod:`.follow` (files) and :mod:`.follow_db` (agent databases, ``sessions.json``) read
only new bytes or rows and parse them in a read phase that may run in a worker;
:mod:`.session` and :mod:`.store` apply them to the loaded objects in an apply phase on
the thread that owns them. Each poll returns a :class:`.changes.LiveChanges` describing
exactly what changed (appended entries, new sessions, fact lines, evictions, problems,
resets), which the app turns into Qt row inserts and updates.
"""
