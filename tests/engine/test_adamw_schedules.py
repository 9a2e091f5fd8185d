"""AdamW (and Adam's amsgrad and decoupled_weight_decay, the code they share) and the
learning-rate schedules of optim.lr_scheduler, against torch.optim (PyTorch 2.13.0 CPU):
parameter trajectories over many steps from the same gradients, several parameter
groups; every schedule's lr at each of 100+ steps; state_dict round trips; bad
arguments with PyTorch's error types.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from autograd_core import nn, optim
from autograd_core.optim import lr_scheduler as sched

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the cross-check against PyTorch 2.13.0 CPU "
    "is skipped (install it with: pip install -e '.[torch]')")
tsched = torch.optim.lr_scheduler

pytestmark = pytest.mark.torch


# -- AdamW: trajectories ---------------------------------------------------------------------------
def grad_of(p: np.ndarray, step: int) -> np.ndarray:
    """A gradient that depends on the parameter and the step, large and small entries
    side by side (Adam's normalisation and AdamW's decay then differ most)."""
    scale = np.geomspace(1e-3, 1e2, p.size).reshape(p.shape)
    return scale * (np.cos(3 * p + step) + 0.5 * p)


def trajectories(make_ours, make_theirs, groups_options, dtype=np.float64, steps=60):
    """Run both optimizers over the same starting parameters (one list per group), each
    taking its gradient from its own parameters; yield both parameter lists per step."""
    rng = np.random.default_rng(0)
    starts = [[rng.normal(size=shape).astype(dtype) for shape in ((3, 2), (4,))]
              for _ in groups_options]
    ours = [[nn.Parameter(s.copy()) for s in group] for group in starts]
    theirs = [[torch.nn.Parameter(torch.tensor(s.copy())) for s in group] for group in starts]
    opt = make_ours([{"params": ps, **o} for ps, o in zip(ours, groups_options)])
    topt = make_theirs([{"params": ps, **o} for ps, o in zip(theirs, groups_options)])
    flat = [p for group in ours for p in group]
    tflat = [p for group in theirs for p in group]
    for step in range(steps):
        for p, tp in zip(flat, tflat):
            p.grad = nn.Parameter(grad_of(p.numpy(), step).astype(dtype), requires_grad=False)
            tp.grad = torch.tensor(grad_of(tp.detach().numpy(), step).astype(dtype))
        opt.step()
        topt.step()
        yield opt, topt, flat, tflat


ADAMW_CASES = {
    "defaults": (dict(), [{}]),
    "amsgrad": (dict(amsgrad=True), [{}]),
    "no-weight-decay": (dict(weight_decay=0.0), [{}]),
    "strong-decay": (dict(lr=0.05, weight_decay=0.5, betas=(0.8, 0.99), eps=1e-6), [{}]),
    "groups": (dict(lr=0.01), [{}, {"lr": 0.1, "weight_decay": 0.0},
                               {"weight_decay": 0.2, "amsgrad": True, "betas": (0.5, 0.9)}]),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", ADAMW_CASES, ids=str)
@pytest.mark.parametrize("kind", ["AdamW", "Adam"])
def test_trajectories_match_torch(kind, case, dtype):
    options, groups = ADAMW_CASES[case]
    # float32: rounding differences (torch's lerp vs m·β + (1 - β)·g) grow over 60 steps
    tol = dict(rtol=1e-12, atol=1e-14) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-5)
    ours, theirs = getattr(optim, kind), getattr(torch.optim, kind)
    run = trajectories(lambda g: ours(g, **options), lambda g: theirs(g, **options), groups,
                       dtype)
    for step in run:
        opt, topt, flat, tflat = step
        for p, tp in zip(flat, tflat):
            np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), **tol)
    for p, tp in zip(flat, tflat):  # after the last step: moments, with amsgrad their max
        state, tstate = opt.state[p], topt.state[tp]
        assert state["step"] == int(tstate["step"])
        for key in tstate:
            if key != "step":
                np.testing.assert_allclose(state[key], tstate[key].numpy(), **tol)
        assert set(state) == set(tstate)
        assert p.dtype == dtype


def test_adam_with_decoupled_weight_decay_is_adamw():
    # AdamW against torch's Adam(decoupled_weight_decay=True), and the other way round
    a = trajectories(lambda g: optim.AdamW(g, lr=0.1, weight_decay=0.3),
                     lambda g: torch.optim.Adam(g, lr=0.1, weight_decay=0.3,
                                                decoupled_weight_decay=True), [{}], steps=20)
    b = trajectories(lambda g: optim.Adam(g, lr=0.1, weight_decay=0.3,
                                          decoupled_weight_decay=True),
                     lambda g: torch.optim.AdamW(g, lr=0.1, weight_decay=0.3), [{}], steps=20)
    for (_, _, ours_a, theirs_a), (_, _, ours_b, theirs_b) in zip(a, b):
        for pa, pb, ta, tb in zip(ours_a, ours_b, theirs_a, theirs_b):
            np.testing.assert_array_equal(pa.numpy(), pb.numpy())
            np.testing.assert_allclose(pa.numpy(), ta.detach().numpy(), rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(pb.numpy(), tb.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_adamw_first_step_by_hand():
    # p1 = p0 (1 - lr wd) - lr sign(g): the bias-corrected first step is lr against g
    p = nn.Parameter(np.array([2.0, -1.0]))
    opt = optim.AdamW([p], lr=0.1, weight_decay=0.5, eps=0.0)
    p.grad = nn.Parameter(np.array([1e-4, -30.0]), requires_grad=False)
    opt.step()
    np.testing.assert_allclose(p.numpy(), [2.0 * 0.95 - 0.1, -1.0 * 0.95 + 0.1], rtol=1e-15)


def test_decay_does_not_go_through_the_moments():
    # AdamW decays a weight with no gradient signal at the same rate as any other;
    # Adam's L2 penalty is normalised away (sign only)
    def run(kind):
        p = nn.Parameter(np.array([1.0, 1.0]))
        opt = kind([p], lr=0.01, weight_decay=0.1)
        for _ in range(5):
            p.grad = nn.Parameter(np.array([0.0, 100.0]), requires_grad=False)
            opt.step()
        return p.numpy()
    assert run(optim.AdamW)[0] == pytest.approx(0.999 ** 5, rel=1e-12)
    assert run(optim.Adam)[0] == pytest.approx(1 - 5 * 0.01, abs=1e-4)  # ~lr a step


def test_defaults_match_torch():
    p = nn.Parameter(np.zeros(2))
    ours = optim.AdamW([p]).defaults
    theirs = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(2))]).defaults
    assert ours == {k: theirs[k] for k in ours}
    assert optim.Adam([p]).defaults == {
        k: torch.optim.Adam([torch.nn.Parameter(torch.zeros(2))]).defaults[k] for k in ours}


def test_state_bytes_with_amsgrad():
    p = nn.Parameter(np.zeros((10, 3), np.float32))
    opt = optim.AdamW([p], amsgrad=True)
    p.grad = nn.Parameter(np.ones((10, 3), np.float32), requires_grad=False)
    opt.step()
    assert opt.state_bytes() == 3 * 4 * 30


def test_adamw_state_dict_round_trip_continues_identically():
    def run(opt, p, steps, start):
        for i in range(steps):
            p.grad = nn.Parameter(grad_of(p.numpy(), start + i), requires_grad=False)
            opt.step()

    p = nn.Parameter(np.array([0.5, -1.0, 2.0]))
    opt = optim.AdamW([p], lr=0.1, amsgrad=True)
    run(opt, p, 4, 0)
    saved = opt.state_dict()
    q = nn.Parameter(p.numpy().copy())
    resumed = optim.AdamW([q], lr=0.5, amsgrad=False)
    resumed.load_state_dict(saved)
    assert resumed.param_groups[0]["lr"] == 0.1 and resumed.param_groups[0]["amsgrad"]
    run(opt, p, 5, 4)
    run(resumed, q, 5, 4)
    np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_loading_an_adam_state_into_adamw_keeps_the_decay_decoupled():
    # as torch.optim.AdamW does
    p = nn.Parameter(np.ones(2))
    adam = optim.Adam([p], weight_decay=0.1)
    adamw = optim.AdamW([nn.Parameter(np.ones(2))])
    adamw.load_state_dict(adam.state_dict())
    assert adamw.param_groups[0]["decoupled_weight_decay"] is True
    tp = torch.nn.Parameter(torch.ones(2))
    tadamw = torch.optim.AdamW([torch.nn.Parameter(torch.ones(2))])
    tadamw.load_state_dict(torch.optim.Adam([tp], weight_decay=0.1).state_dict())
    assert tadamw.param_groups[0]["decoupled_weight_decay"] is True


@pytest.mark.parametrize("options", [
    dict(lr=-1e-3), dict(eps=-1.0), dict(weight_decay=-0.1), dict(betas=(1.0, 0.999)),
    dict(betas=(0.9, -0.5)), dict(lr=float("nan")),
])
def test_bad_options_raise_torchs_error(options):
    with pytest.raises(ValueError) as theirs:
        torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], **options)
    with pytest.raises(ValueError, match="^AdamW: Invalid ") as ours:
        optim.AdamW([nn.Parameter(np.zeros(1))], **options)
    if "nan" not in str(options):  # PyTorch accepts a nan lr; this engine refuses it
        assert str(theirs.value) in str(ours.value)
    assert "\nHint: " in str(ours.value)


def test_empty_and_non_tensor_parameters():
    with pytest.raises(ValueError, match="AdamW got an empty parameter list"):
        optim.AdamW([])
    with pytest.raises(TypeError, match="AdamW can only optimize Tensors"):
        optim.AdamW([[1.0]])


# -- learning-rate schedules -----------------------------------------------------------------------
LRS = (0.1, 0.03, 1.0)  # one per parameter group


class Lib:
    """Building the same optimizer and schedule with either library."""

    def __init__(self, name: str):
        self.name = name
        self.sched = sched if name == "ours" else tsched
        self.optim = optim if name == "ours" else torch.optim

    def optimizer(self, lrs=LRS, kind="SGD"):
        make = (lambda: nn.Parameter(np.zeros(2))) if self.name == "ours" else (
            lambda: torch.nn.Parameter(torch.zeros(2)))
        return getattr(self.optim, kind)([{"params": [make()], "lr": lr} for lr in lrs], lr=1.0)


def lambda_list(epoch):
    return 0.95 ** epoch


class Halving:
    """A callable object as lr_lambda (its attributes are saved by state_dict)."""

    def __init__(self, every):
        self.every = every

    def __call__(self, epoch):
        return 0.5 ** (epoch // self.every)


SCHEDULES = {
    "lambda": lambda s, o: s.LambdaLR(o, lambda e: 1 / (1 + 0.1 * e)),
    "lambda-per-group": lambda s, o: s.LambdaLR(
        o, [lambda_list, Halving(7), lambda e: math.cos(e / 10) ** 2]),
    "linear-default": lambda s, o: s.LinearLR(o),
    "linear-warmup": lambda s, o: s.LinearLR(o, start_factor=0.01, total_iters=30),
    "linear-decay": lambda s, o: s.LinearLR(o, start_factor=1.0, end_factor=0.05, total_iters=77),
    "linear-to-zero": lambda s, o: s.LinearLR(o, start_factor=0.5, end_factor=0.0, total_iters=9),
    "linear-no-iters": lambda s, o: s.LinearLR(o, start_factor=0.5, total_iters=0),
    "cosine": lambda s, o: s.CosineAnnealingLR(o, T_max=50),
    "cosine-eta-min": lambda s, o: s.CosineAnnealingLR(o, T_max=20, eta_min=0.002),
    "cosine-short-periods": lambda s, o: s.CosineAnnealingLR(o, T_max=3, eta_min=1e-3),
    "cosine-one": lambda s, o: s.CosineAnnealingLR(o, T_max=1),
    "cosine-float-T": lambda s, o: s.CosineAnnealingLR(o, T_max=12.5, eta_min=1e-4),
    "warmup-then-cosine": lambda s, o: s.SequentialLR(o, [
        s.LinearLR(o, start_factor=0.1, total_iters=10), s.CosineAnnealingLR(o, T_max=90)],
        milestones=[10]),
    "warmup-then-cosine-floor": lambda s, o: s.SequentialLR(o, [
        s.LinearLR(o, start_factor=1 / 6, total_iters=5),
        s.CosineAnnealingLR(o, T_max=40, eta_min=1e-3)], milestones=[5]),
    "three-phases": lambda s, o: s.SequentialLR(o, [
        s.LambdaLR(o, lambda e: 0.9 ** e), s.LinearLR(o, start_factor=0.5, total_iters=20),
        s.CosineAnnealingLR(o, T_max=30)], milestones=[15, 50]),
    "milestone-before-warmup-ends": lambda s, o: s.SequentialLR(o, [
        s.LinearLR(o, start_factor=0.2, total_iters=20), s.CosineAnnealingLR(o, T_max=60)],
        milestones=[8]),
    "one-scheduler": lambda s, o: s.SequentialLR(o, [s.CosineAnnealingLR(o, T_max=25)],
                                                 milestones=[]),
    "milestone-zero": lambda s, o: s.SequentialLR(o, [
        s.LinearLR(o, total_iters=4), s.CosineAnnealingLR(o, T_max=30)], milestones=[0]),
}
STEPS = 150


def lr_sequence(lib: Lib, name: str, steps: int = STEPS, lrs=LRS, kind="SGD"):
    """For each step: get_last_lr(), the groups' lrs and last_epoch."""
    opt = lib.optimizer(lrs, kind)
    s = SCHEDULES[name](lib.sched, opt)
    seen = []
    for _ in range(steps):
        seen.append((list(s.get_last_lr()), [g["lr"] for g in opt.param_groups], s.last_epoch))
        opt.step()
        s.step()
    return seen


@pytest.mark.parametrize("name", SCHEDULES)
def test_every_schedule_gives_torchs_lrs_step_by_step(name):
    ours, theirs = lr_sequence(Lib("ours"), name), lr_sequence(Lib("torch"), name)
    for step, ((last, lrs, epoch), (tlast, tlrs, tepoch)) in enumerate(zip(ours, theirs)):
        assert epoch == tepoch, f"step {step}"
        # the same formulas in the same order: the same floats (to the last bit)
        np.testing.assert_allclose(last, tlast, rtol=1e-15, atol=0, err_msg=f"step {step}")
        np.testing.assert_allclose(lrs, tlrs, rtol=1e-15, atol=0, err_msg=f"step {step}")


@pytest.mark.parametrize("name", ["cosine", "warmup-then-cosine"])
def test_schedules_drive_adamw_as_in_torch(name):
    ours, theirs = lr_sequence(Lib("ours"), name, 120, kind="AdamW"), \
        lr_sequence(Lib("torch"), name, 120, kind="AdamW")
    np.testing.assert_allclose([s[1] for s in ours], [s[1] for s in theirs], rtol=1e-15)


@pytest.mark.parametrize("name, T_max, eta_min", [("cosine", 50, 0.0),
                                                  ("cosine-eta-min", 20, 0.002),
                                                  ("cosine-short-periods", 3, 1e-3)])
def test_cosine_recursive_form_stays_on_the_closed_form(name, T_max, eta_min):
    # PyTorch's recursive update follows eta_min + (lr0 - eta_min)(1 + cos(pi t / T)) / 2
    # to rounding, through several periods (down and back up: no restarts)
    seen = lr_sequence(Lib("ours"), name)
    for t, (last, _, epoch) in enumerate(seen):
        assert epoch == t
        closed = [eta_min + (lr - eta_min) * (1 + math.cos(math.pi * t / T_max)) / 2 for lr in LRS]
        np.testing.assert_allclose(last, closed, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("name", ["linear-warmup", "linear-decay", "cosine", "cosine-eta-min",
                                  "cosine-short-periods"])
def test_closed_forms_match_torchs(name):
    opt, topt = Lib("ours").optimizer(), Lib("torch").optimizer()
    s, ts = SCHEDULES[name](sched, opt), SCHEDULES[name](tsched, topt)
    for epoch in range(STEPS):
        s.last_epoch = ts.last_epoch = epoch
        np.testing.assert_allclose(s._get_closed_form_lr(), ts._get_closed_form_lr(),
                                   rtol=1e-15, atol=0)


@pytest.mark.parametrize("name", ["lambda-per-group", "linear-warmup", "cosine-eta-min",
                                  "three-phases"])
def test_state_dict_round_trip_resumes_the_same_sequence(name):
    lib = Lib("ours")
    opt = lib.optimizer()
    s = SCHEDULES[name](sched, opt)
    for _ in range(37):
        opt.step()
        s.step()
    saved_opt, saved = opt.state_dict(), s.state_dict()
    assert saved["last_epoch"] == 37 and "optimizer" not in saved
    copy_opt = lib.optimizer(lrs=(5.0, 5.0, 5.0))
    copy = SCHEDULES[name](sched, copy_opt)
    copy_opt.load_state_dict(saved_opt)
    copy.load_state_dict(saved)
    for _ in range(60):
        assert copy.get_last_lr() == s.get_last_lr()
        assert copy.last_epoch == s.last_epoch
        for o in (opt, copy_opt):
            o.step()
        s.step()
        copy.step()


def test_state_dict_keys_are_torchs():
    opt, topt = Lib("ours").optimizer(), Lib("torch").optimizer()
    for name in ("cosine-eta-min", "linear-warmup", "lambda-per-group", "three-phases"):
        ours = SCHEDULES[name](sched, opt).state_dict()
        theirs = SCHEDULES[name](tsched, topt).state_dict()
        assert set(ours) == set(theirs), name
        for key in ("last_epoch", "base_lrs", "_last_lr"):
            if key in theirs:
                np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-15)
    lambdas = SCHEDULES["lambda-per-group"](sched, opt).state_dict()["lr_lambdas"]
    assert lambdas == [None, {"every": 7}, None]  # functions are not saved; objects' dicts are


def test_resuming_with_last_epoch_like_torch():
    # a scheduler built with last_epoch >= 0 takes base_lrs from initial_lr and keeps the lr
    for lib in (Lib("ours"), Lib("torch")):
        opt = lib.optimizer()
        first = lib.sched.CosineAnnealingLR(opt, T_max=30)
        for _ in range(10):
            opt.step()
            first.step()
        resumed = lib.sched.CosineAnnealingLR(opt, T_max=30, last_epoch=first.last_epoch)
        values = []
        for _ in range(40):
            opt.step()
            resumed.step()
            values.append(resumed.get_last_lr())
        if lib.name == "ours":
            ours = values
    np.testing.assert_allclose(ours, values, rtol=1e-15)


def test_scheduler_step_before_optimizer_step_warns_like_torch():
    for lib in (Lib("ours"), Lib("torch")):
        s = lib.sched.LinearLR(lib.optimizer())
        with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before "
                                             r"`optimizer.step\(\)`"):
            s.step()
    opt = Lib("ours").optimizer()
    s = sched.LinearLR(opt)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.step()  # the right order: no warning


def test_get_lr_outside_step_warns_like_torch():
    for lib in (Lib("ours"), Lib("torch")):
        s = lib.sched.CosineAnnealingLR(lib.optimizer(), T_max=5)
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            s.get_lr()


def test_building_sets_initial_lr_like_torch():
    opt, topt = Lib("ours").optimizer(), Lib("torch").optimizer()
    sched.LinearLR(opt, start_factor=0.5)
    tsched.LinearLR(topt, start_factor=0.5)
    assert [g["initial_lr"] for g in opt.param_groups] == list(LRS)
    assert [g["lr"] for g in opt.param_groups] == [g["lr"] for g in topt.param_groups]


# -- cosine_with_warmup (this project's convenience) -----------------------------------------------
def warmup_cosine_reference(lr, t, warmup, total, min_lr):
    if t < warmup:
        return lr * (t + 1) / (warmup + 1)
    p = min(1.0, (t - warmup) / (total - warmup)) if total > warmup else 1.0
    return min_lr + (lr - min_lr) * (1 + math.cos(math.pi * p)) / 2


@pytest.mark.parametrize("warmup, total, min_lr", [(10, 100, 0.0), (5, 120, 1e-3), (0, 50, 0.0),
                                                   (1, 30, 0.01), (20, 20, 0.0)])
def test_cosine_with_warmup_is_torchs_linear_then_cosine_in_closed_form(warmup, total, min_lr):
    opt = Lib("ours").optimizer()
    s = sched.cosine_with_warmup(opt, warmup, total, min_lr)
    assert isinstance(s, sched.LambdaLR)
    topt = Lib("torch").optimizer()
    parts = [tsched.CosineAnnealingLR(topt, T_max=max(total - warmup, 1), eta_min=min_lr)]
    if warmup:
        parts.insert(0, tsched.LinearLR(topt, start_factor=1 / (warmup + 1), total_iters=warmup))
    ts = tsched.SequentialLR(topt, parts, milestones=[warmup] if warmup else [])
    for t in range(total + 30):
        expected = [warmup_cosine_reference(lr, t, warmup, total, min_lr) for lr in LRS]
        np.testing.assert_allclose(s.get_last_lr(), expected, rtol=1e-12, atol=1e-15)
        if t <= total and total > warmup:  # torch's cosine rises again after T_max
            np.testing.assert_allclose(s.get_last_lr(), ts.get_last_lr(), rtol=1e-9, atol=1e-15)
        assert min(s.get_last_lr()) > 0 or (min_lr == 0 and t >= total)
        opt.step(), s.step()
        topt.step(), ts.step()


def test_cosine_with_warmup_state_dict_saves_its_settings():
    opt = Lib("ours").optimizer()
    state = sched.cosine_with_warmup(opt, 3, 10, 1e-3).state_dict()
    assert state["lr_lambdas"][0] == {"warmup_steps": 3, "total_steps": 10,
                                      "floor": pytest.approx(1e-3 / 0.1)}


@pytest.mark.parametrize("args, kind, match", [
    ((-1, 10), ValueError, "0 <= warmup_steps <= total_steps"),
    ((11, 10), ValueError, "warmup_steps=11, total_steps=10"),
    ((0, 0), ValueError, "total_steps >= 1"),
    ((1.5, 10), TypeError, "warmup_steps must be an int, but got float"),
    ((1, 10.0), TypeError, "total_steps must be an int"),
    ((1, 10, -0.1), ValueError, r"min_lr=-0.1 is not in \[0, lr\]"),
    ((1, 10, 0.05), ValueError, r"param_groups\[1\], whose lr is 0.03"),
])
def test_cosine_with_warmup_bad_arguments(args, kind, match):
    with pytest.raises(kind, match=match) as info:
        sched.cosine_with_warmup(Lib("ours").optimizer(), *args)
    assert "\nHint: " in str(info.value)


# -- bad arguments: PyTorch's error types ----------------------------------------------------------
BAD = {
    "not-an-optimizer": (lambda s, o: s.LinearLR("sgd"), TypeError, "str is not an Optimizer"),
    # PyTorch's LambdaLR reads optimizer.param_groups first (AttributeError); this one
    # checks the optimizer first, as PyTorch's other schedulers do (TypeError)
    "lambda-not-an-optimizer": (lambda s, o: s.LambdaLR(None, lambda e: 1.0), (TypeError,
                                AttributeError), "NoneType is not an Optimizer"),
    "lambda-count": (lambda s, o: s.LambdaLR(o, [lambda e: 1.0]), ValueError,
                     "Expected 3 lr_lambdas, but got 1"),
    "lambda-not-callable": (lambda s, o: s.LambdaLR(o, 0.5), TypeError,
                            "lr_lambda must be callable"),
    "linear-start-zero": (lambda s, o: s.LinearLR(o, start_factor=0.0), ValueError,
                          "Starting multiplicative factor expected to be greater than 0"),
    "linear-start-above-one": (lambda s, o: s.LinearLR(o, start_factor=1.5), ValueError,
                               "Starting multiplicative factor"),
    "linear-end-negative": (lambda s, o: s.LinearLR(o, end_factor=-0.1), ValueError,
                            "Ending multiplicative factor expected to be between 0 and 1"),
    "linear-end-above-one": (lambda s, o: s.LinearLR(o, end_factor=2.0), ValueError,
                             "Ending multiplicative factor"),
    "resume-without-initial-lr": (lambda s, o: s.CosineAnnealingLR(o, 10, last_epoch=3), KeyError,
                                  r"param 'initial_lr' is not specified in param_groups\[0\]"),
    "sequential-empty": (lambda s, o: s.SequentialLR(o, [], milestones=[]), ValueError,
                         "expects at least one scheduler"),
    "sequential-milestones": (lambda s, o: s.SequentialLR(o, [s.LinearLR(o), s.LinearLR(o)],
                                                          milestones=[]),
                              ValueError, "one more than the number of milestone points"),
    "sequential-not-a-scheduler": (lambda s, o: s.SequentialLR(o, [s.LinearLR(o), "x"], [3]),
                                   TypeError, "at index 1 should have `optimizer`"),
}


@pytest.mark.parametrize("case", BAD, ids=str)
def test_bad_arguments_raise_torchs_error_types(case):
    build, kind, match = BAD[case]
    with pytest.raises(kind):
        build(tsched, Lib("torch").optimizer())
    with pytest.raises(kind, match=match) as ours:
        build(sched, Lib("ours").optimizer())
    assert "\nHint: " in str(ours.value.args[0])


def test_sequential_schedulers_over_another_optimizer():
    for lib in (Lib("ours"), Lib("torch")):
        a, b = lib.optimizer(), lib.optimizer()
        with pytest.raises(ValueError, match="expects all schedulers to belong to the same "
                                             "optimizer"):
            lib.sched.SequentialLR(a, [lib.sched.LinearLR(a), lib.sched.LinearLR(b)], [2])


def test_cosine_T_max_zero_divides_by_zero():
    """PyTorch builds it and raises ZeroDivisionError at the first step(); this engine
    raises the same error type when it is built, with a sentence."""
    topt = Lib("torch").optimizer()
    s = tsched.CosineAnnealingLR(topt, T_max=0)
    topt.step()
    with pytest.raises(ZeroDivisionError):
        s.step()
    with pytest.raises(ZeroDivisionError, match="T_max=0 is a cosine period of no steps"):
        sched.CosineAnnealingLR(Lib("ours").optimizer(), T_max=0)
