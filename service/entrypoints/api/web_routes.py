"""The web client's page at `/`. What it loads (its script modules and styles, built from
`clients/web` and committed) is served as static files under `/static/app/`; nothing here runs
Node. The page may talk only to this origin (its Content-Security-Policy)."""

from __future__ import annotations

from pathlib import Path

from litestar import get
from litestar.datastructures import CacheControlHeader
from litestar.response import File

STATIC = Path(__file__).resolve().parents[2] / "static"
INDEX = STATIC / "app" / "index.html"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)
# revalidate each time: the page and its entry script keep their names from one release to
# the next (the chunks they load are named by content)
REVALIDATE = CacheControlHeader(no_cache=True)


@get("/", include_in_schema=False, cache_control=REVALIDATE)
async def web_client() -> File:
    return File(
        INDEX,
        content_disposition_type="inline",
        media_type="text/html",
        filename="index.html",
        headers={
            "Content-Security-Policy": CSP,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
        },
    )
