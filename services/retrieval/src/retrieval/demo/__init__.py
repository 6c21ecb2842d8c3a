"""A small bundled knowledge base on tea growing, used by ``retrieval demo``."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from retrieval.domain.models import DEFAULT_DOMAINS, RetrievalOptions

if TYPE_CHECKING:
    from retrieval.settings import Settings

KNOWLEDGE_DIR = Path(str(files(__name__) / "knowledge"))
NAMESPACE = "demo"

DEFAULTS = RetrievalOptions()
EXAMPLE_QUERIES: tuple[tuple[str, tuple[str, ...], RetrievalOptions], ...] = (
    ("How do I recognise and control blister blight?", (), DEFAULTS),
    ("How do I recognise and control blister blight?", (), RetrievalOptions(max_per_document=1)),
    ("What does frost do to tea bushes and how can growers protect them?", (), DEFAULTS),
    ("When should tea bushes be pruned?", ("tea_cultivation",), DEFAULTS),
    (
        "What makes a good quality cup of black tea?",
        ("quality_standards", "regional_context"),
        DEFAULTS,
    ),
    ("monsoon rainfall and disease outbreaks", ("weather_patterns",), DEFAULTS),
)
"""Questions, their domains, and the switches they are asked with."""


def demo_settings(settings: Settings) -> Settings:
    """``settings`` with the knowledge base's domains added to a set allow-list, so that no
    ``RETRIEVAL_ALLOWED_DOMAINS`` refuses the demo."""
    if not settings.allowed_domains:
        return settings
    allowed = tuple(dict.fromkeys((*settings.allowed_domains, *DEFAULT_DOMAINS)))
    return settings.model_copy(update={"allowed_domains": allowed})
