"""A chunk's graph record comes back from a backup as it was written, whatever names its
extractor gave."""

from __future__ import annotations

from retrieval.domain.backup import BackedUpDocument
from retrieval.domain.graph import Extraction, graph_record
from retrieval.domain.ledger import DocumentRecord, DocumentState
from retrieval.domain.models import RagDocument
from retrieval.service.ingestion.chunking import chunk

VERSION = "graph:2/rules:2"


def test_a_mention_after_two_articles_comes_back_as_it_was() -> None:
    document = RagDocument(
        document_id="rnai", title="Potent RNAi", domain="general",
        content="Potent RNAi. The A-form helix of siRNA loads RISC.",
    )  # fmt: skip
    piece = chunk(document, "papers", "model", 0, document.content)
    extracted = Extraction(names=("The A-form", "siRNA", "RISC"))
    written = graph_record(piece, extracted, VERSION)
    assert written.mentions == ("a form", "sirna", "risc")
    record = DocumentRecord(
        namespace="papers", document_id="rnai", state=DocumentState.COMMITTED,
        chunk_ids=(piece.chunk_id,),
    )  # fmt: skip
    backed_up = BackedUpDocument.of(record, [piece], None, [written])
    assert backed_up.graph([piece], VERSION) == [written]
