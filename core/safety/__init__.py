"""What keeps users' data safe.

The activity log of every write memlens made, the backups it keeps and restores, the
per-session lock that allows one compaction at a time, secret redaction before any
text is written or sent, and API keys from the environment or the OS keychain (never
from a file). The write plans shown before a write are :mod:`core.io.writes`.
"""
