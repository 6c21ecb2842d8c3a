"""Pages from the templates in ``templates/``, and the page of an error."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

import structlog
from jinja2 import Environment, PackageLoader, StrictUndefined
from markdown_it import MarkdownIt
from markupsafe import Markup
from rich.filesize import decimal
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.templating import Jinja2Templates

from retrieval.console.report_files import ABSENT, is_number
from retrieval.domain.provenance import page_span
from retrieval.errors import (
    BackendError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
)
from retrieval.grpc.tenancy import CALLER
from retrieval.source_display import readable_source

log = structlog.get_logger("console")

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; "
    "form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
"""Nothing but this console's own files; the bars' widths are inline styles."""
STREAM_SLOT = "<!-- streamed -->"
"""Where a streamed page's template puts what comes as it is written (``stream``)."""


MARKDOWN = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable(
    ["table", "strikethrough"]
)
"""Markdown as chunks and reports hold it: their own HTML shown as text, a line break kept."""


def markdown_html(text: str) -> Markup:
    """``text`` as HTML: Markdown's markup, the text's own tags escaped, script links refused."""
    return Markup(MARKDOWN.render(text))


def milliseconds(value: float) -> str:
    return f"{value:.1f} ms" if value < 100 else f"{value:,.0f} ms"


def count(value: int | None) -> str:
    return ABSENT if value is None else f"{value:,}"


def when(value: datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M")


def size(value: int | None) -> str:
    return "n/a" if value is None else decimal(value)


def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("retrieval.console"), autoescape=True, undefined=StrictUndefined
    )
    env.filters.update(
        ms=milliseconds,
        count=count,
        when=when,
        size=size,
        source=readable_source,
        pages=page_span,
        markdown=markdown_html,
    )
    env.tests["number"] = is_number
    return env


def status_of(error: Exception) -> tuple[int, str]:
    """The HTTP status of an error, and what the page says of it: a store's failure only in
    the log, as the gRPC API does."""
    match error:
        case HTTPException():
            return error.status_code, error.detail
        case PermissionDeniedError():
            return 403, str(error)
        case InvalidRequestError():
            return 400, str(error)
        case NotFoundError():
            return 404, str(error)
        case BackendError():
            log.error("console.backend_error", error=str(error))
            return 503, "a store did not answer; the console's log tells why"
    return 500, str(error)


class Renderer:
    """Renders every page with the caller, its navigation and the same headers."""

    def __init__(self) -> None:
        self._templates = Jinja2Templates(env=environment())

    def page(
        self, request: Request, template: str, context: dict[str, object], status_code: int = 200
    ) -> Response:
        response = self._templates.TemplateResponse(
            request, template, self._with_caller(context), status_code=status_code
        )
        response.headers.update(SECURITY_HEADERS)
        return response

    def streamed(
        self,
        request: Request,
        template: str,
        context: dict[str, object],
        stream: AsyncIterator[str],
    ) -> Response:
        """The page, with the HTML ``stream`` yields sent where the template puts
        ``stream``, as it comes."""
        page = self.fragment(
            template,
            {"request": request, **self._with_caller(context), "stream": Markup(STREAM_SLOT)},
        )
        head, tail = page.split(STREAM_SLOT)

        async def whole() -> AsyncIterator[str]:
            yield head
            async for piece in stream:
                yield piece
            yield tail

        return StreamingResponse(whole(), media_type="text/html", headers=SECURITY_HEADERS)

    def fragment(self, template: str, context: dict[str, object]) -> str:
        return self._templates.env.get_template(template).render(context)

    @staticmethod
    def _with_caller(context: dict[str, object]) -> dict[str, object]:
        grant = CALLER.get()
        return {"caller": grant.name if grant is not None else None, **context}

    async def error(self, request: Request, error: Exception) -> Response:
        status, message = status_of(error)
        return self.page(request, "error.html", {"status": status, "message": message}, status)
