"""The web client: what the page weighs and how soon a new table is playable, in headless
Chromium on loopback.

Run: `.venv/bin/python bench/bench_web.py [--runs 9]` (starts the service on the embedded
default in a temporary directory, drives Debian's /usr/bin/chromium with Playwright; prints
figures, asserts nothing; well under a minute).

- transfer: the bytes of every response body the lobby page loads (document, script, styles,
  images, API answers), uncompressed (the body as the page got it, not the wire's length),
  fonts aside (listed apart); the goal is under 200 KB. Then what opening a table adds.
- time to an interactive table, median over `--runs` fresh contexts (no cache): from the
  navigation to `/` until the app's `performance.mark("ten:interactive")` (the table first
  shown with its controls), the lobby's form filled and sent by Playwright on the way (a new
  table of four: you and three `basic` bots); also its two parts: navigation -> lobby ready
  (`body[data-ready="1"]`) and form sent -> table interactive (the create request, the
  table's first reads and its render).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.servers import ServiceProcess

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
# marks the first time the body is ready (the lobby) and the moment the form is sent
PROBES = """
new MutationObserver((_, observer) => {
  if (document.body && document.body.dataset.ready === "1") {
    performance.mark("bench:ready");
    observer.disconnect();
  }
}).observe(document, {subtree: true, attributes: true, attributeFilter: ["data-ready"]});
document.addEventListener("submit", () => performance.mark("bench:submit"), true);
"""
INTERACTIVE = "[data-testid=actions] [data-action]"


def mark(page, name: str) -> float | None:
    return page.evaluate(
        "(n) => { const m = performance.getEntriesByName(n); return m.length ? m[0].startTime : null }",
        name,
    )


def create_table(page) -> None:
    page.fill("#create-name", "Bench")
    page.select_option("#create-players", "4")
    for seat in (1, 2, 3):
        page.select_option(f"#create-seat-{seat}", "basic")
    page.click("#create-submit")


def weigh(browser, base: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    loaded: list = []

    def finished(request) -> None:  # a function, not list.append: Playwright tags handlers
        loaded.append(request)

    page.on("requestfinished", finished)
    page.goto(f"{base}/")
    page.wait_for_selector('body[data-screen="lobby"][data-ready="1"]', state="attached")
    page.wait_for_load_state("networkidle")

    def sizes(requests: list) -> list[tuple[str, str, int]]:
        rows = []
        for request in requests:
            response = request.response()
            body = b"" if response is None or response.status >= 300 else response.body()
            rows.append((request.resource_type, request.url.removeprefix(base), len(body)))
        return rows

    lobby = sizes(loaded)
    fonts = [r for r in lobby if r[0] == "font"]
    rest = [r for r in lobby if r[0] != "font"]
    print("transfer of the lobby page (uncompressed bodies):")
    for kind, url, size in sorted(rest, key=lambda r: -r[2]):
        print(f"  {size:>9,} B  {kind:<10} {url[:90]}")
    total = sum(r[2] for r in rest)
    print(f"  {total:>9,} B  total, fonts aside ({total / 1024:.1f} KiB; goal < 200 KB)")
    if fonts:
        print(f"  {sum(r[2] for r in fonts):>9,} B  fonts ({len(fonts)} files)")
    before = len(loaded)
    create_table(page)
    page.wait_for_selector(INTERACTIVE, state="attached")
    page.wait_for_load_state("networkidle")
    table = sizes(loaded[before:])
    added = sum(r[2] for r in table if r[0] != "font")
    print(f"  {added:>9,} B  more to open the new table ({len(table)} responses)")
    context.close()


def interactive(browser, base: str, runs: int) -> None:
    totals, lobby, table = [], [], []
    for _ in range(runs):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.add_init_script(PROBES)
        page = context.new_page()
        page.goto(f"{base}/")
        page.wait_for_selector('body[data-screen="lobby"][data-ready="1"]', state="attached")
        create_table(page)
        page.wait_for_selector(INTERACTIVE, state="attached")
        page.wait_for_function("performance.getEntriesByName('ten:interactive').length > 0")
        done = mark(page, "ten:interactive")
        ready, sent = mark(page, "bench:ready"), mark(page, "bench:submit")
        totals.append(done)
        if ready is not None:
            lobby.append(ready)
        if sent is not None:
            table.append(done - sent)
        context.close()

    def show(label: str, values: list[float]) -> None:
        if values:
            print(
                f"  {label:<46} median {statistics.median(values):7.1f} ms  "
                f"(min {min(values):.1f}, max {max(values):.1f}, n={len(values)})"
            )

    print(f"time to an interactive table on loopback, {runs} fresh contexts:")
    show("navigation -> table interactive (form on the way)", totals)
    show("navigation -> lobby ready", lobby)
    show("form sent -> table interactive", table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        server = ServiceProcess({}, cwd=Path(tmp))
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
                print(f"chromium {browser.version}, service at {server.base} (embedded)")
                weigh(browser, server.base)
                interactive(browser, server.base, args.runs)
                browser.close()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
