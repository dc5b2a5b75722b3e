"""`agentcli batch`: many tasks, each in a workspace of its own, resumable (see docs/batch.md)."""
