"""A document's page: what its ledger record says of it, and the chunks of its current
version in order."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from retrieval.console.access import check_read
from retrieval.console.rendering import Renderer
from retrieval.service.ingestion.library_service import Library


class DocumentPage:
    def __init__(self, library: Library, render: Renderer) -> None:
        self._library = library
        self._render = render

    async def document(self, request: Request) -> Response:
        namespace = request.path_params["namespace"]
        check_read(namespace)
        stored = await self._library.document(request.path_params["document_id"], namespace)
        return self._render.page(
            request, "document.html", {"namespace": namespace, "document": stored}
        )
