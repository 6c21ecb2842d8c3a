"""A document's page: what its ledger record says of it, and the chunks of its current
version in order."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from retrieval.console.access import check_read
from retrieval.console.rendering import Renderer
from retrieval.service.ingestion.library_service import Library


@dataclass(frozen=True, eq=False)
class DocumentPage:
    library: Library
    render: Renderer

    async def document(self, request: Request) -> Response:
        namespace = request.path_params["namespace"]
        check_read(namespace)
        stored = await self.library.document(request.path_params["document_id"], namespace)
        return self.render.page(
            request, "document.html", {"namespace": namespace, "document": stored}
        )
