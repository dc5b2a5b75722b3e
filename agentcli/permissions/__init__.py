"""The permission gate: decides, between the loop and the tools, whether a call may run."""
