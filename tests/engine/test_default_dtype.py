"""One default floating dtype for creation functions and layers, as PyTorch's
``set_default_dtype`` / ``get_default_dtype``, and PyTorch's promotion rules where
NumPy's differ (a 0-d float operand, an integer tensor with a Python float, integer
division). Expected dtypes are PyTorch's documented rules, written out; the same cases
run on PyTorch 2.13 in ``test_default_dtype_torch.py``."""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import nn
from autograd_core.recording.node import Observer, observing
from autograd_core.tools.gradcheck import gradcheck


@pytest.fixture(params=[np.float32, np.float64, np.float16], ids=["float32", "float64",
                                                                   "float16"])
def default(request):
    """Each default in turn, restored afterwards (it is the process's state)."""
    before = ag.get_default_dtype()
    ag.set_default_dtype(request.param)
    yield request.param
    ag.set_default_dtype(before)


def test_the_default_is_float64_and_a_gradient_check_needs_nothing_set():
    assert ag.get_default_dtype() is np.float64
    assert nn.Linear(2, 3).weight.dtype == ag.tensor([0.5]).dtype == ag.ones(2).dtype \
        == np.float64
    x = ag.randn(3, requires_grad=True)
    assert gradcheck(lambda t: (t * t).sum(), (x,))


def test_creation_functions_and_layers_agree_on_the_default(default):
    made = {
        "zeros": ag.zeros(2, 3), "ones": ag.ones(2), "randn": ag.randn(2), "rand": ag.rand(2),
        "tensor of floats": ag.tensor([[1.0, 2.0]]), "tensor of a float": ag.tensor(0.5),
        "arange of floats": ag.arange(0.0, 1.0, 0.25),
    }
    layers = [nn.Linear(2, 3), nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.LayerNorm(4),
              nn.RMSNorm(4), nn.Embedding(5, 2), nn.LSTM(2, 3),
              nn.MultiheadAttention(4, 2), nn.TransformerBlock(8, 2)]
    for layer in layers:
        for name, value in layer.state_dict().items():
            if value.dtype.kind == "f":
                made[f"{type(layer).__name__}.{name}"] = value
    wrong = {name: str(t.dtype) for name, t in made.items() if t.dtype != default}
    assert not wrong, f"not in the default {np.dtype(default)}: {wrong}"


def test_what_keeps_its_own_dtype(default):
    assert ag.tensor(np.array([1.0])).dtype == np.float64  # a NumPy array's own dtype
    assert ag.tensor(np.float64(1.0)).dtype == np.float64
    assert ag.tensor([1, 2]).dtype == ag.arange(3).dtype == np.int64
    assert ag.zeros(2, dtype=ag.float32).dtype == np.float32
    assert nn.Linear(2, 2, dtype=ag.float64).weight.dtype == np.float64
    assert ag.tensor([1.0], dtype=ag.float16).dtype == np.float16


@pytest.mark.parametrize("dtype", [ag.int64, ag.bool, "cpu", object, "no such type"])
def test_only_a_floating_dtype_can_be_the_default(dtype):
    with pytest.raises(TypeError, match="only floating-point types are supported as the "
                       "default type"):
        ag.set_default_dtype(dtype)
    assert ag.get_default_dtype() is np.float64


def _result(expression: str, default):
    x32, x64 = ag.ones(3, dtype=ag.float32), ag.ones(3, dtype=ag.float64)
    s32, s64 = ag.tensor(2.0, dtype=ag.float32), ag.tensor(2.0, dtype=ag.float64)
    i = ag.tensor([1, 2, 3])
    return eval(expression, {"x32": x32, "x64": x64, "s32": s32, "s64": s64, "i": i,
                             "np": np, "lib": ag}).dtype


# (expression, result: a dtype, or "default"), by PyTorch's rules: tensors with
# dimensions promote as NumPy; a 0-d tensor or a NumPy scalar does not change the float
# dtype of a tensor with dimensions; Python floats with integers give the default.
PROMOTIONS = [
    ("x32 * x64", np.float64), ("x64 - x32", np.float64),
    ("x32 * s64", np.float32), ("s64 + x32", np.float32), ("x32 / s64", np.float32),
    ("x64 * s32", np.float64), ("lib.maximum(x32, s64)", np.float32),
    ("x32 ** s64", np.float32), ("x32 * np.float64(2.0)", np.float32),
    ("lib.where(x32 > 0, x32, s64)", np.float32), ("lib.where(x32 > 0, s64, x64)", np.float64),
    ("s32 * s64", np.float64), ("x32 * 2.0", np.float32), ("i * s64", np.float64),
    ("i * 0.5", "default"), ("0.5 + i", "default"), ("i / 2", "default"),
    ("i / i", "default"), ("i * 2", np.int64),
]


@pytest.mark.parametrize("expression,expected", PROMOTIONS, ids=[p[0] for p in PROMOTIONS])
def test_promotion_follows_pytorch(expression, expected, default):
    want = default if expected == "default" else expected
    assert _result(expression, default) == want


def test_a_0d_operand_keeps_its_own_dtype_for_its_gradient():
    x = ag.ones(3, dtype=ag.float32)
    scale = ag.tensor(2.0, requires_grad=True)  # float64
    y = x * scale
    y.sum().backward()
    assert y.dtype == np.float32 and scale.grad.dtype == np.float64
    assert scale.grad.item() == 3.0


class _Dtypes(Observer):
    def __init__(self):
        self.seen: set = set()

    def on_forward(self, op, node, arrays, out, params):
        self.seen.add(str(out.dtype))

    def on_backward(self, node, grad_output, grads):
        self.seen.update(str(g.dtype) for g in grads if g is not None)


class _Model(nn.Module):
    """A model file's usual habits: a parameter made with ``ones``, a constant made in
    ``forward`` with ``zeros`` and ``arange``, a layer with no dtype given."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(ag.ones(4))
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        shift = ag.zeros(4) + ag.arange(0.0, 4.0) * 0.1
        return self.fc(x * self.scale + shift).relu().mean()


def test_a_model_built_under_float32_runs_in_float32_throughout():
    before = ag.get_default_dtype()
    ag.set_default_dtype(ag.float32)
    try:
        model = _Model()
        with observing(_Dtypes()) as seen:
            model(ag.randn(5, 4)).backward()
    finally:
        ag.set_default_dtype(before)
    assert seen.seen == {"float32"}
    assert {p.grad.dtype for p in model.parameters()} == {np.dtype(np.float32)}


@pytest.mark.torch
@pytest.mark.parametrize("name", ["float32", "float64"])
def test_the_same_dtypes_as_pytorch(name):
    """Every promotion above and every creation function's dtype, on PyTorch 2.13 under
    the same default: the table is PyTorch's."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: the dtypes are "
                                "not compared with PyTorch 2.13.0 (pip install -e '.[torch]')")
    before, ours_before = torch.get_default_dtype(), ag.get_default_dtype()
    torch.set_default_dtype(getattr(torch, name))
    ag.set_default_dtype(getattr(ag, name))
    try:
        x32, x64 = torch.ones(3, dtype=torch.float32), torch.ones(3, dtype=torch.float64)
        s32 = torch.tensor(2.0, dtype=torch.float32)
        s64 = torch.tensor(2.0, dtype=torch.float64)
        names = {"x32": x32, "x64": x64, "s32": s32, "s64": s64, "i": torch.tensor([1, 2, 3]),
                 "np": np, "lib": torch}
        for expression, _ in PROMOTIONS:
            theirs = str(eval(expression, names).dtype).removeprefix("torch.")
            assert str(_result(expression, None)) == theirs, expression
        for made in ["zeros(2)", "ones(2)", "randn(2)", "rand(2)", "tensor([1.0])",
                     "tensor(0.5)", "arange(0.0, 1.0, 0.25)", "arange(3)", "tensor([1, 2])",
                     "nn.Linear(2, 3).weight", "nn.LayerNorm(2).bias",
                     "nn.BatchNorm1d(2).running_var", "nn.Embedding(3, 2).weight"]:
            theirs = str(eval("lib." + made, {"lib": torch}).dtype).removeprefix("torch.")
            assert str(eval("lib." + made, {"lib": ag}).dtype) == theirs, made
    finally:
        torch.set_default_dtype(before)
        ag.set_default_dtype(ours_before)


def test_kept_differences_in_the_readme_table():
    """Two deliberate differences from PyTorch, as the README's table states them: a 0-d
    NumPy array promotes as a 0-d tensor does (PyTorch: as a tensor with dimensions), and
    float32 @ float64 promotes to float64 (PyTorch refuses)."""
    x32 = ag.ones(3, dtype=ag.float32)
    assert (x32 * np.array(2.0)).dtype == np.float32
    assert (ag.ones(2, 2, dtype=ag.float32) @ ag.ones(2, 2)).dtype == np.float64
