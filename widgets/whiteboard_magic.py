r"""``%%derivation``: a derivation written as on the whiteboard, in a cell of its own,
typeset and checked against the engine.

    %load_ext widgets.whiteboard_magic

    %%derivation layer, {"x": (4, 3), "W": (3, 2)}
    \frac{\partial L}{\partial W} = x^\top \left(g \odot (1 - \tanh^2(x W))\right)
    \frac{\partial L}{\partial x} = \left(g \odot (1 - \tanh^2(x W))\right) W^\top

The first line is what :func:`~widgets.feedback.derivation.check_derivation` takes besides
the formulas: the function, the inputs' shapes, and optionally ``sizes=...`` (Python, run
in your notebook's namespace as any cell's code is). Each further line, or ``$$ ... $$``
block, is one equation whose left side (∂L/∂W, dW) says which gradient it is; its right
side is read by the whiteboard's grammar (``widgets/feedback/whiteboard.py``), never run.
The cell shows the equations typeset, then the engine's verdict under them.
"""

from __future__ import annotations

from .feedback.derivation import check_derivation
from .feedback.result import Result
from .feedback.whiteboard import equations

USAGE = ('%%derivation f, shapes: the first line names your engine function and the shapes '
         'of its inputs, e.g. %%derivation layer, {"x": (4, 3), "W": (3, 2)}; each line '
         'below is one equation, ∂L/∂W = ...')


def derivation_result(arguments, body: str) -> Result:
    """The verdict on the equations of ``body`` for ``arguments`` = (f, shapes, options)
    as the first line gave them (or the sentence saying what is missing)."""
    f, shapes, options = arguments
    found = equations(body)
    if not found:
        return Result(False, "Nothing to check yet: write one equation per line below the "
                             "first, e.g. ∂L/∂W = xᵀ g.", diagnosis="none")
    nameless = [text for name, text in found if name is None]
    if nameless:
        return Result(False, f"The line `{nameless[0][:60]}` has no left side this check "
                             "can read: start each equation with the gradient it gives, "
                             "∂L/∂W = ... (or dW = ...).", diagnosis="unreadable")
    names = [name for name, _ in found]
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice is not None:
        return Result(False, f"Two equations give the gradient of {twice}: keep one.",
                      diagnosis="unreadable")
    return check_derivation(f, dict(found), shapes, **options)


def _arguments(line: str, namespace: dict):
    """(f, shapes, options) from the magic's first line, run in the notebook's namespace,
    or a Result saying what is wrong with it."""
    if not line.strip():
        return Result(False, USAGE, diagnosis="call")
    try:
        return eval(f"(lambda f, shapes, **options: (f, shapes, options))({line})",  # noqa: S307
                    namespace)
    except Exception as error:  # the learner's own first line: any mistake is a sentence
        return Result(False, f"The first line could not be read ({type(error).__name__}: "
                             f"{str(error)[:120]}). {USAGE}", diagnosis="call")


def derivation(line: str, cell: str) -> None:
    """The ``%%derivation`` cell magic (see the module)."""
    from IPython import get_ipython
    from IPython.display import display

    shell = get_ipython()
    arguments = _arguments(line, shell.user_ns if shell is not None else {})
    for _, text in equations(cell):  # typeset, with the text as written for a screen reader
        shown = {"text/latex": f"$${text}$$"} if "\\" in text else {
            "text/markdown": f"`{text}`"}
        display({**shown, "text/plain": text}, raw=True)
    display(arguments if isinstance(arguments, Result) else derivation_result(arguments, cell))


def load_ipython_extension(ipython) -> None:
    """``%load_ext widgets.whiteboard_magic``: registers ``%%derivation``."""
    ipython.register_magic_function(derivation, "cell", "derivation")
