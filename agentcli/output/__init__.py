"""Front ends for `agentcli run`: text, json and stream-json consumers of loop events."""
