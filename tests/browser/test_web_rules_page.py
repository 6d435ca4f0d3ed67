"""The rules screen links the full rules (docs/rules.md as service/static/docs/rules.html), in
every language; following the link shows them with the decisions' anchors, under the web
client's own Content-Security-Policy and with nothing loaded from another origin."""

from __future__ import annotations

from tests.browser.web import BROWSER_GROUP, App, wait_for

pytestmark = BROWSER_GROUP

LANGUAGES = ("id", "hy", "es", "gu")
LINK = "[data-testid=full-rules]"
PAGE = "/static/docs/rules.html"
# what the page reports when the policy refuses something (inline style, a script, ...)
VIOLATIONS = """
window.violations = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.violations.push(`${e.effectiveDirective} ${e.blockedURI}`));
"""


def test_the_rules_screen_links_the_full_rules_in_every_language(app: App) -> None:
    page = app.page
    app.goto("/rules", "rules")
    english = page.text_content(LINK)
    assert english == "The complete rules this service implements (in English)"
    assert page.get_attribute(LINK, "href") == PAGE
    for lang in LANGUAGES:
        page.select_option("#language", lang)
        page.wait_for_selector(f'html[lang="{lang}"]', state="attached")
        app.wait_screen("rules")
        shown = wait_for(lambda: page.text_content(LINK), f"the link in {lang}")
        assert shown != english, lang
        assert page.get_attribute(LINK, "href") == PAGE, lang


def test_following_the_link_shows_the_rules_with_their_decisions(app: App) -> None:
    from service.entrypoints.api.web_routes import CSP

    page = app.page
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))

    def with_policy(route) -> None:
        """The page as served, with the policy the service gives the web client at `/`."""
        response = route.fetch()
        route.fulfill(
            response=response, headers={**response.headers, "content-security-policy": CSP}
        )

    page.route(f"**{PAGE}*", with_policy)
    page.add_init_script(VIOLATIONS)
    app.goto("/rules", "rules")
    with page.expect_navigation():
        page.click(LINK)
    assert page.url == f"{app.base}{PAGE}"
    page.wait_for_load_state("load")
    assert page.text_content("h1") == "TEN: the rules as this service implements them"
    decision = page.locator("#d1")
    assert decision.count() == 1
    paragraph = page.locator("p:has(#d1)").text_content() or ""
    assert paragraph.startswith("Decision D1: nine numbered wildcards."), paragraph
    # its own stylesheet applies (the policy let it load): the page's measure
    assert page.evaluate("getComputedStyle(document.body).maxWidth") == "768px"
    # the list of decisions leads to each one
    page.click("a[href='#d14']")
    wait_for(lambda: page.url.endswith("#d14"), "the jump to D14")
    assert page.evaluate("document.querySelector(':target')?.id") == "d14"
    assert page.evaluate("window.violations") == []
    foreign = [url for url in requested if not url.startswith(app.base) and url != "data:,"]
    assert foreign == [], foreign
    assert f"{app.base}/static/docs/rules.css" in requested
    # and back to the client's rules screen
    page.click("nav a")
    app.wait_screen("rules")
