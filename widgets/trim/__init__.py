"""Trim simulation: what smart trim would drop, layer by layer."""
