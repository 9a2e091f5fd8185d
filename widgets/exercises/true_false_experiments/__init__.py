"""T1–T10: what each item's experiment must measure, checked, and a reference experiment.

For each item, ``measure_tN(data, watch)`` checks what the learner's experiment returned
(``data``) against evidence of its own: it runs the learner's function again, or finds the
number in what the :class:`~..true_false.Watch` saw the engine do while the experiment ran.
It raises :class:`~..true_false.Flaw` with a sentence naming what is wrong with the
experiment, and otherwise returns the verdict *that* measurement supports.

``_reference_tN()`` is one experiment that settles the item: the last step of the item's
stepped help (its code is shown by ``TN.solution``; ``TN.experiment()`` runs it). Lessons
never show it before the learner answers.

The items live by theme: :mod:`.modes` (T1, T2, T4, T5: forward and reverse mode, and what
a derivative costs), :mod:`.graph` (T3, T7: what the engine records and keeps) and
:mod:`.sweep` (T6, T8, T9, T10: the reverse sweep and its gradients). ``_CLAIMS`` below
registers all ten.
"""

from __future__ import annotations

from ..true_false import Claim, register_claim
from .graph import _reference_t3, _reference_t7, measure_t3, measure_t7
from .modes import (
    _reference_t1,
    _reference_t2,
    _reference_t4,
    _reference_t5,
    measure_t1,
    measure_t2,
    measure_t4,
    measure_t5,
)
from .sweep import (
    _reference_t6,
    _reference_t8,
    _reference_t9,
    _reference_t10,
    measure_t6,
    measure_t8,
    measure_t9,
    measure_t10,
)

_CLAIMS = [
    Claim("T1", ("function", "at", "forward", "reverse", "largest_difference"), measure_t1,
          _reference_t1),
    Claim("T2", ("counted", "passes", "fewer"), measure_t2, _reference_t2),
    Claim("T3", ("graph", "order", "sizes"), measure_t3, _reference_t3),
    Claim("T4", ("depths", "backward_ops", "formula_nodes", "ops_at", "nodes_at"), measure_t4,
          _reference_t4),
    Claim("T5", ("function", "at", "grad", "h", "slopes", "best_step", "least_error"),
          measure_t5, _reference_t5),
    Claim("T6", ("network", "formula", "network_grad", "formula_grad"), measure_t6,
          _reference_t6),
    Claim("T7", ("saved_bytes", "grads", "error"), measure_t7, _reference_t7),
    Claim("T8", ("grad", "contributions"), measure_t8, _reference_t8),
    Claim("T9", ("c", "grad_1", "grad_c", "grad_M"), measure_t9, _reference_t9),
    Claim("T10", ("loss", "at", "grad", "step", "along_grad", "against_grad", "others"),
          measure_t10, _reference_t10),
]

for _claim in _CLAIMS:
    register_claim(_claim)
