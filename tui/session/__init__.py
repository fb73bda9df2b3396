"""Session engine: pi v3 entries, the append-only JSONL store, the tree index and the context builder."""
