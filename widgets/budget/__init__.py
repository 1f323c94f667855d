"""The token budget gauge: the context's sections against every threshold."""
