"""Instrumentation (tools/instrument.py) and the hooks it is built on (L9, W5).

* one row per module call, in finishing order, with the output's shape, range,
  mean, std and non-finite count, compared with the layers run by hand;
* the first module, and the first op, that produced a NaN is found;
* with a loss, each row has the gradient norm at that module's output (equal to
  what a hand-placed tensor hook sees); hooks are removed and .grad left alone;
* tensor hooks: called with the gradient, can replace it, removable.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import nn
from autograd_core.tools.instrument import array_stats, instrument


def _model():
    gen = ag.Generator(0)
    return nn.Sequential(nn.Linear(4, 6, generator=gen), nn.Tanh(),
                         nn.Linear(6, 3, generator=gen))


def _batch():
    return ag.randn(5, 4, dtype=np.float32, generator=ag.Generator(1))


class LogLayer(nn.Module):
    def forward(self, x):
        shifted = x - 0.5
        return ag.log(shifted)  # NaN for inputs below 0.5


def test_one_row_per_module_call_with_the_outputs_statistics():
    model, x = _model(), _batch()
    report = instrument(model, x)
    assert [(r.path, r.module, r.shape) for r in report.rows] == [
        ("0", "Linear", (5, 6)), ("1", "Tanh", (5, 6)), ("2", "Linear", (5, 3)),
        ("", "Sequential", (5, 3))]
    with ag.no_grad():  # the same layers run by hand
        h0 = model[0](x).numpy()
        h1 = np.tanh(h0)
    for row, expected in [(report.row("0"), h0), (report.row("1"), h1)]:
        assert row.min == pytest.approx(float(expected.min()))
        assert row.max == pytest.approx(float(expected.max()))
        assert row.mean == pytest.approx(float(expected.mean()), rel=1e-5)
        assert row.std == pytest.approx(float(expected.std()), rel=1e-5)
        assert row.nonfinite == 0 and row.grad_norm is None
    assert report.first_nonfinite is None and report.first_nonfinite_op is None


def test_the_first_module_and_op_that_made_a_nan_are_found():
    model = nn.Sequential(nn.Linear(4, 6, generator=ag.Generator(0)), nn.Tanh(), LogLayer(),
                          nn.Linear(6, 2))
    x = _batch()
    with np.errstate(all="ignore"):
        report = instrument(model, x)
        with ag.no_grad():
            expected_bad = int(np.sum(~np.isfinite(np.log(np.tanh(model[0](x).numpy())
                                                          - 0.5))))
    assert expected_bad > 0
    assert report.first_nonfinite == "2"
    assert report.row("2").nonfinite == expected_bad
    assert report.row("3").nonfinite > 0  # the NaNs travel on: later rows are not the cause
    op = report.first_nonfinite_op
    assert (op.op, op.module, op.nonfinite) == ("log", "2", expected_bad)
    assert "return ag.log(shifted)" in "".join(op.trace)
    text = str(report)
    assert "first non-finite output: module '2'" in text and "op 'log' in module '2'" in text


def test_gradient_norms_per_module_equal_a_hand_placed_tensor_hook():
    model, x = _model(), _batch()
    report = instrument(model, x, loss_fn=lambda out: (out * out).sum())
    seen = {}
    h = model[0](x)
    h.register_hook(lambda g: seen.update(linear0=float(np.linalg.norm(g.numpy()))))
    t = model[1](h)
    t.register_hook(lambda g: seen.update(tanh=float(np.linalg.norm(g.numpy()))))
    (model[2](t) ** 2).sum().backward()
    assert report.row("0").grad_norm == pytest.approx(seen["linear0"], rel=1e-6)
    assert report.row("1").grad_norm == pytest.approx(seen["tanh"], rel=1e-6)


def test_vanishing_gradients_show_layer_by_layer():
    gen = ag.Generator(0)
    model = nn.Sequential(*[m for _ in range(8)
                            for m in (nn.Linear(16, 16, generator=gen), nn.Sigmoid())])
    report = instrument(model, ag.randn(8, 16, dtype=np.float32), loss_fn=lambda o: o.sum())
    norms = [report.row(f"{2 * i + 1}").grad_norm for i in range(8)]  # sigmoid outputs
    assert all(a < b for a, b in zip(norms, norms[1:]))  # smaller the further from the loss
    assert norms[0] < 1e-3 * norms[-1]


def test_instrumenting_leaves_no_hooks_and_no_gradients_behind():
    model, x = _model(), _batch()
    before = [p.grad for p in model.parameters()]
    instrument(model, x, loss_fn=lambda out: out.sum())
    assert [p.grad for p in model.parameters()] == before == [None] * 4
    for module in model.modules():
        assert not module._forward_hooks and not module._forward_pre_hooks


def test_text_and_html_tables():
    report = instrument(_model(), _batch())
    lines = str(report).splitlines()
    assert lines[0].split() == ["module", "type", "output", "shape", "min", "max", "mean",
                                "std", "non-finite", "grad", "norm"]
    assert lines[-1].startswith("(model)")
    html = report._repr_html_()
    assert html.count("<tr>") == 1 + len(report.rows) and "<th>non-finite</th>" in html


@pytest.mark.parametrize("values, expected", [
    ([1.0, 2.0, 3.0], (1.0, 3.0, 2.0, np.std([1.0, 2.0, 3.0]), 0)),
    ([1.0, np.nan, 3.0, np.inf], (1.0, 3.0, 2.0, 1.0, 2)),
])
def test_array_stats_ignore_non_finite_values_and_count_them(values, expected):
    assert array_stats(np.array(values)) == pytest.approx(expected)


def test_array_stats_of_all_nan():
    stats = array_stats(np.array([np.nan, np.nan]))
    assert np.isnan(stats[:4]).all() and stats[4] == 2


# -- tensor hooks -------------------------------------------------------------------------------
def test_tensor_hooks_see_replace_and_are_removable():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.tolist()))
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [3.0, 3.0]
    handle.remove()
    x.grad = None
    doubling = x.register_hook(lambda g: g * 2)
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]]  # the removed hook was not called again
    assert x.grad.tolist() == [6.0, 6.0]  # the remaining hook replaced the gradient
    doubling.remove()


def test_a_hook_on_an_intermediate_sees_its_upstream_gradient():
    x = ag.tensor([1.0, -2.0], requires_grad=True)
    h = x * x
    seen = []
    h.register_hook(lambda g: seen.append(g.tolist()))
    (h * ag.tensor([5.0, 7.0])).sum().backward()
    assert seen == [[5.0, 7.0]]
    assert x.grad.tolist() == [10.0, -28.0]
