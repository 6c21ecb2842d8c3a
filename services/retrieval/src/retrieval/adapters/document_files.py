"""Reads documents from disk: markdown with a front-matter block, or JSON collections.

Markdown::

    ---
    document_id: blister-blight
    title: Blister Blight
    domain: plant_diseases
    region: assam          # any further key becomes string metadata
    ---
    # Blister Blight
    ...

JSON: ``{"documents": [{"document_id", "title", "domain", "content", "metadata"}]}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from retrieval.domain.models import RagDocument
from retrieval.errors import InvalidRequestError

FENCE = "---"
DOCUMENT_FIELDS = ("document_id", "title", "domain")


def parse_markdown(text: str, source: str) -> RagDocument:
    lines = text.splitlines()
    if not lines or lines[0].strip() != FENCE:
        raise InvalidRequestError(f"{source}: no front-matter block", field="front_matter")
    try:
        end = next(n for n, line in enumerate(lines[1:], start=1) if line.strip() == FENCE)
    except StopIteration:
        raise InvalidRequestError(
            f"{source}: front matter never closed", field="front_matter"
        ) from None
    header: dict[str, str] = {}
    for line in lines[1:end]:
        key, separator, value = line.partition(":")
        if not separator:
            raise InvalidRequestError(
                f"{source}: bad front-matter line {line!r}", field="front_matter"
            )
        header[key.strip()] = value.strip()
    fields = {key: header.pop(key, None) for key in DOCUMENT_FIELDS}
    return build_document(
        {**fields, "content": "\n".join(lines[end + 1 :]).strip(), "metadata": header}, source
    )


def build_document(raw: object, source: str) -> RagDocument:
    try:
        return RagDocument.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise InvalidRequestError(f"{source}: {first['msg']}", field=field) from error


def parse_collection(text: str, source: str) -> list[RagDocument]:
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidRequestError(f"{source}: not JSON ({error})", field="documents") from error
    if not isinstance(payload, dict) or not isinstance(payload.get("documents"), list):
        raise InvalidRequestError(f"{source}: expected {{'documents': [...]}}", field="documents")
    return [build_document(raw, f"{source}[{n}]") for n, raw in enumerate(payload["documents"])]


def expand(paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix in {".md", ".json"}))
        elif path.exists():
            files.append(path)
        else:
            raise InvalidRequestError(f"{path}: no such file or directory", field="path")
    return files


def load_documents(paths: Iterable[Path]) -> list[RagDocument]:
    """Every document in these files and folders (``.md`` and ``.json``), in path order."""
    documents: list[RagDocument] = []
    for file in expand(paths):
        text = file.read_text(encoding="utf-8")
        if file.suffix == ".json":
            documents.extend(parse_collection(text, str(file)))
        else:
            documents.append(parse_markdown(text, str(file)))
    return documents
