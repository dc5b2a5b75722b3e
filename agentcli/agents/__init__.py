"""Assembling agents: `build.build_agent` makes an `Agent` from tool sources (`sources`), a
system prompt, a model, a gate and a loop configuration. The session's agent and (later)
sub-agents are built the same way."""
