"""What a check gives back: a :class:`Result` whose printed form *is* the feedback.

A Result says whether the answer is right (``ok``), in sentences a learner reads
(``message``), and, for tests and widgets, a short machine code of what was
diagnosed (``diagnosis``: ``"correct"``, ``"transpose"``, ``"batch_factor"`` ...).
A check with several parts (dW2, db2, delta) returns one Result with ``parts``;
it is ``ok`` only when every part is, and its summary never says "all correct"
while one part failed.

Hints and solutions are never shown unless asked for: ``result.hint()``,
``result.solution()``, or ``check(..., hint=True)``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

MARK_OK = "✔"
MARK_WRONG = "✘"
MAX_MESSAGE = 600  # characters: every reply is a few sentences, whatever was passed in


class Text(str):
    """A piece of teaching text (a hint, a solution, a snippet) that displays as itself.

    It is a plain ``str``; calling it returns it, so ``ex.hint`` and ``ex.hint()``
    both work in a notebook.

    >>> Text("Sum over the batch axis.")
    Sum over the batch axis.
    """

    def __repr__(self) -> str:
        return str(self)

    def __call__(self) -> Text:
        return self

    def _repr_html_(self) -> str:
        return f"<pre class='ag-exercise-text'>{html.escape(str(self))}</pre>"


class Result:
    """The outcome of one check, or of a check made of several parts.

    >>> r = Result(False, "Your answer is the transpose of the right one.", name="dA",
    ...            diagnosis="transpose", hint="dA must have A's shape.")
    >>> r.ok, r.diagnosis
    (False, 'transpose')
    >>> r
    ✘ dA: Your answer is the transpose of the right one.
      (A hint is available: call .hint() on this result.)
    """

    def __init__(self, ok: bool, message: str, *, name: str = "", diagnosis: str | None = None,
                 hint: str = "", solution: str = "", parts: Sequence[Result] = (),
                 title: str = "", show_hint: bool = False, details: dict | None = None):
        self.ok = bool(ok)
        message = str(message)
        if len(message) > MAX_MESSAGE:
            message = message[:MAX_MESSAGE - 3] + "..."
        self.message = message
        self.name = name
        self.diagnosis = diagnosis or ("correct" if ok else "wrong")
        self._hint = hint
        self._solution = solution
        self.parts = tuple(parts)
        self.title = title
        self.show_hint = show_hint
        self.details = details or {}
        self._on_reveal = None

    @classmethod
    def combine(cls, parts: Sequence[Result], *, title: str = "", hint: str = "",
                solution: str = "", show_hint: bool = False) -> Result:
        """One Result from several: ok only if every part is ok."""
        parts = tuple(parts)
        if len(parts) == 1:
            only = parts[0]
            return cls(only.ok, only.message, name=only.name, diagnosis=only.diagnosis,
                       hint=hint or only._hint, solution=solution or only._solution,
                       show_hint=show_hint, details=only.details, title=title)
        n_ok = sum(p.ok for p in parts)
        if not parts:
            raise ValueError("Result.combine needs at least one part")
        if n_ok == len(parts):
            summary = f"All {len(parts)} parts correct."
        else:
            summary = (f"{n_ok} of {len(parts)} parts correct; the ones marked {MARK_WRONG} "
                       "need another look.")
        hints = [p._hint for p in parts if not p.ok and p._hint]
        return cls(n_ok == len(parts), summary, parts=parts, title=title,
                   hint=hint or "\n".join(dict.fromkeys(hints)), solution=solution,
                   show_hint=show_hint, diagnosis="correct" if n_ok == len(parts) else "parts")

    def presented(self, *, title: str = "", hint: str = "", solution: str = "",
                  show_hint: bool = False, on_reveal=None) -> Result:
        """A copy with a title, and the exercise's hint/solution where the check had none.
        ``on_reveal`` is called when the learner asks this Result for the solution: it
        records that, and returns the solution's text (kept off the Result)."""
        copy = Result(self.ok, self.message, name=self.name, diagnosis=self.diagnosis,
                      hint=self._hint or hint, solution=self._solution or solution,
                      parts=self.parts, title=self.title or title, show_hint=show_hint,
                      details=self.details)
        copy._on_reveal = on_reveal
        return copy

    def __bool__(self) -> bool:
        return self.ok

    # -- hints and solutions, on request only ------------------------------------------
    def hint(self) -> Text:
        """The hint for what went wrong (or a general hint if nothing did)."""
        return Text(self._hint or "No hint for this one: the message says it all.")

    def solution(self) -> Text:
        """The worked solution (only when you ask for it; progress records that you did).
        A Result that cannot record it (one not returned by an exercise) shows none."""
        if self._on_reveal is not None:
            shown = self._on_reveal()
            return Text(shown if shown is not None else self._solution)
        if not self._solution:
            return Text("No worked solution is stored for this check.")
        return Text("This result cannot record that you saw the solution: ask the "
                    "exercise for it instead (e.g. G6.solution).")

    @property
    def has_hint(self) -> bool:
        return bool(self._hint)

    # -- display -------------------------------------------------------------------------
    def lines(self) -> list[str]:
        """The feedback as plain text lines (what ``repr`` prints)."""
        out = []
        if self.title:
            out.append(self.title)
        if self.parts:
            for p in self.parts:
                out += ["  " + line for line in p._own_lines()]
            out.append(self.message)
        else:
            out += self._own_lines()
        if not self.ok and self._hint:
            if self.show_hint:
                out += ["Hint: " + line for line in self._hint.splitlines()[:1]]
                out += ["      " + line for line in self._hint.splitlines()[1:]]
            else:
                out.append("  (A hint is available: call .hint() on this result.)")
        return out

    def _own_lines(self) -> list[str]:
        mark = MARK_OK if self.ok else MARK_WRONG
        label = f"{self.name}: " if self.name else ""
        first, *rest = (self.message or "").splitlines() or [""]
        return [f"{mark} {label}{first}"] + ["  " + line for line in rest]

    def __repr__(self) -> str:
        return "\n".join(self.lines())

    __str__ = __repr__

    def _repr_html_(self) -> str:
        colour = "#1b7f3b" if self.ok else "#b3261e"
        body = "<br>".join(html.escape(line).replace("  ", "&nbsp;&nbsp;")
                           for line in self.lines())
        return (f"<div class='ag-exercise-result' style='border-left:4px solid {colour};"
                f"padding:4px 8px;font-family:monospace'>{body}</div>")



def named(result: Result, name: str) -> Result:
    """A copy of a one-part ``result`` under another name (a variant of a problem)."""
    copy = Result(result.ok, result.message, name=name, diagnosis=result.diagnosis,
                  hint=result._hint, solution=result._solution, parts=result.parts,
                  title=result.title, show_hint=result.show_hint, details=result.details)
    return copy
