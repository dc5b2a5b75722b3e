"""Sessions on disk: transcripts (write, load, list) and compaction of a long conversation."""
