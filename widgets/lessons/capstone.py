"""Pictures for the capstone lesson: digit images and training curves.

* ``digit_grid(images, labels, predicted=None)``: small grey-scale images in a grid,
  each titled with its label, or ``label→prediction`` in red where they differ;
* ``training_curves(history)``: the mean training loss and the train/test accuracy
  per epoch, from the history ``widgets.lessons.digits.train`` returns.

Both build a matplotlib ``Figure`` without pyplot (nothing left open, any backend);
a notebook with inline figures shows it by ending a cell with it. The figure is a
``widgets.figures.DescribedFigure``: its ``alt`` says what it shows, and becomes the
text alternative of the picture in JupyterLab.

>>> fig = training_curves([{"epoch": 1, "loss": 1.0, "train_accuracy": 0.5,
...                         "test_accuracy": 0.4}])
>>> [ax.get_title() for ax in fig.axes]
['training loss', 'accuracy']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..figures import DescribedFigure

__all__ = ["digit_grid", "training_curves", "grid_alt", "curves_alt", "MISTAKE_COLOUR"]

MISTAKE_COLOUR = "#b3261e"
_HISTORY_KEYS = ("epoch", "loss", "train_accuracy", "test_accuracy")
ALT_TITLES = 40  # a digit grid's text alternative lists this many titles at most


def _values(x) -> np.ndarray:
    return np.asarray(getattr(x, "_data", x))


def digit_grid(images, labels, predicted=None, *, columns: int = 10,
               inches: float = 0.8) -> Figure:
    """Images (N, 1, H, W) or (N, H, W) in a grid of ``columns``; titles are the labels,
    or ``"label→prediction"`` in red for the images whose prediction is wrong.

    >>> fig = digit_grid(np.zeros((3, 1, 8, 8)), [1, 2, 3], predicted=[1, 2, 5])
    >>> [ax.get_title() for ax in fig.axes]
    ['1', '2', '3→5']
    """
    images, labels = _values(images), _values(labels).ravel()
    if images.ndim == 4 and images.shape[1] == 1:
        images = images[:, 0]
    if images.ndim != 3:
        raise ValueError(f"digit_grid: images must be (N, 1, H, W) or (N, H, W), got shape "
                         f"{images.shape}.")
    if len(labels) != len(images):
        raise ValueError(f"digit_grid: {len(images)} images but {len(labels)} labels; pass one "
                         "label per image.")
    if predicted is not None:
        predicted = _values(predicted).ravel()
        if len(predicted) != len(images):
            raise ValueError(f"digit_grid: {len(images)} images but {len(predicted)} "
                             "predictions; pass one prediction per image.")
    n = len(images)
    if n == 0:
        raise ValueError("digit_grid: no images to show.")
    columns = max(1, min(columns, n))
    rows = -(-n // columns)
    fig = DescribedFigure(figsize=(inches * columns, (inches + 0.2) * rows), dpi=100)
    FigureCanvasAgg(fig)
    titles, wrongs = [], 0
    for k in range(n):
        ax = fig.add_subplot(rows, columns, k + 1)
        ax.imshow(images[k], cmap="Greys", vmin=0, vmax=max(1.0, float(images.max())))
        wrong = predicted is not None and predicted[k] != labels[k]
        title = f"{labels[k]}→{predicted[k]}" if wrong else f"{labels[k]}"
        ax.set_title(title, fontsize=9, color=MISTAKE_COLOUR if wrong else "black")
        ax.set_xticks([])
        ax.set_yticks([])
        titles.append(title)
        wrongs += bool(wrong)
    fig.tight_layout(pad=0.3)
    fig.alt = grid_alt(titles, wrongs if predicted is not None else None)
    return fig


def grid_alt(titles: Sequence[str], wrong: int | None = None) -> str:
    """The text alternative of a digit grid: how many images, how they are titled, and
    the titles (the first ``ALT_TITLES``). ``wrong``: how many predictions are wrong
    (None: the grid shows no predictions).

    >>> grid_alt(["1", "2", "3→5"], wrong=1)
    'Grid of 3 digit images, each titled with its label, or label→prediction in red \
where the prediction is wrong (1 of 3): 1, 2, 3→5.'
    """
    n = len(titles)
    shown = ", ".join(titles[:ALT_TITLES])
    if n > ALT_TITLES:
        shown += f" and {n - ALT_TITLES:,} more"
    how = "each titled with its label"
    if wrong is not None:
        how += (f", or label→prediction in red where the prediction is wrong "
                f"({wrong:,} of {n:,})")
    return f"Grid of {n:,} digit image{'' if n == 1 else 's'}, {how}: {shown}."


def training_curves(history: Sequence[dict]) -> Figure:
    """Two panels: mean training loss per epoch, and train/test accuracy per epoch.

    ``history`` holds one dict per epoch with ``epoch``, ``loss``, ``train_accuracy`` and
    ``test_accuracy`` (what ``digits.train`` returns).
    """
    if not history:
        raise ValueError("training_curves: the history is empty; train for an epoch first.")
    missing = [k for k in _HISTORY_KEYS if k not in history[0]]
    if missing:
        raise ValueError(f"training_curves: each history entry needs {list(_HISTORY_KEYS)}; "
                         f"missing {missing}.")
    epochs = [h["epoch"] for h in history]
    fig = DescribedFigure(figsize=(9, 3), dpi=100, alt=curves_alt(history))
    FigureCanvasAgg(fig)
    loss_ax, acc_ax = fig.subplots(1, 2)
    loss_ax.plot(epochs, [h["loss"] for h in history], "o-", color="C3")
    loss_ax.set_title("training loss")
    loss_ax.set_yscale("log")
    for key, colour in (("train_accuracy", "C0"), ("test_accuracy", "C1")):
        acc_ax.plot(epochs, [100 * h[key] for h in history], "o-", color=colour,
                    label=key.replace("_", " "))
    acc_ax.set_title("accuracy")
    acc_ax.set_ylabel("%")
    acc_ax.legend(fontsize=8, loc="lower right")
    for ax in (loss_ax, acc_ax):
        ax.set_xlabel("epoch")
        ax.set_xticks(epochs)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def curves_alt(history: Sequence[dict]) -> str:
    """The text alternative of ``training_curves(history)``: what each panel plots,
    from its first epoch to its last.

    >>> curves_alt([{"epoch": 1, "loss": 2.0, "train_accuracy": 0.5, "test_accuracy": 0.4},
    ...             {"epoch": 2, "loss": 0.5, "train_accuracy": 0.9, "test_accuracy": 0.8}])
    'Training curves over 2 epochs. Left: the training loss (log scale), from 2 to 0.5. \
Right: the accuracy, train from 50.0% to 90.0%, test from 40.0% to 80.0%.'
    """
    first, last = history[0], history[-1]
    n = len(history)
    return (f"Training curves over {n:,} epoch{'' if n == 1 else 's'}. Left: the training "
            f"loss (log scale), from {first['loss']:.3g} to {last['loss']:.3g}. Right: the "
            f"accuracy, train from {first['train_accuracy']:.1%} to "
            f"{last['train_accuracy']:.1%}, test from {first['test_accuracy']:.1%} to "
            f"{last['test_accuracy']:.1%}.")
