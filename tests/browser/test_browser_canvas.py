"""The graph canvas in a real browser: JupyterLab + headless Chromium (Playwright).

tests/browser/canvas.ipynb shows a tall graph in a ``GraphCanvas`` 400 px high and a
label that the kernel rewrites when a node is selected or a step key arrives. The
test checks, from what the browser rendered: "fit" keeps labels readable (the overview
appears instead of shrinking the text), the wheel zooms, a drag pans, a click on a
node reaches the kernel, and → pressed on the canvas reaches the kernel.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lab_session import ARTIFACTS, ROOT, SKIPS, lab_page, poll

pytestmark = SKIPS
NOTEBOOK = ROOT / "tests" / "browser" / "canvas.ipynb"

# The canvas's view state, which canvas.js mirrors into data attributes, and the
# median height of its labels as drawn.
READ = """() => {
  const root = document.querySelector('.ag-canvas');
  if (!root || !root.dataset.scale) return null;
  const heights = [...root.querySelectorAll('.ag-canvas-stage text')]
      .map(t => t.getBoundingClientRect().height).sort((a, b) => a - b);
  const report = document.querySelector('.canvas-report');
  return {scale: +root.dataset.scale, tx: +root.dataset.tx, ty: +root.dataset.ty,
          overview: root.dataset.overview, selected: root.dataset.selected || '',
          label: heights[Math.floor(heights.length / 2)],
          report: report ? report.innerText : ''};
}"""


# The first op node whose centre lies inside the canvas's view and not under its
# overview, with that centre.
OP_IN_VIEW = """() => {
  const v = document.querySelector('.ag-canvas-view').getBoundingClientRect();
  const mini = document.querySelector('.ag-canvas-mini');
  const m = mini.style.display === 'none' ? null : mini.getBoundingClientRect();
  for (const node of document.querySelectorAll('.ag-canvas-stage g.node.op')) {
    const r = node.getBoundingClientRect();
    const x = r.x + r.width / 2, y = r.y + r.height / 2;
    const underMini = m && x > m.left && x < m.right && y > m.top && y < m.bottom;
    if (x > v.left + 4 && x < v.right - 4 && y > v.top + 4 && y < v.bottom - 4 && !underMini)
      return {id: node.id, at: [x, y]};
  }
  return null;
}"""


def test_zoom_pan_select_and_keys(tmp_path: Path):
    with lab_page(tmp_path, NOTEBOOK) as page:
        first = poll(page, READ, lambda s: s is not None and s["overview"] is not None)
        view = page.locator(".ag-canvas-view")
        box = view.bounding_box()
        centre = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)

        page.mouse.move(*centre)
        page.mouse.wheel(0, -400)
        zoomed = poll(page, READ, lambda s: s["scale"] != first["scale"])

        page.mouse.move(*centre)
        page.mouse.down()
        page.mouse.move(centre[0] + 60, centre[1] + 40, steps=5)
        page.mouse.move(centre[0] + 90, centre[1] + 70, steps=5)
        page.mouse.up()
        panned = poll(page, READ, lambda s: s["tx"] != zoomed["tx"])

        # an op the view shows now (after fit if the pan left none in view): its centre
        view.scroll_into_view_if_needed()
        target = page.evaluate(OP_IN_VIEW)
        if target is None:
            page.locator(".ag-canvas-button", has_text="fit").click()
            target = poll(page, OP_IN_VIEW, lambda t: t is not None)
        node_id, target = target["id"], target["at"]
        page.mouse.click(*target)
        selected = poll(page, READ, lambda s: f"selected={node_id}" in s["report"])

        page.keyboard.press("ArrowRight")
        keyed = poll(page, READ, lambda s: "keys=ArrowRight" in s["report"])
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "browser_canvas.png"), full_page=True)

    # fit on a graph too tall for 400 px: labels stay at least ~9 px, the overview shows
    assert first["label"] >= 8.5, first
    assert first["overview"] == "shown", first
    assert zoomed["scale"] > first["scale"] * 1.3, (first, zoomed)
    assert panned["tx"] - zoomed["tx"] == pytest.approx(90, abs=2), (zoomed, panned)
    assert panned["ty"] - zoomed["ty"] == pytest.approx(70, abs=2), (zoomed, panned)
    assert selected["selected"] == node_id and f"selected={node_id}" in selected["report"]
    assert "keys=ArrowRight" in keyed["report"], keyed
