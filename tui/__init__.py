"""kompakt: a Textual TUI and headless core for tree-shaped, pi-compatible LLM agent sessions."""

__version__ = "0.1.0"
