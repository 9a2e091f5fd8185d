"""A per-notebook progress summary: which of this lesson's exercises were checked, and
with what result (the last check of each, in this kernel).

>>> progress = Progress("G1", "G2", title="Lesson 1")      # doctest: +SKIP
>>> progress                        # doctest: +SKIP
Lesson 1: 1 of 2 exercises correct so far.
  ✔ G1 · ...
  · G2 · ... (not checked yet)
"""

from __future__ import annotations

import html

from .exercise import last_results, registry
from .result import MARK_OK, MARK_WRONG


class Progress:
    """Progress over a fixed list of exercise IDs. Never says "all correct" while one is
    wrong or unchecked."""

    def __init__(self, *ids: str, title: str = "This notebook"):
        known = registry()
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise KeyError(f"unknown exercise IDs {unknown}; known: {', '.join(known)}")
        self.ids = tuple(ids)
        self.title = title

    def status(self) -> dict[str, str]:
        """ID -> "correct", "wrong" or "not checked"."""
        last = last_results()
        return {i: "not checked" if i not in last else "correct" if last[i].ok else "wrong"
                for i in self.ids}

    @property
    def correct(self) -> int:
        return sum(s == "correct" for s in self.status().values())

    @property
    def complete(self) -> bool:
        """True only when every exercise's last check was correct."""
        return self.correct == len(self.ids)

    def summary(self) -> str:
        n = len(self.ids)
        if self.complete:
            return f"{self.title}: all {n} exercises correct."
        return f"{self.title}: {self.correct} of {n} exercises correct so far."

    def lines(self) -> list[str]:
        exercises = registry()
        marks = {"correct": MARK_OK, "wrong": MARK_WRONG, "not checked": "·"}
        notes = {"correct": "", "wrong": " (last check failed)",
                 "not checked": " (not checked yet)"}
        return [self.summary()] + [f"  {marks[s]} {exercises[i].heading}{notes[s]}"
                                   for i, s in self.status().items()]

    def __repr__(self) -> str:
        return "\n".join(self.lines())

    def _repr_html_(self) -> str:
        first, *rest = self.lines()
        items = "".join(f"<li style='list-style:none'>{html.escape(r.strip())}</li>"
                        for r in rest)
        return f"<div class='ag-progress'><b>{html.escape(first)}</b><ul>{items}</ul></div>"

    def widget(self):
        """An HTML widget with a Refresh button that re-reads the results."""
        import ipywidgets as w

        view = w.HTML(self._repr_html_())
        refresh = w.Button(description="Refresh")
        refresh.on_click(lambda _: setattr(view, "value", self._repr_html_()))
        return w.VBox([view, refresh])
