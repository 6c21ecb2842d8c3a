"""MongoDB adapters (texts, ledger, caches, graph, generations) and the embedded MongoDB server."""
