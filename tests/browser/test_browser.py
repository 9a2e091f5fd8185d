"""The stepper in a real browser: JupyterLab + headless Chromium driven by Playwright.

JupyterLab serves a temporary copy of tests/browser/stepper.ipynb on 127.0.0.1
(tests/helpers/lab_session.py). Chromium (Debian's /usr/bin/chromium; never ``playwright
install``) opens it, runs every cell, clicks the stepper's **next** button several
times and checks, from the styles the browser actually computed, that the highlighted
node moves, stays inside the visible picture at a 900-px-wide window, and that the
upstream gradient shown changes; then → on the picture steps, and a click on the current op
opens the inspector. A screenshot is kept in artifacts/.

Skipped, saying what is missing and how to get it, when chromium, Playwright or
JupyterLab is not installed.
"""

from __future__ import annotations

from lab_session import ARTIFACTS, CONTRAST, ROOT, SKIPS, lab_page, poll, steady_box

from widgets import theme

pytestmark = SKIPS
NOTEBOOK = ROOT / "tests" / "browser" / "stepper.ipynb"
# theme.CURRENT as the browser reports a computed colour, e.g. 'rgb(0, 0, 0)'
CURRENT_STROKE = "rgb({}, {}, {})".format(*(int(theme.CURRENT[i:i + 2], 16) for i in (1, 3, 5)))

# Which op node is drawn with the "current" stroke (solid: the canvas's selection is
# dashed), read from computed styles, and the text of the upstream gradient in the step
# panel.
READ_STATE = """() => {
  const graph = document.querySelector('.ag-graph');
  const current = [...graph.querySelectorAll('g.node.op')].filter(g => {
      const shape = g.querySelector('ellipse, polygon, path');
      const style = shape && getComputedStyle(shape);
      return style && style.stroke === 'STROKE' && style.strokeDasharray === 'none'; })
      .map(g => g.id);
  const panel = [...document.querySelectorAll('.widget-html-content')]
      .find(e => e.innerText.includes('upstream gradient'));
  const label = [...document.querySelectorAll('.widget-label')]
      .map(e => e.innerText).find(t => / \\/ /.test(t));
  // is the current op inside the visible box of the canvas?
  const view = document.querySelector('.ag-canvas-view').getBoundingClientRect();
  const shown = current.map(id => {
      const r = graph.querySelector(`[id="${id}"]`).getBoundingClientRect();
      return r.left >= view.left - 1 && r.right <= view.right + 1
          && r.top >= view.top - 1 && r.bottom <= view.bottom + 1; });
  const inspector = document.querySelector('.ag-inspector');
  return {current, shown, label, inspector: inspector ? inspector.innerText : '',
          upstream: panel ? panel.querySelector('pre').innerText : null};
}""".replace("STROKE", CURRENT_STROKE)


def test_stepper_next_moves_the_highlight_and_the_gradient(tmp_path):
    # 900 px wide: the picture is narrow, and the current op must still be in view
    with lab_page(tmp_path, NOTEBOOK, width=900) as page:
        next_button = page.get_by_role("button", name="next ▶")
        next_button.wait_for(timeout=90_000)
        states = [page.evaluate(READ_STATE)]
        n = int(states[0]["label"].split("/")[1])
        assert states[0]["label"] == f"0 / {n}" and states[0]["current"] == []
        for k in range(1, 5):
            next_button.click()
            # The label, the highlight and the step panel are separate widget messages:
            # wait for all three to show step k.
            states.append(poll(page, READ_STATE, lambda s, k=k: s["label"] == f"{k} / {n}"
                               and s["current"] != states[-1]["current"]
                               and s["upstream"] is not None))
        # keys on the focused picture step too; a click on a node opens the inspector
        page.locator(".ag-canvas").focus()
        page.keyboard.press("ArrowRight")
        keyed = poll(page, READ_STATE, lambda s: s["label"] == f"5 / {n}")
        op = page.locator(f'.ag-graph [id="{keyed["current"][0]}"]')  # in view, as checked
        box = steady_box(op)
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        inspected = poll(page, READ_STATE, lambda s: "rule" in s["inspector"])
        page.locator(".ag-graph").scroll_into_view_if_needed()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "browser_stepper.png"), full_page=True)

    currents = [s["current"] for s in states[1:]]
    assert all(len(c) == 1 for c in currents), currents  # exactly one op highlighted
    assert len({c[0] for c in currents}) == len(currents)  # a different one each step
    upstream = [s["upstream"] for s in states[1:]]
    assert all(upstream) and len(set(upstream)) > 1, upstream
    assert all(s["shown"] == [True] for s in states[1:]), states  # the op is in view
    assert keyed["label"] == f"5 / {n}", keyed
    assert f"op {keyed['current'][0]}" in inspected["inspector"], inspected


def test_every_text_of_the_stepper_is_readable_in_the_dark_theme(tmp_path):
    with lab_page(tmp_path, NOTEBOOK, theme="dark") as page:
        next_button = page.get_by_role("button", name="next ▶")
        next_button.wait_for(timeout=90_000)
        for k in range(1, 4):
            next_button.click()
            poll(page, READ_STATE, lambda s, k=k: s["label"].startswith(f"{k} /")
                 and s["upstream"] is not None)
        page.get_by_role("button", name="predict mode").click()  # its box and buttons too
        page.locator(".widget-dropdown select").first.wait_for(timeout=30_000)
        low = page.evaluate(CONTRAST)["low"]
        page.get_by_role("button", name="predict mode").click()
        page.get_by_role("button", name="last ▶|").click()  # every leaf's row highlighted
        poll(page, READ_STATE, lambda s: s["label"].split(" / ")[0] == s["label"].split(
            " / ")[-1])
        low += page.evaluate(CONTRAST)["low"]
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "browser_stepper_dark.png"), full_page=True)
    assert low == [], low  # WCAG AA: at least 4.5:1 for every text
