"""The command line's help reads the search options and a few model values from a written
module, ``cli/help_values.py``, so that it answers without loading Pydantic: that module is
what its generator writes from the models today."""

from __future__ import annotations

import typer

from retrieval.cli.app import app
from retrieval.cli.generate_help_values import WRITTEN, help_values_source
from retrieval.domain.search_plan import SearchOptions


def test_the_written_help_values_are_those_the_models_declare() -> None:
    assert WRITTEN.read_text(encoding="utf-8") == help_values_source(), (
        "a search option or a value the help shows changed: "
        "run `make help-values` (python -m retrieval.cli.generate_help_values)"
    )


def test_query_has_a_flag_per_search_option_described_as_the_model_describes_it() -> None:
    query = typer.main.get_group(app).commands["query"]
    flags = {parameter.name: parameter for parameter in query.params}
    for name, field in SearchOptions.model_fields.items():
        described = (field.description or "").removesuffix(".")
        assert flags[name].help == f"{described} [settings].", name
        assert flags[name].default is None, name
