"""Files to ingest: random bytes, and real files of every supported type mutated (bytes
flipped, inserted, cut; a Word file's XML rewritten inside a valid archive; a JSON
collection of hostile documents), read by ``document_files.read_documents`` and the
documents it finds checked by ``IngestionService.check``. Reading never raises: a file it
cannot use becomes a ``FileFailure``; checking raises ``InvalidRequestError`` only."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from retrieval.adapters.files.document_files import SUPPORTED_SUFFIXES, read_documents
from retrieval.errors import InvalidRequestError
from retrieval_testkit.fuzz.apps import seeded_application
from retrieval_testkit.fuzz.documents import raw_documents
from retrieval_testkit.fuzz.harness import Check, RefusedError, Runner, Target
from retrieval_testkit.fuzz.strategies import (
    domains,
    edits,
    json_values,
    markdown,
    mostly,
    mutate,
    texts,
)
from retrieval_testkit.sample_files import FRONT_MATTER, PAGE, docx, docx_body, pdf

COLLECTION = {
    "documents": [
        {
            "document_id": "frost",
            "title": "Frost",
            "domain": "weather_patterns",
            "content": "Ground frost scorches young shoots.",
            "metadata": {"region": "nilgiris"},
        }
    ]
}
SEEDS = {
    ".md": FRONT_MATTER.encode(),
    ".markdown": b"# Frost\n\nGround frost scorches young shoots on still nights.\n",
    ".txt": b"Plucking two leaves and a bud keeps the bush flushing.\n",
    ".html": PAGE,
    ".htm": PAGE,
    ".pdf": pdf("Frost (ground) damage", "Cover young bushes."),
    ".docx": docx([("Heading1", "Pruning cycles"), (None, "Bushes are pruned every four years.")]),
    ".json": json.dumps(COLLECTION).encode(),
}
TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".html", ".htm")
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "latin-1")


def encoded(text: str, encoding: str) -> bytes:
    return text.encode(
        encoding, errors="surrogatepass" if encoding.startswith("utf-8") else "replace"
    )


def files() -> st.SearchStrategy[tuple[str, bytes]]:
    """``(suffix, contents)`` of a file to read."""
    suffixes = st.sampled_from(sorted(SUPPORTED_SUFFIXES))
    seeded = st.sampled_from(sorted(SEEDS))
    styles = st.one_of(st.none(), st.sampled_from(["Heading1", "Heading2", "Title", ""]))
    return st.one_of(
        st.tuples(suffixes, st.binary(max_size=2048)),
        seeded.flatmap(
            lambda suffix: st.tuples(
                st.just(suffix), edits().map(lambda changes: mutate(SEEDS[suffix], changes))
            )
        ),
        st.tuples(
            st.sampled_from(TEXT_SUFFIXES),
            st.builds(encoded, st.one_of(markdown(600), texts(600)), st.sampled_from(ENCODINGS)),
        ),
        st.tuples(
            st.just(".docx"),
            st.one_of(
                st.lists(
                    st.tuples(styles, st.one_of(markdown(80), st.text(max_size=80))), max_size=5
                )
                .map(docx_body)
                .map(lambda xml: docx([], document_xml=xml)),
                st.builds(mutate, st.just(docx_body([(None, "tea")]).encode()), edits()).map(
                    lambda xml: docx([], document_xml=xml.decode("utf-8", "replace"))
                ),
            ),
        ),
        st.tuples(
            st.just(".json"),
            st.lists(st.one_of(raw_documents(), json_values(6)), max_size=4).map(
                lambda entries: json.dumps({"documents": entries}).encode()
            ),
        ),
    )


@contextmanager
def session(runner: Runner) -> Iterator[Check]:
    with (
        tempfile.TemporaryDirectory(prefix="retrieval-fuzz-files-") as folder,
        runner.entered(seeded_application()) as app,
    ):

        def check(case: dict[str, Any]) -> None:
            suffix, data = case["file"]
            path = Path(folder) / f"fuzzed{suffix}"
            path.write_bytes(data)
            loaded = runner.call(read_documents, [path], domain=case["domain"])
            assert loaded.files == 1, loaded
            # a JSON collection may hold no documents; any other file is one or fails
            assert suffix == ".json" or len(loaded.documents) + len(loaded.failures) == 1, loaded
            for document in loaded.documents:
                runner.call(app.ingestion.check, document)
            if loaded.failures and not loaded.documents:
                raise RefusedError(str(loaded.failures[0]))

        yield check


TARGET = Target(
    name="files",
    strategy=st.fixed_dictionaries(
        {
            "file": files(),
            "domain": mostly(st.just("plant_diseases"), st.one_of(st.none(), domains())),
        }
    ),
    allowed=(InvalidRequestError,),
    session=session,
)
