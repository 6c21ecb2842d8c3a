"""A file is one document in a namespace, whichever folder it was reached from.

A document read from a file that set no id of its own carries the id its path gives under the
folder it was read from (``retrieval.domain.document_ids.path_id``). Such a document is its
file's: when the namespace already holds the file (its absolute source) under another id, it
keeps that id, so ingesting or syncing a folder and then a subfolder of it, or the other way
round, updates the same documents. A file the namespace does not hold yet takes its path's
id, which ends in a hash of the file's absolute path instead when another document of the
request takes it, or when another file under the same folder holds it (unless the caller
replaces on purpose): both came from the folder given, and neither replaces the other. A file
from outside that folder holding the id is a clash, refused unless the caller replaces
(``DocumentRecord.clash``). An id a file sets itself (front matter, the entries of a JSON
collection) is never changed; one that equals its path's id cannot be told from it.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.domain.document_ids import path_id, with_digest
from retrieval.domain.ledger import DocumentRecord
from retrieval.domain.models import RagDocument
from retrieval.domain.provenance import Source, is_under
from retrieval.ports.document_ledger import DocumentLedger


def files_named_by_path(documents: Sequence[RagDocument]) -> dict[int, Source]:
    """The position of each document named by its path, and its file."""
    return {
        position: document.source
        for position, document in enumerate(documents)
        if document.source is not None and path_id(document.source) == document.document_id
    }


async def identified(
    ledger: DocumentLedger, documents: Sequence[RagDocument], namespace: str, *, replace: bool
) -> list[RagDocument]:
    """``documents`` with each one named by its path given the id its file keeps in the
    namespace (see the module docstring). Reads the records under the ids the paths give,
    then, only when one of those files is not held under its id, the records of those files:
    two round trips at most, whatever the namespace holds."""
    named = files_named_by_path(documents)
    if not named:
        return list(documents)
    found = await ledger.get_many(namespace, [documents[p].document_id for p in named])
    if all(holds(found.get(documents[p].document_id), s.uri) for p, s in named.items()):
        return list(documents)
    held = await ledger.with_sources(namespace, {source.uri for source in named.values()})
    records = {record.document_id: record for record in [*found.values(), *held]}
    chosen = FileIds(list(records.values()), replace).choose(documents, named)
    return [
        document.model_copy(update={"document_id": chosen[position]})
        if position in chosen
        else document
        for position, document in enumerate(documents)
    ]


def holds(record: DocumentRecord | None, uri: str) -> bool:
    """Whether ``record`` is the document of file ``uri`` (or predates sources: adopted)."""
    return record is not None and record.source in (None, uri)


class FileIds:
    """Chooses the ids of documents named by their path, against a namespace's records."""

    def __init__(self, records: Sequence[DocumentRecord], replace: bool) -> None:
        self._replace = replace
        self._source_of = {record.document_id: record.source for record in records}
        self._held: dict[str, list[str]] = {}
        for record in sorted(records, key=lambda r: r.document_id):
            if record.source is not None:
                self._held.setdefault(record.source, []).append(record.document_id)

    def choose(self, documents: Sequence[RagDocument], named: dict[int, Source]) -> dict[int, str]:
        """The id of each document of ``named`` (position: its file): first those of the files
        the namespace holds, then those of new files, around the ids the rest of the request
        takes."""
        taken = {d.document_id for p, d in enumerate(documents) if p not in named}
        chosen: dict[int, str] = {}
        for position, source in named.items():
            wanted = documents[position].document_id
            held = [i for i in self._held.get(source.uri, ()) if i not in taken]
            if held:
                chosen[position] = wanted if wanted in held else held[0]
                taken.add(chosen[position])
        for position, source in named.items():
            if position not in chosen:
                chosen[position] = self._new_id(documents[position].document_id, source, taken)
                taken.add(chosen[position])
        return chosen

    def _new_id(self, wanted: str, source: Source, taken: set[str]) -> str:
        holder = self._source_of.get(wanted)
        beside = (
            holder is not None
            and holder != source.uri
            and source.root is not None
            and is_under(holder, source.root)
        )
        if wanted in taken or (beside and not self._replace):
            return with_digest(wanted, source.uri)
        return wanted
