"""The console's pages over the test kit's doubles: a query's exports, a namespace that does not
exist, the filter over a namespace's documents, and the ask page."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from markupsafe import escape

from retrieval.console.app import console_app
from retrieval.console.listing import document_listing
from retrieval.domain.models import RagDocument
from retrieval.lifecycle import running
from retrieval.service.ingestion.library import DocumentSummary
from retrieval.settings import Settings
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.scripted_llm import ScriptedLlm

NAMESPACE = "tea"
DOCUMENTS = [
    RagDocument(
        document_id="frost-protection",
        title="Frost protection",
        domain="weather_patterns",
        content="Growers cover young bushes with **grass thatch** against frost, "
        "and <script>alert(1)</script> is shown as text.",
        source="/kb/field/frost-protection.md",
    ),
    RagDocument(
        document_id="blister-blight",
        title="Blister blight",
        domain="plant_diseases",
        content="Blister blight spreads in wet weather; growers spray copper fungicide.",
        source="/kb/field/blister-blight.md",
    ),
    RagDocument(
        document_id="withering",
        title="Withering",
        domain="quality_standards",
        content="Fresh leaf is withered for fourteen hours before it is rolled.",
        source="/kb/factory/withering.md",
    ),
]
ANSWER = (
    "Growers cover young bushes with **grass thatch** [1].\n\n"
    "```python\nif reading < 2.0:\n    cover(bushes)\n```\n\n"
    "A note read <script>alert(1)</script>."
)


async def console_client(
    tmp_path: Path, settings: Settings, **replacements: object
) -> AsyncIterator[httpx.AsyncClient]:
    async with running(settings, in_memory_container(settings, **replacements)) as application:
        await application.ingestion.ingest(DOCUMENTS, NAMESPACE)
        app = console_app(application, None, tmp_path / "reports")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://console") as client:
            yield client


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(
        _env_file=None, data_dir=tmp_path / "data", gc_freeze=False, llm_base_url=None
    )
    async for opened in console_client(tmp_path, settings):
        yield opened


@pytest.fixture
async def asking(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """A console whose chat model is configured (a scripted one)."""
    settings = Settings(
        _env_file=None,
        data_dir=tmp_path / "data",
        gc_freeze=False,
        llm_base_url="http://llm.example/v1",
        llm_model="scripted-model",
    )
    async for opened in console_client(tmp_path, settings, llm=ScriptedLlm(lambda _: ANSWER)):
        yield opened


@pytest.mark.parametrize("query", ["frost", "", "  "])
async def test_a_namespace_that_does_not_exist_keeps_the_form(
    client: httpx.AsyncClient, query: str
) -> None:
    response = await client.get("/query", params={"query": query, "namespace": "never"})
    assert response.status_code == 404
    assert 'name="namespace" value="never"' in response.text
    assert "namespace &#39;never&#39; does not exist" in response.text


@pytest.mark.parametrize("params", [{}, {"query": ""}, {"query": "", "namespace": NAMESPACE}])
async def test_a_blank_query_shows_the_form_alone(
    client: httpx.AsyncClient, params: dict[str, str]
) -> None:
    response = await client.get("/query", params=params)
    assert response.status_code == 200
    assert 'class="problem"' not in response.text
    assert 'class="results"' not in response.text


async def test_a_query_exports_its_matches_as_json(client: httpx.AsyncClient) -> None:
    params = {"query": "frost thatch", "namespace": NAMESPACE, "top_k": "2"}
    page = await client.get("/query", params=params)
    assert "format=json" in page.text
    assert "format=csv" in page.text
    response = await client.get("/query", params={**params, "format": "json"})
    assert response.headers["content-type"] == "application/json"
    exported = response.json()
    assert (exported["query"], exported["namespace"]) == ("frost thatch", NAMESPACE)
    first = exported["matches"][0]
    assert list(first) == [
        "rank",
        "score",
        "document_id",
        "title",
        "source",
        "section",
        "text",
    ]
    assert (first["rank"], first["document_id"]) == (1, "frost-protection")
    assert first["source"] == "/kb/field/frost-protection.md"
    assert "grass thatch" in first["text"]
    assert len(exported["matches"]) == 2


async def test_a_query_exports_its_matches_as_csv(client: httpx.AsyncClient) -> None:
    params = {"query": "frost thatch", "namespace": NAMESPACE, "format": "csv"}
    response = await client.get("/query", params=params)
    assert response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert rows[0]["rank"] == "1"
    assert rows[0]["title"] == "Frost protection"
    assert float(rows[0]["score"]) >= float(rows[-1]["score"])


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({"query": "frost", "namespace": "never", "format": "json"}, 404),
        ({"query": "frost", "fetch_k": "0", "format": "json"}, 400),
        ({"format": "json"}, 400),
        ({"query": "frost", "namespace": NAMESPACE, "format": "xml"}, 400),
    ],
)
async def test_an_export_that_cannot_be_made_says_why(
    client: httpx.AsyncClient, params: dict[str, str], status: int
) -> None:
    response = await client.get("/query", params=params)
    assert response.status_code == status
    assert response.json()["error"]


async def test_the_documents_are_filtered_by_title_id_or_source(
    client: httpx.AsyncClient,
) -> None:
    for text, listed in [
        ("blight", ["blister-blight"]),
        ("FROST-PRO", ["frost-protection"]),
        ("/kb/field", ["blister-blight", "frost-protection"]),
        ("", ["blister-blight", "frost-protection", "withering"]),
    ]:
        response = await client.get(f"/namespaces/{NAMESPACE}", params={"filter": text})
        assert response.status_code == 200
        shown = [d.document_id for d in DOCUMENTS if f"documents/{d.document_id}" in response.text]
        assert sorted(shown) == listed, text


async def test_a_filter_that_matches_nothing_says_so(client: httpx.AsyncClient) -> None:
    response = await client.get(f"/namespaces/{NAMESPACE}", params={"filter": "oolong"})
    assert "No document matches “oolong”." in response.text
    assert 'name="filter" value="oolong"' in response.text


async def test_the_ask_page_names_the_settings_a_chat_model_needs(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/ask", params={"query": "frost", "namespace": NAMESPACE})
    assert response.status_code == 200
    assert "RETRIEVAL_LLM_BASE_URL" in response.text
    assert "RETRIEVAL_LLM_MODEL" in response.text
    assert 'class="answer' not in response.text


async def test_the_ask_page_streams_the_answer_and_its_citations(
    asking: httpx.AsyncClient,
) -> None:
    params = {"query": "How do growers protect bushes from frost?", "namespace": NAMESPACE}
    async with asking.stream("GET", "/ask", params=params) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/html; charset=utf-8"
        text = "".join([piece async for piece in response.aiter_text()])
    assert "RETRIEVAL_LLM" not in text
    assert f'<p class="answer-text">{escape(ANSWER)}</p>' in text
    assert 'href="/namespaces/tea/documents/frost-protection"' in text
    assert text.rstrip().endswith("</html>")


async def test_the_whole_answer_is_rendered_as_markdown_before_its_citations(
    asking: httpx.AsyncClient,
) -> None:
    params = {"query": "How do growers protect bushes from frost?", "namespace": NAMESPACE}
    text = (await asking.get("/ask", params=params)).text
    rendered = text.split('<div class="answer-rendered content">')[1].split("</div>")[0]
    assert "<strong>grass thatch</strong> [1]" in rendered
    assert '<pre><code class="language-python">if reading &lt; 2.0:' in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
    assert "<script>" not in text
    assert text.index("answer-rendered") < text.index('class="citations"')


async def test_asking_a_namespace_that_does_not_exist_keeps_the_form(
    asking: httpx.AsyncClient,
) -> None:
    response = await asking.get("/ask", params={"query": "frost", "namespace": "never"})
    assert response.status_code == 404
    assert 'name="namespace" value="never"' in response.text
    assert "namespace &#39;never&#39; does not exist" in response.text


def summary(number: int) -> DocumentSummary:
    return DocumentSummary(
        document_id=f"note-{number:03}",
        title=f"Estate note {number}",
        source=None,
        file_type=None,
        chunks=1,
        updated_at=None,
        pending=False,
    )


def test_the_filtered_documents_are_paged_as_the_list_is() -> None:
    documents = [summary(number) for number in range(1, 26)]
    first = document_listing(documents, "note-0", None, size=10)
    assert (first.matching, first.pages, first.first, first.last) == (25, 3, 1, 10)
    last = document_listing(documents, "note-0", "3", size=10)
    assert [d.document_id for d in last.documents] == [f"note-0{n}" for n in range(21, 26)]
    assert last.link(2) == "?filter=note-0&page=2"
    assert document_listing(documents, "", "9", size=10).page == 3
    assert document_listing(documents, "", "two", size=10).page == 1
    assert document_listing(documents, "note 77", None, size=10).matching == 0
    assert document_listing(documents, "Estate note 7", None).matching == 1
