"""Application services: what callers (agents, gRPC, CLI) invoke."""
