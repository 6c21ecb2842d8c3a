"""Bearer-token auth on and off, TLS and mutual TLS with certificates made by ``openssl``."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2_grpc
from pydantic import SecretStr

from retrieval.domain.models import RagDocument
from retrieval.errors import BackendUnavailableError, NotAuthorisedError
from retrieval.grpc import GrpcSettings, RetrievalClient, RetryPolicy, TlsOptions, create_server
from retrieval.lifecycle import Application, running
from retrieval.settings import Settings
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb
from retrieval_proto.retrieval.v1 import retrieval_pb2_grpc
from retrieval_testkit.container import in_memory_container

NAMESPACE = "security"
TOKEN = SecretStr("s3cret-token-for-tests")
NO_RETRIES = RetryPolicy(attempts=1)
DOCUMENT = RagDocument(
    document_id="frost",
    title="Frost",
    domain="weather_patterns",
    content="Ground frost scorches the plucking table of tea bushes on still winter nights.",
)


@pytest.fixture
async def application(tmp_path: Path) -> AsyncIterator[Application]:
    settings = Settings(data_dir=tmp_path)
    async with running(settings, in_memory_container(settings)) as app:
        await app.ingestion.ingest([DOCUMENT], NAMESPACE)
        yield app


@asynccontextmanager
async def served(app: Application, settings: GrpcSettings) -> AsyncIterator[int]:
    server, port = await create_server(app, "127.0.0.1:0", settings)
    try:
        yield port
    finally:
        await server.stop(None)


async def test_without_a_token_configured_calls_need_none(application: Application) -> None:
    async with (
        served(application, GrpcSettings()) as port,
        RetrievalClient.connect(f"127.0.0.1:{port}") as client,
    ):
        assert (await client.retrieve("frost", namespace=NAMESPACE)).total_matches == 1


@pytest.mark.parametrize(
    "metadata",
    [
        (),
        (("authorization", "Bearer wrong-token"),),
        (("authorization", f"Basic {TOKEN.get_secret_value()}"),),
        (("authorization", TOKEN.get_secret_value()),),
        (("authorization", "Bearer "),),
    ],
    ids=["missing", "wrong", "basic-scheme", "no-scheme", "empty"],
)
async def test_calls_without_the_token_are_unauthenticated(
    application: Application, metadata: tuple[tuple[str, str], ...]
) -> None:
    settings = GrpcSettings(auth_token=TOKEN)
    async with (
        served(application, settings) as port,
        grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
    ):
        stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
        request = pb.RetrieveRequest(query="frost", namespace=NAMESPACE)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Retrieve(request, metadata=metadata)
        assert raised.value.code() is grpc.StatusCode.UNAUTHENTICATED
        assert TOKEN.get_secret_value() not in raised.value.details()
        assert "x-correlation-id" in dict(tuple(raised.value.trailing_metadata()))
        for scheme in ("Bearer", "bearer"):
            granted = (("authorization", f"{scheme} {TOKEN.get_secret_value()}"),)
            assert (await stub.Retrieve(request, metadata=granted)).total_matches == 1


async def test_client_sends_its_token_and_only_health_checks_stay_open(
    application: Application,
) -> None:
    async with served(application, GrpcSettings(auth_token=TOKEN)) as port:
        target = f"127.0.0.1:{port}"
        async with RetrievalClient.connect(target, token=TOKEN) as client:
            assert (await client.retrieve("frost", namespace=NAMESPACE)).total_matches == 1
        async with RetrievalClient.connect(target, retry=NO_RETRIES) as anonymous:
            with pytest.raises(NotAuthorisedError):
                await anonymous.stats()
        async with grpc.aio.insecure_channel(target) as channel:
            health = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest()
            )
            assert health.status == health_pb2.HealthCheckResponse.SERVING
            # Refused on its metadata alone: no message is written, so none races the refusal.
            reflection = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo()
            await reflection.done_writing()
            assert await reflection.code() is grpc.StatusCode.UNAUTHENTICATED


def test_blank_token_is_refused() -> None:
    with pytest.raises(ValueError, match="blank"):
        GrpcSettings(auth_token=SecretStr("  "))


def test_tls_files_go_together(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="together"):
        GrpcSettings(tls_cert_file=tmp_path / "server.pem")
    with pytest.raises(ValueError, match="needs"):
        GrpcSettings(tls_client_ca_file=tmp_path / "ca.pem")


@dataclass(frozen=True)
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path

    def client_tls(self, *, with_cert: bool) -> TlsOptions:
        return TlsOptions(
            root_certificates=self.ca.read_bytes(),
            certificate_chain=self.client_cert.read_bytes() if with_cert else None,
            private_key=self.client_key.read_bytes() if with_cert else None,
        )


def openssl(*args: str | Path) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)


def signed_certificate(root: Path, name: str, extensions: str) -> tuple[Path, Path]:
    key, request, cert, extfile = (root / f"{name}.{kind}" for kind in ("key", "csr", "pem", "ext"))
    extfile.write_text(extensions + "\n")
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", key, "-out", request, "-subj", f"/CN={name}")  # fmt: skip
    openssl("x509", "-req", "-in", request, "-CA", root / "ca.pem", "-CAkey", root / "ca.key",
            "-CAcreateserial", "-days", "1", "-out", cert, "-extfile", extfile)  # fmt: skip
    return cert, key


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    if shutil.which("openssl") is None:
        pytest.skip("TLS tests need the openssl command line (the cryptography package is absent)")
    root = tmp_path_factory.mktemp("pki")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", root / "ca.key", "-out", root / "ca.pem", "-days", "1",
            "-subj", "/CN=retrieval-test-ca",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
    server_cert, server_key = signed_certificate(
        root, "server", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth"
    )
    client_cert, client_key = signed_certificate(root, "agent", "extendedKeyUsage=clientAuth")
    return Pki(root / "ca.pem", server_cert, server_key, client_cert, client_key)


async def test_tls_serves_clients_that_trust_the_ca(application: Application, pki: Pki) -> None:
    settings = GrpcSettings(tls_cert_file=pki.server_cert, tls_key_file=pki.server_key)
    async with served(application, settings) as port:
        target = f"127.0.0.1:{port}"
        tls = pki.client_tls(with_cert=False)
        async with RetrievalClient.connect(target, tls=tls) as client:
            assert (await client.retrieve("frost", namespace=NAMESPACE)).total_matches == 1
        async with RetrievalClient.connect(target, retry=NO_RETRIES, timeout=2) as plaintext:
            with pytest.raises(BackendUnavailableError):
                await plaintext.stats()


async def test_mutual_tls_needs_a_client_certificate(application: Application, pki: Pki) -> None:
    settings = GrpcSettings(
        tls_cert_file=pki.server_cert,
        tls_key_file=pki.server_key,
        tls_client_ca_file=pki.ca,
        auth_token=TOKEN,
    )
    async with served(application, settings) as port:
        target = f"127.0.0.1:{port}"
        tls = pki.client_tls(with_cert=True)
        async with RetrievalClient.connect(target, tls=tls, token=TOKEN) as client:
            assert (await client.retrieve("frost", namespace=NAMESPACE)).total_matches == 1
        anonymous = pki.client_tls(with_cert=False)
        async with RetrievalClient.connect(
            target, tls=anonymous, token=TOKEN, retry=NO_RETRIES, timeout=2
        ) as client:
            with pytest.raises(BackendUnavailableError):
                await client.stats()
