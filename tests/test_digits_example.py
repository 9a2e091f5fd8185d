"""Smoke test of examples/digits.py: the data split, both models, a few epochs of
training that must already beat chance (10%) by far. No timing assertion."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import autograd_core as ag

pytest.importorskip("sklearn", reason="the digits data set ships with scikit-learn")

_PATH = Path(__file__).resolve().parent.parent / "examples" / "digits.py"
_spec = importlib.util.spec_from_file_location("digits_example", _PATH)
digits = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(digits)


@pytest.fixture(scope="module")
def data():
    return digits.load_data()


def test_split_is_seeded_disjoint_and_complete(data):
    again = digits.load_data()
    np.testing.assert_array_equal(data.y_test.numpy(), again.y_test.numpy())
    assert len(data.y_train) + len(data.y_test) == 1797
    assert data.x_train.shape[1:] == (1, 8, 8) and data.x_train.dtype == np.float32
    assert 0 <= data.x_train.numpy().min() and data.x_train.numpy().max() <= 1
    other = digits.load_data(seed=1)
    assert not np.array_equal(data.y_test.numpy(), other.y_test.numpy())
    # no image in both sets: compare the rows as bytes
    train = {row.tobytes() for row in data.x_train.numpy().reshape(len(data.y_train), -1)}
    shared = sum(row.tobytes() in train for row in data.x_test.numpy().reshape(-1, 64))
    assert shared <= 5  # the data set itself holds a few duplicate images


@pytest.mark.parametrize("make, epochs", [(digits.make_cnn, 2), (digits.make_mlp, 3)],
                         ids=["cnn", "mlp"])
def test_a_few_epochs_beat_chance_by_far(data, make, epochs):
    model = make(generator=ag.Generator(0))
    seen = []
    history = digits.train(model, data, epochs=epochs, callback=seen.append)
    assert seen == history and [h["epoch"] for h in history] == list(range(1, epochs + 1))
    assert history[-1]["loss"] < history[0]["loss"] or epochs == 1
    assert history[-1]["test_accuracy"] > 0.5
    assert model.training  # train() leaves the model in training mode
    assert digits.accuracy(model, data.x_test, data.y_test) == history[-1]["test_accuracy"]
