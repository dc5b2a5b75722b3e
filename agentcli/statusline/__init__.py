"""Claude Code's `statusLine`: a program of the user's whose first line of output the REPL shows
at the bottom of the screen, above its own status line.

- `setting`: the `statusLine` setting, read leniently, and the command it runs;
- `session_input`: the JSON about the session the command reads on its stdin;
- `runner`: runs the command in the background when the conversation changes, at most every
  `MIN_INTERVAL_S`, and keeps the line it printed.

Which command may run is decided with the hooks' trust (`agentcli.session.composition`): one
from the checked-in settings runs only when the project's hooks are trusted.
"""
