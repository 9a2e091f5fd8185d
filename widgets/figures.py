"""``DescribedFigure``: a matplotlib ``Figure`` that carries its text alternative.

A notebook shows it as it shows any figure (IPython's inline backend makes the PNG
and the ``text/plain``, unchanged), and its output's metadata carries ``alt``
(``widgets.alt_text``), which the project's JupyterLab extension writes onto the
``<img>``. Build it as a ``Figure``, without pyplot, and set ``alt`` once the
picture is drawn (it may say what the figure shows).

>>> fig = DescribedFigure(figsize=(2, 1), alt="a blank figure")
>>> fig._repr_mimebundle_()
({}, {'image/png': {'alt': 'a blank figure'}})
"""

from __future__ import annotations

from matplotlib.figure import Figure

from .alt_text import alt_metadata

__all__ = ["DescribedFigure"]


class DescribedFigure(Figure):
    """A ``Figure`` with a text alternative ``alt`` for the notebook output."""

    def __init__(self, *args, alt: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.alt = alt

    def __repr__(self) -> str:
        """A plain ``Figure``'s text (``<Figure size 900x300 with 2 Axes>``): a notebook
        stores it as the output's ``text/plain``, which must not change."""
        return Figure.__repr__(self).replace(f"<{type(self).__name__} ", "<Figure ", 1)

    def _repr_mimebundle_(self, include=None, exclude=None) -> tuple[dict, dict]:
        """No data of its own (IPython's figure formatters make the PNG and the text,
        as for any figure), only the metadata that gives the PNG its ``alt``."""
        return {}, (alt_metadata(self.alt) if self.alt else {})
