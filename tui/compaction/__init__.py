"""Compaction: token estimates, cut points, pruning, file ops, serialization, summaries and the engine."""
