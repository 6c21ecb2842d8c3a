"""The namespaces page: every namespace's size and health with the embedded stores' footprints
(``retrieval stats``), and one namespace's audit with its documents (``retrieval documents``),
filtered and paged."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from retrieval.console.access import check_read
from retrieval.console.listing import document_listing
from retrieval.console.rendering import Renderer
from retrieval.domain.collection_health import ORPHAN_LABELS
from retrieval.errors import NotFoundError
from retrieval.grpc.tenancy import visible_namespaces
from retrieval.service.ingestion.library_service import Library
from retrieval.service.stats import StatsService


@dataclass(frozen=True, eq=False)
class NamespacePages:
    stats: StatsService
    library: Library
    render: Renderer

    async def index(self, request: Request) -> Response:
        report = await self.stats.collect(visible_namespaces())
        return self.render.page(
            request, "namespaces.html", {"report": report, "orphan_labels": ORPHAN_LABELS}
        )

    async def namespace(self, request: Request) -> Response:
        name = request.path_params["namespace"]
        check_read(name)
        report = await self.stats.collect(lambda namespace: namespace == name)
        found = next((health for health in report.namespaces if health.namespace == name), None)
        if found is None:
            raise NotFoundError(f"no namespace {name!r}")
        documents = await self.library.documents(name)
        params = request.query_params
        listing = document_listing(documents, params.get("filter", ""), params.get("page"))
        return self.render.page(
            request,
            "namespace.html",
            {
                "report": report,
                "health": found,
                "documents": len(documents),
                "listing": listing,
                "orphan_labels": ORPHAN_LABELS,
            },
        )
