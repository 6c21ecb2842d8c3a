"""The ``retrieval`` command line."""
