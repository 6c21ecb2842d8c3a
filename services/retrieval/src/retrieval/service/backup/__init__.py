"""Backup and restore of a namespace: its documents written to one file, and brought back
through the writer on any backend."""
