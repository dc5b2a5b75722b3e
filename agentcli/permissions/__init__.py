"""The permission gate: decides, between the loop and the tools, whether a call may run.

Public surface: `gate.Gate` / `gate.build_gate` (the gate), `prompt` (the UI-agnostic
question and answer a front end's prompter deals in), `render` (a rich renderable of the
question), `modes.MODES`. Rules: `rules`, `bash_rules`, `paths`; their sources: `sources`.
"""
