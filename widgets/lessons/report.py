"""What an engine experiment returns: a small table and a sentence, printable and stable.

Numbers are rounded to a few significant digits so that a notebook's stored output
does not change with the last bits of a platform's floating point.

>>> Report("Seeding with c", "Every gradient scales by c.", ("c", "ratio"), [(2.0, 2.0)])
Seeding with c
  c | ratio
  2 | 2
Every gradient scales by c.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..feedback import words


def cell(value) -> str:
    """A table cell: numbers to 4 significant digits, tiny errors as '< 1e-12'."""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        if value != 0 and abs(value) < 1e-12:
            return "< 1e-12"
        return words.number(value)
    if isinstance(value, tuple) and all(isinstance(v, int | np.integer) for v in value):
        return words.shape(value)
    return str(value)


class Report:
    """The outcome of an experiment: ``title``, table ``columns``/``rows``, ``summary``;
    ``data`` keeps the raw numbers for plots; ``supports`` says which way it came out."""

    def __init__(self, title: str, summary: str, columns: Sequence[str] = (),
                 rows: Sequence[Sequence[Any]] = (), *, data: dict | None = None,
                 supports: Any = None):
        self.title = title
        self.summary = summary
        self.columns = tuple(columns)
        self.rows = [tuple(r) for r in rows]
        self.data = data or {}
        self.supports = supports

    def table_lines(self) -> list[str]:
        if not self.columns:
            return []
        cells = [list(self.columns)] + [[cell(v) for v in r] for r in self.rows]
        widths = [max(len(row[i]) for row in cells) for i in range(len(self.columns))]
        return ["  " + " | ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
                for row in cells]

    def __repr__(self) -> str:
        return "\n".join([self.title, *self.table_lines(), self.summary])

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(cell(v))}</td>" for v in r) + "</tr>"
                       for r in self.rows)
        table = f"<table><tr>{head}</tr>{body}</table>" if self.columns else ""
        return (f"<div class='ag-experiment'><b>{html.escape(self.title)}</b>{table}"
                f"<p>{html.escape(self.summary)}</p></div>")
