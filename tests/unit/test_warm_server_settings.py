"""A server the command line started takes the calls of commands run with its settings only:
the digest it is started with changes with any setting, a secret's too, but not with how the
data directory is spelt."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from retrieval.cli.warm import settings_digest
from retrieval.settings import Settings


def test_the_data_directory_counts_by_where_it_is_not_how_it_is_spelt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    relative = Settings(data_dir=Path("data"))
    absolute = Settings(data_dir=tmp_path / "data")

    assert settings_digest(relative) == settings_digest(absolute)


@pytest.mark.parametrize(
    "changed",
    [{"llm_api_key": SecretStr("another key")}, {"llm_model": "another-model"}],
    ids=["secret", "setting"],
)
def test_any_other_setting_changes_the_digest(tmp_path: Path, changed: dict[str, object]) -> None:
    settings = Settings(data_dir=tmp_path, llm_api_key=SecretStr("a key"))

    assert settings_digest(settings) != settings_digest(settings.model_copy(update=changed))
