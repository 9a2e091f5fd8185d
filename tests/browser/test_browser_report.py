"""The class report in Chromium: axe finds nothing in either theme, it fits every width
without the page scrolling sideways, and a keyboard reaches every table.

A report over a small class (exported progress for lessons 02, 05 and 06, with every
group of the chart present: solved, after the solution, partly, not) is written with the
course command's own function and opened from disk in Debian's chromium, light and dark
(``prefers-color-scheme``), at 1,400, 900 and 480 px. Screenshots go to artifacts/.
"""

from __future__ import annotations

import json

import pytest
from lab_session import ARTIFACTS, SKIPS, browser_page

from widgets.course.class_report import write_report
from widgets.course.report_inputs import read_folder

pytestmark = SKIPS


def record(solved: bool, after: bool = False, partly: bool = False) -> dict:
    ok = solved or partly
    parts = {"c:dA": {"ok": ok, "ever": ok}, "c:dB": {"ok": solved, "ever": solved}}
    return {"parts": parts, "misses": {"tries:": 0 if solved else 2,
                                       "mistake:c:dB:transpose": 1},
            "solved": "2026-12-06T10:00:00Z" if solved else None,
            "solution_seen": "2026-12-06T09:00:00Z" if after else None,
            "after_solution": after}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder, out = tmp_path_factory.mktemp("in"), tmp_path_factory.mktemp("out")
    kinds = [dict(solved=True), dict(solved=True, after=True), dict(solved=False, partly=True),
             dict(solved=False)]
    for k in range(12):
        items = {item: record(**kinds[(k + n) % 4])
                 for n, item in enumerate(["G4", "L1", "G5", "G6", "G9", "G12", "G2", "B1"])}
        (folder / f"learner{k:02}.json").write_text(json.dumps({"items": items}))
    (folder / "broken.json").write_text('{"items": {"G6": ')
    learners, said = read_folder(folder)
    return write_report(learners, out, names=True, skipped=said)


# the page scrolls sideways, or a picture is wider than the page's column
OVERFLOW = """() => ({
  page: document.scrollingElement.scrollWidth - window.innerWidth,
  pictures: [...document.images].filter(i => i.getBoundingClientRect().right >
                                             document.body.getBoundingClientRect().right + 1)
                                .map(i => i.alt.slice(0, 30)),
  loaded: [...document.images].every(i => i.complete && i.naturalWidth > 0),
})"""


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("width", [1400, 900, 480])
def test_the_report_fits_and_axe_finds_nothing(report, theme, width):
    from axe_playwright_python.sync_playwright import Axe

    with browser_page(width=width, height=900, color_scheme=theme) as page:
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        fit = page.evaluate(OVERFLOW)
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        shown = page.evaluate("[...document.images].map(i => i.currentSrc.split('/').pop())")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"report_{theme}_{width}.png"), full_page=True)
        result = Axe().run(page).response
    assert fit["loaded"] and fit["page"] <= 0 and not fit["pictures"], fit
    assert background == ("rgb(30, 30, 30)" if theme == "dark" else "rgb(255, 255, 255)")
    assert all(name.endswith("_dark.png") == (theme == "dark") for name in shown), shown
    assert result["passes"] and not result["violations"], [
        (v["id"], [n["target"] for n in v["nodes"]]) for v in result["violations"]]


def test_the_keyboard_reaches_each_table_and_scrolls_it(report):
    with browser_page(width=480, height=900) as page:
        page.goto(report.as_uri())
        regions = page.locator(".scroll").count()
        reached = []
        for _ in range(regions):
            page.keyboard.press("Tab")
            reached.append(page.evaluate("document.activeElement.getAttribute('aria-label')"))
        for _ in range(5):  # a focused scroll region scrolls by keyboard
            page.keyboard.press("ArrowRight")
        page.wait_for_function("document.activeElement.scrollLeft > 0", timeout=5000)
        scrolled = page.evaluate("document.activeElement.scrollLeft")
        wide = page.evaluate("document.activeElement.scrollWidth > "
                             "document.activeElement.clientWidth")
    assert regions == 3 and reached == ["lesson 02, item by item", "lesson 05, item by item",
                                        "lesson 06, item by item"], reached
    assert wide and scrolled > 0
