"""The stepper at the sizes the lessons care about, in a real browser.

* About 1,000 nodes (tests/browser/thousand.ipynb): a click on a node until the
  inspector names it, and a → key until the picture's style block highlights the next
  op, each timed in the page (``performance.now()`` from the input event to the DOM
  change) over several tries. The medians are written to
  ``artifacts/browser_round_trips.json`` and printed; no time limit is asserted (shared
  machines are noisy), only that every round trip arrived.
* Lesson 12's residual CNN (tests/browser/capstone.ipynb), in JupyterLab's light and
  dark themes at a 1,100-px window: every step keeps the current op inside the visible
  canvas, and a screenshot of each theme is kept in ``artifacts/``.
"""

from __future__ import annotations

import json
import statistics

from lab_session import ARTIFACTS, ROOT, SKIPS, lab_page, poll, steady_box

from widgets import theme

pytestmark = SKIPS
THOUSAND = ROOT / "tests" / "browser" / "thousand.ipynb"
CAPSTONE = ROOT / "tests" / "browser" / "capstone.ipynb"
TRIES = 7


def rgb(hex_colour: str) -> str:
    """'#0072b2' as the browser reports a computed colour: 'rgb(0, 114, 178)'."""
    h = hex_colour.lstrip("#")
    return "rgb({}, {}, {})".format(*(int(h[i:i + 2], 16) for i in (0, 2, 4)))


# The op drawn with the "current" stroke (the theme's: black on the light card, white
# on the dark one), whether it lies inside the canvas's visible box, and the step label.
READ_IN = """() => {
  const graph = document.querySelector('.ag-graph');
  if (!graph) return null;
  const current = [...graph.querySelectorAll('g.node.op')].filter(g => {
      const shape = g.querySelector('ellipse, polygon, path');  // solid: not the selection
      const style = shape && getComputedStyle(shape);
      return style && style.stroke === 'STROKE' && style.strokeDasharray === 'none'; })
      .map(g => g.id);
  const view = document.querySelector('.ag-canvas-view').getBoundingClientRect();
  const shown = current.map(id => {
      const r = graph.querySelector(`[id="${id}"]`).getBoundingClientRect();
      return r.left >= view.left - 1 && r.right <= view.right + 1
          && r.top >= view.top - 1 && r.bottom <= view.bottom + 1; });
  const label = [...document.querySelectorAll('.widget-label')]
      .map(e => e.innerText).find(t => / \\/ /.test(t));
  const inspector = document.querySelector('.ag-inspector');
  return {current, shown, label, inspector: inspector ? inspector.innerText : ''};
}"""
READ_BY_THEME = {"light": READ_IN.replace("STROKE", rgb(theme.CURRENT)),
                 "dark": READ_IN.replace("STROKE", rgb(theme.DARK_THEME[theme.CURRENT]))}
READ = READ_BY_THEME["light"]

# Arms a timer: the next input event of ``kind`` starts it, and it stops at the first DOM
# change after which ``done`` (a JS expression) holds; the result lands in window.__trip.
ARM = """([kind, done]) => {
  window.__trip = null;
  let start = null;
  const check = new Function('return (' + done + ');');
  const observer = new MutationObserver(() => {
    if (start !== null && check()) { window.__trip = performance.now() - start;
                                     observer.disconnect(); }
  });
  observer.observe(document.body, {subtree: true, childList: true, characterData: true});
  // A change that lands without a DOM mutation the observer sees (the text was already
  // right, or an attribute changed) is caught on the next animation frames instead.
  const frame = () => {
    if (window.__trip !== null) return;
    if (check()) { window.__trip = performance.now() - start; observer.disconnect(); }
    else requestAnimationFrame(frame);
  };
  document.addEventListener(kind, () => {
      if (start === null) { start = performance.now(); requestAnimationFrame(frame); } },
                            {capture: true, once: true});
}"""


def timed(page, kind: str, done: str, act) -> float | None:
    page.evaluate(ARM, [kind, done])
    act()
    return poll(page, "() => window.__trip", lambda t: t is not None, timeout=30)


def test_click_and_step_round_trips_at_a_thousand_nodes(tmp_path):
    with lab_page(tmp_path, THOUSAND, width=1500) as page:
        page.get_by_role("button", name="next ▶").wait_for(timeout=120_000)
        start = poll(page, READ, lambda s: s is not None and s["label"] is not None)
        n = int(start["label"].split("/")[1])
        canvas = page.locator(".ag-canvas")
        canvas.focus()
        steps, clicks, clicked = [], [], []
        for k in range(1, TRIES + 1):
            steps.append(timed(page, "keydown", f"""(() => {{
                const l = [...document.querySelectorAll('.widget-label')]
                    .map(e => e.innerText).find(t => / \\/ /.test(t));
                const s = document.querySelector('.ag-canvas > style');
                return l === '{k} / {n}' && s && s.textContent.length > 0; }})()""",
                lambda: page.keyboard.press("ArrowRight")))
            state = poll(page, READ, lambda s, k=k: s["label"] == f"{k} / {n}" and s["current"])
            op = state["current"][0]
            box = steady_box(page.locator(f'.ag-graph [id="{op}"]'))
            clicks.append(timed(page, "pointerup",
                                f"(document.querySelector('.ag-inspector') || {{}})"
                                f".innerText?.includes('op {op}')",
                                lambda b=box: page.mouse.click(b["x"] + b["width"] / 2,
                                                               b["y"] + b["height"] / 2)))
            clicked.append((op, poll(page, READ, lambda s, op=op: f"op {op}" in s["inspector"])))
            canvas.focus()

    figures = {"nodes": "about 1,100", "tries": TRIES,
               "step_key_to_highlight_ms": steps, "click_to_inspector_ms": clicks}
    assert all(t is not None for t in steps + clicks), figures  # every round trip arrived
    figures["step_key_to_highlight_ms_median"] = statistics.median(steps)
    figures["click_to_inspector_ms_median"] = statistics.median(clicks)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "browser_round_trips.json").write_text(json.dumps(figures, indent=1))
    print(json.dumps(figures))
    assert all(f"op {op}" in s["inspector"] for op, s in clicked)


def walk_capstone(tmp_path, theme_name: str) -> list[dict]:
    with lab_page(tmp_path, CAPSTONE, width=1100, theme=theme_name) as page:
        page.get_by_role("button", name="next ▶").wait_for(timeout=120_000)
        read = READ_BY_THEME[theme_name]
        first = poll(page, read, lambda s: s is not None and s["label"] is not None)
        n = int(first["label"].split("/")[1])
        page.locator(".ag-canvas").focus()
        states = []
        for k in range(1, n + 1):
            page.keyboard.press("ArrowRight")
            states.append(poll(page, read, lambda s, k=k: s["label"] == f"{k} / {n}"
                               and len(s["current"]) == 1))
            if k == n // 2:
                page.locator(".ag-canvas").scroll_into_view_if_needed()
                page.screenshot(path=str(ARTIFACTS / f"browser_capstone_{theme_name}.png"),
                                full_page=True)
        return states


def test_the_capstone_stepper_keeps_the_current_op_in_view(tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    for theme_name in ("light", "dark"):
        (tmp_path / theme_name).mkdir()
        states = walk_capstone(tmp_path / theme_name, theme_name)
        ops = [s["current"] for s in states if s["current"]]
        assert len(ops) >= len(states) - 1, states  # the output's own step may show no op
        hidden = [s["label"] for s in states if s["current"] and s["shown"] != [True]]
        assert not hidden, f"{theme_name}: current op out of view at steps {hidden}"
