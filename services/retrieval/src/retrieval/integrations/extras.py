"""The error an integration raises when its framework is not installed."""

from __future__ import annotations


def missing_extra(extra: str, error: ImportError) -> ImportError:
    """An ``ImportError`` naming the missing package and the extra that installs it."""
    package = (error.name or "its framework").partition(".")[0]
    return ImportError(
        f"retrieval.integrations.{extra} needs {package}: pip install 'retrieval-service[{extra}]'",
        name=package,
    )
