"""Lesson 14, the backward pass is a graph too (D1–D4): second derivatives derived by the
learner and checked against the engine's gradient-of-a-gradient; a Hessian-vector product
built with two sweeps of ``autograd.grad``; a Newton step.

* :mod:`.problems`: the numbers (points for tanh'', a small network, a logistic
  regression) and the engine's answers for them;
* :mod:`.curvature`: D1 (tanh'') and D2 (the Hessian of the network's loss);
* :mod:`.products`: D3 (H·v by hand, checked for value and cost) and ``cost_table``;
* :mod:`.newton`: D4 (one Newton step) and ``newton_run``, Newton against gradient descent.

Every expected value is the engine's (``autograd.grad`` twice, ``functional.hessian``,
``functional.hvp``), never a formula written here, and every answer goes through
:func:`~...feedback.check_gradient`, so a mistake is named as in the other lessons.

>>> from widgets import exercises
>>> exercises.D1(d2_tanh)                            # doctest: +SKIP
>>> second_order.cost_table()                        # doctest: +SKIP
"""

from . import curvature  # noqa: F401 - registers D1 and D2
from .newton import NewtonRun, newton_run
from .problems import Logistic, Network, logistic, network, tanh_points
from .products import MAX_GRADIENTS, CostRow, cost_table, gradient_macs

__all__ = [
    "newton_run", "NewtonRun", "cost_table", "CostRow", "gradient_macs",
    "MAX_GRADIENTS", "Network", "network", "Logistic", "logistic", "tanh_points",
]
