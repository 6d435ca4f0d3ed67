"""axe-core (axe-playwright-python's bundled copy) on a page: no serious or critical
violation, each one listed readably (rule, impact, help, the elements and why) when any."""

from __future__ import annotations

from typing import Any

BLOCKING = ("serious", "critical")


def axe_violations(page, impacts: tuple[str, ...] = BLOCKING) -> list[dict[str, Any]]:
    """The violations of the page as it is now, with an impact in `impacts`."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [v for v in results.response["violations"] if v.get("impact") in impacts]


def describe(violations: list[dict[str, Any]]) -> str:
    lines = []
    for v in violations:
        lines.append(f"- {v['id']} ({v['impact']}): {v['help']} <{v.get('helpUrl', '')}>")
        for node in v.get("nodes", [])[:5]:
            target = " ".join(str(t) for t in node.get("target", []))
            summary = " ".join((node.get("failureSummary") or "").split())
            lines.append(f"    {target}: {node.get('html', '')[:160]}")
            if summary:
                lines.append(f"      {summary[:300]}")
        more = len(v.get("nodes", [])) - 5
        if more > 0:
            lines.append(f"    ... and {more} more")
    return "\n".join(lines)


def check_axe(page, screen: str) -> None:
    """Fails with the list of serious/critical axe violations of `screen`, if any."""
    violations = axe_violations(page)
    assert not violations, (
        f"axe: {len(violations)} serious/critical violation(s) on the {screen} screen "
        f"({page.url}):\n{describe(violations)}"
    )
