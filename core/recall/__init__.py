"""Recall: BM25 and vector indexes, the warm store, hybrid search, recall blocks."""
