"""The learners a test draws problems for (``problems.set_learner``): the shared default
and three names, so that a check is shown to work on data other than the stored lessons'.
Use ``@pytest.mark.parametrize("learner", LEARNERS, indirect=True)`` with the ``learner``
fixture imported beside it."""

from __future__ import annotations

import pytest

from widgets.exercises import problems

LEARNERS = [None, "ada", "Grace Hopper", 7]


@pytest.fixture()
def learner(request):
    """Problems drawn for ``request.param`` for the test's duration."""
    problems.set_learner(request.param)
    yield request.param
    problems.set_learner(None)
