"""GraphView and ForwardTracer in JupyterLab's light and dark themes, in Chromium.

tests/browser/views.ipynb shows a graph view of a small model and a forward tracer. In
each theme the test clicks an op in the graph view (its description appears beside the
picture) and steps the tracer twice, then computes, from the colours the browser
rendered, the contrast of every text inside both widgets against the background behind
it, and asks for WCAG AA's 4.5:1. (The graph picture itself sits on a light card in
both themes; tests/widgets/test_palette.py checks its colours.)
"""

from __future__ import annotations

import pytest
from lab_session import ARTIFACTS, CONTRAST, ROOT, SKIPS, lab_page, poll

pytestmark = SKIPS
NOTEBOOK = ROOT / "tests" / "browser" / "views.ipynb"

INSPECTED = """() => [...document.querySelectorAll('.ag-inspector')]
    .map(e => e.innerText).join(' | ')"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_graph_view_and_tracer_text_is_readable(tmp_path, theme):
    with lab_page(tmp_path, NOTEBOOK, width=1300, theme=theme) as page:
        page.locator(".ag-canvas").nth(1).wait_for(timeout=120_000)
        first_op = page.locator(".ag-canvas").first.locator("g.node.op").first
        op_id = first_op.get_attribute("id")
        first_op.click()
        poll(page, INSPECTED, lambda t: op_id in t)
        for _ in range(2):
            page.get_by_role("button", name="next ▶").last.click()
            page.wait_for_timeout(300)
        measured = page.evaluate(CONTRAST)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"browser_views_{theme}.png"), full_page=True)
    assert measured["widgets"] == 2 and measured["texts"] > 20, measured
    assert not measured["low"], f"{theme}: text under 4.5:1: {measured['low']}"
