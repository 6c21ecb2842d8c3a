"""Domain models and pure functions: no I/O here."""
