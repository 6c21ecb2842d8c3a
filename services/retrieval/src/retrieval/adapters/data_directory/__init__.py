"""The data directory of the embedded stores: its lock, durable files and disk usage."""
