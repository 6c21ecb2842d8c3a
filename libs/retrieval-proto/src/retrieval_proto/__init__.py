"""The retrieval service's gRPC contract: ``retrieval_proto.retrieval.v1``."""
