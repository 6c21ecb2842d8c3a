"""``retrieval console``: server-rendered pages over the services the CLI and gRPC call."""
