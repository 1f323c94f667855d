"""Reusable Qt views and item models over memlens core objects."""
