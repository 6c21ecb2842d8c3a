"""The id a file's path gives its document (see ``docs/knowledge-base.md``, Document identity).

Ids are ASCII (Pinecone refuses any other vector id, and chunk ids start with their document's
id): the path relative to the folder given, without its last suffix, folders joined by ``--``,
every run of characters outside ``A-Z a-z 0-9 _ . -`` replaced by ``-`` and hyphens trimmed
from each end (accents dropped first). A path that this does not spell exactly (a letter of
another script, an accent, a space, a ``--`` of its own) also takes ``-`` and 8 hex digits of
the SHA-256 of its NFC form, so two paths that differ never share an id: ``résumé.md`` is
``resume-<hash>`` beside ``resume.md``'s ``resume``. A name with nothing usable is
``doc-<hash>``, and an id over 128 characters is cut to end in the hash.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
import unicodedata
from pathlib import PurePath, PurePosixPath

from retrieval.domain.provenance import Source, is_under

FOLDER_SEPARATOR = "--"
MAX_ID_CHARS = 128
UNSAFE_RUN = re.compile(r"[^A-Za-z0-9_.\-]+")


def digest(text: str) -> str:
    """8 hex digits of the SHA-256 of ``text`` in NFC (so both forms of a name agree)."""
    return hashlib.sha256(unicodedata.normalize("NFC", text).encode()).hexdigest()[:8]


def with_digest(slug: str, text: str) -> str:
    """``slug`` (cut to fit) ending in ``-`` and the digest of ``text``."""
    return f"{slug[: MAX_ID_CHARS - 9]}-{digest(text)}"


def slug_from_path(relative: PurePath) -> str:
    """The document id of a file at this path relative to the folder given (see above)."""
    parts = [*relative.parts[:-1], relative.stem]
    ascii_parts = (
        unicodedata.normalize("NFKD", part).encode("ascii", "ignore").decode() for part in parts
    )
    cleaned = (UNSAFE_RUN.sub("-", part).strip("-") for part in ascii_parts)
    slug = FOLDER_SEPARATOR.join(part for part in cleaned if part).lstrip("-_.")
    name = relative.as_posix()
    if not slug:
        return f"doc-{digest(name)}"
    spelled = slug == FOLDER_SEPARATOR.join(parts) and FOLDER_SEPARATOR not in "/".join(parts)
    if not spelled or len(slug) > MAX_ID_CHARS:
        return with_digest(slug, name)
    return slug


def path_id(source: Source) -> str | None:
    """The id the path of a file read under a folder gives it (the file's name when the file
    itself was given); None for a source with no root it lies under."""
    root = source.root
    if root is None or not is_under(source.uri, root):
        return None
    if source.uri == root:
        return slug_from_path(PurePosixPath(posixpath.basename(source.uri)))
    return slug_from_path(PurePosixPath(posixpath.relpath(source.uri, root)))
