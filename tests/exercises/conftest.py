"""Fixtures every exercise test may use: ``learner`` (problems drawn for another learner,
parametrized with ``learners.LEARNERS``)."""

from learners import learner  # noqa: F401 - a fixture, found here by pytest
