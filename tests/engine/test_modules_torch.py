"""The layers and blocks against PyTorch 2.13: same initial weights (ours copied into
the torch module), same input, same non-uniform upstream gradient; outputs, input
gradients and every parameter gradient compared in train and eval mode, running
statistics after several steps, and a few training steps with each optimizer.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import nn, optim
from autograd_core.nn import functional as F

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the cross-check of nn modules against PyTorch "
    "2.13.0 CPU is skipped (install it with: pip install -e '.[torch]')")
pytestmark = pytest.mark.torch
tnn = torch.nn
F64 = ag.float64


def g(seed: int = 0) -> ag.Generator:
    return ag.Generator(seed)


class TorchResidual(tnn.Module):
    """The same block written with torch modules and the same parameter names."""

    def __init__(self, c_in, c_out, stride=1, linear=False):
        super().__init__()
        if linear:
            self.body = tnn.Sequential(OrderedDict(
                fc1=tnn.Linear(c_in, c_out, bias=False), bn1=tnn.BatchNorm1d(c_out),
                relu=tnn.ReLU(), fc2=tnn.Linear(c_out, c_out, bias=False),
                bn2=tnn.BatchNorm1d(c_out)))
        else:
            self.body = tnn.Sequential(OrderedDict(
                conv1=tnn.Conv2d(c_in, c_out, 3, stride, padding=1, bias=False),
                bn1=tnn.BatchNorm2d(c_out), relu=tnn.ReLU(),
                conv2=tnn.Conv2d(c_out, c_out, 3, padding=1, bias=False),
                bn2=tnn.BatchNorm2d(c_out)))
        self.shortcut = None
        if c_in != c_out or stride != 1:
            self.shortcut = tnn.Linear(c_in, c_out, bias=False) if linear else tnn.Sequential(
                OrderedDict(conv=tnn.Conv2d(c_in, c_out, 1, stride, bias=False),
                            bn=tnn.BatchNorm2d(c_out)))

    def forward(self, x):
        return self.body(x) + (x if self.shortcut is None else self.shortcut(x))


class TorchInception(tnn.Module):
    def __init__(self, c_in, o1, o3, o5, op, r3):
        super().__init__()
        self.branch1x1 = tnn.Sequential(tnn.Conv2d(c_in, o1, 1), tnn.ReLU())
        self.branch3x3 = tnn.Sequential(tnn.Conv2d(c_in, r3, 1), tnn.ReLU(),
                                        tnn.Conv2d(r3, o3, 3, padding=1), tnn.ReLU())
        self.branch5x5 = tnn.Sequential(tnn.Conv2d(c_in, o5, 5, padding=2), tnn.ReLU())
        self.branch_pool = tnn.Sequential(tnn.MaxPool2d(3, 1, 1), tnn.Conv2d(c_in, op, 1),
                                          tnn.ReLU())

    def forward(self, x):
        return torch.cat([self.branch1x1(x), self.branch3x3(x), self.branch5x5(x),
                          self.branch_pool(x)], dim=1)


# (id, our module, torch module, input shape)
CASES = [
    ("linear", lambda: nn.Linear(5, 3, dtype=F64, generator=g()), lambda: tnn.Linear(5, 3),
     (4, 5)),
    ("conv", lambda: nn.Conv2d(3, 4, 3, stride=2, padding=1, dtype=F64, generator=g()),
     lambda: tnn.Conv2d(3, 4, 3, stride=2, padding=1), (2, 3, 7, 6)),
    ("conv-dilation-groups", lambda: nn.Conv2d(4, 6, (3, 2), dilation=(2, 1), groups=2,
                                               bias=False, dtype=F64, generator=g()),
     lambda: tnn.Conv2d(4, 6, (3, 2), dilation=(2, 1), groups=2, bias=False), (2, 4, 7, 5)),
    ("batchnorm1d", lambda: nn.BatchNorm1d(4, dtype=F64), lambda: tnn.BatchNorm1d(4), (6, 4)),
    ("batchnorm1d-3d", lambda: nn.BatchNorm1d(3, momentum=0.3, dtype=F64),
     lambda: tnn.BatchNorm1d(3, momentum=0.3), (4, 3, 5)),
    ("batchnorm2d", lambda: nn.BatchNorm2d(3, eps=1e-3, dtype=F64),
     lambda: tnn.BatchNorm2d(3, eps=1e-3), (4, 3, 3, 2)),
    ("maxpool", lambda: nn.MaxPool2d(3, stride=2, padding=1),
     lambda: tnn.MaxPool2d(3, stride=2, padding=1), (2, 3, 7, 7)),
    ("avgpool", lambda: nn.AvgPool2d(2), lambda: tnn.AvgPool2d(2), (2, 3, 6, 5)),
    ("activations", lambda: nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Flatten()),
     lambda: tnn.Sequential(tnn.ReLU(), tnn.Tanh(), tnn.Sigmoid(), tnn.Flatten()),
     (3, 2, 2, 2)),
    ("transformer-activations",
     lambda: nn.Sequential(nn.Linear(5, 6, dtype=F64, generator=g()), nn.GELU(),
                           nn.Linear(6, 6, dtype=F64, generator=g(1)), nn.GELU("tanh"),
                           nn.SiLU(), nn.Softplus(2.0, 1.0), nn.LeakyReLU(0.2)),
     lambda: tnn.Sequential(tnn.Linear(5, 6), tnn.GELU(), tnn.Linear(6, 6), tnn.GELU("tanh"),
                            tnn.SiLU(), tnn.Softplus(2.0, 1.0), tnn.LeakyReLU(0.2)),
     (4, 3, 5)),
    ("leaky-relu-default", lambda: nn.Sequential(nn.LeakyReLU(), nn.Softplus()),
     lambda: tnn.Sequential(tnn.LeakyReLU(), tnn.Softplus()), (3, 4)),
    ("residual", lambda: nn.ResidualBlock(3, dtype=F64, generator=g()),
     lambda: TorchResidual(3, 3), (2, 3, 4, 4)),
    ("residual-projection", lambda: nn.ResidualBlock(3, 5, stride=2, dtype=F64,
                                                     generator=g()),
     lambda: TorchResidual(3, 5, stride=2), (2, 3, 5, 5)),
    ("residual-linear", lambda: nn.ResidualBlock(4, 6, linear=True, dtype=F64,
                                                 generator=g()),
     lambda: TorchResidual(4, 6, linear=True), (5, 4)),
    ("inception", lambda: nn.InceptionBlock(3, 2, 3, 2, 1, reduce_3x3=2, dtype=F64,
                                            generator=g()),
     lambda: TorchInception(3, 2, 3, 2, 1, r3=2), (2, 3, 5, 5)),
    ("cnn", lambda: nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, dtype=F64, generator=g()),
                                  nn.BatchNorm2d(4, dtype=F64), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.ResidualBlock(4, dtype=F64, generator=g(1)), nn.Flatten(),
                                  nn.Linear(16, 3, dtype=F64, generator=g(2))),
     lambda: tnn.Sequential(tnn.Conv2d(1, 4, 3, padding=1), tnn.BatchNorm2d(4), tnn.ReLU(),
                            tnn.MaxPool2d(2), TorchResidual(4, 4), tnn.Flatten(),
                            tnn.Linear(16, 3)), (3, 1, 4, 4)),
]


def pair(make_ours, make_theirs):
    """Our module and a float64 torch module holding a copy of our initial state."""
    ours = make_ours()
    theirs = make_theirs().double()
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    return ours, theirs


def forward_backward(ours, theirs, x_np, rng):
    """One forward and a backward with the same random (non-uniform) upstream gradient."""
    x = ag.tensor(x_np, requires_grad=True)
    tx = torch.tensor(x_np, requires_grad=True)
    y, ty = ours(x), theirs(tx)
    upstream = rng.normal(size=y.shape)
    (y * upstream).sum().backward()
    (ty * torch.tensor(upstream)).sum().backward()
    return (x, y), (tx, ty)


def assert_close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("name, make_ours, make_theirs, shape", CASES,
                         ids=[c[0] for c in CASES])
def test_forward_and_every_gradient_match_torch(name, make_ours, make_theirs, shape, mode):
    ours, theirs = pair(make_ours, make_theirs)
    rng = np.random.default_rng(1)
    if mode == "eval":  # train a few batches first so running statistics are not 0 / 1
        for _ in range(2):
            batch = rng.normal(1.0, 2.0, size=shape)
            ours(ag.tensor(batch))
            theirs(torch.tensor(batch))
        ours.eval()
        theirs.eval()
    x_np = rng.normal(size=shape)
    (x, y), (tx, ty) = forward_backward(ours, theirs, x_np, rng)
    assert_close(y.numpy(), ty)
    assert_close(x.grad.numpy(), tx.grad)
    their_params = dict(theirs.named_parameters())
    assert [n for n, _ in ours.named_parameters()] == list(their_params)
    for n, p in ours.named_parameters():
        assert_close(p.grad.numpy(), their_params[n].grad)


@pytest.mark.parametrize("name, make_ours, make_theirs, shape",
                         [c for c in CASES if "batchnorm" in c[0] or "residual" in c[0]],
                         ids=[c[0] for c in CASES if "batchnorm" in c[0] or "residual" in c[0]])
def test_running_statistics_match_torch_after_several_steps(name, make_ours, make_theirs,
                                                            shape):
    ours, theirs = pair(make_ours, make_theirs)
    rng = np.random.default_rng(2)
    for step in range(4):
        batch = rng.normal(step, 1.0 + step, size=shape)
        ours(ag.tensor(batch))
        theirs(torch.tensor(batch))
    their_buffers = dict(theirs.named_buffers())
    assert [n for n, _ in ours.named_buffers()] == list(their_buffers)
    for n, b in ours.named_buffers():
        assert_close(b.numpy(), their_buffers[n])


def test_dropout_matches_torch_given_the_same_mask():
    # the random streams differ, so compare the rule: our mask applied by torch's formula
    x_np = np.random.default_rng(3).normal(size=(6, 7))
    layer = nn.Dropout(0.3, generator=g(4))
    x = ag.tensor(x_np, requires_grad=True)
    y = layer(x)
    y.sum().backward()
    mask = y.numpy() != 0
    expected = torch.tensor(x_np) * torch.tensor(mask) / 0.7
    assert_close(y.numpy(), expected)
    assert_close(x.grad.numpy(), torch.tensor(mask / 0.7))


def test_embedding_matches_torch():
    ours, theirs = pair(lambda: nn.Embedding(6, 3, dtype=F64, generator=g()),
                        lambda: tnn.Embedding(6, 3))
    idx = np.array([[1, 5, 1], [0, 2, 5]])
    upstream = np.random.default_rng(5).normal(size=(2, 3, 3))
    y, ty = ours(ag.tensor(idx)), theirs(torch.tensor(idx))
    (y * upstream).sum().backward()
    (ty * torch.tensor(upstream)).sum().backward()
    assert_close(y.numpy(), ty)
    assert_close(ours.weight.grad.numpy(), theirs.weight.grad)


@pytest.mark.parametrize("make_opt, make_topt", [
    (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
     lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9)),
    (lambda ps: optim.Adam(ps, lr=0.01), lambda ps: torch.optim.Adam(ps, lr=0.01)),
], ids=["sgd-momentum", "adam"])
def test_training_steps_match_torch(make_opt, make_topt):
    """Five steps of cross-entropy training of a CNN with batch norm and a residual block."""
    _, make_ours, make_theirs, shape = CASES[-1]
    ours, theirs = pair(make_ours, make_theirs)
    opt, topt = make_opt(list(ours.parameters())), make_topt(theirs.parameters())
    rng = np.random.default_rng(6)
    for _ in range(5):
        x_np, labels = rng.normal(size=shape), rng.integers(0, 3, size=shape[0])
        opt.zero_grad()
        F.cross_entropy(ours(ag.tensor(x_np)), ag.tensor(labels)).backward()
        opt.step()
        topt.zero_grad()
        torch.nn.functional.cross_entropy(theirs(torch.tensor(x_np)),
                                          torch.tensor(labels)).backward()
        topt.step()
    their_state = theirs.state_dict()
    for key, value in ours.state_dict().items():
        assert_close(value.numpy(), their_state[key], tol=1e-8)


def test_state_dict_round_trip_through_torch():
    """Our state_dict loads into the torch twin and back, keys and values unchanged."""
    make = CASES[-1]
    ours, theirs = pair(make[1], make[2])
    fresh = make[1]()
    fresh.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    for (k1, a), (k2, b) in zip(ours.state_dict().items(), fresh.state_dict().items()):
        assert k1 == k2
        np.testing.assert_array_equal(a.numpy(), b.numpy())
