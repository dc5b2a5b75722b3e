"""`agentcli stats`: how the harness did on the user's own sessions, read from their transcripts.

`scope` finds the transcripts (this project's or every project's) and reads `--since`;
`collect` turns their records into one JSON object of figures; `render` shows it as tables and
bar charts (the REPL's `/stats` shows the current session's).
"""
