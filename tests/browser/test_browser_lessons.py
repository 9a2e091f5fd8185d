"""A lesson opened fresh, as a learner opens it after the README's command: its stored
graph pictures show before any cell runs, and opening it does not mark it modified,
on any Python: the lessons were stored on one Python, whose version JupyterLab would
overwrite with the kernel's on opening; the project's JupyterLab extension
(widgets/labextension) holds that back until the learner changes the lesson, and then
records the kernel's version with the change.

Served by JupyterLab, shown in headless Chromium (see tests/helpers/lab_session.py). The
README's command trusts the lessons (``jupyter trust``): JupyterLab shows stored SVG
only in a trusted notebook. Opening must not change the notebook either: its stored
kernelspec is exactly what JupyterLab writes (scripts/regenerate_notebooks.py).
"""

from __future__ import annotations

import json
import platform
from pathlib import Path

import pytest
from lab_session import ROOT, SKIPS, lab_page, poll, run_all_cells

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


@pytest.mark.parametrize("lesson", ["02_forward_graph", "04_memory", "14_higher_order",
                                    "15_transformer_memory"])
def test_a_fresh_lesson_shows_its_pictures_and_stays_unmodified(tmp_path, lesson):
    """02 has the most graph pictures and a stored ForwardTracer; 04 a MemoryView; 14 a
    gradient's graph, a stepper on it and a matplotlib figure; 15 a GraphView with folded
    modules and matplotlib figures with their text alternatives."""
    path = ROOT / "notebooks" / f"{lesson}.ipynb"
    expected = stored_pictures(path)
    assert expected >= 2
    with lab_page(tmp_path, path, run_all=False, trust=True) as page:
        page.wait_for_timeout(1500)  # the kernel's info reply arrives after "Idle"
        state = page.evaluate(READ)
    assert state["dirty"] == [], state
    assert state["problems"] == [], state
    assert state["pictures"] == expected, state


SAVED_LANGUAGE = """async () => {
  const path = decodeURIComponent(location.pathname.split('/tree/')[1]);
  const reply = await fetch(`${location.origin}/api/contents/${path}?content=1`);
  return (await reply.json()).content.metadata.language_info;
}"""
DIRTY = "() => [...document.querySelectorAll('.lm-TabBar-tab.jp-mod-dirty')].length"


def save(page) -> int:
    """Save the open notebook with JupyterLab's own key, in command mode; on a busy machine
    a key press can land before the notebook has focus, so try again. Returns how many
    tabs are still marked modified."""
    dirty = 1
    for _ in range(3):
        page.locator(".jp-Notebook").first.click()
        page.keyboard.press("Escape")  # command mode: the key goes to the notebook
        page.keyboard.press("Control+s")
        dirty = poll(page, DIRTY, lambda n: n == 0, timeout=30)
        if dirty == 0:
            break
    return dirty


def stored_on_another_python(tmp_path: Path, lesson: str, *, marked: bool = True) -> Path:
    """A copy of ``lesson`` as if stored on Python 3.9.0 (no kernel here reports that
    version); with ``marked=False`` also without its lesson mark."""
    nb = json.loads((ROOT / "notebooks" / f"{lesson}.ipynb").read_text())
    nb["metadata"]["language_info"]["version"] = "3.9.0"
    if not marked:
        del nb["metadata"]["autograd_lessons"]
    path = tmp_path / f"{lesson}.ipynb"
    path.write_text(json.dumps(nb, indent=1))
    return path


def test_a_lesson_stored_on_another_python_opens_unmodified_and_records_it_when_run(
        tmp_path):
    path = stored_on_another_python(tmp_path, "01_start_here")
    with lab_page(tmp_path, path, run_all=False, trust=True) as page:
        page.wait_for_timeout(1500)  # the kernel's info reply arrives after "Idle"
        opened = page.evaluate(DIRTY)
        run_all_cells(page)
        ran = poll(page, DIRTY, lambda n: n == 1)
        saved = save(page)
        language = page.evaluate(SAVED_LANGUAGE)
    assert (opened, ran, saved) == (0, 1, 0)
    assert language["version"] == platform.python_version(), language


def test_other_notebooks_keep_jupyterlabs_own_behaviour(tmp_path):
    """Without the lesson mark, the version JupyterLab writes on opening marks the
    notebook modified, as it does everywhere: the extension touches lessons only."""
    path = stored_on_another_python(tmp_path, "01_start_here", marked=False)
    with lab_page(tmp_path, path, run_all=False, trust=True) as page:
        dirty = poll(page, DIRTY, lambda n: n == 1, timeout=30)
    assert dirty == 1
