"""``retrieval bench ...``: one module per benchmark command, imported when it is run."""
