"""Writes ``cli/help_values.py``: what the command line's help shows that is declared in
modules loading Pydantic, as plain values, so that help answers without loading it.

Run ``python -m retrieval.cli.generate_help_values`` (``make help-values``) after changing a
search option; ``tests/unit/test_help_values.py`` fails until the written module is current.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path

from retrieval.demo import NAMESPACE
from retrieval.domain.search_plan import MAX_TOP_K, SearchOptions
from retrieval.domain.validation import DEFAULT_TOP_K

WRITTEN = Path(__file__).with_name("help_values.py")
FLAG_TYPES = (bool, int, float, str)
PIECE_CHARS = 86
"""Characters of one piece of a description split across lines, within 100 columns."""
HEADER = '''"""The search options of ``retrieval query``, and the values the command line's help
shows from modules that load Pydantic, written by ``python -m retrieval.cli.generate_help_values``
from domain/search_plan.py, domain/validation.py and demo/: do not edit."""

from typing import Literal

'''


def quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def annotation_source(name: str, annotation: object) -> str:
    """A flag's type as source: a choice of an enumeration's values, or a plain type."""
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return f"Literal[{', '.join(quoted(member.value) for member in annotation)}]"
    if annotation not in FLAG_TYPES:
        raise TypeError(f"search option {name}: no command-line flag for {annotation}")
    return annotation.__name__


def description_source(text: str) -> str:
    """``text`` as a string literal; when too long for one line, parenthesised pieces of
    whole words, one a line."""
    if len(text) <= PIECE_CHARS + 3:
        return quoted(text)
    pieces = [""]
    for word in text.split(" "):
        if pieces[-1] and len(pieces[-1]) + len(word) >= PIECE_CHARS:
            pieces.append("")
        pieces[-1] += f"{word} "
    pieces[-1] = pieces[-1].removesuffix(" ")
    lines = "".join(f"            {quoted(piece)}\n" for piece in pieces)
    return f"(\n{lines}        )"


def help_values_source() -> str:
    """The source of ``cli/help_values.py`` as the models declare it today."""
    flags = "".join(
        "    (\n"
        f"        {quoted(name)},\n"
        f"        {annotation_source(name, field.annotation)},\n"
        f"        {description_source(field.description or '')},\n"
        "    ),\n"
        for name, field in SearchOptions.model_fields.items()
    )
    return (
        f"{HEADER}MAX_TOP_K = {MAX_TOP_K}\n"
        f"VALIDATION_TOP_K = {DEFAULT_TOP_K}\n"
        f"DEMO_NAMESPACE = {quoted(NAMESPACE)}\n\n"
        f"SEARCH_FLAGS = (\n{flags})\n"
        '"""Each search option a request may set: its name, type and description."""\n'
    )


if __name__ == "__main__":
    WRITTEN.write_text(help_values_source(), encoding="utf-8")
