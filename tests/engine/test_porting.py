"""What a model file and its training script ported from PyTorch touch, on the engine
alone: sort/topk/argsort/roll at the edges the op table does not draw (0-d, empty,
ties, NaN), multinomial, randint, from_numpy, contiguous, devices and ``.to``, the
containers, ``Module.apply``, ``clip_grad_norm_``, ``save``/``load`` and ``no_grad`` as
a decorator, with the sentences bad input gets. Random shapes, finite differences,
second derivatives and forward mode of topk, sort and roll: their rows in
tests/helpers/op_table.py; against PyTorch: test_porting_torch.py.
"""

from __future__ import annotations

import io
import pickle
import re

import numpy as np
import pytest
from op_table import central_differences

import autograd_core as ag
from autograd_core import autograd, nn


# -- sort, topk, argsort, roll at the edges ---------------------------------------------------
def _first_and_second(fn, x: np.ndarray, w: np.ndarray, u: np.ndarray):
    """(engine's d<w, fn(x)>/dx, finite differences of it; engine's d<u, that>/dx,
    finite differences of it)."""
    def grad_of(values, create_graph=False):
        t = ag.tensor(values, requires_grad=True)
        out = (fn(t) * ag.tensor(w)).sum()
        (gx,) = autograd.grad(out, t, create_graph=create_graph, allow_unused=True)
        return t, gx

    def objective(inputs):
        with ag.no_grad():
            return float((fn(ag.tensor(inputs[0])).numpy() * w).sum())

    t, gx = grad_of(x, create_graph=True)
    first = np.zeros_like(x) if gx is None else gx.numpy()
    (numeric_first,) = central_differences(objective, [x])
    second = np.zeros_like(x)
    if gx is not None and gx.requires_grad:
        (h,) = autograd.grad((gx * ag.tensor(u)).sum(), t, allow_unused=True)
        second = np.zeros_like(x) if h is None else h.numpy()
    (numeric_second,) = central_differences(
        lambda inputs: float((grad_of(inputs[0])[1].numpy() * u).sum()), [x])
    return first, numeric_first, second, numeric_second


EDGE_PROGRAMS = {
    "sort": lambda t: ag.sort(t, 0, descending=True).values ** 2,
    "topk": lambda t: ag.topk(t, min(1, t.numel()), 0).values ** 3,
    "roll": lambda t: ag.roll(t, 1, 0) ** 2,
    "roll_flat": lambda t: ag.roll(t, -2) ** 2,
}


@pytest.mark.parametrize("name", EDGE_PROGRAMS)
@pytest.mark.parametrize("shape", [(), (0,), (3,)], ids=["0-d", "empty", "1-d"])
def test_gradient_and_second_derivative_at_the_edges(name, shape):
    rng = np.random.default_rng(1)
    x = rng.permutation(np.arange(1.0, 1.0 + int(np.prod(shape)))).reshape(shape) * 0.7
    fn = EDGE_PROGRAMS[name]
    w = rng.standard_normal(fn(ag.tensor(x)).shape)
    first, want_first, second, want_second = _first_and_second(fn, x, w, rng.standard_normal(shape))
    np.testing.assert_allclose(first, want_first, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(second, want_second, rtol=1e-5, atol=1e-6)


def test_sort_and_topk_return_named_pairs_with_int64_indices():
    x = ag.tensor([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]], requires_grad=True)
    result = ag.topk(x, 2)
    assert type(result).__name__ == "topk" and result._fields == ("values", "indices")
    values, indices = result
    np.testing.assert_array_equal(values.numpy(), [[3.0, 2.0], [5.0, 0.0]])
    np.testing.assert_array_equal(indices.numpy(), [[0, 2], [2, 0]])
    assert indices.dtype == np.int64 and not indices.requires_grad
    s = x.sort(dim=0)
    assert type(s).__name__ == "sort"
    np.testing.assert_array_equal(s.values.numpy(), [[0.0, -1.0, 2.0], [3.0, 1.0, 5.0]])
    np.testing.assert_array_equal(s.indices.numpy(), [[1, 1, 0], [0, 0, 1]])
    np.testing.assert_array_equal(x.argsort(descending=True).numpy(), [[0, 2, 1], [2, 0, 1]])
    values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 0, 1], [1, 0, 1]])  # 0: left out


def test_ties_keep_their_positions_order_and_nan_is_largest():
    x = ag.tensor([2.0, np.nan, 1.0, 2.0, 1.0, np.nan])
    np.testing.assert_array_equal(ag.argsort(x).numpy(), [2, 4, 0, 3, 1, 5])
    np.testing.assert_array_equal(ag.argsort(x, descending=True).numpy(), [1, 5, 0, 3, 2, 4])
    np.testing.assert_array_equal(ag.topk(x, 3, largest=False).indices.numpy(), [2, 4, 0])


def test_0d_and_empty_inputs_keep_their_shapes():
    s = ag.sort(ag.tensor(2.5))
    assert s.values.shape == () and s.indices.shape == () and s.indices.item() == 0
    e = ag.topk(ag.zeros(2, 0), 0)
    assert e.values.shape == (2, 0) and e.indices.dtype == np.int64
    assert ag.roll(ag.tensor(2.0), 3, 0).item() == 2.0
    assert ag.roll(ag.zeros(0, 3), 2, 1).shape == (0, 3)


def test_roll_matches_the_definition():
    x = ag.arange(12.0).reshape(3, 4)
    out = ag.roll(x, (1, -1), (0, 1)).numpy()
    want = np.array([[x.numpy()[(i - 1) % 3, (j + 1) % 4] for j in range(4)] for i in range(3)])
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(x.roll(13).numpy().ravel(), np.roll(np.arange(12.0), 1))


@pytest.mark.parametrize("call, words", [
    (lambda: ag.topk(ag.zeros(3), 4), "k out of range"),
    (lambda: ag.topk(ag.zeros(3), -1), "k out of range"),
    (lambda: ag.sort(ag.zeros(3), 1), "out of range"),
    (lambda: ag.sort(ag.zeros(3), "last"), "dim"),
    (lambda: ag.sort({"a": 1}), "sort"),
    (lambda: ag.roll(ag.zeros(3, 2), (1, 2), 0), "one shift per dim"),
    (lambda: ag.roll(ag.zeros(3, 2), (1, 2)), "one shift per dim"),
    (lambda: ag.roll(ag.zeros(3, 2), 1.5, 0), "shifts"),
])
def test_bad_sorting_arguments_get_a_sentence(call, words):
    with pytest.raises((RuntimeError, TypeError, IndexError, ValueError)) as info:
        call()
    assert words in str(info.value)


# -- drawing integers ----------------------------------------------------------------------
def test_multinomial_draws_by_weight_without_replacement_by_default():
    g = ag.Generator(3)
    w = ag.tensor([[0.0, 1.0, 3.0, 0.0, 2.0], [5.0, 0.0, 0.0, 1.0, 0.0]])
    draws = ag.multinomial(w, 2, generator=g)
    assert draws.shape == (2, 2) and draws.dtype == np.int64 and not draws.requires_grad
    for row, picked in zip(w.numpy(), draws.numpy(), strict=True):
        assert len(set(picked)) == 2 and all(row[picked] > 0)
    many = ag.multinomial(ag.tensor([1.0, 3.0]), 4000, replacement=True, generator=g).numpy()
    assert 0.72 < many.mean() < 0.78  # P(1) = 3/4
    again = ag.multinomial(w, 2, generator=ag.Generator(3)).numpy()
    np.testing.assert_array_equal(again, draws.numpy())  # seeded


@pytest.mark.parametrize("weights, n, words", [
    ([1.0, -1.0], 1, "element < 0"), ([0.0, 0.0], 1, "sum of probabilities"),
    ([1.0, np.inf], 1, "inf, nan"), ([[[1.0]]], 1, "1 or 2 dim"),
    ([1.0, 0.0, 2.0], 3, "without replacement"), ([1.0, 2.0], 0, "positive int"),
])
def test_bad_multinomial_input_gets_a_sentence(weights, n, words):
    with pytest.raises(RuntimeError, match=words):
        ag.multinomial(ag.tensor(weights), n)


def test_randint_short_and_long_forms():
    a = ag.randint(5, (2, 3), generator=ag.Generator(0))
    b = ag.randint(0, 5, (2, 3), generator=ag.Generator(0))
    c = ag.randint(-3, -1, size=(50,))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a.dtype == np.int64 and a.shape == (2, 3) and 0 <= a.numpy().min()
    assert a.numpy().max() < 5 and set(c.numpy()) <= {-3, -2}
    assert ag.randint(2, 4, (3,), dtype=ag.int32).dtype == np.int32


@pytest.mark.parametrize("args, words", [((5,), "takes (high, size)"), ((5, 3), "tuple"),
                                         ((3, 3, (2,)), "empty"), ((1.5, (2,)), "ints")])
def test_bad_randint_arguments_get_a_sentence(args, words):
    with pytest.raises(TypeError, match=re.escape(words)):
        ag.randint(*args)


def test_from_numpy_shares_memory():
    a = np.arange(3.0)
    t = ag.from_numpy(a)
    a[0] = 7.0
    assert t[0].item() == 7.0 and t.dtype == np.float64
    with pytest.raises(TypeError, match="NumPy array"):
        ag.from_numpy([1.0, 2.0])


def test_contiguous_copies_only_what_is_not_and_passes_the_gradient():
    x = ag.randn(3, 4, requires_grad=True)
    assert x.contiguous() is x and x.is_contiguous()
    y = x.T.contiguous()
    assert y.is_contiguous() and not x.T.is_contiguous() and y.grad_fn.name == "contiguous"
    (y * ag.arange(12.0).reshape(4, 3)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(12.0).reshape(4, 3).T)


# -- devices and .to ---------------------------------------------------------------------
def test_devices_are_the_cpu():
    x = ag.tensor([1.0, 2.0], device="cpu")
    assert x.device == ag.device("cpu") and str(x.device) == "cpu" and not x.is_cuda
    assert ag.zeros(2, device=ag.device("cpu")).device.type == "cpu"
    assert x.to("cpu") is x and x.cpu() is x and x.to(ag.float64) is x
    assert x.to("cpu", ag.float32).dtype == np.float32
    assert x.to(device="cpu", dtype=ag.float16).dtype == np.float16
    assert x.to(ag.ones(1, dtype=ag.float32)).dtype == np.float32
    assert x.to("float32").dtype == np.float32
    assert ag.long is ag.int64 and ag.float is np.float32 and ag.double is np.float64


@pytest.mark.parametrize("call", [
    lambda: ag.tensor([1.0], device="cuda"), lambda: ag.zeros(2, device="mps"),
    lambda: ag.randn(2, device="cuda:0"), lambda: ag.device("cuda"),
    lambda: ag.ones(2).to("cuda"), lambda: nn.Linear(2, 2).to("cuda", ag.float32),
])
def test_another_device_gets_a_sentence(call):
    with pytest.raises(RuntimeError, match="CPU only"):
        call()


def test_module_to_device_and_dtype():
    model = nn.Linear(2, 3, dtype=ag.float32)
    assert model.to("cpu") is model and model.weight.dtype == np.float32
    assert model.to(ag.device("cpu"), ag.float64).weight.dtype == np.float64
    assert model.to(dtype=ag.float32).bias.dtype == np.float32
    assert model.to(ag.zeros(1)).weight.dtype == np.float64
    with pytest.raises(TypeError, match="to\\(\\) takes"):
        model.to("cpu", "cpu")


# -- no_grad as a decorator -----------------------------------------------------------------
def test_no_grad_decorates_with_and_without_parentheses():
    x = ag.tensor([1.0], requires_grad=True)

    @ag.no_grad
    def bare(t):
        return t * 2

    @ag.no_grad()
    def called(t):
        return t * 2

    assert not bare(x).requires_grad and not called(x).requires_grad
    assert (x * 2).requires_grad and ag.is_grad_enabled()
    assert bare.__name__ == "bare"
    with pytest.raises(TypeError, match="function to decorate"):
        ag.no_grad(5)


# -- containers and apply ----------------------------------------------------------------------
class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(3, 3) for _ in range(2)])
        self.heads = nn.ModuleDict({"a": nn.Linear(3, 1), "b": nn.Linear(3, 2)})
        self.scales = nn.ParameterList([ag.ones(3), nn.Parameter(ag.zeros(1))])


def test_containers_register_their_entries():
    model = Blocks()
    assert list(model.state_dict()) == [
        "blocks.0.weight", "blocks.0.bias", "blocks.1.weight", "blocks.1.bias",
        "heads.a.weight", "heads.a.bias", "heads.b.weight", "heads.b.bias",
        "scales.0", "scales.1"]
    assert len(list(model.parameters())) == 10
    assert all(isinstance(p, nn.Parameter) for p in model.scales)


def test_module_list_behaves_like_a_list():
    layers = [nn.Linear(2, 2) for _ in range(4)]
    ml = nn.ModuleList(layers[:2])
    ml.append(layers[2]).extend([layers[3]])
    assert len(ml) == 4 and list(ml) == layers and ml[-1] is layers[3]
    assert isinstance(ml[1:3], nn.ModuleList) and list(ml[1:3]) == layers[1:3]
    del ml[0]
    assert list(ml) == layers[1:] and [n for n, _ in ml.named_children()] == ["0", "1", "2"]
    ml.insert(0, layers[0])
    ml[1] = nn.ReLU()
    assert ml[0] is layers[0] and isinstance(ml[1], nn.ReLU) and len(ml) == 4
    ml += [nn.Tanh()]
    assert len(ml) == 5


def test_module_dict_and_parameter_list():
    d = nn.ModuleDict([("x", nn.ReLU())])
    d["y"] = nn.Tanh()
    assert list(d) == ["x", "y"] and "y" in d and len(d) == 2
    assert isinstance(d.pop("x"), nn.ReLU) and list(d.keys()) == ["y"]
    p = nn.ParameterList()
    p.append(ag.ones(2, requires_grad=False))
    assert len(p) == 1 and isinstance(p[0], nn.Parameter) and p[0].requires_grad  # as torch


@pytest.mark.parametrize("call, kind, words", [
    (lambda: nn.ModuleList([lambda x: x]), TypeError, "ModuleList holds nn.Module"),
    (lambda: nn.ModuleList([nn.ReLU()])[1], IndexError, "out of range"),
    (lambda: nn.ModuleList([nn.ReLU()])["0"], TypeError, "integers or slices"),
    (lambda: nn.ModuleDict({"a": nn.ReLU()})["b"], KeyError, "not a key"),
    (lambda: nn.ModuleDict({"a.b": nn.ReLU()}), KeyError, "without '.'"),
    (lambda: nn.ParameterList([[1.0, 2.0]]), TypeError, "ParameterList holds"),
    (lambda: nn.ModuleList(nn.ReLU()), TypeError, "iterable"),
])
def test_bad_container_use_gets_a_sentence(call, kind, words):
    with pytest.raises(kind, match=words):
        call()


def test_apply_visits_children_first_and_returns_the_module():
    model = Blocks()
    seen = []
    assert model.apply(lambda m: seen.append(type(m).__name__)) is model
    assert seen == ["Linear", "Linear", "ModuleList", "Linear", "Linear", "ModuleDict",
                    "ParameterList", "Blocks"]


# -- clip_grad_norm_ --------------------------------------------------------------------------
def test_clip_grad_norm_scales_to_max_norm_and_returns_the_total():
    a, b, c = ag.zeros(2, requires_grad=True), ag.zeros(1, requires_grad=True), ag.zeros(1)
    a.grad, b.grad = ag.tensor([3.0, 0.0]), ag.tensor([-4.0])
    grad_a = a.grad
    total = nn.utils.clip_grad_norm_([a, b, c], max_norm=1.0)
    assert total.shape == () and total.item() == pytest.approx(5.0)
    assert a.grad is grad_a  # in place
    np.testing.assert_allclose(a.grad.numpy(), [3.0 / (5 + 1e-6), 0.0])
    total = nn.utils.clip_grad_norm_([a, b], max_norm=10.0, norm_type=float("inf"))
    assert total.item() == pytest.approx(0.8, rel=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), [-0.8], rtol=1e-5)  # not scaled up
    assert nn.utils.clip_grad_norm_(c, 1.0).item() == 0.0


def test_clip_grad_norm_refuses_a_nonfinite_norm_when_asked():
    a = ag.zeros(2, requires_grad=True)
    a.grad = ag.tensor([np.inf, 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_([a], 1.0, error_if_nonfinite=True)
    with pytest.raises(ValueError, match="norm_type"):
        nn.utils.clip_grad_norm_([a], 1.0, norm_type="fro")


# -- save and load -------------------------------------------------------------------------------
def test_save_and_load_round_trip(tmp_path):
    model = Blocks().double()
    state = model.state_dict()
    state["count"] = ag.tensor(7)
    path = tmp_path / "model.pt"
    ag.save(state, path)
    assert path.exists() and not (tmp_path / "model.pt.npz").exists()
    loaded = ag.load(path)
    assert list(loaded) == list(state)
    for key, value in state.items():
        np.testing.assert_array_equal(loaded[key].numpy(), value.numpy())
        assert loaded[key].dtype == value.dtype
    buffer = io.BytesIO()
    ag.save(model.state_dict(), buffer)
    buffer.seek(0)
    fresh = Blocks().double()
    fresh.load_state_dict(ag.load(buffer, map_location="cpu"))
    np.testing.assert_array_equal(fresh.blocks[1].weight.numpy(), model.blocks[1].weight.numpy())


class _Trap:
    ran = False

    def __reduce__(self):
        return (_Trap._spring, ())

    @staticmethod
    def _spring():
        _Trap.ran = True
        return 0


def test_load_never_runs_code_and_damaged_files_get_a_sentence(tmp_path):
    pickled = tmp_path / "pickled.npz"
    with open(pickled, "wb") as f:
        np.savez(f, keys=np.array(["w"]), v0=np.array([_Trap()], dtype=object))
    plain_pickle = tmp_path / "plain.pt"
    plain_pickle.write_bytes(pickle.dumps({"w": _Trap()}))
    ag.save({"w": ag.ones(3)}, tmp_path / "good.npz")
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes((tmp_path / "good.npz").read_bytes()[:60])
    one_array = tmp_path / "one.npy"
    np.save(one_array, np.ones(2))
    for path in (pickled, plain_pickle, truncated, one_array):
        with pytest.raises(ValueError, match="not a state dict saved by autograd_core.save"):
            ag.load(path)
    assert not _Trap.ran
    with pytest.raises(TypeError, match="state dict"):
        ag.save([ag.ones(2)], tmp_path / "list.npz")
    with pytest.raises(TypeError, match="'w' is"):
        ag.save({"w": "text"}, tmp_path / "text.npz")
