"""A lesson opened fresh, as a learner opens it after the README's command: its stored
graph pictures show before any cell runs, and opening it does not mark it modified.

Served by JupyterLab, shown in headless Chromium (see tests/helpers/lab_session.py). The
README's command trusts the lessons (``jupyter trust``): JupyterLab shows stored SVG
only in a trusted notebook. Opening must not change the notebook either: its stored
kernelspec is exactly what JupyterLab writes (scripts/regenerate_notebooks.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lab_session import ROOT, SKIPS, lab_page

pytestmark = SKIPS

READ = """() => ({
  dirty: [...document.querySelectorAll('.lm-TabBar-tab.jp-mod-dirty')].map(t => t.innerText),
  pictures: document.querySelectorAll('.jp-OutputArea-output.jp-RenderedSVG img, '
      + '.jp-OutputArea-output.jp-RenderedImage img').length,
  problems: [...document.querySelectorAll('.jp-OutputArea-output')].map(o => o.innerText)
      .filter(t => /<SVG picture|Error displaying widget/.test(t)),
})"""


def stored_pictures(path: Path) -> int:
    nb = json.loads(path.read_text())
    return sum(bool({"image/svg+xml", "image/png"} & set(out.get("data", {})))
               for cell in nb["cells"] for out in cell.get("outputs", ()))


@pytest.mark.parametrize("lesson", ["02_forward_graph", "04_memory"])
def test_a_fresh_lesson_shows_its_pictures_and_stays_unmodified(tmp_path, lesson):
    """02 has the most graph pictures and a stored ForwardTracer; 04 a MemoryView."""
    path = ROOT / "notebooks" / f"{lesson}.ipynb"
    expected = stored_pictures(path)
    assert expected >= 2
    with lab_page(tmp_path, path, run_all=False, trust=True) as page:
        page.wait_for_timeout(1500)  # the kernel's info reply arrives after "Idle"
        state = page.evaluate(READ)
    assert state["dirty"] == [], state
    assert state["problems"] == [], state
    assert state["pictures"] == expected, state
