"""Package ``retrieval.v1``: messages in ``retrieval_pb2``, stub and servicer in ``*_grpc``."""
