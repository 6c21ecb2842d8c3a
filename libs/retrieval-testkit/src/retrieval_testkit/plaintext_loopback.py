"""Settings of a gRPC server on loopback that asks no token and speaks no TLS, whatever the
environment sets: pass them to ``GrpcSettings(**PLAINTEXT_LOOPBACK)``."""

PLAINTEXT_LOOPBACK = {
    "auth_token": None,
    "tokens_file": None,
    "tls_cert_file": None,
    "tls_key_file": None,
    "tls_client_ca_file": None,
}
