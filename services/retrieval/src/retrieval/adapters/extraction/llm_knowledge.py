"""Entities and typed relations read by a chat model, as LightRAG extracts them at indexing.

One ``complete`` call per text (cut to ``MAX_TEXT_CHARS``), temperature 0, at most
``MAX_REPLY_TOKENS`` of reply, ``concurrency`` calls at a time per process. The model is asked
for one JSON object (``PROMPT``); the first object in the reply is read, so a code fence or
prose around it does no harm. Names are normalised as the rule-based extractor's are and
kept once; a relation whose endpoints are not both entities of the reply is dropped, and the
rest are normalised by ``retrieval.domain.graph.relation``.

A reply that holds no JSON object of that shape raises ``UnreadableReplyError``: the write
of the chunk fails whole and can be tried again (a graph record is never written from a reply
that was not read). A blank text is not sent.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ValidationError

from retrieval.adapters.openai.chat_wire import problems
from retrieval.domain.chat import ChatMessage
from retrieval.domain.graph import MAX_RELATIONS, Extraction, Relation, relation
from retrieval.domain.names import name_key, normalised
from retrieval.errors import UnreadableReplyError
from retrieval.ports.llm import Llm

PROMPT_VERSION = "v1"
"""Changes with ``PROMPT`` or how replies are read: cached extractions of another are unused."""
MAX_TEXT_CHARS = 8000
MAX_REPLY_TOKENS = 2048
MAX_SHOWN_CHARS = 120
PROMPT = (
    "You extract a knowledge graph from a passage. List the named entities it mentions "
    "(people, organisations, places, works, events, products) and the relations the passage "
    "states between them. Answer with one JSON object and nothing else:\n"
    '{"entities": [{"name": "...", "type": "person"}], "relations": [{"source": "...", '
    '"target": "...", "type": "PORTRAYED_BY", "description": "..."}]}\n'
    "Write each name in full as the passage writes it (never a pronoun), each entity once. "
    "A relation's source and target are names from entities; its type is a short verb phrase "
    "in upper snake case (PORTRAYED_BY, BORN_IN, MEMBER_OF); its description is one short "
    f"sentence the passage supports. At most {MAX_RELATIONS} relations. With nothing to "
    'extract, answer {"entities": [], "relations": []}.'
)
OPENING = re.compile(r"\{")


class _Entity(BaseModel):
    name: str


class _Relation(BaseModel):
    source: str
    target: str
    type: str | None = None
    description: str | None = None


class _Reply(BaseModel):
    entities: list[_Entity]
    relations: list[_Relation]


class LlmKnowledgeExtractor:
    def __init__(self, llm: Llm, concurrency: int = 4) -> None:
        self._llm = llm
        self._calls = asyncio.Semaphore(concurrency)

    @property
    def version(self) -> str:
        return f"llm:{self._llm.model}:{PROMPT_VERSION}"

    async def extract(self, text: str) -> Extraction:
        if not text.strip():
            return Extraction()
        async with self._calls:
            completion = await self._llm.complete(
                [
                    ChatMessage(role="system", content=PROMPT),
                    ChatMessage(role="user", content=text[:MAX_TEXT_CHARS]),
                ],
                max_tokens=MAX_REPLY_TOKENS,
                temperature=0.0,
            )
        return read_extraction(completion.text, self._llm.model)


def read_extraction(reply: str, model: str) -> Extraction:
    """The extraction a model's reply states (see the module), or ``UnreadableReplyError``."""
    try:
        read = _Reply.model_validate(first_object(reply))
    except ValidationError as error:
        shown = " ".join(reply.split())[:MAX_SHOWN_CHARS]
        raise UnreadableReplyError(
            f"chat model {model!r} gave no knowledge extraction in its reply ({shown!r}): "
            f"{problems(error)}"
        ) from error
    names: dict[str, str] = {}
    for entity in read.entities:
        name = normalised(entity.name)
        if name_key(name):
            names.setdefault(name.casefold(), name)
    return Extraction(names=tuple(names.values()), relations=relations(read, names.values()))


def relations(read: _Reply, names: Iterable[str]) -> tuple[Relation, ...]:
    """The reply's relations between its entities ``names``, each once."""
    keys = {name_key(name) for name in names}
    found = (
        relation(normalised(r.source), normalised(r.target), r.type or "", r.description or "")
        for r in read.relations
    )
    return tuple(dict.fromkeys(r for r in found if r and {r.source, r.target} <= keys))


def first_object(reply: str) -> dict[str, Any] | None:
    """The first JSON object of ``reply``, whatever is around it."""
    decoder = json.JSONDecoder()
    for opening in OPENING.finditer(reply):
        try:
            value, _ = decoder.raw_decode(reply, opening.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None
