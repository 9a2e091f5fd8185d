"""A parse of the whiteboard's grammar, turned into nested tuples of known operations
(``("product", "juxtapose", a, b, text)``, ``("power", base, exponent, text)``, ...), with
every name resolved against the learner's inputs and sizes: an unknown one is refused
with a sentence here, before anything is computed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from ..formula_text import FormulaError
from .notation import in_unicode

_PRODUCTS = {"*": "elementwise", "\\odot": "elementwise", "\\circ": "elementwise",
             "\\cdot": "dot", "\\times": "times", "@": "matmul", "/": "divide"}
_GREEK_NAMES = {"\\epsilon": "eps", "\\varepsilon": "eps"}
# what learners call the upstream gradient elsewhere (g here)
_UPSTREAM_NAMES = frozenset({"dout", "dy", "dY", "dz", "dZ", "delta", "grad", "G", "upstream",
                             "dL", "gy", "gout"})


class Reading:
    """A formula's text read against the names it may use: ``inputs`` (the arrays, and
    ``g``) and ``sizes`` (named sizes such as N); :meth:`node` turns the parse into nested
    tuples of known operations, refusing an unknown name with a sentence."""

    def __init__(self, text: str, inputs: Iterable[str], sizes: Iterable[str] = (),
                 plain: bool = False):
        self.text, self.inputs, self.sizes = text, set(inputs), set(sizes)
        self.plain = plain  # written without LaTeX: quote pieces back in Unicode

    def piece(self, tree) -> str:
        """The text a part of the parse came from, as the learner wrote it (normalised)."""
        meta = getattr(tree, "meta", None)
        if meta is None or getattr(meta, "empty", True):
            return str(tree)
        return self._balanced(meta.start_pos, meta.end_pos)

    def _balanced(self, start: int, end: int) -> str:
        """The text from ``start`` to ``end``, widened over the brackets a parse leaves
        out (``(a + b)`` is read as ``a + b``) until its brackets pair up."""
        text = self.text
        while text[start:end].count("(") > text[start:end].count(")"):
            close = re.match(r"\s*(?:\\right\s*)?\)", text[end:])
            if close is None:
                break
            end += close.end()
        while text[start:end].count(")") > text[start:end].count("("):
            opening = re.search(r"(?:\\left\s*)?\(\s*$", text[:start])
            if opening is None:
                break
            start = opening.start()
        piece = text[start:end].strip()
        return in_unicode(piece) if self.plain else piece

    def node(self, tree):  # noqa: C901 - one branch per rule of the grammar
        from lark import Token
        if isinstance(tree, Token):
            return self._token(tree)
        kind, children = tree.data, tree.children
        if kind == "number":
            return ("number", float(children[0]))
        if kind == "word":
            return self._word(str(children[0]))
        if kind == "greek":
            return self._greek(str(children[0]))
        if kind == "term":
            return self._term(tree)
        if kind in ("add", "sub"):
            return (kind, self.node(children[0]), self.node(children[1]))
        if kind == "negate":
            return ("negate", self.node(children[0]))
        if kind == "power":  # BA^T is B Aᵀ: the power binds to the last name alone
            prefix, base = self._last_name(children[0])
            powered = ("power", base, self._exponent(children[1]), self.piece(tree))
            return powered if prefix is None else ("product", "juxtapose", prefix, powered,
                                                   self.piece(tree))
        if kind == "subscripted":
            return self._subscripted(children[0], str(children[1]).replace(" ", ""))
        if kind == "fraction":
            return ("divide", self.node(children[0]), self.node(children[1]), self.piece(tree))
        if kind == "absolute" and self.text[tree.meta.start_pos:].startswith("\\abs{"):
            return ("bars", self.node(children[0]), self.piece(tree))  # |x|: ask for a matrix
        if kind in ("sqrt", "absolute"):
            return (kind, self.node(children[0]))
        if kind == "indicator":
            left, compare, right = children[0].children
            return ("indicator", self.node(left), str(compare), self.node(right))
        if kind == "apply":
            return ("apply", str(children[0]), self.node(children[1]), self.piece(tree))
        if kind == "apply_along":
            raise FormulaError(f"`{self.piece(tree)}`: a function with a subscript is not "
                               "one this reader knows; softmax runs along the last axis")
        if kind == "apply_power":
            applied = ("apply", str(children[0]), self.node(children[2]), self.piece(tree))
            return ("power", applied, self._exponent(children[1]), self.piece(tree))
        if kind == "minmax":
            return ("minmax", str(children[0]), self.node(children[1]), self.node(children[2]))
        if kind == "sum_over":  # \sum_{n=1}^{N}: the index is n
            return ("sum_over", str(children[0]).split("=")[0].replace(",", "").strip())
        if kind == "partial":
            raise FormulaError(f"`{self.piece(tree)}`: a ∂ belongs on the left side of the "
                               "equation (∂L/∂W = ...); on the right, the upstream gradient "
                               "∂L/∂y is written g")
        if kind == "with_left_side":
            raise FormulaError("an equation here has one = sign: the gradient on its left, "
                               "what it equals on its right")
        raise FormulaError(f"`{self.piece(tree)}` is not something a formula here can hold")

    def _span(self, start, last) -> str:
        """The text from the start of a term to the end of ``last`` (one of its items)."""
        end = getattr(getattr(last, "meta", None), "end_pos", None)
        if start is None or end is None:
            return self.piece(last)
        return self._balanced(start.start_pos, end)

    def _token(self, token):
        if token.type == "DIGIT":
            return ("number", float(token))
        if token.type == "LETTER":
            return self._word(str(token))
        if token.type == "TOP":
            return ("top",)
        raise FormulaError(f"{str(token)!r} is not something a formula here can hold")

    def _word(self, word: str):
        """A name, or several written together (``xW``: x times W), or a constant."""
        if word in self.inputs or word in self.sizes:
            return ("name", word)
        if word == "e":
            return ("number", float(np.e))
        if word == "I":
            return ("identity",)
        if word == "T":
            return ("top",)
        split = _split(word, self.inputs | self.sizes)
        if split is None:
            known = ", ".join(sorted(self.inputs))
            some = next((n for n in sorted(self.inputs) if n != "g"), "x")
            hint = (f" If {word} is a size (N, the batch), name it: sizes={{'{word}': "
                    f"('{some}', 0)}} makes it the first size of {some}."
                    if word[0].isupper() and len(word) <= 2 else "")
            if word in _UPSTREAM_NAMES:
                hint = " The upstream gradient (what flows in from above) is called g here."
            raise FormulaError(f"the formula uses {word!r}, which is none of your inputs "
                               f"({known}) nor a function or constant it knows.{hint}")
        product = ("name", split[0])
        for name in split[1:]:
            product = ("product", "juxtapose", product, ("name", name), word)
        return product

    def _greek(self, command: str):
        if command == "\\pi":
            return ("number", float(np.pi))
        name = _GREEK_NAMES.get(command, command[1:])
        return self._word(name) if name in self.inputs | self.sizes else self._word(
            command[1:])

    def _exponent(self, tree):
        if getattr(tree, "data", None) == "inverse_transpose":
            return ("inverse_top",)
        node = self.node(tree)
        if node == ("negate", ("top",)):
            return ("inverse_top",)
        return ("top",) if node == ("top",) else node

    def _last_name(self, tree):
        """(the names written before the last one, as a product, or None; the last one's
        node) of a word of several names side by side (``BA``: B, then A), so that a ^ or
        a _ after it belongs to the last name alone; any other part: (None, its node)."""
        if getattr(tree, "data", None) != "word":
            return None, self.node(tree)
        word = str(tree.children[0])
        split = None if word in self.inputs | self.sizes else _split(
            word, self.inputs | self.sizes)
        if not split or len(split) == 1:
            return None, self.node(tree)
        return self._word(word[:-len(split[-1])]), ("name", split[-1])

    def _subscripted(self, base, subscript: str):
        names = self.inputs | self.sizes
        if getattr(base, "data", None) != "word":
            raise FormulaError(f"`{self.piece(base)}_{{{subscript}}}`: only a name takes "
                               "indices, as in x_{ni}")
        word = str(base.children[0])
        for cut in range(len(word)):  # W_1 is the input W1 (or W_1); xW_1 is x W1
            prefix, last = word[:cut], word[cut:]
            for joined in (last + subscript, f"{last}_{subscript}"):
                if joined in names and (not prefix or _split(prefix, names)):
                    return self._with_prefix(prefix, ("name", joined))
        prefix, last = self._last_name(base)
        labels = subscript.replace(",", "")
        if last[0] != "name" or not labels.isalpha():
            name = last[1] if last[0] == "name" else word
            raise FormulaError(f"`{word}_{{{subscript}}}`: indices are letters (x_{{ni}}), "
                               f"and no input is called {name}{subscript} or {name}_{subscript}")
        indexed = ("indexed", last[1], labels)
        return indexed if prefix is None else ("product", "juxtapose", prefix, indexed, word)

    def _with_prefix(self, prefix: str, node):
        return node if not prefix else ("product", "juxtapose", self._word(prefix), node,
                                        prefix)

    def _term(self, tree):
        """A term: factors side by side or with * ⊙ · × @ /, left to right; a ∑_n in it
        adds up everything to its right."""
        items = list(tree.children)
        start = next((getattr(i, "meta", None) for i in items
                      if not getattr(getattr(i, "meta", None), "empty", True)), None)
        node, operation = None, "juxtapose"
        for i, item in enumerate(items):
            if getattr(item, "type", None) == "MULOP":
                operation = _PRODUCTS[str(item)]
                continue
            if getattr(item, "data", None) == "sum_over":
                rest = type(tree)("term", items[i + 1:], tree.meta) if i + 1 < len(items) \
                    else None
                if rest is None:
                    raise FormulaError("a ∑ needs something to add up after it")
                summed = ("sum", self.node(item)[1], self._term(rest))
                return summed if node is None else ("product", operation, node, summed, "")
            child = self.node(item)
            node = child if node is None else ("product", operation, node, child,
                                                self._span(start, item))
            operation = "juxtapose"
        return node


MAX_WORD = 64  # the longest run of letters read as names side by side


def _split(word: str, names: set[str]) -> list[str] | None:
    """``word`` as names written side by side (``xW`` -> [x, W]), longest names first;
    None if it is not. Worked from the end of the word back (each ending split once), so
    a long word takes time in proportion to its length times the longest name's."""
    if len(word) > MAX_WORD:
        raise FormulaError(f"`{word[:20]}...` is a run of {len(word)} letters: write the "
                           "names in it apart, with spaces or operators")
    longest = max((len(n) for n in names), default=0)
    rest: list[list[str] | None] = [None] * len(word) + [[]]
    for start in range(len(word) - 1, -1, -1):
        for end in range(min(len(word), start + longest), start, -1):
            if word[start:end] in names and rest[end] is not None:
                rest[start] = [word[start:end], *rest[end]]
                break
    return rest[0]


