"""Feedback on a learner's array: right, or the kind of mistake and where it is.

The one pipeline every gradient-shaped answer goes through, whether it comes from an
exercise or from the backward stepper's predict mode: the answer is read in the forms a
learner passes (``inputs``), held to a tolerance (``tolerance``), compared in shape
(``shapes``) and in value against the mistakes worth naming (``context``, ``diagnosis``),
and answered with a :class:`~widgets.feedback.result.Result` whose printed form is the
feedback, in the words of ``words``. It knows nothing of the question bank, so a view can
use it without loading the exercises.

>>> import numpy as np
>>> check_gradient(np.array([1.0, 2.0]), np.array([1.0, 2.0])).ok
True
"""

from .check import check_gradient, check_predicted_gradient
from .context import Mistake
from .derivation import check_derivation
from .result import Result, Text

__all__ = ["check_gradient", "check_predicted_gradient", "check_derivation", "Mistake",
           "Result", "Text"]
