"""Who the console lets in: loopback only without tokens; with tokens, the grant of a bearer
token (header or sign-in cookie) holding ``read``, on the namespaces it covers."""

from __future__ import annotations

import html
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from retrieval.console.access import TOKEN_COOKIE, check_exposure, safe_next
from retrieval.console.app import console_app
from retrieval.console.server import serve
from retrieval.domain.models import RagDocument
from retrieval.domain.tenants import Grant, Scope, Tenants, token_digest
from retrieval.errors import ConfigurationError
from retrieval.lifecycle import running
from retrieval.settings import Settings
from retrieval_testkit.container import in_memory_container

TOKENS = {
    "reader": ("reader-secret", ("kb-*",), {Scope.READ}),
    "writer": ("writer-secret", ("*",), {Scope.WRITE}),
}
TENANTS = Tenants(
    [
        Grant(name=name, sha256=token_digest(secret), namespaces=patterns, scopes=scopes)
        for name, (secret, patterns, scopes) in TOKENS.items()
    ],
    "test",
)
FROST = RagDocument(
    document_id="frost",
    title="Frost",
    domain="weather_patterns",
    content="Ground frost scorches young tea bushes on clear nights.",
)


def bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[name][0]}"}


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(data_dir=tmp_path / "data", gc_freeze=False)
    async with running(settings, in_memory_container(settings)) as application:
        for namespace in ("kb-tea", "private"):
            await application.ingestion.ingest([FROST], namespace)
        app = console_app(application, TENANTS, tmp_path / "reports")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://console") as client:
            yield client


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_loopback_needs_no_token(host: str) -> None:
    check_exposure(host, None)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7", "::", "console.example"])
def test_any_other_interface_needs_tokens(host: str) -> None:
    with pytest.raises(ConfigurationError, match="RETRIEVAL_GRPC_TOKENS_FILE"):
        check_exposure(host, None)
    check_exposure(host, TENANTS)


async def test_serving_beyond_loopback_without_tokens_stops_before_any_store_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RETRIEVAL_GRPC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("RETRIEVAL_GRPC_TOKENS_FILE", raising=False)
    settings = Settings(data_dir=tmp_path / "data", gc_freeze=False)
    with pytest.raises(ConfigurationError, match="without authentication"):
        await serve(settings, "0.0.0.0", 0, tmp_path / "reports")
    assert not (tmp_path / "data").exists()


async def test_a_browser_without_a_token_is_sent_to_sign_in(client: httpx.AsyncClient) -> None:
    response = await client.get("/namespaces/kb-tea?x=1")
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=%2Fnamespaces%2Fkb-tea%3Fx%3D1"
    assert (await client.get("/static/console.css")).status_code == 200


async def test_an_unknown_bearer_token_is_refused(client: httpx.AsyncClient) -> None:
    response = await client.get("/namespaces", headers={"Authorization": "Bearer nope"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"


async def test_a_token_without_read_is_refused(client: httpx.AsyncClient) -> None:
    response = await client.get("/reports", headers=bearer("writer"))
    assert response.status_code == 403
    assert "does not grant scope 'read'" in html.unescape(response.text)


async def test_a_reader_sees_only_the_namespaces_its_token_covers(
    client: httpx.AsyncClient,
) -> None:
    listed = await client.get("/namespaces", headers=bearer("reader"))
    assert listed.status_code == 200
    assert "kb-tea" in listed.text
    assert "private" not in listed.text
    assert "reader" in listed.text
    assert (await client.get("/namespaces/kb-tea", headers=bearer("reader"))).status_code == 200
    for path in (
        "/namespaces/private",
        "/namespaces/private/documents/frost",
        "/query?query=frost&namespace=private",
    ):
        refused = await client.get(path, headers=bearer("reader"))
        assert refused.status_code == 403, path
        assert "does not grant namespace 'private'" in html.unescape(refused.text)


async def test_signing_in_keeps_the_token_in_a_cookie_until_signing_out(
    client: httpx.AsyncClient,
) -> None:
    wrong = await client.post("/login", data={"token": "nope", "next": "/reports"})
    assert wrong.status_code == 401
    assert TOKEN_COOKIE not in client.cookies
    signed_in = await client.post(
        "/login", data={"token": TOKENS["reader"][0], "next": "/namespaces/kb-tea"}
    )
    assert signed_in.status_code == 303
    assert signed_in.headers["location"] == "/namespaces/kb-tea"
    cookie = signed_in.headers["set-cookie"].lower()
    assert "httponly" in cookie
    assert "samesite=strict" in cookie
    assert (await client.get("/namespaces/kb-tea")).status_code == 200
    signed_out = await client.post("/logout")
    assert signed_out.headers["location"] == "/login"
    assert (await client.get("/namespaces/kb-tea")).status_code == 303


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/query?query=frost", "/query?query=frost"),
        ("//elsewhere.example/", "/"),
        ("/\\elsewhere.example/", "/"),
        ("https://elsewhere.example/", "/"),
        (None, "/"),
    ],
)
def test_signing_in_returns_only_to_a_page_of_the_console(
    target: str | None, expected: str
) -> None:
    assert safe_next(target) == expected


async def test_an_export_refused_by_the_token_is_told_in_its_own_format(
    client: httpx.AsyncClient,
) -> None:
    params = {"query": "frost", "namespace": "private"}
    exported = {**params, "format": "json"}
    refused = await client.get("/query", params=exported, headers=bearer("reader"))
    assert refused.status_code == 403
    assert "does not grant namespace 'private'" in refused.json()["error"]
    page = await client.get("/query", params=params, headers=bearer("reader"))
    assert page.status_code == 403
    assert 'name="namespace" value="private"' in page.text
