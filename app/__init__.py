"""The memlens desktop application (Qt)."""
