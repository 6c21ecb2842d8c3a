"""Real-world files ingested and searched, counting what would betray the conversion in the
stored chunks and the results: an mdBook chapter page of the Rust book as a browser saves it
(``tests/fixtures/rust-book``) and a PDF specification whose lines read as markdown headings.
Over ``KnowledgeBase`` on the test kit's in-memory container."""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from retrieval.api import KnowledgeBase
from retrieval.domain.models import RagChunk
from retrieval.lifecycle import running
from retrieval.settings import Settings
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.in_memory_chunk_repository import InMemoryChunkRepository
from retrieval_testkit.sample_files import pdf_document

NS = "manuals"
RUST_BOOK_PAGE = Path(__file__).parents[1] / "fixtures" / "rust-book" / "ch03-04-comments.html"
EXAMPLES = {
    "// hello, world": ["// hello, world"],
    "// explain what's going on.": [
        "// So we're doing something complicated here, long enough that we need",
        "// multiple lines of comments to do it! Whew! Hopefully, this comment will",
        "// explain what's going on.",
    ],
    "    let lucky_number = 7; // I'm feeling lucky today": [
        "fn main() {",
        "    let lucky_number = 7; // I'm feeling lucky today",
        "}",
    ],
    "    // I'm feeling lucky today": [
        "fn main() {",
        "    // I'm feeling lucky today",
        "    let lucky_number = 7;",
        "}",
    ],
}
"""A line of each Rust example on the page, and the lines a reader sees of it."""
BODY = 11
SPEC_PAGES = [
    [
        (20, "Mite counter configuration"),
        (BODY, "The counter reads its settings from mites.conf, which the installer writes:"),
        (BODY, "# This file was automatically generated"),
        (BODY, "# define MAX_MITES 3"),
        (BODY, "# define SAMPLE_LEAVES 30"),
        (BODY, "A line that starts with a hash and a space is a comment or a definition."),
    ],
    [
        (14, "Sample sizes"),
        (BODY, "Thirty leaves are sampled from each bush, ten from each tier."),
        (BODY, "# define TIERS 3"),
        (BODY, "More leaves are sampled when a count exceeds MAX_MITES."),
    ],
]
SPEC_COMMENTS = (
    "# This file was automatically generated",
    "# define MAX_MITES 3",
    "# define SAMPLE_LEAVES 30",
    "# define TIERS 3",
)
OPENING_FENCE = re.compile(r"^```(\S*)$")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "manuals"
    folder.mkdir()
    shutil.copy(RUST_BOOK_PAGE, folder / RUST_BOOK_PAGE.name)
    (folder / "mite-counter.pdf").write_bytes(
        pdf_document(SPEC_PAGES, title="Mite counter specification")
    )
    return folder


@pytest.fixture
def chunks() -> InMemoryChunkRepository:
    return InMemoryChunkRepository()


@pytest.fixture
async def kb(tmp_path: Path, chunks: InMemoryChunkRepository) -> AsyncIterator[KnowledgeBase]:
    settings = Settings(data_dir=tmp_path / "data")
    async with running(settings, in_memory_container(settings, chunk_repository=chunks)) as app:
        yield KnowledgeBase(app)


async def stored(chunks: InMemoryChunkRepository, file_type: str) -> list[RagChunk]:
    ids = [chunk_id async for page in chunks.list_chunks(NS) for chunk_id, _ in page]
    found = (await chunks.get_many(ids, NS)).values()
    return sorted(
        (chunk for chunk in found if chunk.file_type == file_type), key=lambda c: c.position
    )


def fenced_blocks(text: str) -> list[tuple[str, list[str]]]:
    """Each fenced block of a chunk: its info string and its lines."""
    blocks: list[tuple[str, list[str]]] = []
    inside = False
    for line in text.splitlines():
        if inside and line == "```":
            inside = False
        elif inside:
            blocks[-1][1].append(line)
        elif opening := OPENING_FENCE.match(line):
            blocks.append((opening[1], []))
            inside = True
    return blocks


async def test_no_chunk_of_the_pdf_keeps_a_markdown_escape(
    kb: KnowledgeBase, chunks: InMemoryChunkRepository, corpus: Path
) -> None:
    report = await kb.ingest(corpus, namespace=NS, domain="manuals")
    assert not report.failures
    pdf_chunks = await stored(chunks, "pdf")
    texts = [chunk.content for chunk in pdf_chunks]
    assert sum(text.count("\\#") for text in texts) == 0
    shown_lines = {line for text in texts for line in text.splitlines()}
    assert set(SPEC_COMMENTS) <= shown_lines
    assert {chunk.section for chunk in pdf_chunks} == {
        "Mite counter configuration",
        "Mite counter configuration > Sample sizes",
    }
    found = await kb.retrieve(
        "define MAX_MITES automatically generated", namespace=NS, top_k=10, mode="keyword"
    )
    assert any("# define MAX_MITES 3" in match.content for match in found.matches)
    assert sum(match.content.count("\\#") for match in found.matches) == 0


async def test_every_rust_example_of_the_mdbook_page_says_rust_and_shows_no_hidden_line(
    kb: KnowledgeBase, chunks: InMemoryChunkRepository, corpus: Path
) -> None:
    report = await kb.ingest(corpus, namespace=NS, domain="manuals")
    assert not report.failures
    html_chunks = await stored(chunks, "html")
    assert html_chunks[0].title == "Comments - The Rust Programming Language"
    blocks = [block for chunk in html_chunks for block in fenced_blocks(chunk.content)]
    shown = {example: [block for block in blocks if example in block[1]] for example in EXAMPLES}
    assert all(shown.values())
    assert sum(info != "rust" for found in shown.values() for info, _ in found) == 0
    hidden = [
        line
        for example, visible in EXAMPLES.items()
        for _, lines in shown[example]
        for line in lines
        if line not in visible
    ]
    assert hidden == []
    assert sum("boring" in chunk.content for chunk in html_chunks) == 0
