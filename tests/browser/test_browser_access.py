"""The stepper as a learner without a mouse, or with a narrow window, meets it.

* Lesson 12's residual CNN (tests/browser/capstone.ipynb runs the lesson's model on
  the lesson's digits) at 1400-px and 900-px windows, light and dark: after a click on
  a node its inspector is inside the viewport; no text of the panels is clipped; no
  number is split across two lines; the picture takes at least 60 % of the output's
  width; at "fit" every label of the picture is drawn at 9 px or more. A screenshot of
  each (inspector open) is kept in ``artifacts/``.
* Lesson 01's stepper by keyboard only: into the picture with Shift+Tab from its first
  button, Home and → step, ↑ moves the cursor to a node, Enter opens its inspector (and takes
  the focus there), Escape closes it and gives the focus back, T opens the table view
  and T closes it, then Shift+Tab goes back through the named step controls (slider,
  stop, play, last, next, ...); at each stage the focused element shows a visible focus
  ring, and a screenshot is kept.
"""

from __future__ import annotations

from lab_session import ARTIFACTS, ROOT, SKIPS, lab_page, poll, steady_box

pytestmark = SKIPS
CAPSTONE = ROOT / "tests" / "browser" / "capstone.ipynb"
LESSON_01 = ROOT / "notebooks" / "01_start_here.ipynb"

# Layout facts of the first stepper's output, measured by the browser.
LAYOUT = r"""() => {
  const canvas = document.querySelector('.ag-canvas');
  const output = canvas.closest('.jp-OutputArea-output');
  const out = output.getBoundingClientRect();
  const view = canvas.querySelector('.ag-canvas-view').getBoundingClientRect();
  const detail = canvas.querySelector('.ag-canvas-detail');
  const shown = detail && !detail.hidden ? detail.getBoundingClientRect() : null;
  // clipped: an element whose content is wider than its box (the picture pans inside
  // its view by design: the view itself and what it pans are left out)
  const clipped = [];
  for (const el of output.querySelectorAll('*')) {
    if (el.matches('.ag-canvas-view')) continue;
    if (el.closest('.ag-canvas-stage, .ag-canvas-mini, .ag-canvas-live')) continue;
    if (!el.offsetParent || el.clientWidth === 0) continue;
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible')
      clipped.push(`${el.tagName}.${el.className} ${el.scrollWidth}>${el.clientWidth}`);
  }
  // split: a number (like -0.01943 or 5.178e-05) whose characters lie on two lines
  const split = [];
  const walker = document.createTreeWalker(output, NodeFilter.SHOW_TEXT);
  for (let node; (node = walker.nextNode());) {
    const el = node.parentElement;
    if (!el.offsetParent || el.closest('.ag-canvas-stage, .ag-canvas-mini, .ag-canvas-live'))
      continue;
    for (const m of node.textContent.matchAll(/-?\d+(\.\d+)?(e[-+]?\d+)?/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0)
                           .map(r => Math.round(r.top)));
      if (tops.size > 1) split.push(m[0]);
    }
  }
  // labels: each text's font size in screen px (its size times the picture's scale)
  const svg = canvas.querySelector('.ag-canvas-stage svg');
  const perUnit = svg.getScreenCTM().a;
  const sizes = [...svg.querySelectorAll('text')]
      .map(t => parseFloat(t.getAttribute('font-size')) * perUnit);
  return {viewport: innerHeight, output: out.width, picture: view.width,
          inspector: shown && {top: shown.top, bottom: shown.bottom},
          clipped, split, smallest: Math.min(...sizes), labels: sizes.length,
          label: [...document.querySelectorAll('.widget-label')].map(e => e.innerText)
                 .find(t => / \/ /.test(t))};
}"""

# The node op whose box lies inside the visible canvas (the first such).
VISIBLE_OP = """() => {
  const v = document.querySelector('.ag-canvas-view').getBoundingClientRect();
  const d = document.querySelector('.ag-canvas-detail');
  const cover = d && !d.hidden ? d.getBoundingClientRect().left : v.right;
  const op = [...document.querySelectorAll('.ag-canvas-stage g.node.op')].find(g => {
    const r = g.getBoundingClientRect();
    return r.left > v.left && r.right < Math.min(v.right, cover) && r.top > v.top
        && r.bottom < v.bottom; });
  return op ? op.id : null;
}"""


def measure_with_inspector(page) -> dict:
    """Fit the picture, click a visible op and measure once its inspector is shown."""
    canvas = page.locator(".ag-canvas").first
    canvas.scroll_into_view_if_needed()
    canvas.focus()
    page.keyboard.press("0")  # fit
    page.wait_for_timeout(300)
    fitted = page.evaluate(LAYOUT)
    op = poll(page, VISIBLE_OP, lambda v: v is not None, timeout=10)
    assert op is not None, "no op of the picture is inside the visible canvas"
    box = steady_box(page.locator(f'.ag-canvas-stage [id="{op}"]'))
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    poll(page, "() => document.querySelector('.ag-canvas-detail-body').innerText",
         lambda t: f"op {op}" in t)
    page.wait_for_timeout(300)
    opened = page.evaluate(LAYOUT)
    return {"fit": fitted, "open": opened, "op": op}


def check_layout(m: dict, where: str) -> None:
    fit, opened = m["fit"], m["open"]
    assert fit["labels"] > 50 and fit["smallest"] >= 9 - 0.01, (where, fit["smallest"])
    assert opened["picture"] >= 0.6 * opened["output"], (where, opened)
    inspector = opened["inspector"]
    assert inspector is not None and 0 <= inspector["top"] < opened["viewport"], (where, opened)
    assert not opened["clipped"], (where, opened["clipped"])
    assert not opened["split"], (where, opened["split"])


def test_lesson_12s_stepper_at_1400_and_900_px_in_both_themes(tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    for theme_name in ("light", "dark"):
        (tmp_path / theme_name).mkdir()
        with lab_page(tmp_path / theme_name, CAPSTONE, width=1400, height=1000,
                      theme=theme_name) as page:
            page.get_by_role("button", name="next ▶").wait_for(timeout=120_000)
            page.locator(".ag-canvas").first.focus()
            for _ in range(5):
                page.keyboard.press("ArrowRight")
            poll(page, LAYOUT, lambda s: s["label"] is not None and s["label"].startswith("5 /"))
            for width in (1400, 900):
                page.set_viewport_size({"width": width, "height": 1000})
                page.wait_for_timeout(500)
                m = measure_with_inspector(page)
                page.screenshot(path=str(ARTIFACTS / f"browser_access_{width}_{theme_name}.png"))
                check_layout(m, f"{width} px, {theme_name}")
                page.keyboard.press("Escape")


# The focused element, whether it shows a focus indicator, and the canvas's state.
FOCUS = """() => {
  const a = document.activeElement;
  const canvas = document.querySelector('.ag-canvas');
  const style = getComputedStyle(a);
  const view = getComputedStyle(canvas.querySelector('.ag-canvas-view'));
  const ring = canvas.querySelector('.ag-canvas-cursor');
  return {
    focused: a === canvas ? 'canvas' : a.className,
    visible: a.matches(':focus-visible'),
    indicator: a === canvas ? view.boxShadow !== 'none'
                            : style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
    cursor: canvas.dataset.cursor || '', ring: !ring.hidden,
    ringWidth: parseFloat(getComputedStyle(ring).borderTopWidth),
    detail: canvas.dataset.detail, table: canvas.dataset.table,
    label: [...document.querySelectorAll('.widget-label')].map(e => e.innerText)
           .find(t => / \\/ /.test(t)),
    live: canvas.querySelector('.ag-canvas-live').textContent,
  };
}"""


# The focused control: its name and whether it shows a focus ring of 2 px or more.
CONTROL = """() => {
  const a = document.activeElement, style = getComputedStyle(a);
  return {name: a.getAttribute('aria-label') || a.innerText || a.tagName,
          visible: a.matches(':focus-visible'),
          ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2};
}"""


def test_lesson_01s_sweep_by_keyboard_only(tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    seen = {}
    with lab_page(tmp_path, LESSON_01, width=1400, height=1000) as page:
        page.get_by_role("button", name="next ▶").first.wait_for(timeout=120_000)
        canvas = page.locator(".ag-canvas").first
        canvas.scroll_into_view_if_needed()
        canvas.locator(".ag-canvas-button").first.focus()
        page.keyboard.press("Shift+Tab")  # the picture is the tab stop before its buttons
        seen["into"] = page.evaluate(FOCUS)
        n = int(seen["into"]["label"].split("/")[1])
        page.keyboard.press("Home")  # the lesson's own cells left it at some step
        poll(page, FOCUS, lambda s: s["label"] == f"0 / {n}")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        seen["stepped"] = poll(page, FOCUS, lambda s: s["label"] == f"2 / {n}"
                               and s["live"].startswith("Step 2"))
        page.keyboard.press("ArrowUp")
        seen["cursor"] = poll(page, FOCUS, lambda s: s["cursor"] != "")
        page.screenshot(path=str(ARTIFACTS / "browser_keyboard_cursor.png"))
        page.keyboard.press("Enter")
        seen["inspector"] = poll(page, FOCUS, lambda s: s["detail"] == "shown"
                                 and s["focused"] == "ag-canvas-detail")
        inspected = canvas.locator(".ag-canvas-detail-body").inner_text()
        page.screenshot(path=str(ARTIFACTS / "browser_keyboard_inspector.png"))
        page.keyboard.press("Escape")
        seen["closed"] = poll(page, FOCUS, lambda s: s["detail"] == "hidden")
        page.keyboard.press("t")
        seen["table"] = poll(page, FOCUS, lambda s: s["table"] == "shown")
        table = poll(page, "() => document.querySelector('.ag-canvas-table').innerText",
                     lambda t: "gradient so far" in t)  # the kernel fills it
        page.screenshot(path=str(ARTIFACTS / "browser_keyboard_table.png"))
        page.keyboard.press("t")
        seen["back"] = poll(page, FOCUS, lambda s: s["table"] == "hidden")
        # back through the step controls above the picture, one Shift+Tab at a time
        controls = []
        for _ in range(6):
            page.keyboard.press("Shift+Tab")
            controls.append(page.evaluate(CONTROL))
        page.screenshot(path=str(ARTIFACTS / "browser_keyboard_controls.png"))

    for stage, state in seen.items():
        assert state["visible"] and state["indicator"], (stage, state)
    assert seen["into"]["focused"] == "canvas"
    assert seen["stepped"]["live"].startswith(f"Step 2 of {n}:"), seen["stepped"]
    assert seen["cursor"]["ring"] and seen["cursor"]["ringWidth"] >= 3, seen["cursor"]
    assert seen["cursor"]["cursor"] in inspected, inspected[:200]
    assert seen["closed"]["focused"] == "canvas" and seen["back"]["focused"] == "canvas"
    assert seen["table"]["focused"] == "ag-canvas-table"
    assert f"After step 2 of {n}" in table and "gradient so far" in table
    names = [c["name"] for c in controls]  # "■ stop": the mark is hidden from readers
    for expected in ("step", "stop", "play", "last ▶|", "next ▶"):
        assert any(name.endswith(expected) for name in names), (expected, names)
    assert all(c["visible"] and c["ring"] for c in controls), controls
