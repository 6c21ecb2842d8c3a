"""The search options of ``retrieval query``, and the values the command line's help
shows from modules that load Pydantic, written by ``python -m retrieval.cli.generate_help_values``
from domain/search_plan.py, domain/validation.py and demo/: do not edit."""

from typing import Literal

MAX_TOP_K = 100
VALIDATION_TOP_K = 5
DEMO_NAMESPACE = "demo"

SEARCH_FLAGS = (
    (
        "mode",
        Literal["hybrid", "dense", "keyword"],
        "Searches a retrieval runs: hybrid (dense and keyword, fused), dense or keyword.",
    ),
    (
        "fusion",
        Literal["rrf", "weighted", "dbsf"],
        "How hybrid results fuse: dbsf, rrf or weighted.",
    ),
    (
        "dense_weight",
        float,
        "Weight of the dense search in fusion, 0 to 10.",
    ),
    (
        "keyword_weight",
        float,
        "Weight of the keyword search in fusion, 0 to 10.",
    ),
    (
        "fetch_k",
        int,
        "Candidates each search returns before fusion and diversity.",
    ),
    (
        "mmr_lambda",
        float,
        (
            "Maximal marginal relevance: 1 ranks by relevance alone, lower values trade relevance "
            "for diversity."
        ),
    ),
    (
        "max_per_document",
        int,
        "Most chunks of one document among the matches; 0: no cap.",
    ),
    (
        "rerank",
        bool,
        "Reorder the best candidates with the reranking model.",
    ),
    (
        "redundancy_threshold",
        float,
        (
            "Drop a candidate whose vector's cosine similarity to a better-ranked candidate kept "
            "is at least this; 1 keeps all."
        ),
    ),
    (
        "neighbours",
        int,
        (
            "Widen each match to the chunks up to this many positions either side of it in its "
            "document, as one text; 0: the match alone."
        ),
    ),
    (
        "rewrite",
        bool,
        (
            "Rewrite the query and search again when its best match is weak (best cosine under the "
            "rewrite threshold)."
        ),
    ),
    (
        "rewrite_threshold",
        float,
        "Best cosine similarity under which a query is rewritten.",
    ),
    (
        "llm_filter",
        bool,
        (
            "Ask the language model which of the best candidates help answer the query and drop "
            "the others."
        ),
    ),
    (
        "second_hop",
        bool,
        (
            "Follow the names the best candidates mention to the documents titled by them, and "
            "rank those right after the candidate that names them (multi-hop questions)."
        ),
    ),
    (
        "graph",
        bool,
        (
            "Search the knowledge graph beside the dense and keyword searches: the chunks about or "
            "mentioning the entities the query names, fused with the others."
        ),
    ),
    (
        "graph_hops",
        int,
        (
            "Hops of the graph search. 1: the chunks linked to the query's entities; 2: also the "
            "chunks about the entities those mention."
        ),
    ),
    (
        "graph_weight",
        float,
        "Weight of the graph search in fusion, 0 to 10.",
    ),
)
"""Each search option a request may set: its name, type and description."""
