"""Five PyTorch model files with their training loops (``tests/engine/ported/``), run on
PyTorch 2.13 as written and on the engine with only their import lines changed: the same
initial weights and data give the same logits, loss, every parameter's gradient, and the
losses of 3 optimizer steps (with their schedules, clipping and BatchNorm statistics), in
float64 and float32. Dropout is off (p=0) for the numbers; sampling is checked for shape
and dtype.

float64 agrees to 1e-10 (relative to each array's largest entry; measured: 2e-15 for
the forward and gradients, 5e-13 for the GPT's state after 3 AdamW steps). float32 to
2e-5: the two engines add up in different orders (BLAS, im2col, pairwise sums), so each
sum carries a few float32 roundings (6e-8 each); measured: 9e-7 for the forward and
gradients and 4e-6 after 3 AdamW steps (Adam divides by the square root of small second
moments, which magnifies those differences), so 2e-5 leaves a margin of 5.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import autograd_core as ag

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the ported model files are not run against "
    "PyTorch 2.13.0 CPU (install it with: pip install -e '.[torch]')")
pytestmark = pytest.mark.torch

HERE = Path(__file__).parent / "ported"
DTYPES = {"float64": (np.float64, 1e-10), "float32": (np.float32, 2e-5)}


# -- loading a file twice: as written, and with only its imports rewritten ------------------
def _engine_import(line: str) -> str:
    """The engine's spelling of one import line of torch (any other line: unchanged)."""
    if line == "import torch":
        return "import autograd_core as torch"
    plain = re.fullmatch(r"import torch\.([\w.]+) as (\w+)", line)
    if plain:
        package, _, name = ("autograd_core." + plain[1]).rpartition(".")
        return f"from {package} import {name} as {plain[2]}"
    member = re.fullmatch(r"from torch((?:\.\w+)*) import (.+)", line)
    if member:
        return f"from autograd_core{member[1]} import {member[2]}"
    return line


def _load(name: str, engine: bool) -> types.ModuleType:
    source = (HERE / f"{name}.py").read_text()
    if engine:
        lines = source.splitlines()
        rewritten = [_engine_import(line) for line in lines]
        changed = [(a, b) for a, b in zip(lines, rewritten, strict=True) if a != b]
        assert changed and all(a.startswith(("import torch", "from torch")) for a, _ in changed)
        source = "\n".join(rewritten) + "\n"
    module = types.ModuleType(f"ported_{name}_{'engine' if engine else 'torch'}")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    try:
        exec(compile(source, str(HERE / f"{name}.py"), "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module


def test_only_import_lines_change():
    assert _engine_import("import torch.nn.functional as F") == \
        "from autograd_core.nn import functional as F"
    assert _engine_import("from torch.optim.lr_scheduler import StepLR") == \
        "from autograd_core.optim.lr_scheduler import StepLR"
    assert _engine_import("    x = torch.ones(2)") == "    x = torch.ones(2)"


# -- both sides ---------------------------------------------------------------------------
class Side:
    """One file loaded for one library, and its model built with the shared weights."""

    def __init__(self, name: str, engine: bool):
        self.mod = _load(name, engine)
        self.lib = self.mod.torch

    def array(self, values: np.ndarray):
        return self.lib.from_numpy(np.array(values, copy=True))

    def build(self, state: dict | None, **sizes):
        self.lib.manual_seed(0)
        model = self.mod.build(**sizes)  # in the default dtype both sides were given
        if state is not None:
            model.load_state_dict({k: self.array(v) for k, v in state.items()})
        return model


def _state(model) -> dict:
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def _rel(ours, theirs) -> float:
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    assert ours.shape == theirs.shape
    scale = np.max(np.abs(theirs)) if theirs.size else 0.0
    return float(np.max(np.abs(ours - theirs)) / scale) if scale else float(np.max(np.abs(ours)))


def _numbers(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _compare(label, ours, theirs, tol, errors: dict):
    ours, theirs = _numbers(ours), _numbers(theirs)
    if ours.dtype.kind == "f" or theirs.dtype.kind == "f":
        assert ours.dtype == theirs.dtype, label
    err = _rel(ours, theirs)
    errors[label] = err
    assert err <= tol, f"{label}: relative error {err:.2e} > {tol:.0e}"


def _gradients(model, tmodel, tol, errors):
    ours, theirs = dict(model.named_parameters()), dict(tmodel.named_parameters())
    assert list(ours) == list(theirs)
    for name in ours:
        _compare(f"grad {name}", ours[name].grad, theirs[name].grad, tol, errors)


def _both(name, **sizes):
    theirs = Side(name, engine=False)
    tmodel = theirs.build(None, **sizes)
    ours = Side(name, engine=True)
    model = ours.build(_state(tmodel), **sizes)
    return ours, model, theirs, tmodel


def _same_state(model, tmodel, tol, errors, entries=None):
    """The state dicts agree; ``entries(key)`` may pick the entries of a key compared."""
    ours, theirs = model.state_dict(), tmodel.state_dict()
    assert list(ours) == list(theirs)
    for key in ours:
        pick = entries(key) if entries else ...
        _compare(f"state {key}", _numbers(ours[key])[pick], _numbers(theirs[key])[pick], tol,
                 errors)


# -- the five files ------------------------------------------------------------------------
def _mnist(dtype, tol, errors):
    sizes = dict(p1=0.0, p2=0.0, side=16)
    ours, model, theirs, tmodel = _both("mnist_cnn", **sizes)
    rng = np.random.default_rng(0)
    images = rng.standard_normal((6, 1, 16, 16)).astype(dtype)
    labels = rng.integers(0, 10, 6)
    for side, m in ((ours, model), (theirs, tmodel)):
        side.loader = side.mod.loader(images, labels, batch_size=6)
        data, target = side.loader[0]
        side.out = m(data)
        side.loss = side.mod.F.nll_loss(side.out, target)
        side.loss.backward()
        m.zero_grad()
        side.loss2 = side.mod.F.nll_loss(m(data), target)
        side.loss2.backward()
    _compare("logits", ours.out, theirs.out, tol, errors)
    _compare("loss", ours.loss, theirs.loss, tol, errors)
    _gradients(model, tmodel, tol, errors)
    steps = [s.mod.train_steps(m, s.loader, epochs=3, lr=1.0) for s, m in
             ((ours, model), (theirs, tmodel))]
    _compare("losses of 3 steps", *steps, tol, errors)
    final = [s.mod.test(m, torch.device("cpu") if s is theirs else ag.device("cpu"), s.loader)
             for s, m in ((ours, model), (theirs, tmodel))]
    _compare("loss after 3 steps", final[0][0], final[1][0], tol, errors)
    assert final[0][1] == final[1][1]  # the same number right
    _same_state(model, tmodel, tol, errors)
    dropping = ours.build(None, side=16)  # the file's own dropout (0.25, 0.5) in training
    data = ours.loader[0][0]
    trained, evaluated = dropping(data), dropping.eval()(data)
    assert trained.shape == evaluated.shape == (6, 10)
    assert not np.allclose(trained.numpy(), evaluated.numpy())


def _gpt(dtype, tol, errors, flash=False):
    ours, model, theirs, tmodel = _both("char_gpt", flash=flash)
    data, chars = ours.mod.encode("hello world, the quick brown fox. " * 3)
    assert len(chars) <= 20
    rng = np.random.default_rng(1)
    starts = [rng.integers(0, len(data) - 8, 4) for _ in range(3)]
    for side, m in ((ours, model), (theirs, tmodel)):
        side.batches = [side.mod.get_batch(data, 8, 4, ix) for ix in starts]
        side.logits, side.loss = m(*side.batches[0])
        side.loss.backward()
    _compare("logits", ours.logits, theirs.logits, tol, errors)
    _compare("loss", ours.loss, theirs.loss, tol, errors)
    _gradients(model, tmodel, tol, errors)
    steps = [s.mod.train_steps(m, s.batches) for s, m in ((ours, model), (theirs, tmodel))]
    _compare("losses of 3 steps", *steps, tol, errors)
    _compare("loss after 3 steps", model(*ours.batches[0])[1], tmodel(*theirs.batches[0])[1],
             tol, errors)
    # the key projection's bias has a gradient of exactly 0 (softmax ignores a shift that
    # is the same for every key), so its computed gradient is rounding noise, which Adam
    # divides by its own size: in float32 (noise ~1e-9, near eps=1e-8) each engine moves
    # those entries by up to lr in a direction of its own. They are left out there.
    n_embd = model.config.n_embd
    noise = np.arange(3 * n_embd)[n_embd:2 * n_embd]
    keys = np.setdiff1d(np.arange(3 * n_embd), noise)
    _same_state(model, tmodel, tol, errors, entries=lambda key: keys if
                key.endswith("c_attn.bias") and dtype == np.float32 else ...)
    assert model.get_num_params() == tmodel.get_num_params()
    x, _ = ours.mod.get_batch(data, 8, 2)  # random windows, the engine's randint
    assert x.shape == (2, 8) and x.dtype == ag.long
    out = model.generate(x[:, :3], max_new_tokens=7, top_k=3)
    assert out.shape == (2, 10) and out.dtype == ag.long and not out.requires_grad
    assert np.all(out.numpy()[:, :3] == x.numpy()[:, :3]) and out.numpy().max() < len(chars)


def _makemore(dtype, tol, errors):
    words = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper"]
    chars = sorted(set("".join(words)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    sizes = dict(vocab_size=len(stoi), block_size=3, n_embd=6, n_hidden=20)
    ours, model, theirs, tmodel = _both("makemore_mlp", **sizes)
    rng = np.random.default_rng(2)
    for side, m in ((ours, model), (theirs, tmodel)):
        side.X, side.Y = side.mod.build_dataset(words, stoi, 3)
        side.indices = [side.array(rng_ix) for rng_ix in
                        np.random.default_rng(2).integers(0, len(side.X), (3, 16))]
        side.logits = m(side.X[side.indices[0]])
        side.loss = side.mod.F.cross_entropy(side.logits, side.Y[side.indices[0]])
        side.loss.backward()
    del rng
    assert ours.X.dtype == ag.long and ours.X.shape == tuple(theirs.X.shape)
    _compare("logits", ours.logits, theirs.logits, tol, errors)
    _compare("loss", ours.loss, theirs.loss, tol, errors)
    _gradients(model, tmodel, tol, errors)
    steps = [s.mod.train_steps(m, s.X, s.Y, 3, indices=s.indices)
             for s, m in ((ours, model), (theirs, tmodel))]
    _compare("log10 losses of 3 steps", *steps, tol, errors)
    _compare("loss after 3 steps", ours.mod.split_loss(model, ours.X, ours.Y),
             theirs.mod.split_loss(tmodel, theirs.X, theirs.Y), tol, errors)
    _same_state(model, tmodel, tol, errors)  # BatchNorm's running statistics too
    assert ours.mod.train_steps(model, ours.X, ours.Y, 2)  # the lecture's own randint
    name = ours.mod.sample(model, 3, generator=ag.Generator().manual_seed(3))
    assert all(isinstance(i, int) and 0 < i < len(stoi) for i in name)


def _resnet(dtype, tol, errors):
    sizes = dict(num_blocks=(1, 1), widths=(4, 8), num_classes=5)
    ours, model, theirs, tmodel = _both("resnet", **sizes)
    rng = np.random.default_rng(3)
    images = rng.standard_normal((4, 3, 8, 8)).astype(dtype)
    labels = rng.integers(0, 5, 4)
    for side, m in ((ours, model), (theirs, tmodel)):
        side.loader = [(side.array(images), side.array(labels))]
        side.out = m(side.loader[0][0])
        side.loss = side.mod.nn.CrossEntropyLoss()(side.out, side.loader[0][1])
        side.loss.backward()
    _compare("logits", ours.out, theirs.out, tol, errors)
    _compare("loss", ours.loss, theirs.loss, tol, errors)
    _gradients(model, tmodel, tol, errors)
    steps = [s.mod.train_steps(m, s.loader, epochs=3) for s, m in
             ((ours, model), (theirs, tmodel))]
    _compare("losses of 3 steps", *steps, tol, errors)
    _same_state(model, tmodel, tol, errors)  # BatchNorm's running statistics too
    model.eval()
    tmodel.eval()
    _compare("eval logits after 3 steps", model(ours.loader[0][0]),
             tmodel(theirs.loader[0][0]), tol, errors)


def _word_lstm(dtype, tol, errors):
    sizes = dict(ntoken=13, ninp=6, nhid=8, nlayers=2, dropout=0.0)
    ours, model, theirs, tmodel = _both("word_lstm", **sizes)
    tokens = np.random.default_rng(4).integers(0, 13, 66)
    for side, m in ((ours, model), (theirs, tmodel)):
        side.data = side.mod.batchify(side.array(tokens), 4)
        data, targets = side.mod.get_batch(side.data, 0, 5)
        side.out, hidden = m(data, m.init_hidden(4))
        side.loss = side.mod.nn.NLLLoss()(side.out, targets)
        side.loss.backward()
        side.hidden = hidden
    assert tuple(ours.data.shape) == tuple(theirs.data.shape) == (16, 4)
    _compare("log-probabilities", ours.out, theirs.out, tol, errors)
    _compare("hidden h", ours.hidden[0], theirs.hidden[0], tol, errors)
    _compare("cell c", ours.hidden[1], theirs.hidden[1], tol, errors)
    _compare("loss", ours.loss, theirs.loss, tol, errors)
    _gradients(model, tmodel, tol, errors)
    steps = [s.mod.train_steps(m, s.data, 4, 5, lr=2.0) for s, m in
             ((ours, model), (theirs, tmodel))]
    assert len(steps[0]) == 3
    _compare("losses of 3 steps", *steps, tol, errors)
    _same_state(model, tmodel, tol, errors)


MODELS = {"mnist_cnn": _mnist, "char_gpt": _gpt, "char_gpt_sdpa":
          lambda d, t, e: _gpt(d, t, e, flash=True), "makemore_mlp": _makemore,
          "resnet": _resnet, "word_lstm": _word_lstm}
MEASURED: dict = {}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", MODELS)
def test_a_ported_file_trains_as_on_torch(name, dtype):
    """Each file runs under one default dtype set on both libraries
    (``set_default_dtype``), as a user would set it: whatever the file makes (layers,
    ``ones`` in a parameter, ``tril(ones(...))`` buffers, ``arange``) takes that dtype,
    and every float the two sides return is compared dtype and all."""
    np_dtype, tol = DTYPES[dtype]
    errors: dict = {}
    before = torch.get_default_dtype(), ag.get_default_dtype()
    torch.set_default_dtype(getattr(torch, dtype))
    ag.set_default_dtype(np_dtype)
    try:
        MODELS[name](np_dtype, tol, errors)
    finally:
        torch.set_default_dtype(before[0])
        ag.set_default_dtype(before[1])
    MEASURED[name, dtype] = max(errors.values())
