"""Where the memory of training goes, measured from the objects themselves.

A training step holds four kinds of arrays:

* **parameters**: the model's weights (``p.numpy().nbytes`` for each parameter);
* **gradients**: one ``.grad`` per parameter after backward, the same size again;
* **optimizer state**: what the optimizer keeps per parameter (SGD with momentum: a
  buffer; Adam: two moment estimates), read from ``optimizer.state``;
* **retained activations**: what the ops of the forward pass saved for backward
  (minus the parameters some of them save too: those are counted above).

Only the last one grows with the depth and the batch, and only a *recording*
forward pays it: under ``no_grad`` nothing is saved and each intermediate is freed
as soon as the next layer has used it. ``forward_peak_memory`` shows it with
``tracemalloc`` (NumPy reports its allocations to it), and ``what_keeps_the_graph_alive``
shows that holding a tensor attached to the graph keeps every saved array alive,
while holding ``.item()`` or a detached copy does not.

Arrays are counted by the memory they keep alive, with the engine's one definition of
saved bytes (``autograd_core.tools.buffers``): a view counts as its base array's buffer, and
a buffer saved by several ops, or seen through several views, counts once.
"""

from __future__ import annotations

import contextlib
import gc
import tracemalloc
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from ..recording.grad_mode import no_grad
from ..recording.node import Observer, observing
from ..recording.tensor import Tensor
from ..sweep.engine import reverse_topological
from .buffers import buffer_bytes, owner, saved_arrays, saved_buffer_bytes

__all__ = ["MemoryBreakdown", "training_step_memory", "activation_bytes", "buffer_bytes",
           "SavedBytesTracker", "track_saved_bytes", "forward_peak_memory",
           "what_keeps_the_graph_alive", "owner", "saved_arrays"]


# -- counting bytes (the definition lives in .buffers) ---------------------------------
def activation_bytes(output: Tensor, exclude: Iterable[Tensor] = ()) -> int:
    """Bytes the graph behind ``output`` keeps for backward, not counting the
    buffers of ``exclude`` (pass the parameters and the input batch: they are alive
    anyway)."""
    if output.grad_fn is None:
        return 0
    return saved_buffer_bytes(reverse_topological(output.grad_fn), exclude)


# -- a training step ------------------------------------------------------------------------
@dataclass(frozen=True)
class MemoryBreakdown:
    """Bytes of one training step, by kind (see the module docstring)."""

    parameters: int
    gradients: int
    optimizer_state: int
    activations: int

    @property
    def total(self) -> int:
        return self.parameters + self.gradients + self.optimizer_state + self.activations

    def rows(self) -> list[tuple[str, int]]:
        return [("parameters", self.parameters), ("gradients", self.gradients),
                ("optimizer state", self.optimizer_state),
                ("retained activations", self.activations), ("total", self.total)]

    def __str__(self) -> str:
        return "\n".join(f"{name:<22}{value:>14,} bytes" for name, value in self.rows())

    def _repr_html_(self) -> str:
        cells = "".join(f"<tr><td>{n}</td><td style='text-align:right'>{v:,}</td></tr>"
                        for n, v in self.rows())
        return f"<table><tr><th>kind</th><th>bytes</th></tr>{cells}</table>"


def optimizer_state_bytes(optimizer) -> int:
    """Bytes of the arrays in ``optimizer.state`` (per-parameter dicts of arrays)."""
    return buffer_bytes(a for state in optimizer.state.values() for a in state.values()
                        if isinstance(a, np.ndarray | Tensor))


def training_step_memory(model, loss_fn: Callable, inputs, target, optimizer) \
        -> MemoryBreakdown:
    """Run one step (forward, backward, optimizer step) and measure each kind of
    memory when it is largest: activations after the forward pass, gradients after
    backward, optimizer state after the step.

    >>> step = training_step_memory(model, F.mse_loss, x, y, optim.Adam(model.parameters()))
    ... # doctest: +SKIP
    """
    params = list(model.parameters())
    optimizer.zero_grad()
    loss = loss_fn(model(inputs), target)
    activations = activation_bytes(loss, exclude=[*params, *_tensors(inputs, target)])
    loss.backward()
    gradients = buffer_bytes(p.grad for p in params if p.grad is not None)
    optimizer.step()
    return MemoryBreakdown(buffer_bytes(params), gradients, optimizer_state_bytes(optimizer),
                           activations)


# -- saved bytes over time (for checkpointing) ------------------------------------------------
class SavedBytesTracker(Observer):
    """Follows the bytes saved for backward by every node recorded while it
    observes, through forward and backward; ``peak`` is the largest total seen.

    Measured at every op event: after each forward op, and at each backward step
    just before the node's saved tensors are released (when a checkpoint's
    recomputed segment is alive too). Parameters' buffers are excluded.
    """

    def __init__(self, exclude: Iterable[Tensor] = ()):
        self.exclude = list(exclude)
        self.nodes: weakref.WeakSet = weakref.WeakSet()
        self.peak = 0

    @property
    def current(self) -> int:
        live = [n for n in self.nodes if not n.released]
        return saved_buffer_bytes(live, self.exclude)

    def _measure(self) -> None:
        self.peak = max(self.peak, self.current)

    def on_forward(self, op, node, arrays, out, params) -> None:
        if node is not None:
            self.nodes.add(node)
            self._measure()

    def on_backward(self, node, grad_output, grads) -> None:
        self._measure()


@contextlib.contextmanager
def track_saved_bytes(exclude: Iterable[Tensor] = ()) -> Iterator[SavedBytesTracker]:
    """Track saved bytes inside the block: ``with track_saved_bytes(params) as t: ...``,
    then ``t.peak``."""
    tracker = SavedBytesTracker(exclude)
    with observing(tracker):
        yield tracker


# -- peak memory of a forward pass, measured by tracemalloc -----------------------------------
def _traced(run: Callable[[], object]) -> tuple[int, int]:
    """(peak bytes allocated while ``run()`` runs, bytes still allocated while its result
    is held), above what was allocated before."""
    gc.collect()
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = run()  # noqa: F841 - held until the figures are read
        current, peak = tracemalloc.get_traced_memory()
    finally:
        if started:
            tracemalloc.stop()
    return peak - base, max(current - base, 0)


def forward_memory(model: Callable, inputs) -> dict[str, tuple[int, int]]:
    """The same forward pass recording and under ``no_grad``, each as (peak bytes while it
    runs, bytes still held while its output is kept), measured by tracemalloc.

    >>> forward_memory(nn.Sequential(*layers), x)   # doctest: +SKIP
    {'recording': (2101248, 1839104), 'no_grad': (263168, 128)}
    """
    def not_recording():
        with no_grad():
            return model(inputs)

    return {"recording": _traced(lambda: model(inputs)), "no_grad": _traced(not_recording)}


def forward_peak_memory(model: Callable, inputs) -> dict[str, int]:
    """Peak memory (tracemalloc) of the same forward pass recording and under
    ``no_grad``, in the same process, with the bytes the recorded graph saved.

    >>> forward_peak_memory(nn.Sequential(*layers), x)   # doctest: +SKIP
    {'recording': 2101248, 'no_grad': 263168, 'saved_by_graph': 1835008}
    """
    saved = {}

    def recording():
        out = model(inputs)
        saved["bytes"] = activation_bytes(out, exclude=[*_parameters(model), *_tensors(inputs)])
        return out

    def not_recording():
        with no_grad():
            return model(inputs)

    return {"recording": _traced(recording)[0], "no_grad": _traced(not_recording)[0],
            "saved_by_graph": saved["bytes"]}


def _tensors(*values) -> list:
    return [v for v in values if isinstance(v, Tensor | np.ndarray)]


def _parameters(model) -> list[Tensor]:
    return list(model.parameters()) if callable(getattr(model, "parameters", None)) else []


# -- what keeps a graph alive -----------------------------------------------------------------
def what_keeps_the_graph_alive(model: Callable, inputs,
                               exclude: Iterable[Tensor] = ()) -> dict[str, int]:
    """How many of the graph's saved activation arrays survive, depending on what the
    program keeps of the loss after dropping everything else (``exclude``: tensors the
    program holds anyway, beside the model's parameters and the input).

    Returns ``{"saved arrays": n, "hold the loss tensor": n, "hold loss.item()": 0,
    "hold loss.detach()": 0}``: every saved array is watched through a weak
    reference, which does not keep it alive.
    """
    keepers = {
        "hold the loss tensor": lambda loss: loss,
        "hold loss.item()": lambda loss: loss.item(),
        "hold loss.detach()": lambda loss: loss.detach(),
    }
    # The parameters and the input are alive anyway: only the activations can go.
    skip = {id(owner(t)) for t in [*_parameters(model), inputs, *exclude]}
    counts: dict[str, int] = {}
    for label, keep in keepers.items():
        loss = model(inputs).sum()
        arrays = {id(a): a for a in saved_arrays(reverse_topological(loss.grad_fn))
                  if id(owner(a)) not in skip}  # an array saved by two ops counts once
        refs = [weakref.ref(a) for a in arrays.values()]
        del arrays
        counts.setdefault("saved arrays", len(refs))
        kept = keep(loss)  # what the program holds on to
        del loss
        gc.collect()
        counts[label] = sum(r() is not None for r in refs)
        del kept
    return counts
