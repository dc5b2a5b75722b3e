"""The interactive terminal front end (rich output, prompt_toolkit input).

Submodules import rich at their top, so import them only on the REPL's path:
`markdown_stream` (streamed answers), `tool_render` (tool calls, diffs, errors, spinner).
"""
