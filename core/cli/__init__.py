"""The ``memlens`` command line, one module per command family.

``main`` runs a command, ``parser`` builds the argument parser, ``output`` prints;
``inspect`` holds the read-only commands and ``compaction``, ``recall``, ``fact``,
``memory``, ``backups`` the others. Every command prints text or, with ``--json``, one
JSON document, and exits non-zero with a message naming the file and line when input
is bad. Nothing here imports Qt.
"""
