"""A network that learns: handwritten digits with our own engine.

scikit-learn's ``load_digits`` (1,797 images of 8x8 pixels, shipped with the
package, no download) is split into train and test sets with our seeded
generator; then a small CNN (conv -> batch norm -> ReLU -> pool -> a residual
block -> ... -> linear) and an MLP are trained with Adam on mini-batches.

The pieces are functions so lessons can reuse them (lesson 12 does)::

    from widgets.lessons.digits import load_data, make_cnn, train
    data = load_data()
    model = make_cnn()
    history = train(model, data, epochs=3, callback=print)

Run ``python -m widgets.lessons.digits`` to train both models and print their progress.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import autograd_core as ag
from autograd_core import nn, optim
from autograd_core.nn import functional as F

__all__ = ["Digits", "load_data", "make_cnn", "make_mlp", "accuracy", "train"]


@dataclass
class Digits:
    """Images (N, 1, 8, 8) scaled to [0, 1] and integer labels 0..9, split in two."""

    x_train: ag.Tensor
    y_train: ag.Tensor
    x_test: ag.Tensor
    y_test: ag.Tensor


def load_data(test_fraction: float = 0.2, seed: int = 0, dtype=ag.float32) -> Digits:
    """The digits, shuffled by a seeded ``ag.Generator`` and split train/test.

    >>> data = load_data()
    >>> data.x_train.shape, data.x_test.shape
    ((1438, 1, 8, 8), (359, 1, 8, 8))
    """
    from sklearn.datasets import load_digits  # only the example needs scikit-learn

    digits = load_digits()
    images = (digits.images / 16.0).astype(dtype)[:, None, :, :]
    labels = digits.target.astype(np.int64)
    order = ag.Generator(seed).numpy.permutation(len(labels))
    n_test = int(round(test_fraction * len(labels)))
    test, train_ = order[:n_test], order[n_test:]
    return Digits(ag.tensor(images[train_]), ag.tensor(labels[train_]),
                  ag.tensor(images[test]), ag.tensor(labels[test]))


def make_cnn(channels: int = 16, generator: ag.Generator | None = None,
             dtype=ag.float32) -> nn.Module:
    """conv -> batch norm -> ReLU -> max pool -> residual block -> ReLU -> average pool
    -> flatten -> linear: (N, 1, 8, 8) images to 10 class scores, parameters of ``dtype``."""
    kw = {"generator": generator, "dtype": dtype}
    return nn.Sequential(
        nn.Conv2d(1, channels, 3, padding=1, **kw),  # 8x8
        nn.BatchNorm2d(channels, dtype=dtype),
        nn.ReLU(),
        nn.MaxPool2d(2),  # 4x4
        nn.ResidualBlock(channels, channels, **kw),
        nn.ReLU(),
        nn.AvgPool2d(2),  # 2x2
        nn.Flatten(),
        nn.Linear(channels * 4, 10, **kw),
    )


def make_mlp(hidden: int = 64, generator: ag.Generator | None = None,
             dtype=ag.float32) -> nn.Module:
    """flatten -> linear -> ReLU -> linear: 64 pixels to 10 class scores, parameters of
    ``dtype`` (float32, as the images :func:`load_data` gives)."""
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(64, hidden, generator=generator, dtype=dtype),
        nn.ReLU(),
        nn.Linear(hidden, 10, generator=generator, dtype=dtype),
    )


def accuracy(model: nn.Module, x: ag.Tensor, y: ag.Tensor) -> float:
    """The fraction of ``x`` classified as ``y``, in evaluation mode, without recording
    (the model is put back in the mode it was in)."""
    was_training = model.training
    model.eval()
    with ag.no_grad():
        predicted = model(x).argmax(dim=1)
    model.train(was_training)
    return float((predicted.numpy() == y.numpy()).mean())


def train(model: nn.Module, data: Digits, epochs: int = 10, lr: float = 5e-3,
          batch_size: int = 64, seed: int = 0,
          callback: Callable[[dict], None] | None = None) -> list[dict]:
    """Train with Adam on shuffled mini-batches (shuffled by a seeded generator).

    Returns the history, one dict per epoch: ``epoch``, ``loss`` (mean training loss
    over the epoch), ``train_accuracy``, ``test_accuracy``, ``seconds`` (since the
    start). ``callback``, if given, is called with each dict as it is made.
    """
    opt = optim.Adam(model.parameters(), lr=lr)
    shuffle = ag.Generator(seed).numpy
    n = len(data.y_train)
    history = []
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        model.train()
        losses = []
        for batch in np.array_split(shuffle.permutation(n), max(1, n // batch_size)):
            loss = F.cross_entropy(model(data.x_train[batch]), data.y_train[batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        record = {
            "epoch": epoch,
            "loss": float(np.mean(losses)),
            "train_accuracy": accuracy(model, data.x_train, data.y_train),
            "test_accuracy": accuracy(model, data.x_test, data.y_test),
            "seconds": time.perf_counter() - start,
        }
        history.append(record)
        if callback is not None:
            callback(record)
    return history


def _print(record: dict) -> None:
    print(f"  epoch {record['epoch']:2d}  loss {record['loss']:.4f}  "
          f"train {record['train_accuracy']:.3f}  test {record['test_accuracy']:.3f}  "
          f"({record['seconds']:.1f} s)")


if __name__ == "__main__":
    data = load_data()
    print(f"digits: {len(data.y_train)} training and {len(data.y_test)} test images")
    for name, make, epochs in (("CNN", make_cnn, 8), ("MLP", make_mlp, 20)):
        model = make(generator=ag.Generator(0))
        n_params = sum(p.numel() for p in model.parameters())
        print(f"{name} ({n_params} parameters):")
        history = train(model, data, epochs=epochs, callback=_print)
        print(f"{name}: test accuracy {history[-1]['test_accuracy']:.3f} in "
              f"{history[-1]['seconds']:.1f} s")
