"""Memory accounting (tools/memory.py), every figure against its definition.

* a training step: parameters, gradients, optimizer state and retained activations,
  each equal to the count worked out from the layer sizes (G1, L7);
* tracemalloc peak of a recording forward vs a no_grad forward of the same deep MLP,
  in the same process: the difference is the graph's saved activations (G1);
* holding a graph-attached tensor keeps every saved activation alive; holding
  .item() or a detached tensor keeps none (weak references watch them);
* backward after a no_grad forward fails clearly; frozen parameters still record.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import nn, optim
from autograd_core.tools import memory

F32 = 4  # bytes of a float32: the models here are float32, as PyTorch's are by default


def _mlp(widths, activation=nn.Tanh, seed=0) -> nn.Sequential:
    gen = ag.Generator(seed)
    layers = []
    for i, (a, b) in enumerate(zip(widths, widths[1:])):
        layers.append(nn.Linear(a, b, dtype=ag.float32, generator=gen))
        if i < len(widths) - 2:
            layers.append(activation())
    return nn.Sequential(*layers)


def test_buffer_bytes_counts_each_buffer_once_and_views_as_their_base():
    a = np.zeros((10, 10))
    assert memory.buffer_bytes([a, a[:2], a.T, a.reshape(100)]) == 800
    b = np.zeros(5, dtype=np.float32)
    assert memory.buffer_bytes([a, b]) == 820
    assert memory.buffer_bytes([a, b], exclude=[a[3]]) == 20
    assert memory.buffer_bytes([ag.tensor(b)]) == 20


def _parameter_count(widths) -> int:
    return sum(a * b + b for a, b in zip(widths, widths[1:]))


@pytest.mark.parametrize("make_optimizer, state_per_parameter", [
    (lambda p: optim.SGD(p, lr=0.1), 0),
    (lambda p: optim.SGD(p, lr=0.1, momentum=0.9), 1),   # a momentum buffer
    (lambda p: optim.Adam(p), 2),                         # first and second moments
])
def test_training_step_breakdown_matches_the_layer_sizes(make_optimizer, state_per_parameter):
    widths, batch = [5, 16, 16, 3], 7
    model = _mlp(widths)
    opt = make_optimizer(model.parameters())
    x = ag.randn(batch, 5, dtype=np.float32, generator=ag.Generator(1))
    y = ag.randn(batch, 3, dtype=np.float32, generator=ag.Generator(2))
    step = memory.training_step_memory(model, nn.functional.mse_loss, x, y, opt)
    params = _parameter_count(widths) * F32
    assert step.parameters == params
    assert step.gradients == params
    assert step.optimizer_state == state_per_parameter * params
    assert step.optimizer_state == opt.state_bytes()
    # kept for backward: the two tanh outputs (also the next linears' inputs) and
    # mse's difference; x itself and the weights are not activations
    assert step.activations == batch * (16 + 16 + 3) * F32
    assert step.total == 2 * params + step.optimizer_state + step.activations
    assert [name for name, _ in step.rows()] == ["parameters", "gradients",
                                                 "optimizer state", "retained activations",
                                                 "total"]
    assert "retained activations" in str(step) and "<table>" in step._repr_html_()


@pytest.mark.parametrize("batch", [8, 64])
def test_only_activations_grow_with_the_batch(batch):
    widths = [32, 32, 32]
    model = _mlp(widths)
    x = ag.randn(batch, 32, dtype=np.float32, generator=ag.Generator(1))
    step = memory.training_step_memory(model, lambda out, t: out.sum(), x, None,
                                       optim.SGD(model.parameters(), lr=0.1))
    assert step.parameters == _parameter_count(widths) * F32
    assert step.activations == batch * 32 * F32  # one tanh output


def _deep_peaks(depth, width=128, batch=64):
    model = nn.Sequential(*[m for _ in range(depth)
                            for m in (nn.Linear(width, width, dtype=ag.float32), nn.Tanh())])
    x = ag.randn(batch, width, dtype=np.float32, generator=ag.Generator(0))
    return memory.forward_peak_memory(model, x), batch * width * F32


def test_recording_forward_peaks_higher_than_no_grad_by_the_saved_activations():
    depth = 24
    peaks, activation = _deep_peaks(depth)
    shallow, _ = _deep_peaks(3)
    assert peaks["saved_by_graph"] == depth * activation  # every tanh output
    # no_grad holds a few arrays of one layer at a time (input, x @ W.T, + bias,
    # tanh), so its peak does not grow with the depth
    assert peaks["no_grad"] < 6 * activation
    assert abs(peaks["no_grad"] - shallow["no_grad"]) < activation
    # the recording pass holds the saved activations on top of that
    assert peaks["recording"] - peaks["no_grad"] > 0.9 * peaks["saved_by_graph"]
    assert peaks["recording"] < peaks["saved_by_graph"] + 6 * activation


def test_what_keeps_the_graph_alive():
    depth = 6
    model = _mlp([4] + [8] * depth)
    counts = memory.what_keeps_the_graph_alive(model, ag.randn(3, 4, dtype=np.float32))
    # per hidden layer one tanh output; the last linear's output feeds sum (saves nothing)
    assert counts == {"saved arrays": depth - 1, "hold the loss tensor": depth - 1,
                      "hold loss.item()": 0, "hold loss.detach()": 0}


def test_saved_bytes_tracker_sees_forward_peak_and_release_in_backward():
    model = _mlp([4, 8, 8, 8, 1])
    x = ag.randn(5, 4, dtype=np.float32)
    params = list(model.parameters())
    with memory.track_saved_bytes(exclude=[*params, x]) as tracked:
        out = model(x).sum()
        at_end_of_forward = tracked.current
        out.backward()
    assert at_end_of_forward == 3 * 5 * 8 * F32
    assert tracked.peak == at_end_of_forward
    assert tracked.current == 0  # everything released by backward


def test_backward_after_a_no_grad_forward_fails_with_a_clear_error():
    model = _mlp([3, 4, 1])
    x = ag.randn(2, 3, dtype=np.float32)
    with ag.no_grad():
        out = model(x).sum()
    assert memory.activation_bytes(out) == 0
    with pytest.raises(RuntimeError, match="does not require grad and does not have a "
                                           "grad_fn"):
        out.backward()


def test_freezing_parameters_is_not_turning_recording_off():
    model = _mlp([3, 4, 4, 1])
    for p in model[2].parameters():  # freeze the middle layer
        p.requires_grad_(False)
    x = ag.randn(2, 3, dtype=np.float32)
    out = model(x).sum()
    assert memory.activation_bytes(out, exclude=list(model.parameters())) > 0
    out.backward()
    assert model[2].weight.grad is None
    assert model[0].weight.grad is not None  # gradient flowed *through* the frozen layer
