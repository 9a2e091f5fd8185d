"""axe-core finds no accessibility violation in the widget outputs of lessons 01 and 12,
and no picture there is wider than its column.

Each lesson is opened in JupyterLab (tests/helpers/lab_session.py), light theme, 1400 px
wide, and every cell is run. Once its widgets have rendered, axe-core (bundled with the
Python package axe-playwright-python: nothing is fetched) checks the page restricted
to the outputs the project makes: every ``.jp-OutputArea-output`` that holds a widget
(``.jupyter-widgets``) or a picture (``svg``, ``img``; in these lessons every picture is
drawn by the project: ``draw``, ``MemoryView``, the lessons' figures). JupyterLab's own
interface is not checked. Lesson 01 shows a BackwardStepper (its canvas and side
panels), ``draw()``'s picture and an exercise widget; lesson 12 a MemoryView, a tqdm
progress bar, graph pictures and figures.

Each output is scrolled into view and checked on its own (axe checks the contrast of
the text on screen only). The raw axe results, one per output (``output``: its
number, in page order), are kept in artifacts/axe_lesson01.json and
artifacts/axe_lesson12.json.
"""

from __future__ import annotations

import json

import pytest
from lab_session import ARTIFACTS, ROOT, SKIPS, lab_page, poll

pytestmark = SKIPS

# The lessons, each with a selector that shows up once its last widget has rendered.
LESSONS = {
    "01": ("01_start_here.ipynb", "button:has-text('next ▶')"),
    "12": ("12_capstone.ipynb", ".jupyter-widgets img"),
    "14": ("14_higher_order.ipynb", "button:has-text('next ▶')"),
    "15": ("15_transformer_memory.ipynb", ".jupyter-widgets select"),
}

# Mark the outputs axe checks (see the module's docstring), each with its number;
# returns how many there are and whether every picture among them has loaded.
MARK_OUTPUTS = """() => {
  const outputs = [...document.querySelectorAll('.jp-OutputArea-output')]
      .filter(o => o.querySelector('.jupyter-widgets, svg, img'));
  outputs.forEach((o, k) => o.setAttribute('data-axe-scope', String(k)));
  const loaded = outputs.every(o => [...o.querySelectorAll('img')].every(i => i.complete));
  return {outputs: outputs.length, loaded};
}"""
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


@pytest.mark.parametrize("lesson", sorted(LESSONS))
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
        marked = poll(page, MARK_OUTPUTS, lambda m: m["loaded"] and m["outputs"] >= 3,
                      timeout=60)
        # One output at a time, scrolled into view: axe checks the contrast of text on
        # screen only (the notebook scrolls inside a window 1100 px tall).
        page.evaluate(UNCLIP_BODY)
        results = []
        for k in range(marked["outputs"]):
            page.evaluate(SHOW, k)
            page.wait_for_timeout(100)
            scope = {"include": [f'[data-axe-scope="{k}"]']}
            results.append({"output": k, **axe.run(page, context=scope).response})
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"axe_lesson{lesson}.json").write_text(json.dumps(results, indent=1))
    assert not broken, broken
    assert not too_wide, f"pictures wider than their column: {too_wide}"
    assert marked["outputs"] >= 3, marked
    assert all(r["passes"] for r in results), "axe checked nothing in some output"
    violations = merged(results)
    assert not violations, (
        f"lesson {lesson}: axe-core {results[0]['testEngine']['version']} found "
        f"{len(violations)} violated rule(s) in the widget outputs:\n" + describe(violations))
