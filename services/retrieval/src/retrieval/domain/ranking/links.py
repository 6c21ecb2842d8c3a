"""A ranking with the chunks its best candidates link to placed right after them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from retrieval.domain.ranking.candidate import Candidate


def follow_links(
    candidates: Sequence[Candidate], links: Mapping[str, Sequence[str]], label: str
) -> list[Candidate]:
    """``candidates`` with each candidate's linked chunks (``links``, by chunk id, in order)
    right after it, and after each of those its own links; a chunk ranked before that place
    already stays where it was, and each chunk comes once.

    A linked chunk's score is discounted from the score of the candidate that leads to it, in
    equal steps towards the score of the next candidate that stays in place (one point below
    the leading candidate's score when none does), so the scores stay in the ranking's order.
    It keeps the scores it had as a candidate, and holds its new score under ``label``.
    """
    found = {candidate.chunk_id: candidate for candidate in candidates}
    placed: set[str] = set()

    def chain(chunk_id: str) -> list[str]:
        """The chunks ``chunk_id`` leads to, each followed by the chunks it leads to."""
        followed: list[str] = []
        for linked in links.get(chunk_id, ()):
            if linked not in placed:
                placed.add(linked)
                followed += [linked, *chain(linked)]
        return followed

    blocks: list[tuple[Candidate, list[str]]] = []
    for candidate in candidates:
        if candidate.chunk_id not in placed:
            placed.add(candidate.chunk_id)
            blocks.append((candidate, chain(candidate.chunk_id)))

    ranking: list[Candidate] = []
    for position, (leader, block) in enumerate(blocks):
        ranking.append(leader)
        floor = blocks[position + 1][0].score if position + 1 < len(blocks) else leader.score - 1
        step = (leader.score - floor) / (len(block) + 1)
        for steps, chunk_id in enumerate(block, start=1):
            score = leader.score - steps * step
            before = found.get(chunk_id)
            scores = {**before.scores, label: score} if before else {label: score}
            ranking.append(Candidate(chunk_id, score, scores))
    return ranking
