"""Pieces every view shares.

The job runner for background work, the app state object views observe, a generic
record table model and its read-only table view, and the write preview dialog.
"""
