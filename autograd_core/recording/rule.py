"""An op's gradient rule, compiled into the backward that runs.

An op states its derivative once, as ``rule``: the text a learner reads beside the
stepper, e.g. ``"da = g * b\\ndb = g * a"`` for ``a * b``. An op that writes no
``backward`` of its own gets one compiled from that text when its class is created
(:func:`compile_rule`), so the rule a learner reads *is* the code the sweep runs.

How a rule reads (``autograd_core/recording/node.py`` has the full convention):

* ``g`` is the upstream gradient. ``da`` is the gradient of the input named ``a`` in
  ``forward``'s signature; an input with no ``d`` line gets none (a mask, an index).
* Every other name is, in this order: a name the rule assigned on an earlier line; a
  parameter of ``forward`` with a default (``low``, ``dim``), as the call passed it; a
  function or constant of the rule's namespace (NumPy's names: ``exp``, ``where``,
  ``pi``); else an array the forward saved under that name (``ctx.load``), which is
  how an input (``a``) or the output (``out``) is read. An input's ``.shape``,
  ``.size`` and ``.ndim`` are read from the recorded input shapes: nothing is saved.
  ``x.size`` is NumPy's (the number of elements) for a Tensor too.
* An input with a default (linear's ``bias=None``) is an input if the rule gives it a
  gradient; left out of a call, it gets none, and the rule reads it as its default
  (``g if weight is None else g * weight``).
* A name the forward did not save as such is read through the op's stand-in for it:
  ``stand_ins = {"x": recipe}``, ``recipe(node)`` rebuilding it from what the node saved
  and its params. An input not saved, to save memory (layer norm keeps x̂ and 1/std, not
  x), is rebuilt up to a shift the op does not see (layer norm and var are the same at
  x and at x - c); the recorded sweep puts that value on the input's edge, so the rule's
  derivative reaches the input, and such an op computes ``backward()`` by its
  ``fast_backward`` from the saved arrays themselves. getitem's ``key`` is its param
  with the index arrays read back from what it saved (released after a backward).
* An op of any number of inputs (stack's ``*arrays``) has its rule written for input
  ``i``: ``da_i``, from ``g``, ``i``, the params, ``a_i``'s layout, ``shapes`` (every
  input's shape) and ``others`` (the other inputs, saved as ``a_k``); it runs once per
  input.
* After two spaces, a note in parentheses explains a line and is not run.

Each ``d`` line runs only when its input needs a gradient, and a line that only
feeds it runs with it; each saved array is loaded once, when first needed. An op whose
``g`` has another layout than its inputs (a reduction: the reduced axes; a loss: one
value for all elements) gives it the rule's layout in ``rule_gradient(ctx, g)``, which
the compiled code calls first. An op with a faster way to the same values on arrays
(relu's bit mask) writes it as ``fast_backward(ctx, g)``: the plain sweep runs that,
the recorded one the rule, and a test holds the two equal. An op whose rule divides 0
by 0 on purpose at an edge (amax over a slice whose max is nan) sets ``rule_quiet``: no
NumPy warning there.

The same compiled function runs in both sweeps. Its functions come from
``ctx.rule_names``: :data:`PLAIN` (NumPy, on arrays) for ``backward()``, and
:data:`RECORDED` (the engine's own ops, on Tensors, filled in by
``ops/recorded_numpy.py``) under ``create_graph=True``, where ``ctx.load`` gives Tensors
on the graph. So one text records its own derivative: higher order comes free.

An op marked ``elementwise`` (each output element depends on the same element of each
input alone, so its Jacobian is diagonal) also gets its forward-mode rule from the same
text: the tangent takes ``g``'s place, and the terms of the inputs are added up.

``Op.backward_source`` (and ``Op.jvp_source``) hold the Python each one compiled to.
"""

from __future__ import annotations

import ast
import inspect
import math
import re
import sys
from typing import Any

import numpy as np

from .. import errors
from .accumulate import accumulating

NOTE = re.compile(r" {2,}\(.*\)$")  # two spaces, then a note in parentheses


def rule_program(rule: str) -> str:
    """The rule as Python: each line without its note."""
    return "\n".join(NOTE.sub("", line) for line in rule.splitlines())


class RuleNames:
    """The functions and constants a rule may call by name. Names set on it (by this
    module, or by the ops that provide them) come first; any other name is looked up
    in ``fallback`` (NumPy, for the plain sweep) once, then kept."""

    def __init__(self, label: str, fallback=None):
        self._label = label
        self._fallback = fallback

    def __getattr__(self, name: str):
        if name.startswith("_") or self._fallback is None or not hasattr(self._fallback, name):
            raise errors.rule_unknown_name(name, self._label)
        value = getattr(self._fallback, name)
        setattr(self, name, value)
        return value

    def provides(self, name: str) -> bool:
        """Whether a rule can use ``name`` from here."""
        return name in vars(self) or (
            self._fallback is not None and not name.startswith("_")
            and hasattr(self._fallback, name))


def _kept(reduce):
    def reduced(x, axis=None):
        return reduce(x, axis=axis, keepdims=True)
    reduced.__name__ = reduce.__name__
    reduced.__doc__ = f"{reduce.__name__}(x, axis) with the reduced axes kept (size 1)."
    return reduced


# In a rule, sum and mean keep the axes they reduce, so that the result lines up with
# the input it came from (``x - mean(x, axes)``); they and cumsum add float16 up in
# float32, as the ops themselves do (accumulate.py).
PLAIN = RuleNames("plain backward (NumPy)", fallback=np)
PLAIN.sum = _kept(accumulating(np.sum))
PLAIN.mean = _kept(accumulating(np.mean))
PLAIN.cumsum = accumulating(np.cumsum)


def sigmoid(x):
    """σ(x) = 1 / (1 + exp(-x)), computed as 0.5 · (1 + tanh(x / 2)): it never overflows."""
    return 0.5 * (1 + np.tanh(0.5 * x))


def rows(x):
    """``x`` with every axis but the last flattened into rows: (..., n) -> (m, n)."""
    return x.reshape(-1, x.shape[-1])


def matrix_transpose(x):
    """``x`` with its last two axes swapped (PyTorch's ``x.mT``): each matrix of a batch
    transposed."""
    return np.swapaxes(x, -1, -2)


def one_side(condition, x, y):
    """``x`` or ``y`` itself when ``condition`` is one value for all (pow's ``b == 0`` for a
    number b) and that side has the result's shape and dtype; else None. A rule's
    ``where`` then copies nothing, and records no op under create_graph."""
    if np.ndim(condition) != 0:
        return None
    side = x if bool(np.asarray(getattr(condition, "_data", condition))) else y
    if np.shape(side) != np.broadcast_shapes(np.shape(x), np.shape(y)):
        return None
    dtype = np.result_type(*(getattr(v, "dtype", v) for v in (x, y)))
    return side if getattr(side, "dtype", None) == dtype else None


def where(condition, x, y):
    """``np.where(condition, x, y)`` (without a copy where :func:`one_side` allows)."""
    side = one_side(condition, x, y)
    return np.where(condition, x, y) if side is None else side


PLAIN.where = where
PLAIN.sigmoid = sigmoid
PLAIN.rows = rows
PLAIN.mT = matrix_transpose
RECORDED = RuleNames("recorded backward (create_graph)")  # ops/recorded_numpy.py fills it


def compile_rule(op) -> None:
    """Give ``op`` a ``backward`` (and, if ``op.elementwise``, a ``jvp``) compiled from
    its ``rule`` text."""
    program = _Program(op)
    op.rule_inputs = tuple(program.inputs)  # which name is which input (stand-ins)
    backward = program.function("backward", ("ctx", "g"), program.backward_lines())
    op.backward = staticmethod(backward)
    op.backward_source = backward.source
    if getattr(op, "elementwise", False):
        jvp = program.function("jvp", ("ctx", *program.tangents), program.jvp_lines())
        jvp.__doc__ = program.jvp_text()
        op.jvp = staticmethod(jvp)
        op.jvp_source = jvp.source


class _Statement:
    """One line of the rule: ``target = value``, the names it reads, and the inputs
    whose gradients need it."""

    def __init__(self, node: ast.Assign, text: str):
        self.target = node.targets[0].id
        self.value = node.value
        self.value_text = ast.get_source_segment(text, node.value)  # as the rule writes it
        self.reads: list[str] = []
        self.needed_by: set[int] = set()


class _Program:
    """A rule parsed against its op's ``forward``: which name is what."""

    def __init__(self, op):
        self.op = op
        text = rule_program(op.rule)
        try:
            tree = ast.parse(text)
        except SyntaxError as error:
            raise errors.rule_not_code(op.__name__, f"{error.msg} on line {error.lineno}") \
                from None
        # a name called as a function (``where(...)``) is the namespace's; one only read
        # as a value is a saved array, even where NumPy has a function of that name
        # (max_pool2d's saved ``argmax``)
        self.called = {n.func.id for n in ast.walk(tree)
                       if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        self.statements = []
        for node in tree.body:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)):
                raise errors.rule_not_code(op.__name__, f"the line {ast.unparse(node)!r} "
                                           "does not assign one name")
            self.statements.append(_Statement(node, text))
        targets = {s.target for s in self.statements}
        # the inputs: forward's positional parameters without a default, and those with
        # one (linear's bias=None) that the rule gives a gradient; the rest are params
        parameters = list(inspect.signature(op.forward).parameters.values())[1:]
        # an op of any number of inputs (stack's *arrays): the rule is written for input
        # i, a_i, and its gradient da_i; it runs once per input
        self.variadic = any(p.kind is p.VAR_POSITIONAL for p in parameters)
        self.inputs = ["a_i"] if self.variadic else [
            p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD
            and (p.default is p.empty or f"d{p.name}" in targets)]
        self.required = sum(p.default is p.empty for p in parameters
                            if p.kind is p.POSITIONAL_OR_KEYWORD)
        self.defaults = {p.name: p.default for p in parameters
                         if p.default is not p.empty and p.name not in self.inputs}
        self.optional = {p.name: (i, p.default) for i, p in enumerate(parameters)
                         if p.default is not p.empty and p.name in self.inputs}
        self.tangents = tuple(f"t{name}" for name in self.inputs)
        for statement in self.statements:
            statement.reads = self._reads(statement.value)
        self.grads = {f"d{name}": i for i, name in enumerate(self.inputs)}
        if not any(s.target in self.grads for s in self.statements):
            first = self.inputs[0] if self.inputs else "a"
            raise errors.rule_not_code(op.__name__, f"no line gives an input its gradient "
                                       f"(e.g. 'd{first} = ...')")
        self._mark_needs()
        if self.variadic and any(name == "a_i" for s in self.statements for name in s.reads):
            raise errors.rule_not_code(op.__name__, "a rule over any number of inputs reads "
                                       "a_i's layout only (a_i.shape): nothing is saved")

    def _mark_needs(self) -> None:
        """Which inputs' gradients each line feeds, from the last line back."""
        for k in range(len(self.statements) - 1, -1, -1):
            s = self.statements[k]
            if s.target in self.grads:
                s.needed_by.add(self.grads[s.target])
            for later in self.statements[k + 1:]:
                if s.target in later.reads:
                    s.needed_by |= later.needed_by

    def _is_layout(self, node) -> bool:
        """``a.shape``, ``a.size`` or ``a.ndim`` of an input: known without saving ``a``."""
        return (isinstance(node, ast.Attribute) and node.attr in _LAYOUT
                and isinstance(node.value, ast.Name) and node.value.id in self.inputs)

    def _reads(self, value: ast.expr) -> list[str]:
        """The names an expression reads (an input's layout reads no saved array, and a
        comprehension's own variable, ``p`` in ``[-p for p in pad]``, none at all)."""
        layout = {id(n.value) for n in ast.walk(value) if self._is_layout(n)}
        own = _comprehension_names(value)
        return [n.id for n in ast.walk(value) if isinstance(n, ast.Name)
                and id(n) not in layout and n.id not in own]

    def kind(self, name: str, assigned: set) -> str:
        """What ``name`` is in this rule: local, layout, param, function, builtin or
        saved."""
        if name in assigned or name == "g":
            return "local"
        if self.variadic and name in _EVERY_INPUT:  # every input's shape, or the others
            return "layout"
        if name in self.op.stand_ins:  # rebuilt by the op from what it saved: loaded
            return "saved"
        if name in self.defaults:
            return "param"
        if name not in self.inputs and PLAIN.provides(name) and (
                name in self.called or not callable(getattr(PLAIN, name))):
            return "function"
        if name in _BUILTINS and name not in self.inputs:  # Python's own
            return "builtin"
        return "saved"

    def _rewrite(self, value: ast.expr, assigned: set, rename: dict) -> str:
        """The expression with functions read from the namespace and ``rename`` applied."""
        program = self
        own = _comprehension_names(value)

        class Rewrite(ast.NodeTransformer):
            def visit_Attribute(self, node):  # noqa: N802 - ast's name
                if node.attr == "size" and not program._is_layout(node):
                    # NumPy's .size: a Tensor's is PyTorch's size(), a method
                    shape = ast.Attribute(self.visit(node.value), "shape", ast.Load())
                    call = ast.Call(ast.Name("prod", ast.Load()), [shape], [])
                    return ast.copy_location(call, node)
                if not program._is_layout(node):
                    return self.generic_visit(node)
                shape = ("ctx.input_shapes[i]" if program.variadic else
                         f"ctx.input_shapes[{program.inputs.index(node.value.id)}]")
                text = _LAYOUT[node.attr].format(shape)
                return ast.copy_location(ast.parse(text, mode="eval").body, node)

            def visit_Name(self, node):  # noqa: N802 - ast's name
                if node.id in own:
                    return node
                if program.kind(node.id, assigned) == "layout":
                    code = ast.parse(_EVERY_INPUT[node.id], mode="eval").body
                    return ast.copy_location(code, node)
                if node.id in rename:
                    return ast.copy_location(ast.Name(rename[node.id], ast.Load()), node)
                if program.kind(node.id, assigned) == "function":
                    return ast.copy_location(
                        ast.Attribute(ast.Name("names", ast.Load()), node.id, ast.Load()), node)
                return node

        return ast.unparse(Rewrite().visit(ast.parse(ast.unparse(value), mode="eval")).body)

    def _block(self, statements, guard: tuple[int, ...], loaded: dict, assigned: set,
               rename: dict, sink: str | None = None) -> list[str]:
        """Lines computing ``statements`` (all under ``guard``), loading what they read
        that is not loaded yet; the last one assigned to ``sink`` if given."""
        body = []
        for s in statements:
            for name in dict.fromkeys(s.reads):
                kind = self.kind(name, assigned)
                if name in rename or kind not in ("param", "saved"):
                    continue
                if kind == "param":
                    line = f"{name} = ctx.params.get({name!r}, DEFAULTS[{name!r}])"
                elif name in self.optional:  # an input a call may leave out: its default
                    line = (f"{name} = ctx.load({name!r}) if len(ctx.input_shapes) > "
                            f"{self.optional[name][0]} else DEFAULTS[{name!r}]")
                else:
                    line = f"{name} = ctx.load({name!r})"
                before = loaded.get(name, ())
                if before and set(guard) <= set(before):
                    continue  # loaded already, under a condition that holds here too
                if before:
                    line = f"if {_not_any_of(before)}: {line}"
                body.append(line)
                loaded[name] = tuple(sorted(set(before) | set(guard)))
            target = sink if sink and s is statements[-1] else s.target
            body.append(f"{target} = {self._rewrite(s.value, assigned, rename)}")
            assigned.add(s.target)
        return body

    def backward_lines(self) -> list[str]:
        if self.variadic:
            return self._lines_per_input()
        lines = ["needs = ctx.needs_input_grad", "names = ctx.rule_names"]
        if len(self.inputs) > self.required:  # an optional input (bias) left out: no grad
            n = len(self.inputs)
            lines.append(f"if len(needs) < {n}: needs = needs + (False,) * ({n} - len(needs))")
        if getattr(self.op, "rule_gradient", None) is not None:
            lines.append("g = RULE_GRADIENT(ctx, g)  # g as the rule reads it: see the op")
        lines.append(" = ".join(f"d{name}" for name in self.inputs) + " = None")
        loaded: dict[str, Any] = {}
        assigned = set(self.grads)
        previous = None
        for s in self.statements:
            if not s.needed_by:
                continue
            guard = tuple(sorted(s.needed_by))
            if guard != previous:  # consecutive lines needed by the same inputs: one block
                lines.append(f"if {_any_of(guard)}:")
                previous = guard
            lines += ["    " + line for line in self._block([s], guard, loaded, assigned, {})]
        grads = ", ".join(f"d{name}" for name in self.inputs)
        lines.append(f"return ({grads},)" if len(self.inputs) == 1 else f"return ({grads})")
        return lines

    def _lines_per_input(self) -> list[str]:
        """The rule of an op of any number of inputs, run for each input i that needs a
        gradient."""
        body = self._block(self.statements, (), {}, {"i"}, {})
        return ["names = ctx.rule_names", "grads = []",
                "for i, need in enumerate(ctx.needs_input_grad):",
                "    if not need:", "        grads.append(None)", "        continue",
                *("    " + line for line in body), "    grads.append(da_i)",
                "return tuple(grads)"]

    def jvp_lines(self) -> list[str]:
        """Forward mode of an elementwise op: each input's rule with its tangent for g."""
        lines = ["names = ctx.rule_names", "dout = None"]
        for name, tangent in zip(self.inputs, self.tangents):
            target = f"d{name}"
            chain = [s for s in self.statements if self.grads[target] in s.needed_by]
            if not any(s.target == target for s in chain):
                continue
            lines.append(f"if {tangent} is not None:")
            block = self._block(chain, (self.grads[target],), {}, set(), {"g": tangent},
                                sink="term")
            lines += ["    " + line for line in block]
            lines.append("    dout = term if dout is None else dout + term")
        lines.append("return dout")
        return lines

    def jvp_text(self) -> str:
        """The forward-mode rule as text, e.g. 'dout = ta * b + tb * a', after the lines
        that compute a name its terms read."""
        steps, terms = [], []
        for s in self.statements:
            if s.target not in self.grads and s.needed_by:  # a name a term reads
                steps.append(f"{s.target} = {s.value_text}")
        for name, tangent in zip(self.inputs, self.tangents):
            for s in self.statements:
                if s.target == f"d{name}":
                    terms.append(re.sub(r"\bg\b", tangent, s.value_text))
        return "\n".join([*steps, "dout = " + " + ".join(terms)])

    def function(self, name: str, arguments: tuple, lines: list[str]):
        if not any("names." in line for line in lines):
            lines = [line for line in lines if line != "names = ctx.rule_names"]
        if getattr(self.op, "rule_quiet", False):  # an edge's 0 / 0 is meant: no warning
            lines = ["with np.errstate(divide='ignore', invalid='ignore'):",
                     *("    " + line for line in lines)]
        if name == "backward" and getattr(self.op, "fast_backward", None) is not None:
            lines.insert(0, "if not ctx.recorded: return FAST_BACKWARD(ctx, g)")  # faster
        source = (f"def {name}({', '.join(arguments)}):\n"
                  f"    # compiled from {self.op.__name__}.rule\n"
                  + "".join(f"    {line}\n" for line in lines))
        defaults = {**self.defaults, **{k: v for k, (_, v) in self.optional.items()}}
        scope = {"DEFAULTS": defaults, "prod": math.prod, "np": np,
                 "RULE_GRADIENT": getattr(self.op, "rule_gradient", None),
                 "FAST_BACKWARD": getattr(self.op, "fast_backward", None)}
        # named after the op's own file, so a traceback counts its frames as the op's
        # (library code, which lessons' short tracebacks leave out)
        module = getattr(sys.modules.get(self.op.__module__), "__file__", None)
        where = f"{module} ({self.op.__name__}.rule)" if module else f"<{self.op.__name__}.rule>"
        exec(compile(source, where, "exec"), scope)  # noqa: S102
        function = scope[name]
        function.source = source
        function.__qualname__ = f"{self.op.__name__}.{name}"
        function.__doc__ = self.op.rule
        return function


def _comprehension_names(value: ast.expr) -> set[str]:
    """The variables an expression's comprehensions bind."""
    return {n.id for c in ast.walk(value) if isinstance(c, ast.comprehension)
            for n in ast.walk(c.target) if isinstance(n, ast.Name)}


# what a rule over any number of inputs may read of all of them: every input's shape, and
# the other inputs (each saved by the forward as a_k)
_EVERY_INPUT = {"shapes": "ctx.input_shapes",
                "others": "[ctx.load(f'a_{k}') for k in range(len(ctx.input_shapes)) if k != i]"}

# the few of Python's own functions a rule may call (sum, max, min and abs are NumPy's)
_BUILTINS = frozenset({"range", "len", "tuple", "list", "int", "float", "bool"})

# an input's layout, read from the recorded input shapes
_LAYOUT = {"shape": "{0}", "size": "prod({0})", "ndim": "len({0})"}


def _any_of(indices) -> str:
    return " or ".join(f"needs[{i}]" for i in indices)


def _not_any_of(indices) -> str:
    return f"not {_any_of(indices)}" if len(indices) == 1 else f"not ({_any_of(indices)})"
