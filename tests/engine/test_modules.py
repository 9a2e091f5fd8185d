"""nn.Module mechanics, the layers and the teaching blocks, without PyTorch.

Gradients are checked against central finite differences in float64 (``gradcheck``);
parameter counts and initial-value bounds are computed here from the formulas.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import nn
from autograd_core.autograd import gradcheck
from autograd_core.recording.node import module_scope
from autograd_core.tools.graph import capture

F64 = ag.float64


def g(seed: int = 0) -> ag.Generator:
    return ag.Generator(seed)


def rand(*shape, seed: int = 1, requires_grad: bool = True) -> ag.Tensor:
    return ag.tensor(np.random.default_rng(seed).uniform(-1, 1, shape), requires_grad=requires_grad)


def tiny_model() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 3, generator=g(0)), nn.ReLU(),
                         nn.Linear(3, 2, generator=g(1)))


class Block(nn.Module):
    """A user-defined module with a parameter, a buffer and nested children."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(np.ones(3))
        self.register_buffer("count", ag.zeros(()))
        self.inner = nn.Sequential(nn.Linear(3, 3, generator=g(2)), nn.Tanh())

    def forward(self, x):
        return self.inner(x) * self.scale


# -- Parameter and registration --------------------------------------------------------------
def test_parameter_is_a_leaf_that_requires_grad_and_copies_its_data():
    data = np.array([1.0, 2.0])
    p = nn.Parameter(data)
    data[0] = 5.0
    assert p.requires_grad and p.is_leaf and p.is_parameter
    assert p.tolist() == [1.0, 2.0]
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    assert repr(p).startswith("Parameter containing:\ntensor(")


def test_registration_by_type():
    block = Block()
    assert [n for n, _ in block.named_parameters()] == ["scale", "inner.0.weight",
                                                        "inner.0.bias"]
    assert [n for n, _ in block.named_buffers()] == ["count"]
    assert [n for n, _ in block.named_modules()] == ["", "inner", "inner.0", "inner.1"]
    assert list(block.children()) == [block.inner]
    assert block.inner[0].weight is dict(block.named_parameters())["inner.0.weight"]
    block.note = ag.zeros(2)  # a plain tensor attribute is neither parameter nor buffer
    assert len(list(block.parameters())) == 3 and len(list(block.buffers())) == 1


def test_parameters_are_named_by_their_path_in_the_outermost_module():
    outer = nn.Sequential(OrderedDict(block=Block(), head=nn.Linear(3, 1, generator=g())))
    assert [p.name for p in outer.parameters()] == [n for n, _ in outer.named_parameters()]
    assert outer.block.inner[0].weight.name == "block.inner.0.weight"
    assert outer.block.count.name == "block.count"


def test_shared_parameter_is_listed_once_under_its_first_path():
    layer = nn.Linear(2, 2, generator=g())
    tied = nn.Sequential(layer, nn.Tanh(), layer)
    assert [n for n, _ in tied.named_parameters()] == ["0.weight", "0.bias"]
    assert layer.weight.name == "0.weight"
    assert list(tied.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


@pytest.mark.parametrize("assign, error, match", [
    (lambda m: setattr(m, "weight", ag.zeros(2)), TypeError, "nn.Parameter or None"),
    (lambda m: m.register_parameter("a.b", nn.Parameter([1.0])), KeyError, "without '.'"),
    (lambda m: m.add_module("x", 3), TypeError, "not a Module"),
    (lambda m: m.missing, AttributeError, "has no attribute 'missing'"),
])
def test_registration_errors(assign, error, match):
    with pytest.raises(error, match=match):
        assign(nn.Linear(2, 2, generator=g()))


def test_assigning_a_parameter_before_init_names_the_fix():
    class Forgot(nn.Module):
        def __init__(self):
            self.w = nn.Parameter([1.0])

    with pytest.raises(AttributeError, match=r"super\(\).__init__\(\)"):
        Forgot()


def test_deleting_and_replacing_members():
    layer = nn.Linear(2, 2, generator=g())
    layer.bias = None
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    del layer.weight
    assert list(layer.parameters()) == []


# -- modes, gradients, freezing ---------------------------------------------------------------
def test_train_and_eval_propagate_to_every_descendant():
    model = nn.Sequential(Block(), nn.Dropout())
    assert all(m.training for m in model.modules())
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())


def test_zero_grad_sets_gradients_to_none_or_zeros():
    model = tiny_model()
    model(rand(5, 4, requires_grad=False).astype(np.float32)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad(set_to_none=False)
    assert all(not p.grad.numpy().any() for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_requires_grad_false_freezes_and_the_graph_shows_frozen_parameters():
    model = tiny_model()
    model[0].requires_grad_(False)
    x = rand(5, 4).astype(np.float32)  # requires grad, so layer 0 is still recorded
    model(x).sum().backward()
    assert model[0].weight.grad is None and model[2].weight.grad is not None
    kinds = {t.name: t.kind for t in capture(model(x).sum()).tensors if t.name}
    assert kinds["0.weight"] == "frozen parameter" and kinds["2.weight"] == "leaf"


def test_to_double_casts_parameters_and_buffers_in_place():
    model = nn.Sequential(nn.Linear(3, 2, generator=g()), nn.BatchNorm1d(2))
    weight = model[0].weight
    before = weight.numpy().copy()
    assert model.double() is model and model[0].weight is weight
    assert {str(t.dtype) for t in model.state_dict().values()} == {"float64", "int64"}
    np.testing.assert_array_equal(weight.numpy(), before)  # same values, float64 now
    assert gradcheck(lambda x: model(x).sum(), (rand(4, 3),))
    assert model.float()[1].running_var.dtype == np.float32


# -- state_dict ----------------------------------------------------------------------------------
def test_state_dict_shares_memory_as_in_pytorch_and_a_cloned_one_restores_it():
    model = nn.Sequential(nn.Linear(3, 3, generator=g()), nn.BatchNorm1d(3))
    state = model.state_dict()
    assert list(state) == ["0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean",
                           "1.running_var", "1.num_batches_tracked"]
    assert not any(v.requires_grad or v.grad_fn is not None for v in state.values())
    snapshot = {k: v.clone() for k, v in state.items()}
    before = {k: np.array(v) for k, v in snapshot.items()}
    with ag.no_grad():
        model[0].weight.add_(1.0)
    model(rand(4, 3, requires_grad=False))  # moves running stats
    # the entries move with the model (shared memory); the clones do not
    np.testing.assert_array_equal(state["0.weight"].numpy(), before["0.weight"] + 1.0)
    np.testing.assert_array_equal(state["1.running_mean"].numpy(),
                                  model[1].running_mean.numpy())
    assert all(np.array_equal(snapshot[k].numpy(), before[k]) for k in before)
    assert not np.array_equal(model[1].running_mean.numpy(), before["1.running_mean"])
    model.load_state_dict(snapshot)
    for key, tensor in model._state_entries():
        np.testing.assert_array_equal(tensor.numpy(), before[key])
    assert model[0].weight.requires_grad and model[0].weight.dtype == np.float64


def test_copy_into_a_state_dict_entry_loads_the_value_into_the_model():
    """The usual loading pattern of model files: ``sd[k].copy_(pretrained[k])`` under
    no_grad (issue #42: it changed nothing while entries were copies)."""
    model = nn.Sequential(nn.Linear(3, 2, generator=g()), nn.BatchNorm1d(2))
    pretrained = {k: np.full(v.shape, 0.5, dtype=v.dtype) for k, v in
                  model.state_dict().items()}
    state = model.state_dict()
    with ag.no_grad():
        for key, value in pretrained.items():
            state[key].copy_(value)
    for key, tensor in model._state_entries():
        np.testing.assert_array_equal(tensor.numpy(), pretrained[key])
    assert model[0].weight.requires_grad  # still a parameter the optimizer trains


def test_load_state_dict_errors_and_non_strict_loading():
    model = tiny_model()
    state = model.state_dict()
    state["extra"] = np.zeros(1)
    del state["2.bias"]
    with pytest.raises(RuntimeError, match=r"Missing key\(s\).*'2.bias'(.|\n)*Unexpected "
                                           r"key\(s\).*'extra'"):
        model.load_state_dict(state)
    assert model.load_state_dict(state, strict=False) == (["2.bias"], ["extra"])
    state = model.state_dict()
    state["0.weight"] = np.zeros((4, 3))
    with pytest.raises(RuntimeError, match=r"size mismatch for 0.weight.*\(4, 3\).*\(3, 4\)"):
        model.load_state_dict(state)


# -- hooks --------------------------------------------------------------------------------------
def test_hooks_run_in_order_can_replace_values_and_are_removable():
    layer = nn.Linear(2, 2, generator=g())
    calls = []
    pre = layer.register_forward_pre_hook(lambda m, args: (calls.append("pre"), args[0] * 0)[1])
    post = layer.register_forward_hook(
        lambda m, args, out: (calls.append(("post", args[0].tolist(), out.shape)), out + 1)[1])
    x = ag.ones(1, 2, dtype=np.float32)
    y = layer(x)
    assert calls == ["pre", ("post", [[0.0, 0.0]], (1, 2))]
    np.testing.assert_allclose(y.numpy(), layer.bias.numpy()[None] + 1, rtol=1e-6)
    pre.remove()
    post.remove()
    pre.remove()  # removing twice is harmless
    np.testing.assert_allclose(layer(x).numpy(), x.numpy() @ layer.weight.numpy().T
                               + layer.bias.numpy(), rtol=1e-6)


def test_forward_hooks_see_every_layer_of_a_model():
    model = tiny_model()
    seen = []
    handles = [m.register_forward_hook(lambda m, a, out: seen.append((type(m).__name__,
                                                                       out.shape)))
               for m in model]
    model(ag.ones(5, 4, dtype=np.float32))
    assert seen == [("Linear", (5, 3)), ("ReLU", (5, 3)), ("Linear", (5, 2))]
    with handles[0]:
        pass
    seen.clear()
    model(ag.ones(5, 4, dtype=np.float32))
    assert [name for name, _ in seen] == ["ReLU", "Linear"]


# -- tagging ops with the module that ran them ------------------------------------------------
def test_recorded_ops_are_tagged_with_the_module_path():
    model = nn.Sequential(nn.Linear(4, 4, generator=g()), nn.ReLU(),
                          nn.ResidualBlock(4, 4, linear=True, generator=g()))
    x = rand(6, 4).astype(np.float32)
    graph = capture((model(x) * 2).sum())
    modules = [op.module for op in graph.ops]
    assert modules[-2:] == [None, None]  # * 2 and sum run outside every module
    assert {"0", "1", "2", "2.body.fc1", "2.body.bn1", "2.body.relu"} <= set(modules)
    add = [op for op in graph.ops if op.op == "add" and op.module == "2"]
    assert add, "the residual merge belongs to the block itself"
    assert module_scope.path is None  # restored after the call

    class Broken(nn.Module):
        def forward(self, x):
            raise ValueError("broken on purpose")

    with pytest.raises(ValueError, match="on purpose"):
        nn.Sequential(Broken())(x)
    assert module_scope.path is None  # restored even when forward raises


# -- printing ----------------------------------------------------------------------------------
def test_repr_is_nested_one_line_per_layer():
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4),
                          nn.Sequential(nn.ReLU(), nn.MaxPool2d(2)), nn.Flatten(),
                          nn.Dropout(0.25), nn.Linear(16, 10), nn.Embedding(7, 3))
    assert repr(model) == """Sequential(
  (0): Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)
  (1): BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True)
  (2): Sequential(
    (0): ReLU()
    (1): MaxPool2d(kernel_size=2, stride=2, padding=0)
  )
  (3): Flatten(start_dim=1, end_dim=-1)
  (4): Dropout(p=0.25)
  (5): Linear(in_features=16, out_features=10, bias=True)
  (6): Embedding(7, 3)
)"""


# -- Sequential -----------------------------------------------------------------------------
def test_sequential_indexing_len_iteration_and_append():
    a, b, c = nn.ReLU(), nn.Tanh(), nn.Sigmoid()
    seq = nn.Sequential(a, b)
    assert len(seq) == 2 and seq[0] is a and seq[-1] is b and list(seq) == [a, b]
    assert seq.append(c) is seq and seq[2] is c and len(seq) == 3
    part = seq[1:]
    assert isinstance(part, nn.Sequential) and list(part) == [b, c]
    assert [n for n, _ in part.named_children()] == ["1", "2"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]
    named = nn.Sequential(OrderedDict(first=a, second=b))
    assert named.first is a and [n for n, _ in named.named_children()] == ["first", "second"]


# -- initialisation --------------------------------------------------------------------------
@pytest.mark.parametrize("make, fan_in", [
    (lambda gen: nn.Linear(50, 40, generator=gen), 50),
    (lambda gen: nn.Conv2d(6, 20, 3, generator=gen), 6 * 9),
    (lambda gen: nn.Conv2d(6, 20, (3, 5), groups=2, generator=gen), 3 * 15),
])
def test_weight_and_bias_are_uniform_within_one_over_sqrt_fan_in(make, fan_in):
    layer = make(g(3))
    bound = 1 / math.sqrt(fan_in)
    for p in (layer.weight, layer.bias):
        values = p.numpy()
        assert p.dtype == ag.get_default_dtype() == np.float64
        assert np.abs(values).max() <= bound
        assert np.abs(values).max() > 0.8 * bound  # spread over the range, not all small
    w = layer.weight.numpy().ravel()
    assert abs(w.std() - bound / math.sqrt(3)) < 0.15 * bound  # std of U(-b, b)


def test_initialisation_is_seeded():
    def weights(seed):
        return nn.Linear(4, 3, generator=g(seed)).weight.numpy()

    np.testing.assert_array_equal(weights(7), weights(7))
    assert not np.array_equal(weights(7), weights(8))
    ag.manual_seed(5)
    first = nn.Linear(4, 3).weight.numpy()
    ag.manual_seed(5)
    np.testing.assert_array_equal(first, nn.Linear(4, 3).weight.numpy())


def test_embedding_is_standard_normal_and_batch_norm_starts_at_identity():
    emb = nn.Embedding(200, 50, generator=g())
    w = emb.weight.numpy()
    assert abs(w.mean()) < 0.05 and abs(w.std() - 1) < 0.05
    bn = nn.BatchNorm2d(3)
    for name, value in [("weight", 1), ("bias", 0), ("running_mean", 0), ("running_var", 1)]:
        assert getattr(bn, name).tolist() == [value] * 3
    assert (bn.momentum, bn.eps) == (0.1, 1e-5)
    assert nn.Linear(2, 2, dtype=F64).weight.dtype == np.float64


# -- layers: shapes and gradients ------------------------------------------------------------
# (name, module in float64, input shape, integer input?)
LAYERS = [
    ("linear", lambda: nn.Linear(3, 2, dtype=F64, generator=g()), (4, 3), (4, 2)),
    ("linear-no-bias", lambda: nn.Linear(3, 2, bias=False, dtype=F64, generator=g()), (2, 5, 3),
     (2, 5, 2)),
    ("conv", lambda: nn.Conv2d(2, 3, 3, dtype=F64, generator=g()), (2, 2, 5, 5), (2, 3, 3, 3)),
    ("conv-stride-pad", lambda: nn.Conv2d(2, 2, 3, stride=2, padding=1, dtype=F64,
                                          generator=g()), (1, 2, 5, 5), (1, 2, 3, 3)),
    ("conv-groups", lambda: nn.Conv2d(4, 2, (1, 3), groups=2, dtype=F64, generator=g()),
     (1, 4, 3, 4), (1, 2, 3, 2)),
    ("batchnorm1d", lambda: nn.BatchNorm1d(3, dtype=F64), (5, 3), (5, 3)),
    ("batchnorm1d-3d", lambda: nn.BatchNorm1d(2, dtype=F64), (3, 2, 4), (3, 2, 4)),
    ("batchnorm2d", lambda: nn.BatchNorm2d(2, dtype=F64), (3, 2, 2, 3), (3, 2, 2, 3)),
    ("relu", nn.ReLU, (3, 4), (3, 4)),
    ("tanh", nn.Tanh, (3, 4), (3, 4)),
    ("sigmoid", nn.Sigmoid, (3, 4), (3, 4)),
    ("maxpool", lambda: nn.MaxPool2d(2), (1, 2, 4, 4), (1, 2, 2, 2)),
    ("maxpool-pad", lambda: nn.MaxPool2d(3, stride=1, padding=1), (1, 1, 3, 3), (1, 1, 3, 3)),
    ("avgpool", lambda: nn.AvgPool2d(2, stride=1), (1, 2, 3, 3), (1, 2, 2, 2)),
    ("flatten", nn.Flatten, (2, 3, 2, 2), (2, 12)),
    ("residual-same", lambda: nn.ResidualBlock(2, dtype=F64, generator=g()), (2, 2, 3, 3),
     (2, 2, 3, 3)),
    ("residual-projection", lambda: nn.ResidualBlock(2, 3, stride=2, dtype=F64,
                                                     generator=g()), (2, 2, 4, 4),
     (2, 3, 2, 2)),
    ("residual-linear", lambda: nn.ResidualBlock(3, 2, linear=True, dtype=F64,
                                                 generator=g()), (4, 3), (4, 2)),
    ("inception", lambda: nn.InceptionBlock(2, 1, 2, 1, 1, reduce_3x3=1, dtype=F64,
                                            generator=g()), (1, 2, 3, 3), (1, 5, 3, 3)),
    ("sequential", lambda: nn.Sequential(nn.Linear(3, 4, dtype=F64, generator=g()), nn.Tanh(),
                                         nn.Linear(4, 2, dtype=F64, generator=g(1))), (2, 3),
     (2, 2)),
]


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("name, make, in_shape, out_shape", LAYERS, ids=[x[0] for x in LAYERS])
def test_layer_output_shape_and_gradcheck(name, make, in_shape, out_shape, mode):
    module = make().train(mode == "train")
    if mode == "eval":  # make the running statistics something other than 0 and 1
        for buffer_name, buffer in module.named_buffers():
            if buffer_name.endswith(("running_mean", "running_var")):
                buffer.copy_(np.random.default_rng(2).uniform(0.5, 1.5, buffer.shape))
    x = rand(*in_shape, seed=3)
    assert module(x).shape == out_shape
    params = list(module.parameters())
    upstream = np.random.default_rng(4).normal(size=out_shape)  # non-uniform
    assert gradcheck(lambda x, *ps: (module(x) * upstream).sum(), (x, *params))


def test_dropout_masks_scale_and_eval_identity_and_gradient():
    layer = nn.Dropout(0.25)
    x = rand(40, 50, seed=5)
    layer.generator = g(9)
    y = layer(x).numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], x.numpy()[kept] / 0.75)
    assert 0.2 < 1 - kept.mean() < 0.3
    np.testing.assert_array_equal(layer.eval()(x).numpy(), x.numpy())
    layer.train()
    small = rand(3, 4, seed=6)

    def fresh_mask(x):  # the same mask on every call, so finite differences are valid
        layer.generator = g(11)
        return layer(x)

    assert gradcheck(fresh_mask, (small,))


def test_embedding_rows_and_accumulated_gradient():
    emb = nn.Embedding(5, 3, dtype=F64, generator=g())
    idx = ag.tensor([[0, 2], [2, 4]])
    out = emb(idx)
    np.testing.assert_array_equal(out.numpy(), emb.weight.numpy()[np.array([[0, 2], [2, 4]])])
    out.sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.numpy()[:, 0], [1, 0, 2, 0, 1])
    assert gradcheck(lambda w: (emb(idx) * out.numpy()).sum(), (emb.weight,))


@pytest.mark.parametrize("module, x_shape, error, match", [
    (nn.Linear(3, 2), (4, 5), RuntimeError, r"linear: input of shape \(4, 5\) has 5 features"),
    (nn.Conv2d(3, 2, 3), (1, 1, 8, 8), RuntimeError, r"to have 3 channels, but got 1"),
    (nn.BatchNorm2d(3), (4, 3, 5), RuntimeError, r"Expected 4D \(N, C, H, W\) input to "
                                                 r"BatchNorm2d.*\[4, 3, 5\]"),
    (nn.BatchNorm1d(3), (4, 3, 2, 2), RuntimeError, r"Expected 2D \(N, C\) or 3D"),
    (nn.BatchNorm1d(3), (4, 2), RuntimeError, r"should contain 2 elements not 3"),
    (nn.BatchNorm1d(3), (1, 3), ValueError, r"more than 1 value per channel"),
])
def test_wrong_inputs_get_a_clear_message(module, x_shape, error, match):
    with pytest.raises(error, match=match):
        module(ag.zeros(*x_shape, dtype=np.float32))


def test_dropout_probability_is_checked_when_the_layer_is_made():
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)


# -- the teaching blocks -----------------------------------------------------------------------
def conv_params(c_in, c_out, k, bias=False):
    return c_out * c_in * k * k + (c_out if bias else 0)


@pytest.mark.parametrize("c_in, c_out, stride, expected", [
    # body: conv3x3 + bn + conv3x3 + bn (2 parameters per channel per bn)
    (4, 4, 1, conv_params(4, 4, 3) + 8 + conv_params(4, 4, 3) + 8),
    # projection 1x1 conv + bn added because the channels differ...
    (4, 6, 1, conv_params(4, 6, 3) + 12 + conv_params(6, 6, 3) + 12 + conv_params(4, 6, 1) + 12),
    # ...or because the stride differs
    (4, 4, 2, conv_params(4, 4, 3) + 8 + conv_params(4, 4, 3) + 8 + conv_params(4, 4, 1) + 8),
])
def test_residual_merge_adds_no_parameters_and_projects_only_when_needed(c_in, c_out, stride,
                                                                          expected):
    block = nn.ResidualBlock(c_in, c_out, stride, generator=g())
    assert sum(p.numel() for p in block.parameters()) == expected
    assert (block.shortcut is None) == (c_in == c_out and stride == 1)


def test_residual_output_is_body_plus_input():
    block = nn.ResidualBlock(3, dtype=F64, generator=g())
    x = rand(2, 3, 4, 4, requires_grad=False)
    np.testing.assert_allclose(block(x).numpy() - block.body(x).numpy(), x.numpy())
    linear = nn.ResidualBlock(3, linear=True, dtype=F64, generator=g()).eval()
    x = rand(5, 3, requires_grad=False)
    np.testing.assert_allclose(linear(x).numpy() - linear.body(x).numpy(), x.numpy())


def test_inception_concatenates_its_branches_along_channels():
    block = nn.InceptionBlock(3, 2, 4, 1, 2, reduce_3x3=2, reduce_5x5=1, dtype=F64,
                              generator=g())
    x = rand(2, 3, 5, 5, requires_grad=False)
    y = block(x)
    assert y.shape == (2, 9, 5, 5) and block.out_channels == 9
    parts = [block.branch1x1(x), block.branch3x3(x), block.branch5x5(x), block.branch_pool(x)]
    np.testing.assert_array_equal(y.numpy(), np.concatenate([p.numpy() for p in parts], 1))
    expected = (conv_params(3, 2, 1, True) + conv_params(3, 2, 1, True)
                + conv_params(2, 4, 3, True) + conv_params(3, 1, 1, True)
                + conv_params(1, 1, 5, True) + conv_params(3, 2, 1, True))
    assert sum(p.numel() for p in block.parameters()) == expected
