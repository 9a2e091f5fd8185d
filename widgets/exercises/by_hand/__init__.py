"""Lesson 13, backprop by hand (H1–H4): the gradient of every intermediate of a small
network, checked all at once; batch norm's and cross-entropy's backward in closed form;
then training with your own gradients, beside the engine's.

* :mod:`.network`: the network (linear -> batch norm -> tanh -> linear -> softmax
  cross-entropy on 32 digits), its forward pass ``STEPS`` as named engine ops, and the
  engine's values and gradients for the lesson's batch (``reference()``, ``problem()``);
* :mod:`.grading`: one gradient against the engine's, with the word the tables show;
* :mod:`.table`: H1, one row per tensor;
* :mod:`.closed_forms`: H2 (batch norm's backward) and H3 (cross-entropy's);
* :mod:`.training`: H4 and ``train(my_gradients)``, the lesson's two loss curves.

Every expected value is the engine's ``.grad`` (never a number written here), and every
answer goes through :func:`~..feedback.check_gradient`, so a mistake is named the same way
as in the other lessons and no message shows an expected value.

>>> from widgets import exercises
>>> p = exercises.H1.problem()                     # doctest: +SKIP
>>> exercises.H1(my_h1)   # doctest: +SKIP  (my_h1(p) -> {"d_picked": ..., ..., "d_W1": ...})
>>> by_hand.train(my_gradients).plot()             # doctest: +SKIP
"""

from . import closed_forms  # noqa: F401 - registers H2 and H3
from .grading import CLOSE, check_one
from .network import (
    BATCH,
    CLASSES,
    DESCRIPTION,
    EPS,
    FEATURES,
    HIDDEN,
    INTERMEDIATES,
    PARAMS,
    ROWS,
    STEPS,
    TRAIN_STEPS,
    Reference,
    Step,
    problem,
    reference,
    reference_for,
)
from .table import ANSWERS
from .training import (
    CURVE_TOLERANCE,
    H4_PARTS,
    LEARNING_RATE,
    TrainingRun,
    train,
)

__all__ = [
    "STEPS", "ROWS", "PARAMS", "INTERMEDIATES", "ANSWERS", "H4_PARTS", "Step",
    "problem", "reference", "reference_for", "Reference", "train",
    "TrainingRun", "check_one",
    "BATCH", "FEATURES", "HIDDEN", "CLASSES", "EPS", "TRAIN_STEPS", "LEARNING_RATE", "CLOSE",
    "CURVE_TOLERANCE", "DESCRIPTION",
]
