"""Lesson 15, a transformer's training memory: a small GPT that learns to reverse digit
strings, and the measurements the lesson makes on it.

* :class:`TinyGPT`: token and position embeddings, pre-norm :class:`GPTBlock` s (the
  engine's ``nn.TransformerBlock`` with a recomputation plan), a final layer norm and a
  linear head. It trains in seconds on :func:`reversal_batch` data
  (:func:`train_reversal`, AdamW with a cosine schedule after a warm-up).
* :func:`block_saves`: what one block's ops save for backward, op by op, in bytes (each
  memory buffer counted once), beside :func:`korthikanti_bytes`, the published
  per-layer formula sbh(34 + 5as/h).
* :func:`recompute_step`: one training step of the GPT with a recomputation plan
  (nothing, the attention core, whole blocks, ...), its peak bytes, recomputed
  multiply-adds and gradients.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg

import autograd_core as ag
from autograd_core import nn, optim
from autograd_core.nn import functional as F
from autograd_core.optim.lr_scheduler import cosine_with_warmup
from autograd_core.sweep.engine import reverse_topological
from autograd_core.tools import graph
from autograd_core.utils.checkpoint import checkpoint

from .. import gate
from ..figures import DescribedFigure
from .checkpointing import (
    MEASURES,
    CheckpointedStep,
    MeasuredPlan,
    StepSeen,
    layout_of,
    measure_step,
    recomputation_of,
)

DIGITS = 6            # digits per string to reverse
SEPARATOR = 10        # the token between a string and its reversal
VOCAB = 11            # the digits 0-9 and the separator
CONTEXT = 2 * DIGITS  # tokens the model reads: the string, the separator, the reversal but its last
IGNORE = -100         # targets the loss skips (cross_entropy's ignore_index)

# The parts of a block a recomputation plan can name, from the smallest to the whole.
PARTS = ("attention_core", "attention", "mlp", "block")


def reversal_batch(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` training sequences and their targets, as int64 arrays of shape (n, CONTEXT).

    A sequence is DIGITS random digits, the separator, then the same digits reversed; the
    model reads all of it but the last token and predicts each next one. Only the
    reversal is graded: the targets of the first DIGITS positions are IGNORE.

    >>> x, y = reversal_batch(1, seed=0)
    >>> x.shape, int(x[0, DIGITS]), int(y[0, 0])
    ((1, 12), 10, -100)
    """
    digits = np.random.default_rng(seed).integers(0, 10, (n, DIGITS))
    sequence = np.concatenate([digits, np.full((n, 1), SEPARATOR), digits[:, ::-1]], axis=1)
    targets = sequence[:, 1:].copy()
    targets[:, :DIGITS] = IGNORE
    return sequence[:, :-1], targets


class GPTBlock(nn.TransformerBlock):
    """``nn.TransformerBlock`` with a recomputation plan: ``recompute`` is a set of
    :data:`PARTS` names, each run inside ``checkpoint`` (kept: only its input):

    * ``"attention_core"``: scores, softmax and the weighted values (the projections are
      kept): selective recomputation;
    * ``"attention"``: the whole attention branch, projections included;
    * ``"mlp"``: the MLP branch (both linears and the GELU);
    * ``"block"``: the whole block (full recomputation).
    """

    def __init__(self, d_model: int, n_heads: int, *, generator: ag.Generator | None = None,
                 recompute: Iterable[str] = ()):
        super().__init__(d_model, n_heads, dtype=ag.float32, generator=generator)
        self.recompute = frozenset(recompute)

    @property
    def recompute(self) -> frozenset:
        return self._recompute

    @recompute.setter
    def recompute(self, parts: Iterable[str]) -> None:
        parts = frozenset(parts)
        unknown = sorted(parts - set(PARTS))
        if unknown:
            raise ValueError(f"GPTBlock: {', '.join(map(repr, unknown))} is not a part of a "
                             f"block; the parts are {', '.join(map(repr, PARTS))}.")
        self._recompute = parts
        self.attn.checkpoint_core = "attention_core" in parts

    def forward(self, x: ag.Tensor) -> ag.Tensor:
        if "block" in self.recompute:
            return checkpoint(self.branches, x)
        return self.branches(x)

    def branches(self, x: ag.Tensor) -> ag.Tensor:
        """The block itself: x + attn(ln1(x)), then + mlp(ln2(x)), each branch
        checkpointed if the plan names it."""
        h = self.ln1(x)
        x = x + (checkpoint(self.attn, h) if "attention" in self.recompute else self.attn(h))
        h = self.ln2(x)
        return x + (checkpoint(self.mlp, h) if "mlp" in self.recompute else self.mlp(h))


class TinyGPT(nn.Module):
    """A small GPT: token + position embeddings, ``n_layers`` :class:`GPTBlock` s, a final
    LayerNorm and a linear head to VOCAB scores per position, all float32 (as PyTorch's
    default dtype; the engine's is float64), as the memory lesson counts it.

    >>> TinyGPT(generator=ag.Generator(0))(reversal_batch(2, 0)[0]).shape
    (2, 12, 11)
    """

    def __init__(self, d_model: int = 32, n_heads: int = 4, n_layers: int = 2,
                 context: int = CONTEXT, *, generator: ag.Generator | None = None):
        super().__init__()
        self.context = context
        self.tok = nn.Embedding(VOCAB, d_model, dtype=ag.float32, generator=generator)
        self.pos = nn.Embedding(context, d_model, dtype=ag.float32, generator=generator)
        self.blocks = nn.Sequential(*[GPTBlock(d_model, n_heads, generator=generator)
                                      for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model, dtype=ag.float32)
        self.head = nn.Linear(d_model, VOCAB, dtype=ag.float32, generator=generator)

    def forward(self, tokens) -> ag.Tensor:
        tokens = np.asarray(getattr(tokens, "numpy", lambda: tokens)())
        if tokens.ndim != 2 or tokens.shape[1] > self.context:
            raise ValueError(f"TinyGPT reads (batch, T) token arrays with T at most "
                             f"{self.context}; got shape {tokens.shape}.")
        x = self.tok(tokens) + self.pos(np.arange(tokens.shape[1]))
        return self.head(self.ln_f(self.blocks(x)))

    def plan(self, plan: Sequence[Iterable[str]]) -> TinyGPT:
        """Set each block's recomputation parts (one collection of PARTS names per
        block); returns the model."""
        for block, parts in zip(self.blocks, plan, strict=True):
            block.recompute = parts
        return self


def reversal_loss(model: nn.Module, x: np.ndarray, y: np.ndarray) -> ag.Tensor:
    """Mean cross-entropy of the next-token scores over the graded positions."""
    logits = model(x)
    return F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1), ignore_index=IGNORE)


def train_reversal(model: nn.Module, steps: int = 200, batch: int = 64, lr: float = 3e-3,
                   warmup: int = 20, seed: int = 0,
                   callback: Callable[[dict], None] | None = None) -> list[dict]:
    """Train ``model`` on fresh reversal batches with AdamW (weight decay 0.01), the
    learning rate rising for ``warmup`` steps then following a half cosine to 0.

    Returns one dict per step: ``step``, ``loss``, ``lr``, ``seconds`` (since the start);
    ``callback`` gets each as it is made.
    """
    opt = optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    schedule = cosine_with_warmup(opt, warmup_steps=warmup, total_steps=steps)
    model.train()
    history, start = [], time.perf_counter()
    for step in range(1, steps + 1):
        x, y = reversal_batch(batch, seed=seed * 100_003 + step)
        loss = reversal_loss(model, x, y)
        opt.zero_grad()
        loss.backward()
        record = {"step": step, "loss": loss.item(), "lr": opt.param_groups[0]["lr"]}
        opt.step()
        schedule.step()
        record["seconds"] = time.perf_counter() - start
        history.append(record)
        if callback is not None:
            callback(record)
    return history


def reverse_digits(model: nn.Module, digits: np.ndarray) -> np.ndarray:
    """The model's reversal of each row of ``digits`` (n, DIGITS), generated one token
    at a time (greedy: the highest score), as the model would be used."""
    digits = np.asarray(digits, dtype=np.int64)
    tokens = np.concatenate([digits, np.full((len(digits), 1), SEPARATOR)], axis=1)
    with ag.no_grad():
        for _ in range(DIGITS):
            nxt = model(tokens).numpy()[:, -1].argmax(axis=-1)
            tokens = np.concatenate([tokens, nxt[:, None]], axis=1)
    return tokens[:, DIGITS + 1:]


def reversal_accuracy(model: nn.Module, n: int = 1000, seed: int = 10**6) -> tuple[float, float]:
    """(strings reversed exactly, digits in the right place), on ``n`` strings the
    training never drew (another seed)."""
    digits = np.random.default_rng(seed).integers(0, 10, (n, DIGITS))
    right = reverse_digits(model, digits) == digits[:, ::-1]
    return float(right.all(axis=1).mean()), float(right.mean())


def loss_curve(history: Sequence[dict]) -> DescribedFigure:
    """The training loss per step (log scale) and the learning rate of the schedule."""
    steps = [h["step"] for h in history]
    fig = DescribedFigure(figsize=(9, 2.8), dpi=100)
    FigureCanvasAgg(fig)
    loss_ax, lr_ax = fig.subplots(1, 2)
    loss_ax.semilogy(steps, [h["loss"] for h in history], color="C3")
    loss_ax.set_title("training loss (cross-entropy, log scale)")
    lr_ax.plot(steps, [h["lr"] for h in history], color="C0")
    lr_ax.set_title("learning rate: warm-up, then cosine")
    for ax in (loss_ax, lr_ax):
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    first, last = history[0], history[-1]
    fig.alt = (f"Two line charts over {len(history)} training steps. Left: the loss falls from "
               f"{first['loss']:.2f} to {last['loss']:.4f}. Right: the learning rate rises to "
               f"{max(h['lr'] for h in history):.0e}, then falls along a half cosine.")
    return fig


def attention_weights(model: TinyGPT, digits: Sequence[int], layer: int) -> np.ndarray:
    """The softmax weights (heads, T, T) of block ``layer`` for one string: the array that
    block's softmax saved for backward, read from the recorded graph."""
    digits = [int(d) for d in digits]
    tokens = np.array([digits + [SEPARATOR] + digits[::-1][:DIGITS - 1]])
    out = model(tokens)
    where = f"blocks.{layer}.attn"
    node = next(n for n in reverse_topological(out.grad_fn)
                if n.op.name == "softmax" and n.module == where)
    return np.array(node.saved["out"].array[0])


def attention_map(model: TinyGPT, digits: Sequence[int], layer: int = 1) -> DescribedFigure:
    """Each head's attention weights in block ``layer`` for one string: which earlier
    position each position reads."""
    weights = attention_weights(model, digits, layer)
    labels = [str(d) for d in digits] + ["|"] + [str(d) for d in list(digits)[::-1][:-1]]
    heads = weights.shape[0]
    columns = min(heads, 2)       # two maps a row: the labels stay legible in a narrow column
    rows = -(-heads // columns)
    fig = DescribedFigure(figsize=(3.4 * columns, 3.3 * rows), dpi=100)
    FigureCanvasAgg(fig)
    axes = np.atleast_1d(fig.subplots(rows, columns)).ravel()
    for head, ax in enumerate(axes[:heads]):
        ax.imshow(weights[head], cmap="Greys", vmin=0, vmax=1)
        ax.set_title(f"head {head}", fontsize=10)
        ax.set_xticks(range(len(labels)), labels, fontsize=8)
        ax.set_yticks(range(len(labels)), labels, fontsize=8)
        ax.set_xlabel("key (read)", fontsize=9)
        ax.set_ylabel("query (reading)", fontsize=9)
    for ax in axes[heads:]:
        ax.set_visible(False)
    fig.tight_layout()
    strongest = [int(np.argmax(weights[:, q].max(axis=0))) for q in range(DIGITS, CONTEXT)]
    fig.alt = (f"{heads} grey-scale maps of block {layer}'s attention weights for the string "
               f"{''.join(map(str, digits))}, query positions down, key positions across; dark "
               f"is a weight near 1, and the future (above the diagonal) is blank. From the "
               f"separator on, the strongest weight of each query falls on key positions "
               f"{strongest}.")
    return fig


@dataclass(frozen=True)
class SavedRow:
    """One tensor an op of a block saved for backward."""

    module: str
    op: str
    name: str
    shape: tuple
    bytes: int        # what keeping it adds: 0 if its buffer was counted already
    shared_with: str  # the op whose saved tensor owns the buffer, if counted already


@dataclass(frozen=True)
class BlockSaves:
    """What one block's forward keeps for backward, parameters left out."""

    batch: int
    seq: int
    hidden: int
    heads: int
    rows: tuple[SavedRow, ...]

    @property
    def total(self) -> int:
        return sum(r.bytes for r in self.rows)

    def table(self) -> str:
        """The rows as a fixed-width table, with the total."""
        lines = [f"{'module':14} {'op':11} {'saved':11} {'shape':16} {'bytes':>8}"]
        for r in self.rows:
            note = f"  (the buffer {r.shared_with} saved)" if r.shared_with else ""
            lines.append(f"{r.module:14} {r.op:11} {r.name:11} {str(r.shape):16} "
                         f"{r.bytes:8,}{note}")
        lines.append(f"{'':55}{self.total:8,} bytes in all")
        return "\n".join(lines)


TABLE_SIZES = (2, 16, 32, 4)  # (batch, seq, hidden, heads): the lesson's table, A2's data


def block_saves(batch: int, seq: int, hidden: int, heads: int, seed: int = 0) -> BlockSaves:
    """Run one :class:`GPTBlock` forward on a (batch, seq, hidden) float32 input and list
    what each op saved, parameters (alive anyway) left out and each buffer counted once.

    At the lesson's table sizes (``TABLE_SIZES``) this is the data exercise A2 gives; at
    any others it measures what A2 asks you to predict, so until A2 is solved such a call
    is recorded as its answer seen."""
    if (batch, seq, hidden, heads) != TABLE_SIZES:
        gate.measured("A2")
    block = GPTBlock(hidden, heads, generator=ag.Generator(seed))
    x = ag.randn(batch, seq, hidden, generator=ag.Generator(seed + 1), dtype=ag.float32,
                 requires_grad=True)
    g = graph.capture(block(x).sum())
    leaf_params = {tid for p in block.parameters() if (tid := g.leaf_ids.get(id(p)))}
    owners: dict[str, str] = {}
    rows = []
    for op in g.ops:
        for s in op.saved:
            if s.buffer is None or s.tensor in leaf_params or op.op == "sum":
                continue
            owner = owners.get(s.buffer, "")
            owners.setdefault(s.buffer, f"{op.module or 'block'}.{op.op}")
            rows.append(SavedRow(op.module or "block", op.op, s.name, s.shape,
                                 0 if owner else s.buffer_nbytes, owner))
    return BlockSaves(batch, seq, hidden, heads, tuple(rows))


def korthikanti_bytes(seq: int, batch: int, hidden: int, heads: int,
                      bytes_per_value: int = 2) -> int:
    """Korthikanti et al. (2023)'s activation memory of one transformer layer, without
    parallelism: s·b·h·(34 + 5·a·s/h) bytes for 2-byte (16-bit) activations and 1-byte
    dropout masks. ``bytes_per_value=4`` scales it to float32 (masks and all)."""
    return (34 * seq * batch * hidden + 5 * heads * seq * seq * batch) * bytes_per_value // 2


@dataclass(frozen=True)
class RecomputeRun(MeasuredPlan):
    """One measured training step of the GPT with a recomputation plan (``plan``: one
    frozenset of PARTS names per block)."""

    def __repr__(self) -> str:
        parts = "; ".join(f"block {i}: {', '.join(sorted(p)) or 'nothing'}"
                          for i, p in enumerate(self.plan))
        share = self.peak / self.plain.peak
        return (f"{parts} -> peak {self.peak:,} bytes held for backward ({share:.0%} "
                f"of the plain step's {self.plain.peak:,}), recomputed "
                f"{self.extra_forward_work:.0%} of a forward pass, gradients "
                f"{'identical' if self.same_gradients() else 'DIFFERENT'}")


# The memory lesson's GPT: a longer context than the reversal model, so that attention's
# T × T arrays matter.
MEMORY_SHAPE = {"batch": 8, "seq": 64, "hidden": 32, "heads": 4, "layers": 2}


def _memory_gpt(plan=None) -> TinyGPT:
    m = MEMORY_SHAPE
    model = TinyGPT(m["hidden"], m["heads"], m["layers"], context=m["seq"],
                    generator=ag.Generator(7))
    return model.plan(plan) if plan is not None else model


def _memory_batch() -> tuple[ag.Tensor, np.ndarray]:
    g = np.random.default_rng(8)
    m = MEMORY_SHAPE
    tokens = g.integers(0, VOCAB, (m["batch"], m["seq"]))
    return ag.tensor(tokens), g.integers(0, VOCAB, (m["batch"], m["seq"]))


def _next_token_loss(targets: np.ndarray) -> Callable[[ag.Tensor], ag.Tensor]:
    return lambda logits: F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def _measure(plan) -> CheckpointedStep:
    tokens, targets = _memory_batch()
    return measure_step(_memory_gpt(plan), tokens, loss=_next_token_loss(targets))


@cache
def plain_step() -> CheckpointedStep:
    """The step without recomputation, measured once: every plan is judged against it."""
    return _measure(None)


# The lesson's own two plans, no and full recomputation: their measurements are in lesson 15
# for everyone to read, so measuring them is no try of A3.
LESSON_PLANS = ((frozenset(), frozenset()), (frozenset({"block"}), frozenset({"block"})))


@cache
def _memory_block_layout() -> Counter:
    """The parameter layout of one block of the memory GPT (its width: the item's)."""
    m = MEMORY_SHAPE
    return layout_of(GPTBlock(m["hidden"], m["heads"], generator=ag.Generator(7)))


@cache
def _lesson_plans_known() -> tuple[Counter, frozenset]:
    """The whole memory GPT's parameter layout, and what the lesson's own plans recompute."""
    tokens = np.zeros((1, MEMORY_SHAPE["seq"]), dtype=np.int64)
    shown = frozenset(recomputation_of(_memory_gpt(plan), tokens, lambda model, t: model(t))
                      for plan in LESSON_PLANS)
    return layout_of(_memory_gpt()), shown


def _plans_a_gpt(seen: StepSeen) -> tuple[str, str] | None:
    """A3's try: a step that ran a block of the memory GPT's width (in any model, under
    any class name), but the lesson's ``LESSON_PLANS`` measured on the memory GPT. What
    was re-run is the engine's record: a plan, a block's ``checkpoint_core`` or a
    ``checkpoint`` written by hand alike."""
    if not seen.runs(_memory_block_layout()):
        return None
    whole, shown = _lesson_plans_known()
    return None if seen.is_one_of(whole, shown) else ("A3", "try")


MEASURES.append(_plans_a_gpt)


def recompute_step(plan: Sequence[Iterable[str]]) -> RecomputeRun:
    """One training step (forward, loss, backward) of the memory lesson's GPT
    (MEMORY_SHAPE) with ``plan``, one collection of PARTS names per block, measured:
    peak bytes held for backward, recomputed multiply-adds, gradients. A measured plan is
    what A3 asks for: each counts as one of A3's tries, but the lesson's ``LESSON_PLANS``."""
    frozen = tuple(frozenset(p) for p in plan)
    return RecomputeRun(frozen, _measure(frozen), plain_step())  # A3's try: measure_step


# Korthikanti et al.'s terms for one layer, in units of s·b·h bytes (sbh) or a·s²·b bytes
# (as2b), 16-bit values; beside each, the saved tensors of this engine's block that hold
# the same array (module, op, name) and why the two differ.
_FORMULA_ROWS = (
    ("layer norm 1: its input", 2, 0, (("ln1", "layer_norm", "normalized"),
                                       ("ln1", "layer_norm", "inv_std")),
     "float32; keeps x̂ and 1/std per token"),
    ("q, k, v projections: their input", 2, 0, (("attn.q_proj", "linear", "input"),),
     "float32; one buffer for the three"),
    ("q kᵀ: q and k", 4, 0, (("attn", "matmul", "a", 0), ("attn", "matmul", "b", 0)),
     "float32"),
    ("softmax: its output", 0, 2, (("attn", "softmax", "out"),), "float32"),
    ("attention dropout: its mask", 0, 1, (), "no dropout here"),
    ("weights @ v: dropout's output and v", 2, 2, (("attn", "matmul", "a", 1),
                                                   ("attn", "matmul", "b", 1)),
     "float32; reads the softmax's buffer"),
    ("out-projection: its input", 2, 0, (("attn.out_proj", "linear", "input"),), "float32"),
    ("out-projection dropout: its mask", 1, 0, (), "no dropout here"),
    ("layer norm 2: its input", 2, 0, (("ln2", "layer_norm", "normalized"),
                                       ("ln2", "layer_norm", "inv_std")),
     "float32; keeps x̂ and 1/std per token"),
    ("MLP fc: its input", 2, 0, (("mlp.fc", "linear", "input"),), "float32"),
    ("GELU: its input (4h wide)", 8, 0, (("mlp.gelu", "gelu", "a"),), "float32"),
    ("MLP proj: its input (4h wide)", 8, 0, (("mlp.proj", "linear", "input"),), "float32"),
    ("MLP dropout: its mask", 1, 0, (), "no dropout here"),
)


def formula_table(saves: BlockSaves) -> str:
    """Korthikanti et al.'s per-layer count, term by term, beside the bytes this engine's
    block measured for the same arrays (``saves``), and why each row differs."""
    sbh = saves.seq * saves.batch * saves.hidden
    as2b = saves.heads * saves.seq ** 2 * saves.batch
    lines = [f"{'term of the formula':38} {'formula':>9} {'engine':>9}   why they differ"]
    total_formula = total_engine = 0
    for what, n_sbh, n_as2b, keys, why in _FORMULA_ROWS:
        formula = n_sbh * sbh + n_as2b * as2b
        engine = sum(_saved_bytes(saves, key) for key in keys)
        total_formula, total_engine = total_formula + formula, total_engine + engine
        lines.append(f"{what:38} {formula:9,} {engine:9,}   {why}")
    lines.append(f"{'in all':38} {total_formula:9,} {total_engine:9,}")
    formula = korthikanti_bytes(saves.seq, saves.batch, saves.hidden, saves.heads)
    lines.append(f"sbh(34 + 5as/h) = {formula:,} bytes; measured {saves.total:,}")
    return "\n".join(lines)


def _saved_bytes(saves: BlockSaves, key: tuple) -> int:
    """The bytes of the saved tensor ``(module, op, name[, which])``: ``which`` picks
    among several ops of that name in the module (the first or second matmul)."""
    module, op, name, *which = key
    rows = [r for r in saves.rows if (r.module, r.op, r.name) == (module, op, name)]
    return rows[which[0] if which else 0].bytes


@gate.answers("A3")
def strategies(none: RecomputeRun, full: RecomputeRun) -> str:
    """No, selective and full recomputation of the memory GPT side by side (bytes freed
    per recomputed multiply-add), then the same arithmetic at GPT-3's size."""
    with gate.quietly():  # recorded once, as A3's answer shown
        selective = recompute_step([["attention_core"]] * MEMORY_SHAPE["layers"])
    lines = []
    for label, run in (("none", none), ("selective", selective), ("full", full)):
        work = run.step.recompute_macs
        per_mac = f"  {(none.peak - run.peak) / work:.2f} bytes freed per recomputed MAC" \
            if work else ""
        lines.append(f"{label:9}  peak {run.peak:9,} B ({run.peak / none.peak:4.0%})  "
                     f"recomputed {run.extra_forward_work:4.0%} of a forward pass  identical "
                     f"gradients: {run.same_gradients()}{per_mac}")
    s, h, a = 2048, 12288, 96
    core = 2 * s * s * h
    layer = 12 * s * h * h + core
    maps = 5 * a * s / h
    lines.append(f"\nGPT-3 (s = {s}, h = {h}, a = {a}), per sequence and layer: the attention "
                 f"core does {core / layer:.1%} of the forward multiply-adds, and its maps are "
                 f"{maps / (34 + maps):.0%} of the activation bytes.")
    return "\n".join(lines)
