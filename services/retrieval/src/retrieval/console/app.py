"""The console's pages over one running application, behind the token gate."""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from retrieval.console.access import SIGN_IN_PATH, Gate
from retrieval.console.rendering import Renderer
from retrieval.console.views.ask import AskPage
from retrieval.console.views.documents import DocumentPage
from retrieval.console.views.namespaces import NamespacePages
from retrieval.console.views.query import QueryPage
from retrieval.console.views.reports import ReportPages
from retrieval.console.views.sign_in import SignInPage
from retrieval.domain.tenants import Tenants
from retrieval.errors import RetrievalError
from retrieval.lifecycle import Application


async def home(request: Request) -> Response:
    return RedirectResponse("/namespaces", status_code=303)


def console_app(application: Application, tenants: Tenants | None, reports: Path) -> Starlette:
    """The console of ``application``; ``tenants`` None lets every caller in, and ``reports``
    is the directory the benchmarks and golden runs write to."""
    render = Renderer()
    gate = Gate(tenants)
    namespaces = NamespacePages(application.stats, application.library, render)
    document = DocumentPage(application.library, render)
    query = QueryPage(application.retrieval, application.stats, application.settings, render)
    ask = AskPage(application.answers, application.settings, render)
    report_pages = ReportPages(reports, render)
    sign_in = SignInPage(gate, render)
    routes = [
        Route("/", gate(home)),
        Route("/namespaces", gate(namespaces.index)),
        Route("/namespaces/{namespace}", gate(namespaces.namespace)),
        Route("/namespaces/{namespace}/documents/{document_id}", gate(document.document)),
        Route("/query", gate(query.query)),
        Route("/ask", gate(ask.ask)),
        Route("/reports", gate(report_pages.index)),
        Route("/reports/{name}", gate(report_pages.report)),
        Route("/reports/files/{file}", gate(report_pages.file)),
        Route(SIGN_IN_PATH, sign_in.form, methods=["GET"]),
        Route(SIGN_IN_PATH, sign_in.submit, methods=["POST"]),
        Route("/logout", sign_in.sign_out, methods=["POST"]),
        Mount("/static", StaticFiles(packages=[("retrieval.console", "static")]), name="static"),
    ]
    return Starlette(
        routes=routes,
        exception_handlers={RetrievalError: render.error, HTTPException: render.error},
    )
