"""The interactive REPL: prompt_toolkit for input, rich for output, the agent loop in between."""
