"""The recall lab: labelled queries run under two ranking configs and compared.

Open a labels file (memlens JSONL or BEIR qrels), run the evaluation in a worker
with progress and cancel, read the summary per config beside rank-bm25's, the table
per query (rank of the first relevant segment, hits@k, the winner) and the two
charts (recall@k curves, per-query win/loss), and drill into the Recall view's
"why not?" for a missed segment.
"""
