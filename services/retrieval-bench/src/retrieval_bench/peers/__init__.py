"""Peer retrieval libraries side by side with ours on the same BEIR dataset and vectors, each
served by ``runner.py`` in an environment of its own (``requirements.txt``)."""
