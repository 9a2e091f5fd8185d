"""The graph views in JupyterLab's light and dark themes, in Chromium.

tests/browser/views.ipynb shows a graph view of a small model, a forward tracer, a
backward stepper and ``draw()``'s picture. In each theme the test clicks an op in the
graph view (its description appears beside the picture) and steps the tracer and the
stepper twice, then computes, from the colours the browser rendered, the contrast of
every text inside the widgets against the background behind it, and asks for WCAG
AA's 4.5:1: the panels' text, and the pictures' own text against the fill of the node
it sits in (or the picture's card). In the dark theme every picture's card is dark,
the canvases' by their own colours (widgets/theme.py's DARK_THEME), ``draw()``'s image
through the lessons' extension's filter. tests/widgets/test_palette.py checks every
pair of the palette; this checks that the browser draws them.
"""

from __future__ import annotations

import pytest
from lab_session import ARTIFACTS, CONTRAST, ROOT, SKIPS, lab_page, poll

pytestmark = SKIPS
NOTEBOOK = ROOT / "tests" / "browser" / "views.ipynb"

# Every <text> of the canvases' pictures: the contrast of its fill with the fill of the
# node shape it sits in (a tensor's box, an op's ellipse), else with the picture's card.
PICTURE_CONTRAST = """() => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number).slice(0, 3);
  const lum = ([r, g, b]) => {
    const f = c => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const low = [], cards = [];
  let texts = 0;
  for (const canvas of document.querySelectorAll('.ag-canvas')) {
    const card = rgb(getComputedStyle(canvas.querySelector('.ag-canvas-view')).backgroundColor);
    cards.push(lum(card));
    for (const text of canvas.querySelectorAll('.ag-canvas-stage text')) {
      if (!text.textContent.trim()) continue;
      const node = text.closest('g.node');
      const shape = node && node.querySelector(':scope > ellipse, :scope > polygon, :scope > path');
      const fill = shape ? getComputedStyle(shape).fill : 'none';
      const back = fill.startsWith('rgb') ? rgb(fill) : card;
      const a = lum(rgb(getComputedStyle(text).fill)), b = lum(back);
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      texts += 1;
      if (ratio < 4.5) low.push([text.textContent.trim().slice(0, 30), ratio.toFixed(2)]);
    }
  }
  const image = document.querySelector('.jp-OutputArea-output img.ag-picture');
  return {texts, low, cards, imageFilter: image ? getComputedStyle(image).filter : null};
}"""
INSPECTED = """() => [...document.querySelectorAll('.ag-inspector')]
    .map(e => e.innerText).join(' | ')"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_graph_views_read_in_both_themes(tmp_path, theme):
    with lab_page(tmp_path, NOTEBOOK, width=1300, theme=theme) as page:
        page.locator(".ag-canvas").nth(2).wait_for(timeout=120_000)
        page.locator(".jp-OutputArea-output img.ag-picture").wait_for(timeout=60_000)
        first_op = page.locator(".ag-canvas").first.locator("g.node.op").first
        op_id = first_op.get_attribute("id")
        first_op.click()
        poll(page, INSPECTED, lambda t: op_id in t)
        for _ in range(2):
            for k in range(2):  # the tracer's, then the stepper's
                page.get_by_role("button", name="next ▶").nth(k).click()
                page.wait_for_timeout(300)
        measured = page.evaluate(CONTRAST)
        picture = page.evaluate(PICTURE_CONTRAST)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"browser_views_{theme}.png"), full_page=True)
    assert measured["widgets"] == 3 and measured["texts"] > 20, measured
    assert not measured["low"], f"{theme}: text under 4.5:1: {measured['low']}"
    assert len(picture["cards"]) == 3 and picture["texts"] > 30, picture
    assert not picture["low"], f"{theme}: picture text under 4.5:1: {picture['low']}"
    dark = theme == "dark"
    assert all((card < 0.05) if dark else (card > 0.9) for card in picture["cards"]), picture
    expected_filter = "invert(0.93) hue-rotate(180deg)" if dark else "none"
    assert picture["imageFilter"] == expected_filter, picture
