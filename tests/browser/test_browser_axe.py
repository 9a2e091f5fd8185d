"""axe-core finds no accessibility violation in the outputs of every lesson, in
JupyterLab's light and dark themes; no picture is wider than its column; and every
graph view opens with the graph's output in view, at 1400 and at 900 px.

Each lesson is opened in JupyterLab (tests/helpers/lab_session.py), light theme, 1400 px
wide, and every cell is run. Once its widgets have rendered, axe-core (bundled with the
Python package axe-playwright-python: nothing is fetched) checks the page restricted
to the outputs the project makes: every ``.jp-OutputArea-output`` that holds a widget
(``.jupyter-widgets``), a picture (``svg``, ``img``; in the lessons every picture is
drawn by the project: ``draw``, ``MemoryView``, the lessons' figures) or HTML (the
exercises' feedback, tables, progress). JupyterLab's own interface, and plain text
and tracebacks, which it styles, are not checked. The number of such outputs is at
least the number the stored lesson has.

Each output is scrolled into view and checked on its own (axe checks the contrast of
the text on screen only). Then the theme is switched to dark (Settings > Theme) and
every output is checked again, and every picture must be drawn through the dark
theme's filter (none left a bright panel). Last, the window is narrowed to 900 px: each graph
view must still show the output, and after its "fit" button, either the whole graph
or a sentence saying how many nodes are in view. The raw axe results, one per output
and theme, are kept in artifacts/axe_lessonNN.json, and a picture of each graph view
at 900 px in artifacts/canvas_lessonNN_K_900px.png.
"""

from __future__ import annotations

import json

import pytest
from lab_session import ARTIFACTS, ROOT, SKIPS, lab_page, poll, switch_theme

from widgets.theme import PICTURE_DARK_FILTER

pytestmark = SKIPS

# Each lesson, with a selector that shows up once its last widget has rendered (for
# the others, their outputs: the run has finished when the page shows them).
READY = {
    "01": "button:has-text('next ▶')",
    "12": ".jupyter-widgets img",
    "14": "button:has-text('next ▶')",
    "15": ".jupyter-widgets select",
}
LESSONS = {path.name[:2]: (path.name, READY.get(path.name[:2], ".jp-OutputArea-output"))
           for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))}
# The four lessons of READY show every kind of view and picture the project draws; CI
# checks them on every Python and JupyterLab it runs, the other lessons (marked
# every_lesson) on its main Python only (.ci/run: they add minutes, not kinds).
PARAMS = [pytest.param(lesson, marks=() if lesson in READY else pytest.mark.every_lesson)
          for lesson in sorted(LESSONS)]

# Mark the outputs axe checks (see the module's docstring), each with its number;
# returns how many there are and whether every picture among them has loaded.
MARK_OUTPUTS = """() => {
  const outputs = [...document.querySelectorAll('.jp-OutputArea-output')]
      .filter(o => o.querySelector('.jupyter-widgets, svg, img')
                   || o.classList.contains('jp-RenderedHTMLCommon'));
  outputs.forEach((o, k) => o.setAttribute('data-axe-scope', String(k)));
  const loaded = outputs.every(o => [...o.querySelectorAll('img')].every(i => i.complete));
  return {outputs: outputs.length, loaded};
}"""


def stored_outputs(name: str) -> int:
    """How many outputs of the stored lesson MARK_OUTPUTS would mark: a widget, a
    picture or HTML."""
    notebook = json.loads((ROOT / "notebooks" / name).read_text())
    kinds = ("application/vnd.jupyter.widget-view+json", "image/", "text/html")
    return sum(any(key.startswith(kinds) for key in output.get("data", {}))
               for cell in notebook["cells"] for output in cell.get("outputs", ()))


# Widget views still being created show this placeholder text.
PENDING = """() => [...document.querySelectorAll('.jp-OutputArea-output')]
    .some(o => /Loading widget/.test(o.innerText))"""
# A view that failed shows one of these instead of the widget (axe would pass it).
BROKEN = """() => [...document.querySelectorAll('.jp-OutputArea-output')].map(o => o.innerText)
    .filter(t => /Error displaying widget|javascript error/.test(t)).map(t => t.slice(0, 500))"""
# JupyterLab's <body> is 0 px tall with overflow: hidden; as <html>'s overflow is
# visible, the browser applies it to the window, and it clips nothing. axe takes it
# for a clipping box, counts all of JupyterLab as off screen and skips its contrast
# checks. "visible" on the body changes nothing on screen (JupyterLab's shell is
# absolutely positioned, exactly the window's size) and lets axe check every text.
UNCLIP_BODY = "() => { document.body.style.overflow = 'visible'; }"
# Every picture of an output, wider than the output's column? (A graph too large to
# read shrunk sits on the pan-and-zoom canvas, which is not an <img>.)
TOO_WIDE = """() => [...document.querySelectorAll('.jp-OutputArea-output img')]
    .filter(i => i.getBoundingClientRect().width >
                 i.closest('.jp-OutputArea-output').clientWidth + 1)
    .map(i => `${i.alt || i.src.slice(0, 40)}: ${Math.round(i.getBoundingClientRect().width)}`
              + ` px in ${i.closest('.jp-OutputArea-output').clientWidth} px`)"""
# Each graph view (.ag-canvas) that draws the graph's output node: is its centre inside
# the view's box? And the view's "fit" outcome: the whole picture, or part of it with a
# sentence saying how much.
OUTPUT_IN_VIEW = """() => [...document.querySelectorAll('.ag-canvas')]
    .filter(c => c.querySelector('g.node.output')).map(c => {
      const v = c.querySelector('.ag-canvas-view').getBoundingClientRect();
      const r = c.querySelector('g.node.output').getBoundingClientRect();
      const x = r.left + r.width / 2, y = r.top + r.height / 2;
      return {inside: x >= v.left && x <= v.right && y >= v.top && y <= v.bottom,
              fit: c.dataset.fit || '',
              note: (c.querySelector('.ag-canvas-note') || {}).innerText || ''};
    })"""
PRESS_FIT = """() => [...document.querySelectorAll('.ag-canvas')].forEach(c =>
    [...c.querySelectorAll('button')].find(b => b.innerText === 'fit').click())"""
# In the dark theme: every picture of an output that is not drawn through the dark
# filter (widgets/theme.py's PICTURE_DARK_FILTER, which the lessons' extension applies to
# the project's pictures), so would stay a bright panel.
NOT_DARKENED = """filter => [...document.querySelectorAll('.jp-OutputArea-output img')]
    .filter(i => getComputedStyle(i).filter !== filter)
    .map(i => (i.alt || i.src).slice(0, 60))"""
SHOW = """k => document.querySelector(`[data-axe-scope="${k}"]`)
    .scrollIntoView({block: 'start'})"""


def describe(violations: list[dict]) -> str:
    """One paragraph per axe violation: its rule id, impact, help text and the targets
    of the nodes it failed on, with axe's summary of what is wrong with each."""
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']} [{len(v['nodes'])} node(s)]")
        for node in v["nodes"]:
            summary = " ".join(node.get("failureSummary", "").split())
            lines.append(f"    {' > '.join(map(str, node['target']))}: {summary[:300]}")
    return "\n".join(lines)


def merged(results: list[dict]) -> list[dict]:
    """The violations of several axe runs, one entry per rule with all its nodes."""
    rules: dict[str, dict] = {}
    for result in results:
        for v in result["violations"]:
            rules.setdefault(v["id"], {**v, "nodes": []})["nodes"].extend(v["nodes"])
    return list(rules.values())


@pytest.mark.parametrize("lesson", PARAMS)
def test_widget_outputs_have_no_axe_violations(tmp_path, lesson):
    from axe_playwright_python.sync_playwright import Axe

    name, ready = LESSONS[lesson]
    axe = Axe()
    with lab_page(tmp_path, ROOT / "notebooks" / name, width=1400, theme="light") as page:
        page.locator(ready).first.wait_for(timeout=120_000)
        poll(page, PENDING, lambda pending: not pending, timeout=60)
        page.wait_for_timeout(500)  # a view's last restyle lands after it shows
        broken = page.evaluate(BROKEN)
        too_wide = page.evaluate(TOO_WIDE)
        # Wait for the outputs the assertion below asks for, not only for the pictures of
        # those shown so far: on a loaded machine the last view can appear seconds later.
        expected = stored_outputs(name)
        marked = poll(page, MARK_OUTPUTS,
                      lambda m: m["loaded"] and m["outputs"] >= expected, timeout=60)
        # One output at a time, scrolled into view: axe checks the contrast of text on
        # screen only (the notebook scrolls inside a window 1100 px tall).
        page.evaluate(UNCLIP_BODY)
        results = []
        for theme in ("light", "dark"):
            if theme == "dark":
                switch_theme(page, "dark")
                page.wait_for_timeout(500)
                bright = page.evaluate(NOT_DARKENED, PICTURE_DARK_FILTER)
            for k in range(marked["outputs"]):
                page.evaluate(SHOW, k)
                page.wait_for_timeout(100)
                scope = {"include": [f'[data-axe-scope="{k}"]']}
                results.append({"output": k, "theme": theme,
                                **axe.run(page, context=scope).response})
        opened = page.evaluate(OUTPUT_IN_VIEW)
        page.set_viewport_size({"width": 900, "height": 1100})
        page.wait_for_timeout(1000)  # the views refit to their narrower boxes
        narrow = page.evaluate(OUTPUT_IN_VIEW)
        page.evaluate(PRESS_FIT)
        page.wait_for_timeout(300)
        fitted = page.evaluate(OUTPUT_IN_VIEW)
        ARTIFACTS.mkdir(exist_ok=True)
        for k in range(len(fitted)):  # to be looked at: each graph view at 900 px
            canvas = page.locator(".ag-canvas").nth(k)
            canvas.scroll_into_view_if_needed()
            canvas.screenshot(path=str(ARTIFACTS / f"canvas_lesson{lesson}_{k}_900px.png"))
    (ARTIFACTS / f"axe_lesson{lesson}.json").write_text(json.dumps(results, indent=1))
    assert not broken, broken
    assert not too_wide, f"pictures wider than their column: {too_wide}"
    assert not bright, f"pictures left light in the dark theme: {bright}"
    assert marked["outputs"] >= max(expected, 1), (marked, expected)
    assert len(results) == 2 * marked["outputs"]
    assert all(r["passes"] for r in results), "axe checked nothing in some output"
    # Every graph view opens with the output in view, and keeps it there at 900 px; "fit"
    # shows the whole graph or says how much of it is in view.
    assert len(opened) == len(narrow) == len(fitted) >= (1 if lesson in ("12", "15") else 0)
    assert all(v["inside"] for v in opened), f"at 1400 px: {opened}"
    assert all(v["inside"] for v in narrow), f"at 900 px: {narrow}"
    assert all(v["inside"] and (v["fit"] == "whole" or
                                (v["fit"] == "partial" and "nodes in view" in v["note"]))
               for v in fitted), f"after fit: {fitted}"
    violations = merged(results)
    assert not violations, (
        f"lesson {lesson}: axe-core {results[0]['testEngine']['version']} found "
        f"{len(violations)} violated rule(s) in the outputs (light and dark themes):\n"
        + describe(violations))
