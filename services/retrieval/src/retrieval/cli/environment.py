"""Settings read from the environment; a bad ``RETRIEVAL_*`` variable is one line naming it."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar, get_args

import typer

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo
    from pydantic_core import ErrorDetails
    from pydantic_settings import BaseSettings

REFUSED = 2
"""Exit code of a command refused before it started, as click's for a bad option."""

S = TypeVar("S", bound="BaseSettings")


def from_environment(kind: type[S]) -> S:
    """``kind()``; should a variable be invalid, ``error: VARIABLE: what it expects (got ...)``
    per bad variable on stderr and exit code 2."""
    from pydantic import ValidationError

    try:
        return kind()
    except ValidationError as error:
        prefix = kind.model_config.get("env_prefix") or ""
        for problem in error.errors():
            typer.echo(f"error: {described(problem, prefix, kind.model_fields)}", err=True)
        raise typer.Exit(code=REFUSED) from None


def described(problem: ErrorDetails, prefix: str, fields: dict[str, FieldInfo]) -> str:
    """The variable, what Pydantic found wrong with it, and the value given unless it is a
    secret; a problem of no one variable (a check across settings) without the values."""
    if not problem["loc"]:
        return f"settings: {problem['msg']}"
    from retrieval.settings import settings_variable

    variable = settings_variable(prefix, problem["loc"])
    field = fields.get(str(problem["loc"][0]))
    if field is not None and is_secret(field):
        return f"{variable}: {problem['msg']}"
    return f"{variable}: {problem['msg']} (got {problem['input']!r})"


def is_secret(field: FieldInfo) -> bool:
    from pydantic import SecretStr

    return SecretStr in (field.annotation, *get_args(field.annotation))
