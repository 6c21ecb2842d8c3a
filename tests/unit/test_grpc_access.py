"""Start-up checks of the gRPC server's tokens, and what a call is checked against."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr
from structlog.testing import capture_logs

from retrieval.domain.tenants import Scope, token_digest
from retrieval.errors import ConfigurationError, TokensFileError
from retrieval.grpc.access import AUTH_TOKEN_NAME, check_exposure, is_loopback, load_tenants
from retrieval.grpc.settings import GrpcSettings
from retrieval.grpc.tenancy import METHOD_SCOPES, bearer_token, requested_namespace
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb


def settings(**values: object) -> GrpcSettings:
    return GrpcSettings(_env_file=None, **values)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("[::1]", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("[::]", False),
        ("10.0.0.7", False),
        ("retrieval.example.com", False),
        ("", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_default_host_is_loopback() -> None:
    default = settings()
    assert is_loopback(default.host)
    check_exposure(default.address, default.authenticates, default.allow_unauthenticated)


@pytest.mark.parametrize("address", ["0.0.0.0:50051", "[::]:50051", "10.0.0.7:0"])
def test_beyond_loopback_a_token_or_an_explicit_allowance_is_needed(address: str) -> None:
    with pytest.raises(ConfigurationError, match="RETRIEVAL_GRPC_ALLOW_UNAUTHENTICATED"):
        check_exposure(address, authenticated=False, allow_unauthenticated=False)
    check_exposure(address, authenticated=True, allow_unauthenticated=False)
    check_exposure(address, authenticated=False, allow_unauthenticated=True)


def test_without_tokens_no_tenants_are_loaded() -> None:
    assert load_tenants(settings()) is None


def test_the_auth_token_is_admin_on_every_namespace_beside_the_file(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(
        json.dumps(
            [
                {
                    "name": "team-a",
                    "sha256": token_digest("a-token"),
                    "namespaces": ["team-a-*"],
                    "scopes": ["read"],
                }
            ]
        )
    )
    tenants = load_tenants(settings(tokens_file=path, auth_token=SecretStr("admin-token")))
    assert tenants is not None
    team, admin = tenants.grant_for("a-token"), tenants.grant_for("admin-token")
    assert team is not None
    assert admin is not None
    assert team.name == "team-a"
    assert admin.name == AUTH_TOKEN_NAME
    assert admin.every_namespace
    assert all(admin.holds(scope) for scope in Scope)


def test_a_missing_tokens_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "absent.json"
    with pytest.raises(TokensFileError, match=rf"^{path}: cannot be read"):
        load_tenants(settings(tokens_file=path))


def test_a_file_entry_may_not_take_the_auth_tokens_name(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    entry = {"name": AUTH_TOKEN_NAME, "sha256": "a" * 64, "namespaces": ["*"], "scopes": ["read"]}
    path.write_text(json.dumps([entry]))
    with pytest.raises(TokensFileError, match=f"the name '{AUTH_TOKEN_NAME}' is used 2 times"):
        load_tenants(settings(tokens_file=path, auth_token=SecretStr("admin-token")))


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer  abc ", "abc"),
        ("Basic abc", None),
        ("abc", None),
        ("Bearer ", None),
        (None, None),
    ],
)
def test_the_bearer_token_of_a_header(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


def test_every_method_of_the_service_needs_a_named_scope() -> None:
    service = pb.DESCRIPTOR.services_by_name["RetrievalService"]
    assert {method.name for method in service.methods} == METHOD_SCOPES.keys()


@pytest.mark.parametrize(
    ("request_message", "namespace"),
    [
        (pb.RetrieveRequest(query="q", namespace="team-a"), "team-a"),
        (pb.RetrieveRequest(query="q"), "default"),
        (pb.BuildContextRequest(retrieval=pb.RetrieveRequest(namespace="team-b")), "team-b"),
        (pb.AnswerRequest(retrieval=pb.RetrieveRequest(namespace="team-c")), "team-c"),
        (pb.AnswerRequest(), "default"),
        (pb.IngestDocumentsRequest(), "default"),
        (pb.DeleteDocumentRequest(document_id="d", namespace="team-d"), "team-d"),
        (pb.DeleteNamespaceRequest(namespace="team-e"), "team-e"),
        (pb.ValidateRequest(namespace="team-f"), "team-f"),
        (pb.GetStatsRequest(), None),
    ],
)
def test_the_namespace_a_request_is_about(request_message: object, namespace: str | None) -> None:
    assert requested_namespace(request_message, "default") == namespace


def test_a_pattern_whose_wildcard_extends_a_word_is_warned_of_at_start_up(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tokens.json"
    grants = [
        ("tenant-a", ["tenant-a*"]),
        ("tenant-b", ["tenant-b-*", "tenant-b", "shared.*"]),
    ]
    path.write_text(
        json.dumps(
            [
                {
                    "name": name,
                    "sha256": token_digest(name),
                    "namespaces": patterns,
                    "scopes": ["read"],
                }
                for name, patterns in grants
            ]
        )
    )
    with capture_logs() as logs:
        load_tenants(settings(tokens_file=path))
    warned = [entry for entry in logs if entry["event"] == "tokens.pattern_extends_a_word"]
    assert [(entry["token"], entry["pattern"]) for entry in warned] == [("tenant-a", "tenant-a*")]
