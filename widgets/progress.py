"""``progress_bar(total, desc, unit)``: tqdm's progress bar for a lesson's training loop,
readable in a narrow notebook column, stored as the finished run.

>>> bar = progress_bar(total=200, desc="training", unit="step")   # doctest: +SKIP
>>> for step in range(200): bar.update(1)                          # doctest: +SKIP
>>> bar.close()                                                    # doctest: +SKIP

Outside a notebook it is ``tqdm.auto.tqdm`` itself. In a notebook it is tqdm's widget bar
(``tqdm.notebook.tqdm``) with two differences:

* **Width.** tqdm's bar gets what its texts leave of the row: with the rate, the times
  and a postfix beside it, about 15 px in a 900 px window, nothing at all in JupyterLab
  at 900 px with the file browser open. This bar keeps ``BAR_WIDTH`` and the text after
  it wraps to a line of its own when the row is too narrow.
* **What the notebook stores.** A widget's output carries a ``text/plain``, which is what
  a notebook shows wherever the widget cannot be drawn: every stored lesson, since
  ``scripts/regenerate_notebooks.py`` keeps no widget state. tqdm writes the bar as it
  stands when it is displayed, ``0%|          | 0/200``, above the results of a finished
  run. This bar's text is the finished bar, ``training: 100%|██████████| 200/200``, and
  ``close()`` rewrites the output (by its display id) with the bar as it ended, so a run
  cut short is stored where it stopped. nbval compares that text but applies no display
  update: it reads the text of the first display, which a finished run leaves as it was.
  So the text has no times or rate (they change from run to run) and no postfix (not
  known when the bar is first shown).
"""

from __future__ import annotations

from tqdm import auto, notebook

__all__ = ["BAR_WIDTH", "TEXT_FORMAT", "progress_bar"]

BAR_WIDTH = "16em"  # the bar itself, however narrow the column
TEXT_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt}"  # the stored text: no times, no postfix


def progress_bar(total: int, desc: str, unit: str = "it"):
    """A tqdm bar of ``total`` steps (``update``, ``set_postfix``, ``close``), as the
    module says."""
    if not issubclass(auto.tqdm, notebook.tqdm):
        return auto.tqdm(total=total, desc=desc, unit=unit)
    return _NotebookBar(total=total, desc=desc, unit=unit)


class _NotebookBar(notebook.tqdm):
    """tqdm's widget bar, displayed by this class with a display id and a ``text/plain``
    of the finished bar; ``close()`` updates that output with the bar as it ended."""

    def __init__(self, **kwargs):
        from IPython.display import display

        super().__init__(**kwargs, display=False)
        _, bar, _ = self.container.children
        bar.layout.width = bar.layout.min_width = BAR_WIDTH
        bar.layout.flex = "0 0 auto"
        self.container.layout.flex_flow = "row wrap"
        self.container.layout.align_items = "center"
        self.displayed = True
        self._output = display(self._bundle(self.total), raw=True, display_id=True)

    def _bundle(self, n: int) -> dict:
        """The widget's display data, its text the bar at ``n`` steps."""
        data = dict(self.container._repr_mimebundle_())
        data["text/plain"] = self.format_meter(**{**self.format_dict, "n": n,
                                                  "bar_format": TEXT_FORMAT})
        return data

    def close(self) -> None:
        if self.disable:  # closed already, or never shown
            return
        super().close()
        self._output.update(self._bundle(self.n), raw=True)
