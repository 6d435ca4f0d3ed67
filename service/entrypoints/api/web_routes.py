"""The web client's page at `/` (and at `/app/`, where the service's links to a game point).
What it loads (its script modules and styles, built from `clients/web` and committed) is
served as static files under `/static/app/`; nothing here runs Node. The page may talk only to
this origin (its Content-Security-Policy). Its service worker is served at `/sw.js`: a worker's
scope is at most the folder of its script, and at the root it covers the whole client."""

from __future__ import annotations

from pathlib import Path

from litestar import Router, get
from litestar.datastructures import CacheControlHeader
from litestar.response import File

STATIC = Path(__file__).resolve().parents[2] / "static"
INDEX = STATIC / "app" / "index.html"
WORKER = STATIC / "app" / "sw.js"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)
# revalidate each time: the page and its entry script keep their names from one release to
# the next (the chunks they load are named by content)
REVALIDATE = CacheControlHeader(no_cache=True)


def served(path: Path, media_type: str, **headers: str) -> File:
    """A committed file of the client, shown inline, never sniffed as another type."""
    return File(
        path,
        content_disposition_type="inline",
        media_type=media_type,
        filename=path.name,
        headers={"X-Content-Type-Options": "nosniff", **headers},
    )


@get(["/", "/app/"], include_in_schema=False, cache_control=REVALIDATE)
async def web_page() -> File:
    return served(
        INDEX, "text/html", **{"Content-Security-Policy": CSP, "Referrer-Policy": "no-referrer"}
    )


# the browser checks a registered worker for a new version itself; no-cache keeps a stale
# copy from standing in for the new one
@get("/sw.js", include_in_schema=False, cache_control=REVALIDATE)
async def service_worker() -> File:
    return served(WORKER, "text/javascript")


# what the app mounts: the page and its worker
web_client = Router(path="/", route_handlers=[web_page, service_worker])
