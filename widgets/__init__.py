"""Reusable Textual widgets: chat pane, session tree, compaction timeline, settings form, status."""
