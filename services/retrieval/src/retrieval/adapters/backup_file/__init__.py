"""Backup files on disk: gzip'd JSON lines, closed by a checksum."""
