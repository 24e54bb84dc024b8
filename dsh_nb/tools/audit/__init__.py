"""What a call leaves behind: session logs, the journal, approval records."""
