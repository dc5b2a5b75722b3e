"""Skills: Markdown prompt files run as `/name args` by the user or through the Skill tool."""
