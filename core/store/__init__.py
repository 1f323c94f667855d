"""The memory-context store: segments.jsonl, knowledge.jsonl, vectors.bin."""
