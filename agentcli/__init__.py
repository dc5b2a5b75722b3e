"""agentcli: a terminal coding assistant that speaks the Anthropic Messages API."""

__version__ = "0.1.0"
