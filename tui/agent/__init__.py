"""Agent runtime: the litellm provider, tools, the agent loop, the iteration budget, MoA and hooks."""
