"""Fixtures of the browser tests: Debian's Chromium driven by Playwright (sync API) against a
real service process serving the web client at `/`.

- `browser`: one headless Chromium for the package's tests, `/usr/bin/chromium` (installed by
  scripts/test with apt; no tool ever downloads a browser). Its absence is a failure, not a
  skip.
- `app_server`: the base URL of a service process serving the client; the shared embedded
  process of tests/conftest.py unless a test asks for Redis with
  `@pytest.mark.parametrize("app_server", ["redis"], indirect=True)`.
- `context` / `page`: a fresh browser context (its own localStorage: one "player") per test,
  desktop-sized; a JavaScript error the page throws fails the test at teardown.
- `new_context`: more contexts for tests with several players (or one that asks the system
  for reduced motion, `reduced_motion="reduce"`: the client then shows every move at once).

Playwright's sync API runs its event loop in a greenlet of the main thread, and while it is
started that loop counts as the thread's running loop: `asyncio.run` (the store contract
tests, the archive's, ...) refuses to start beside it. So Playwright and the browser live in
the *package* scope, stopped as soon as the last browser test of a worker is done, and every
module of the package is in one xdist group (`browser`): the tier runs on one worker in one
go, then that worker goes on with other tests, no loop left behind (each module's
`pytestmark = BROWSER_GROUP`; checked by test_no_loop_left_behind.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.browser.web import App, PageErrors
from tests.support.api import check_serves_client

os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
DESKTOP = {"width": 1280, "height": 800}
TIMEOUT_MS = 20_000  # a bound on each wait, never an assertion on speed


@pytest.fixture(scope="package")
def playwright() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="package")
def browser(playwright) -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: scripts/test installs Debian's chromium with apt-get")
    browser = playwright.chromium.launch(
        executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
    )
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture
def app_server(request: pytest.FixtureRequest) -> str:
    """A service process serving the client: `embedded` (default) or `redis` (indirect)."""
    kind = getattr(request, "param", "embedded")
    assert kind in ("embedded", "redis"), kind
    return check_serves_client(request.getfixturevalue(f"{kind}_server_url"))


@pytest.fixture
def new_context(browser, app_server: str) -> Iterator[Callable[..., App]]:
    """Opens a fresh context (one browser "player") and its page; all closed after the test.
    Page errors (uncaught exceptions) of any of them fail the test."""
    opened: list[App] = []
    errors = PageErrors()

    def open_app(
        viewport: dict[str, int] | None = None,
        locale: str = "en-US",
        reduced_motion: str = "no-preference",
    ) -> App:
        context = browser.new_context(
            viewport=viewport or DESKTOP,
            locale=locale,
            base_url=app_server,
            reduced_motion=reduced_motion,
        )
        context.set_default_timeout(TIMEOUT_MS)
        page = context.new_page()
        errors.watch(page)
        app = App(page, app_server)
        opened.append(app)
        return app

    yield open_app
    for app in opened:
        app.page.context.close()
    errors.check()


@pytest.fixture
def app(new_context: Callable[..., App]) -> App:
    """One desktop-sized browser context on the app."""
    return new_context()


@pytest.fixture
def api(app_server: str) -> Iterator[httpx.Client]:
    from tests.support.api import strict_client

    with strict_client(app_server) as client:
        yield client
