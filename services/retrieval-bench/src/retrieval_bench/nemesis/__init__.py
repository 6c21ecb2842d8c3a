"""Faults injected into replicas under load, as Jepsen's nemesis does, and what callers saw
checked: ``faults`` (what is done to the processes), ``checks`` (reads gone back, writes
lost), ``run`` (the load, the faults in turn, the repair after each, the report)."""
