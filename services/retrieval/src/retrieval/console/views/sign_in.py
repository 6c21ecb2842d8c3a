"""The sign-in page, where a browser gives the console its bearer token once (kept in a
cookie only this console reads), and signing out."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs

import structlog
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from retrieval.console.access import SIGN_IN_PATH, TOKEN_COOKIE, Gate, safe_next
from retrieval.console.rendering import Renderer

log = structlog.get_logger("console")


@dataclass(frozen=True, eq=False)
class SignInPage:
    gate: Gate
    render: Renderer

    async def form(self, request: Request) -> Response:
        if self.gate.tenants is None:
            return RedirectResponse("/", status_code=303)
        target = safe_next(request.query_params.get("next"))
        return self.render.page(request, "sign_in.html", {"next": target, "problem": None})

    async def submit(self, request: Request) -> Response:
        fields = parse_qs((await request.body()).decode(errors="replace"))
        token = fields.get("token", [""])[0].strip()
        target = safe_next(fields.get("next", ["/"])[0])
        grant = self.gate.grant_of(token or None)
        if grant is None:
            log.warning("console.sign_in_refused")
            return self.render.page(
                request,
                "sign_in.html",
                {"next": target, "problem": "That token is not known."},
                status_code=401,
            )
        log.info("console.signed_in", token_name=grant.name)
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(
            TOKEN_COOKIE,
            token,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return response

    async def sign_out(self, request: Request) -> Response:
        response = RedirectResponse(SIGN_IN_PATH, status_code=303)
        response.delete_cookie(TOKEN_COOKIE, httponly=True, samesite="strict")
        return response
