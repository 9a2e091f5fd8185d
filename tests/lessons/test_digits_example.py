"""Smoke test of widgets/lessons/digits.py (lesson 12's data and models): the data
split, both models, a few epochs of training that must already beat chance (10%) by
far. No timing assertion."""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from widgets.lessons import digits

pytest.importorskip("sklearn", reason="scikit-learn is not installed: the digits example needs "
                    "its bundled data set (install it with: pip install -e '.[widgets]')")

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
