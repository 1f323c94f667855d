"""Compaction on demand: the panel (plan, provider, run), its worker, the diff of
what a compaction kept and dropped, and the HTML it renders.
"""
