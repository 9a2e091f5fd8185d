"""Fixtures every exercise test may use: ``learner`` (problems drawn for another learner,
parametrized with ``learners.LEARNERS``) and ``cases_as_listed`` (a check's cases drawn as
its kind lists them, not afresh: for a test that must know them beforehand)."""

import contextlib

import pytest
from learners import learner  # noqa: F401 - a fixture, found here by pytest

from widgets.exercises import problems


@pytest.fixture()
def cases_as_listed(monkeypatch):
    """A derivation's cases after the lesson's are drawn afresh at every check
    (``problems.unseen``); here they are the ones ``kind.cases`` gives, so a test can hand
    the check a function that knows them (the other rules, tested on their own)."""
    monkeypatch.setattr(problems, "unseen", contextlib.nullcontext)
