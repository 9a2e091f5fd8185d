"""Anomaly detection (tools/anomaly.py): from a NaN/inf in backward to the forward line.

* the first backward rule that returns a non-finite gradient raises, with
  PyTorch's wording, the op, the module, the user's forward line and a hint;
* each node recorded in anomaly mode keeps its creation traceback, user frames only;
* outside the mode nothing is recorded or checked; gradients are unchanged inside.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import autograd, nn
from autograd_core.tools import anomaly
from autograd_core.tools.anomaly import detect_anomaly

THIS_FILE = __file__


def sqrt_at_zero():
    x = ag.tensor([0.0, 4.0], requires_grad=True)
    return x.sqrt().sum()  # FORWARD LINE sqrt


def sqrt_times_zero():
    x = ag.tensor([0.0, 4.0], requires_grad=True)
    return (x.sqrt() * 0.0).sum()  # FORWARD LINE sqrt-nan


def log_of_zero():
    x = ag.tensor([0.0, 1.0], requires_grad=True)
    return ag.log(x).sum()  # FORWARD LINE log


def divide_by_zero():
    a = ag.tensor([1.0, 2.0], requires_grad=True)
    b = ag.tensor([0.0, 1.0])
    return (a / b).sum()  # FORWARD LINE div


def overflowing_exp():
    x = ag.tensor([800.0], requires_grad=True)
    y = x.exp()  # FORWARD LINE exp
    return (y - y).sum()


@pytest.mark.parametrize("program, backward, kind, op, hint", [
    (sqrt_at_zero, "SqrtBackward", "inf", "sqrt", "infinite slope at 0"),
    (sqrt_times_zero, "SqrtBackward", "nan", "sqrt", "infinite slope at 0"),
    (log_of_zero, "LogBackward", "inf", "log", "clamp it"),
    (divide_by_zero, "DivBackward", "inf", "div", "denominator near 0"),
    (overflowing_exp, "ExpBackward", "nan", "exp", "inf * 0"),  # g = 1 - 1 = 0, out = inf
])
def test_the_first_non_finite_gradient_names_the_op_and_the_forward_line(
        program, backward, kind, op, hint):
    with np.errstate(all="ignore"), detect_anomaly():
        loss = program()
        with pytest.raises(RuntimeError) as info:
            loss.backward()
    message = str(info.value)
    assert message.startswith(f"Function '{backward}' returned {kind} values in its 0th "
                              "output.")
    assert f"The op '{op}'" in message
    marker = "FORWARD LINE " + ("sqrt-nan" if program is sqrt_times_zero else op)
    assert THIS_FILE in message and marker in message  # the line of this file that made it
    assert f"in {program.__name__}" in message
    assert "Hint: " in message and hint in message


def test_without_anomaly_mode_the_same_backward_silently_gives_inf():
    with np.errstate(all="ignore"):
        x = ag.tensor([0.0, 4.0], requires_grad=True)
        x.sqrt().sum().backward()
    assert np.isinf(x.grad.numpy()[0])


def test_the_module_path_is_named():
    class Unsafe(nn.Module):
        def forward(self, x):
            return ag.log(x)

    model = nn.Sequential(nn.ReLU(), Unsafe())
    with np.errstate(all="ignore"), detect_anomaly():
        loss = model(ag.tensor([[-1.0, 2.0]], requires_grad=True)).sum()
        with pytest.raises(RuntimeError, match=r"The op 'log' \(in module '1'\)"):
            loss.backward()


def test_nodes_keep_their_creation_traceback_only_in_anomaly_mode():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    outside = x * 2
    with detect_anomaly():
        inside = x * 3  # the recorded line
    assert outside.grad_fn.trace is None
    frames = inside.grad_fn.trace
    assert frames[-1].filename == THIS_FILE
    assert frames[-1].line == "inside = x * 3  # the recorded line"
    # user frames only: nothing from the engine, pytest or the standard library
    engine = re.compile(r"(autograd_core|_pytest|pluggy|site-packages|lib/python3)")
    assert not [f.filename for f in frames if engine.search(f.filename)]


def test_finite_gradients_are_unchanged_and_check_nan_false_only_records():
    def run():
        w = ag.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        (ag.tanh(w @ w).exp()).sum().backward()
        return w.grad.numpy()

    plain = run()
    with detect_anomaly():
        checked = run()
    np.testing.assert_array_equal(plain, checked)
    with np.errstate(all="ignore"), detect_anomaly(check_nan=False):
        loss = sqrt_at_zero()
        assert loss.grad_fn.trace is not None
        loss.backward()  # no error: only the tracebacks are kept


def test_works_as_a_decorator_and_is_the_autograd_name():
    assert autograd.detect_anomaly is anomaly.detect_anomaly

    @detect_anomaly()
    def train_step():
        with np.errstate(all="ignore"):
            sqrt_at_zero().backward()

    with pytest.raises(RuntimeError, match="SqrtBackward"):
        train_step()
    with np.errstate(all="ignore"):
        sqrt_at_zero().backward()  # the decorator's mode ended with the function


def test_a_node_recorded_before_the_mode_was_on_still_gets_a_message():
    with np.errstate(all="ignore"):
        loss = sqrt_at_zero()
        with detect_anomaly(), pytest.raises(RuntimeError, match="forward line is unknown"):
            loss.backward()


@pytest.mark.torch
def test_the_wording_is_pytorchs():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: wording "
                                "cross-check skipped (pip install -e '.[torch]')")
    x = torch.tensor([0.0, 4.0], requires_grad=True)
    with pytest.warns(UserWarning), torch.autograd.detect_anomaly():
        loss = (x.sqrt() * 0.0).sum()
        with pytest.raises(RuntimeError) as theirs:
            loss.backward()
    with np.errstate(all="ignore"), detect_anomaly():
        loss = sqrt_times_zero()
        with pytest.raises(RuntimeError) as ours:
            loss.backward()
    pattern = r"^Function '(\w+?)Backward\d*' returned nan values in its 0th output\."
    assert re.match(pattern, str(theirs.value)).group(1) == "Sqrt"
    assert re.match(pattern, str(ours.value)).group(1) == "Sqrt"
