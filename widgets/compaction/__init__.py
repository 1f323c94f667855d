"""Compaction on demand.

The panel (plan, provider, run, write), its jobs for the job runner, the diff of
what a compaction kept and dropped, and the HTML it renders.
"""
