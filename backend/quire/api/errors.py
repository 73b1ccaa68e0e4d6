"""One JSON error shape for every error the API returns:

{"error": {"status": 415, "code": "unsupported_type", "message": "...", "detail": ...}}
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Send

from quire.errors import ErrorBody, QuireError
from quire.storage.db import unreachable

log = logging.getLogger(__name__)

#: The answer while the database is away (a PostgreSQL restart, a network cut).
DATABASE_UNREACHABLE = "the library's database is unreachable right now; try again in a moment"

HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
    415: "unsupported_type",
    422: "validation_error",
    429: "rate_limited",
    500: "internal_error",
    503: "unavailable",
}


def error_body(status: int, code: str, message: str, detail: Any = None) -> dict[str, Any]:
    """The error envelope."""
    body = ErrorBody(status=status, code=code, message=message, detail=detail)
    return {"error": body.model_dump(mode="json")}


def error_response(status: int, code: str, message: str, detail: Any = None) -> JSONResponse:
    """A JSONResponse carrying the error envelope."""
    return JSONResponse(error_body(status, code, message, detail), status_code=status)


async def send_error(
    send: Send,
    status: int,
    code: str,
    message: str,
    headers: Sequence[tuple[bytes, bytes]] = (),
    *,
    more: bool = False,
) -> None:
    """The error envelope from pure ASGI middleware, which answers before the app runs; with
    ``more`` the response is left open (its body is whole: Content-Length) for the caller to
    end with an empty body."""
    body = json.dumps(error_body(status, code, message)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": more})


def _jsonable(errors: list[Any]) -> list[dict[str, Any]]:
    out = []
    for e in errors:
        out.append(
            {
                "loc": [str(x) for x in e.get("loc", ())],
                "msg": str(e.get("msg", "")),
                "type": str(e.get("type", "")),
            }
        )
    return out


def install(app: FastAPI) -> None:
    """Map every exception class to the one shape."""

    @app.exception_handler(QuireError)
    async def _quire(_: Request, exc: QuireError) -> JSONResponse:
        body = exc.body()
        return error_response(body.status, body.code, body.message, body.detail)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = HTTP_CODES.get(exc.status_code, "http_error")
        message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
        resp = error_response(exc.status_code, code, message)
        if exc.headers:
            resp.headers.update(exc.headers)
        return resp

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        errs = _jsonable(list(exc.errors()))
        first = errs[0] if errs else {"loc": [], "msg": "invalid request"}
        where = ".".join(x for x in first["loc"] if x not in ("body", "query", "path"))
        message = f"{where}: {first['msg']}" if where else str(first["msg"])
        return error_response(422, "validation_error", message, errs)

    @app.exception_handler(DBAPIError)
    async def _database(_: Request, exc: DBAPIError) -> JSONResponse:
        if unreachable(exc):
            # The database went away (a restart, a network cut): say so; retry later.
            log.warning("database unreachable: %s", exc.orig.__class__.__name__)
            return error_response(503, "unavailable", DATABASE_UNREACHABLE)
        log.exception("unhandled database error")
        return error_response(500, "internal_error", "internal error; see the server log")

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return error_response(500, "internal_error", "internal error; see the server log")
