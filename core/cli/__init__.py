"""The ``memlens`` command line: one module per command family (``main`` parses and
dispatches; ``compaction``, ``recall``, ``fact``, ``memory``, ``backups`` hold the commands).
Every command prints text or, with ``--json``, one JSON document, and exits non-zero with a
message naming the file and line when input is bad. Nothing here imports Qt.
"""
