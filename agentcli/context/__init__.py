"""What the model is told: the system prompt and the <system-reminder> blocks."""
