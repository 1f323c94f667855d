"""Open what a user points memlens at.

Recognise a path (agent home, agent dir, session file, SQLite database, memory store),
load everything it holds with progress and cancellation into a
:class:`core.dataset.load.DataSet`, open its recall side (:mod:`core.dataset.open_recall`),
and scan this machine's agent homes for the first-run screen. Every problem is kept
with its file and line; nothing is written.
"""
