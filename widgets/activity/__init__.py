"""Views of what memlens did: the activity log of writes and the backups it keeps."""
