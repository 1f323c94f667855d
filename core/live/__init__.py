"""Live mode without Qt: follow a data directory while the agent writes to it.
:mod:`.follow` polls files and databases and reads only new bytes or rows; :mod:`.session`
and :mod:`.store` apply them to loaded objects; each poll returns a
:class:`.changes.LiveChanges` describing exactly what changed (appended entries, new
sessions, fact lines, evictions), which the app turns into Qt row inserts.
"""
