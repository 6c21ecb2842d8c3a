"""The name of each stage of a retrieval: the key of its timing and candidate count in the
result, the log line and the metrics, and of its span (``stage.<name>``)."""

from enum import StrEnum


class StageName(StrEnum):
    """Every stage of a retrieval, and the timed steps inside one (``EMBED`` inside
    ``SEARCH``) or in place of them (``CACHE``, a result served from the result cache)."""

    QUERY = "query"
    EMBED = "embed"
    SEARCH = "search"
    FUSE = "fuse"
    SECOND_HOP = "second_hop"
    DENSE_SCORES = "dense_scores"
    THRESHOLD = "threshold"
    REWRITE = "rewrite"
    RERANK = "rerank"
    COMPRESS = "compress"
    LLM_FILTER = "llm_filter"
    DIVERSIFY = "diversify"
    FETCH = "fetch"
    WIDEN = "widen"
    CACHE = "cache"
