"""A multi-hop question and the five chunks around it: the film, the actress it leads to,
the character, a chunk that only mentions the actress, and one about something else."""

from __future__ import annotations

from retrieval.domain.models import RagChunk

NS = "hop"
QUESTION = (
    "What government position was held by the woman who portrayed Corliss Archer in the film "
    "Kiss and Tell?"
)


def chunk(chunk_id: str, title: str, text: str, domain: str = "tea_cultivation") -> RagChunk:
    return RagChunk(
        chunk_id=f"{chunk_id}#0000-0",
        document_id=chunk_id,
        namespace=NS,
        title=title,
        domain=domain,
        position=0,
        content=f"{title} {text}",
    )


KISS = chunk(
    "kiss",
    "Kiss and Tell (1945 film)",
    "Kiss and Tell is a 1945 American comedy film starring Shirley Temple as Corliss Archer.",
)
TEMPLE = chunk(
    "temple",
    "Shirley Temple",
    "Shirley Temple Black was an actress who became United States Ambassador to Ghana.",
)
ARCHER = chunk("archer", "Corliss Archer", "Corliss Archer is a fictional teenage girl.")
FANS = chunk(
    "fans",
    "Temple fan clubs",
    "Shirley Temple fan clubs met weekly; Shirley Temple dolls, Shirley Temple songs.",
)
TEA = chunk("tea", "Green tea", "Green tea leaves are steamed after picking.")
CORPUS = (KISS, TEMPLE, ARCHER, FANS, TEA)
