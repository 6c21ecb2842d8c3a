"""The query page: every option ``retrieval query`` takes, and each match with its scores by
source and the time each stage of the retrieval took; with ``format=json`` or ``format=csv``,
the matches as a file."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pydantic.fields import FieldInfo
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from retrieval.adapters.files.local_sources import as_source
from retrieval.console.access import check_read
from retrieval.console.exports import export_failure, export_links, exported
from retrieval.console.rendering import Renderer, status_of
from retrieval.domain.models import (
    RetrievalOptions,
    RetrievalQuery,
    RetrievalResult,
    StageTimings,
    validated,
)
from retrieval.domain.search_plan import SearchOptions
from retrieval.errors import InvalidRequestError, NotFoundError, PermissionDeniedError
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval.service.stats import StatsService
from retrieval.settings import Settings

SWITCH = (("true", "on"), ("false", "off"))
TEXT_FIELDS = ("query", "namespace", "top_k", "confidence_threshold", "source_prefix", "section")
"""The fields of ``RetrievalQuery`` the form sends as they are, by the same names."""


@dataclass(frozen=True)
class OptionField:
    """One of ``SearchOptions`` in the form: a choice (with ``choices``) or a number."""

    name: str
    label: str
    default: str
    help: str
    choices: tuple[tuple[str, str], ...] = ()
    step: str = "any"


def option_fields(settings: Settings) -> list[OptionField]:
    """Every option a request may set, with the setting that applies when the form leaves it
    empty: a choice for a switch or a mode, else a number (whole for an integer)."""
    return [
        option_field(name, field, getattr(settings.search, name))
        for name, field in SearchOptions.model_fields.items()
    ]


def option_field(name: str, field: FieldInfo, setting: object) -> OptionField:
    label, description = field.title or name, field.description or ""
    if isinstance(setting, bool):
        return OptionField(name, label, "on" if setting else "off", description, SWITCH)
    if isinstance(setting, StrEnum):
        choices = tuple((choice.value, choice.value) for choice in type(setting))
        return OptionField(name, label, setting.value, description, choices)
    step = "1" if field.annotation is int else "any"
    return OptionField(name, label, str(setting), description, step=step)


def retrieval_query(params: QueryParams) -> RetrievalQuery:
    """The request the form describes; an empty field takes the service's default."""
    given = {name: value for name, value in params.items() if value.strip()}
    fields: dict[str, object] = {name: given[name] for name in TEXT_FIELDS if name in given}
    if "source_prefix" in fields:
        fields["source_prefix"] = as_source(given["source_prefix"])
    options = {name: given[name] for name in RetrievalOptions.model_fields if name in given}
    return validated(RetrievalQuery, **fields, domains=chosen_domains(params), options=options)


def chosen_domains(params: QueryParams) -> tuple[str, ...]:
    """The domains ticked, or typed with commas between them."""
    names = (name.strip() for value in params.getlist("domain") for name in value.split(","))
    return tuple(name for name in names if name)


def stage_bars(timings: StageTimings) -> list[tuple[str, float, float]]:
    """``(stage, milliseconds, percent of the longest of the call and its stages)``."""
    scale = max([timings.total_ms, *timings.stages.values()]) or 1.0
    return [(stage, ms, 100 * ms / scale) for stage, ms in timings.stages.items()]


@dataclass(frozen=True, eq=False)
class QueryPage:
    retrieval: RetrievalService
    stats: StatsService
    settings: Settings
    render: Renderer

    async def query(self, request: Request) -> Response:
        params = request.query_params
        options = option_fields(self.settings)
        result, problem, status = None, None, 200
        try:
            result = await self._searched(params)
        except (InvalidRequestError, NotFoundError, PermissionDeniedError) as error:
            status, problem = status_of(error)
        if "format" in params:
            return self._export(params["format"], result, problem, status)
        return self.render.page(
            request,
            "query.html",
            {
                "form": params,
                "chosen_domains": chosen_domains(params),
                "domains": self.settings.allowed_domains,
                "default_namespace": self.settings.default_namespace,
                "options": options,
                "options_set": any(params.get(option.name) for option in options),
                "problem": problem,
                "result": result,
                "exports": export_links(params),
                "bars": stage_bars(result.timings) if result is not None else [],
            },
            status,
        )

    async def _searched(self, params: QueryParams) -> RetrievalResult | None:
        """The matches of the question asked; with none, None, after checking that a namespace
        the form names exists."""
        if params.get("query", "").strip():
            query = retrieval_query(params)
            check_read(query.namespace or self.settings.default_namespace)
            return await self.retrieval.retrieve_query(query)
        namespace = params.get("namespace", "").strip()
        if namespace:
            check_read(namespace)
            await self.stats.existing(namespace)
        return None

    @staticmethod
    def _export(
        format_name: str, result: RetrievalResult | None, problem: str | None, status: int
    ) -> Response:
        if problem is not None:
            return export_failure(status, problem)
        if result is None:
            return export_failure(400, "query: an export needs a question")
        try:
            return exported(result, format_name)
        except InvalidRequestError as error:
            return export_failure(*status_of(error))
