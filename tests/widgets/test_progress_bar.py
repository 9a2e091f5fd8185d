"""progress_bar: in a notebook, the output a notebook stores reads as the bar of the run as
it ended (the finished bar, or where a run cut short stopped), never the 0% it starts at,
and the bar keeps its width in a narrow column; outside a notebook it is tqdm's own bar."""

from __future__ import annotations

import pytest
from tqdm.std import tqdm as text_tqdm

from widgets.progress import BAR_WIDTH, progress_bar

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("ipywidgets")

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

# cell source -> the text/plain a notebook stores for its bar
RUNS = {
    "finished": ("bar = progress_bar(total=50, desc='training', unit='step')\n"
                 "for i in range(50):\n"
                 "    bar.update(1)\n"
                 "    bar.set_postfix(loss=f'{1 / (i + 1):.3f}')\n"
                 "bar.close()\n"
                 "bar.close()  # twice: nothing more\n",
                 "training: 100%|██████████| 50/50"),
    "cut short": ("bar = progress_bar(total=50, desc='cut', unit='step')\n"
                  "bar.update(20)\n"
                  "bar.close()\n",
                  "cut:  40%|████      | 20/50"),
}


def test_a_notebook_stores_the_bar_as_the_run_ended():
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from widgets.progress import progress_bar")]
    nb.cells += [nbformat.v4.new_code_cell(source) for source, _ in RUNS.values()]
    nb.cells.append(nbformat.v4.new_code_cell(
        "_, shown, _ = bar.container.children\n"
        "print(shown.layout.width, shown.layout.min_width, bar.container.layout.flex_flow)"))
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    for (label, (_, text)), cell in zip(RUNS.items(), nb.cells[1:]):
        [output] = cell.outputs
        assert output.data["text/plain"] == text, label
        assert WIDGET_VIEW in output.data, label  # the live bar is tqdm's widget
    assert nb.cells[-1].outputs[0].text == f"{BAR_WIDTH} {BAR_WIDTH} row wrap\n"


def test_outside_a_notebook_it_is_tqdms_text_bar(capsys):
    bar = progress_bar(total=3, desc="training", unit="step")
    assert isinstance(bar, text_tqdm)
    bar.update(3)
    bar.close()
    assert "training: 100%" in capsys.readouterr().err
