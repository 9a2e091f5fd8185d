"""T6, T8, T9 and T10 (lesson 03): what the reverse sweep does and what its gradients mean.

T6: one sweep for a network and for a formula; T8: a value used three times; T9: the
seed; T10: the direction of steepest increase.
"""

from __future__ import annotations

import numpy as np

import autograd_core as ag
from autograd_core import nn
from autograd_core.sweep.engine import backward_steps

from ... import gate
from ...feedback import words
from ..true_false import Flaw, Watch, among, function, number, numbers, same
from .modes import _at, _rerun

# -- T6: one sweep for a network and for a formula --------------------------------------------

_F32 = 1e-5  # nn modules hold float32: gradients compared to float32's rounding


def measure_t6(data: dict, watch: Watch) -> bool:
    """Two sweeps of the experiment, one through nn modules and one through the same function
    written as a plain formula, and one weight's gradient from each; True when they differ as
    algorithms (another order of visiting, or other gradients for the same weight)."""
    found = {}
    for name in ("network", "formula"):
        ops = data[name]
        if not (isinstance(ops, list | tuple) and ops and all(isinstance(o, str) for o in ops)):
            raise Flaw(f"'{name}' should be the names of the ops the sweep visited, in order: "
                       "[step.node.op.name for step in backward_steps(...)].")
        sweeps = [s for s in watch.sweeps if s.ops == list(ops) and s not in found.values()]
        if not sweeps:
            raise Flaw(f"'{name}' is not the list of ops any reverse sweep of your experiment "
                       "visited: record the sweep with backward_steps and list its ops.")
        found[name] = sweeps[0]
    in_module = {k: any(n.module is not None for n in s.visited)
                 or any(getattr(leaf, "is_parameter", False) for leaf in s.leaves())
                 for k, s in found.items()}
    if not in_module["network"]:
        raise Flaw("The sweep you call 'network' ran through no nn module: build the network "
                   "from nn.Linear and an activation, and sweep back from its loss.")
    if in_module["formula"]:
        raise Flaw("The sweep you call 'formula' ran through a network's modules: write the "
                   "formula with plain tensors (copies of the weights' values), no nn module.")
    grads = {}
    for name in ("network", "formula"):
        g = numbers(data[f"{name}_grad"], f"{name}_grad")
        if not np.any(g):
            raise Flaw(f"'{name}_grad' is all zeros: take the gradient of a weight the loss "
                       "really depends on.")
        sent = [s.total(leaf) for s in watch.sweeps if s.ops == found[name].ops
                and s is not found["network" if name == "formula" else "formula"]
                for leaf in s.leaves()]
        if not any(same(g, h, rtol=_F32, atol=_F32 * 1e-2) for h in sent):
            raise Flaw(f"'{name}_grad' is not a gradient the sweep you call '{name}' sent to "
                       "one of its leaves: read the weight's .grad after that sweep (a fresh "
                       "network or fresh tensors for each sweep).")
        grads[name] = g
    if not same(grads["network"], grads["formula"], rtol=_F32, atol=_F32 * 1e-2):
        raise Flaw("Your 'formula_grad' is not the gradient of the same weight as "
                   "'network_grad': does your formula compute what the network computes, "
                   "with the same weights and data, and did you take the same weight's "
                   "gradient from both? (An nn.Linear computes x @ W.T + b.)")
    reverse_order = all([n.seq for n in s.visited] == sorted((n.seq for n in s.visited),
                                                             reverse=True)
                        for s in found.values())
    return not reverse_order


@gate.answers("T6")
def _reference_t6() -> dict:
    """The ops the sweep visits on a network's loss and on the same function written as a
    formula of plain tensors, and the first layer's weight gradient from each."""
    gen = ag.Generator(60)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    x, t = ag.randn(8, 3, generator=gen), ag.randn(8, 1, generator=gen)
    network_loss = ((net(x) - t) ** 2).mean()
    network = [s.node.op.name for s in backward_steps(network_loss)]
    # the same function, no module: plain tensors holding copies of the weights' values
    W1, b1, W2, b2 = (ag.tensor(p.numpy(), requires_grad=True) for p in net.parameters())
    formula_loss = ((ag.tanh(x @ W1.T + b1) @ W2.T + b2 - t) ** 2).mean()
    formula = [s.node.op.name for s in backward_steps(formula_loss)]
    return {"network": network, "formula": formula,
            "network_grad": net[0].weight.grad, "formula_grad": W1.grad}


# -- T8: a value used three times ----------------------------------------------------------------


def measure_t8(data: dict, watch: Watch) -> bool:
    """x.grad after a backward through three uses, and three gradients the engine sent through one
    use each; True when grad is their average (no loss that combines the uses as they are
    gives that: an averaged loss is named as the flaw it is)."""
    grad = numbers(data["grad"], "grad")
    parts = data["contributions"]
    if not isinstance(parts, list | tuple) or len(parts) != 3:
        raise Flaw("'contributions' should be a list of three gradients, one per use of x.")
    parts = [numbers(p, f"contribution {k + 1}") for k, p in enumerate(parts)]
    if any(p.shape != grad.shape for p in parts):
        raise Flaw("Each contribution should have the shape of x, like grad: x's gradient "
                   "through one use.")
    used_thrice = [leaf for s in watch.sweeps for leaf in s.leaves() if len(s.to(leaf)) >= 3]
    if not used_thrice:
        raise Flaw("None of your backward passes sent gradient to one tensor along three "
                   "uses: use x in three ops, combine them into one loss, and call backward.")
    seen = [s.total(leaf) for s in watch.sweeps for leaf in s.leaves() if len(s.to(leaf)) >= 3]
    if not among(grad, seen + [leaf.grad.numpy() for leaf in used_thrice if leaf.grad is not None]):
        raise Flaw("'grad' is not the .grad of the tensor your backward reached through three "
                   "uses: return x.grad after that backward.")
    sent = watch.sent_to_leaves() + watch.totals()
    for k, part in enumerate(parts):
        if not among(part, sent):
            raise Flaw(f"Contribution {k + 1} is not a gradient the engine sent to x through "
                       "one use: call backward through that use alone, on a fresh x.")
        if same(part, grad) and np.any(grad):
            raise Flaw(f"Contribution {k + 1} is the whole gradient of x, through all three "
                       "uses: get it through that use alone, on a fresh x.")
    if same(grad, sum(parts)):
        return False
    if same(grad, sum(parts) / 3):
        raise Flaw("Your grad is a third of the sum of your contributions: your loss scales "
                   "the three uses (it averages them), but each contribution was taken from "
                   "its use alone without that factor, so the two do not measure the same "
                   "thing. Combine the three uses into the loss as they are.")
    raise Flaw("Your contributions do not add up to anything the engine computed (neither "
               "their sum nor their average is your grad): did you call backward on each use "
               "separately, on a fresh x each time? backward adds into .grad.")


@gate.answers("T8")
def _reference_t8() -> dict:
    """x used three times: x.grad, and x's gradient through each use alone."""
    value = np.array([0.5, -1.5, 2.0])
    uses = [lambda t: 3 * t, ag.tanh, lambda t: t ** 2]
    x = ag.tensor(value, requires_grad=True)
    (uses[0](x) + uses[1](x) + uses[2](x)).sum().backward()
    contributions = []
    for use in uses:
        alone = ag.tensor(value, requires_grad=True)      # a fresh x for each use
        use(alone).sum().backward()
        contributions.append(alone.grad)
    return {"grad": x.grad, "contributions": contributions}


# -- T9: the seed ----------------------------------------------------------------------------------


def measure_t9(data: dict, watch: Watch) -> bool:
    """Gradients of the experiment's sweeps seeded with 1 and with c, and of c·L seeded with 1;
    True when the seed changes nothing."""
    c = number(data["c"], "c")
    if abs(c) < 1e-6 or abs(c - 1) < 1e-6:
        raise Flaw("Choose a seed c other than 0 and 1 (e.g. 3.0), or there is nothing to "
                   "compare.")
    g1, gc = numbers(data["grad_1"], "grad_1"), numbers(data["grad_c"], "grad_c")
    g_m = numbers(data["grad_M"], "grad_M")
    if not np.any(g1):
        raise Flaw("grad_1 is all zeros, so no seed could change it: pick a loss and a point "
                   "where the gradient is not zero.")
    for name, seed, g in (("grad_1", 1.0, g1), ("grad_c", c, gc)):
        seeded = [s for s in watch.sweeps if np.allclose(s.seed, seed)]
        if not seeded:
            raise Flaw(f"None of your backward passes started from the seed {words.number(seed)}: "
                       f"use backward(gradient={words.number(seed)}) for {name}.")
        if not among(g, watch.totals(seeded)):
            raise Flaw(f"'{name}' is not the gradient your backward seeded with "
                       f"{words.number(seed)} sent to a leaf: did .grad still hold an earlier "
                       "gradient? backward adds into .grad, so use a fresh leaf for each run.")
    ones = [s for s in watch.sweeps if np.allclose(s.seed, 1.0)]
    if same(g_m, g1) or not among(g_m, watch.totals(ones)):
        raise Flaw("'grad_M' is not what a plain backward() (seed 1) of another loss sent to "
                   "your leaf: build that loss from yours, on a fresh leaf, and call "
                   "backward() on it with no gradient= argument.")
    if not same(g_m, gc) and not same(g_m, c * g1):
        raise Flaw("'grad_M' is not the gradient your seed c gave: which loss M, built from "
                   "yours on the same data, would a sweep that starts from 1 have to "
                   "differentiate to give it? What would dM/dL be?")
    if g1.shape == gc.shape and same(gc, c * g1) and same(g_m, gc):
        return False
    if same(gc, g1):
        return True
    raise Flaw("grad_1 and grad_c are not gradients of the same loss: compute both from the "
               "same function and data, changing only the seed.")


@gate.answers("T9")
def _reference_t9() -> dict:
    """The same loss seeded with 1 and with c = 3, and 3·loss seeded with 1, each on a fresh
    leaf."""
    draw = np.random.default_rng(90)
    X, W0 = draw.standard_normal((5, 3)), draw.standard_normal((3, 2))
    c = 3.0

    def gradient(seed, factor=1.0):
        W = ag.tensor(W0, requires_grad=True)             # a fresh leaf for each run
        (factor * ag.tanh(ag.tensor(X) @ W).sum()).backward(gradient=seed)
        return W.grad.numpy()                            # this seed's gradient

    return {"c": c, "grad_1": gradient(1.0), "grad_c": gradient(c),
            "grad_M": gradient(1.0, factor=c)}          # c·L, seeded with 1


# -- T10: the direction of steepest increase ---------------------------------------------------


def measure_t10(data: dict, watch: Watch) -> bool:
    """The engine's gradient at 'at' and changes of the loss after small steps, re-measured here;
    supported: +grad changes it most."""
    loss, at = function(data["loss"], "loss"), _at(data["at"])
    grad, step = numbers(data["grad"], "grad"), number(data["step"], "step")
    if not 0 < step <= 1e-2:
        raise Flaw("'step' should be small (e.g. 1e-3), so that each change shows the first-"
                   "order slope along its direction.")
    leaf = ag.tensor(at, requires_grad=True)
    _rerun(lambda: loss(leaf).backward())
    if not same(grad, leaf.grad.numpy()):
        raise Flaw("'grad' is not the engine's gradient of your loss at 'at': return w.grad "
                   "after backward.")
    if not among(grad, watch.totals()):
        raise Flaw("No backward pass of your experiment computed 'grad': get it with "
                   "backward inside the experiment.")

    def change(d):
        with ag.no_grad():
            return float(_rerun(lambda: loss(ag.tensor(at + step * d)).item()
                                - loss(ag.tensor(at)).item()))

    if not np.any(grad):
        raise Flaw("Your gradient is zero at 'at', so it points nowhere: pick a point where "
                   "the loss is not flat.")
    unit = grad / np.linalg.norm(grad)
    others = data["others"]
    if not isinstance(others, list | tuple) or len(others) < 3:
        raise Flaw("'others' should be at least 3 pairs (unit direction, change).")
    measured = [("along_grad", unit, data["along_grad"]),
                ("against_grad", -unit, data["against_grad"])]
    for k, pair in enumerate(others):
        if not (isinstance(pair, list | tuple) and len(pair) == 2):
            raise Flaw(f"others[{k}] should be a pair (unit direction, change).")
        d = numbers(pair[0], f"others[{k}] direction")
        if d.shape != at.shape or abs(np.linalg.norm(d) - 1) > 1e-6:
            raise Flaw(f"The direction of others[{k}] should be a unit vector shaped like "
                       "'at': divide it by its norm.")
        measured.append((f"others[{k}]", d, pair[1]))
    changes = []
    for name, d, yours in measured:
        yours, engine = number(yours, name), change(d)
        if abs(yours - engine) > 1e-9 * abs(engine) + 1e-13:
            raise Flaw(f"'{name}' is not how much your loss changes after a step of length "
                       f"'step' along its direction: loss(at + step * d) - loss(at).")
        changes.append(yours)
    up, down, rest = changes[0], changes[1], changes[2:]
    if up > max(rest) and down < min(rest):
        return True
    if up < min(rest) and down > max(rest):
        return False
    raise Flaw("Your changes do not line up in any clear order: take a smaller step.")


@gate.answers("T10")
def _reference_t10() -> dict:
    """Changes of a loss after a small step along the unit gradient, against it, and along five
    random unit directions."""
    target = np.array([0.3, -0.6, 0.1])

    def loss(w):
        return ((ag.tanh(w) - ag.tensor(target)) ** 2).sum()

    w0, step = np.array([0.8, 0.4, -0.2]), 1e-3
    w = ag.tensor(w0, requires_grad=True)
    loss(w).backward()
    unit = w.grad.numpy() / np.linalg.norm(w.grad.numpy())

    def change(d):
        with ag.no_grad():                      # forward passes only: nothing recorded
            return loss(ag.tensor(w0 + step * d)).item() - loss(ag.tensor(w0)).item()

    random = [d / np.linalg.norm(d) for d in np.random.default_rng(0).standard_normal((5, 3))]
    return {"loss": loss, "at": w0, "grad": w.grad, "step": step,
            "along_grad": change(unit), "against_grad": change(-unit),
            "others": [(d, change(d)) for d in random]}

