"""A small bundled knowledge base on tea growing, used by ``retrieval demo``."""

from importlib.resources import files
from pathlib import Path

KNOWLEDGE_DIR = Path(str(files(__name__) / "knowledge"))
NAMESPACE = "demo"

EXAMPLE_QUERIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("How do I recognise and control blister blight?", ()),
    ("What does frost do to tea bushes and how can growers protect them?", ()),
    ("When should tea bushes be pruned?", ("tea_cultivation",)),
    ("What makes a good quality cup of black tea?", ("quality_standards", "regional_context")),
    ("monsoon rainfall and disease outbreaks", ("weather_patterns",)),
)
