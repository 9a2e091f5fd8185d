"""Helpers for the debugging lesson (notebooks/11_debugging.ipynb): :func:`readable` for
the engine's reports, and :func:`gradients_without_reset`, S2's comparison.

The engine's debugging tools (``autograd_core.tools.anomaly``, ``autograd_core.tools.instrument``)
point at the forward line that made a NaN, as a Python stack frame. In Jupyter, a cell
runs from a temporary file named after the kernel's process id
(``/tmp/ipykernel_4242/3141592653.py``): meaningless to a learner, and different on
every run. :func:`readable` writes such a frame as ``notebook cell, line 4``; the
frame's source line, printed under it, shows which cell. (IPython's own tracebacks
say ``Cell In[7]``, but the execution count is not stable either: it depends on how
often cells were run, and nbval runs cells without counting them.)

>>> readable('File "/tmp/ipykernel_1/99.py", line 3', is_cell=lambda f: "ipykernel" in f)
'notebook cell, line 3'
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

from .. import gate

__all__ = ["readable", "is_notebook_cell", "gradients_without_reset"]

_FILE = re.compile(r'File "([^"]+)", line')


def is_notebook_cell(filename: str) -> bool:
    """True if ``filename`` holds a cell of the running IPython kernel (False outside
    IPython)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    compiler = getattr(shell, "compile", None)
    return compiler is not None and compiler.format_code_name(filename) is not None


def readable(message, is_cell: Callable[[str], bool] | None = None) -> str:
    """``str(message)`` with every ``File "<cell file>", line N`` written as
    ``notebook cell, line N``. Other files are left as they are.

    ``message`` is anything printable: an exception, an engine report, a string.
    ``is_cell`` says whether a file name is a notebook cell (default: ask the running
    IPython kernel).
    """
    is_cell = is_notebook_cell if is_cell is None else is_cell

    def rename(match: re.Match) -> str:
        return "notebook cell, line" if is_cell(match.group(1)) else match.group(0)

    return _FILE.sub(rename, str(message))


@gate.answers("S2")  # its first print is what the buggy loop of S2 returns
def gradients_without_reset(steps: int = 30, lr: float = 0.05) -> None:
    """S2's comparison, shown in lesson 11 once S2 is solved (it is the answer): on a small
    regression, what ``.grad`` holds after two ``backward()`` calls with no reset between
    them, then plain SGD with ``zero_grad()`` at every step and without it, plotted. It lives
    here, not in the lesson, because its code would give S2's answer away before S2 is
    solved."""
    import matplotlib.pyplot as plt
    import numpy as np

    import autograd_core as ag
    from autograd_core import nn, optim
    from autograd_core.nn import functional as F

    gen = ag.Generator(21)
    x = ag.randn(64, 3, generator=gen, dtype=ag.float64)
    y = x @ ag.tensor([[1.5], [-2.0], [0.5]]) + 0.1 * ag.randn(64, 1, generator=gen,
                                                                dtype=ag.float64)
    w0 = np.array([[0.1], [0.2], [0.3]])

    def grad_on(rows, w=None):
        w = ag.tensor(w0, requires_grad=True) if w is None else w
        ((x[rows] @ w - y[rows]) ** 2).mean().backward()
        return w

    w = grad_on(slice(0, 32))                    # step 1's batch
    grad_on(slice(32, 64), w)                    # step 2's batch, no reset in between
    both = grad_on(slice(0, 32)).grad.numpy() + grad_on(slice(32, 64)).grad.numpy()
    print("w.grad after two backward calls:", w.grad.numpy().ravel())
    print("batch 1 + batch 2, each alone:  ", both.ravel())

    curves = {}
    for reset in (True, False):
        model = nn.Linear(3, 1, dtype=ag.float64, generator=ag.Generator(22))
        optimizer = optim.SGD(model.parameters(), lr=lr)
        losses = []
        for _ in range(steps):
            if reset:
                optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        curves["zero_grad() every step" if reset else "never reset"] = losses
    plt.figure(figsize=(6.5, 3.4))
    for label, losses in curves.items():
        plt.semilogy(range(1, steps + 1), losses, "o-", markersize=3, label=label)
    plt.xlabel("step")
    plt.ylabel("training loss")
    plt.legend()
    plt.grid(alpha=0.3, which="both")
    plt.show()
    print("Exactly the sum: backward() adds into .grad. In training, the optimizer then steps "
          "along that sum. With a reset the loss falls steadily; without it, each step moves "
          "along the sum of all past gradients, a velocity that never decays: the steps "
          "overshoot and the loss swings up and down, far from the minimum (with a larger "
          "learning rate it diverges). Nothing crashes and no NaN appears: only the curve "
          "gives it away.")
