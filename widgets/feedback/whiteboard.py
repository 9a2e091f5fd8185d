"""A derivation as it is written on a whiteboard, or in a Markdown cell's LaTeX, read
into a NumPy function of the named arrays.

For example ``r"\\frac{\\partial L}{\\partial W} = x^\\top (g \\odot (1 - \\tanh^2(x W)))"``,
or the same in plain text with Unicode: ``"xᵀ (g ⊙ (1 - tanh(x W)²))"``.

The text is parsed by a grammar (:data:`GRAMMAR`, read by Lark), never run: the parse tree
is turned into a small expression tree of known operations, and evaluation walks that
tree on the learner's arrays. What the notation means:

* **Matrix notation.** Juxtaposition (``x W``, ``W x``, ``2x``) is a matrix product
  between arrays and a multiplication by a number; ``⊙`` (``\\odot``, ``\\circ``) and
  ``*`` multiply elementwise; ``^\\top`` (``^T``, ``ᵀ``) transposes; ``X^{-1}`` is the
  inverse of a square matrix (of a number: 1/x); ``\\frac{a}{b}``, ``\\sqrt{}``, ``|x|``,
  ``\\max(0, x)``, ``\\sigma``, ``\\tanh``, ``\\exp``, ``\\log``, ``\\operatorname{diag}``,
  ``\\operatorname{tr}``, ``\\det``, ``\\mathbb{1}[x > 0]`` (1 where true, else 0),
  ``\\pi``, ``e^{x}``, and ``I`` (the identity of the size its neighbour needs).
  A 1-D array is a column vector; ``xᵀ`` is a row, so ``xᵀ y`` is a number and ``x yᵀ``
  a matrix.
* **Index notation.** ``x_{ni} g_{nj}`` with ``\\sum_n`` is an einsum: each index names
  an axis, ``\\sum_n`` adds up over n, and the left side (``\\partial L / \\partial
  W_{ij}``) gives the order of what is left.
* **Ambiguous notation is asked about, never guessed:** ``\\cdot`` between two arrays,
  ``X^2`` of a matrix, ``x y`` of two column vectors, an index summed without a ``\\sum``.
  Each gets one sentence saying which spellings are meant.

A size cap (:data:`MAX_ELEMENTS`) stops a formula from making an array of gigabytes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

import numpy as np

from .formula_text import (
    MAX_ELEMENTS,  # the largest array a formula may make
    FormulaError,
)

GRAMMAR = r"""
?start: equation
?equation: expr
         | expr "=" expr                   -> with_left_side
?expr: term
     | expr "+" term                      -> add
     | expr "-" term                      -> sub
term: unary (MULOP unary | postfix)*
?unary: postfix
      | "-" unary                          -> negate
      | "+" unary
?postfix: atom
        | postfix "^" exponent             -> power
        | postfix "_" subscript            -> subscripted
?exponent: "{" expr "}" | DIGIT | LETTER | TOP | "{" TOP "}"
         | "{" "-" TOP "}"                 -> inverse_transpose
?subscript: "{" SUBSCRIPT_TEXT "}" | LETTER | DIGIT
?atom: NUMBER                              -> number
     | WORD                                -> word
     | GREEK                               -> greek
     | "(" expr ")"
     | "[" expr "]"
     | "{" expr "}"
     | "\\frac" "{" expr "}" "{" expr "}"  -> fraction
     | "\\sqrt" "{" expr "}"               -> sqrt
     | "\\abs" "{" expr "}"                -> absolute
     | "\\abs" "(" expr ")"                -> absolute
     | "\\one" "[" comparison "]"          -> indicator
     | "\\one" "_" "{" comparison "}"      -> indicator
     | FUNCTION argument                   -> apply
     | FUNCTION "^" exponent argument      -> apply_power
     | FUNCTION "_" subscript argument     -> apply_along
     | MINMAX "(" expr "," expr ")"        -> minmax
     | "\\sum" "_" subscript               -> sum_over
     | "\\sum" "_" subscript "^" exponent  -> sum_over
     | "\\partial" postfix                 -> partial
?argument: atom
comparison: expr COMPARE expr
MULOP: "*" | "\\cdot" | "\\odot" | "\\circ" | "\\times" | "@" | "/"
COMPARE: ">=" | "<=" | ">" | "<" | "\\geq" | "\\leq" | "\\ge" | "\\le" | "\\gt" | "\\lt"
TOP: "\\top" | "\\intercal"
FUNCTION: "\\tanh" | "\\exp" | "\\log" | "\\ln" | "\\sin" | "\\cos" | "\\sinh" | "\\cosh"
        | "\\sigma" | "\\diag" | "\\tr" | "\\det" | "\\sign" | "\\erf" | "\\softmax"
        | "\\relu" | "\\inv"
MINMAX: "\\max" | "\\min"
GREEK: "\\pi" | "\\alpha" | "\\beta" | "\\gamma" | "\\delta" | "\\epsilon" | "\\varepsilon"
     | "\\lambda" | "\\mu" | "\\eta" | "\\theta" | "\\tau" | "\\rho" | "\\omega" | "\\Delta"
WORD: /[A-Za-z][A-Za-z0-9]*/
LETTER: /[A-Za-z]/
DIGIT: /[0-9]/
SUBSCRIPT_TEXT: /[A-Za-z0-9, =]+/
NUMBER: /[0-9]+(\.[0-9]+)?|\.[0-9]+/
%ignore /[ \t\n\r]+/
%ignore /\\[,;!: ]|\\quad|\\qquad|\\displaystyle|\\left|\\right|\\big|\\Big/
"""

# What the whiteboard writes, as the grammar reads it: Unicode symbols (replaced as they
# are) and LaTeX's synonyms (patterns).
_SYMBOLS = [("\u00a0", " "), ("\u202f", " "), ("⁻ᵀ", "^{-\\top}"), ("ᵀ", "^{\\top}"),
            ("⊤", "^{\\top}"), ("⁻¹", "^{-1}"), ("²", "^{2}"), ("³", "^{3}"), ("⊘", "/"),
            ("∇", "\\nabla "), ("ℓ", "l"),
            ("⊙", "\\odot "), ("∘", "\\circ "), ("·", "\\cdot "), ("×", "\\times "),
            ("∑", "\\sum"), ("Σ", "\\sum"), ("σ", "\\sigma "), ("π", "\\pi "),
            ("∂", "\\partial "), ("≥", "\\geq "), ("≤", "\\leq "), ("√", "\\sqrt"),
            ("𝟙", "\\one"), ("−", "-"), ("ε", "\\epsilon "), ("λ", "\\lambda "),
            ("δ", "\\delta "), ("$$", " "), ("$", " "), ("\\[", " "), ("\\]", " ")]
_PATTERNS = [
    (r"\\(?:operatorname|mathrm|text|textrm)\{(diag|tr|trace|det|sign|erf|softmax|relu|"
     r"ReLU|inv|sigmoid|abs)\}\s*", r"\\\1"),
    (r"\\(?:mathbb|mathbf|mathds)\{1\}|\\mathbb 1|\\mathbf 1", r"\\one"),
    (r"\\(?:mathbf|boldsymbol|bm|vec|mathit)\{([A-Za-z]+)\}", r"\1"),
    (r"\\(?:lvert|rvert|vert)", "|"), (r"\\trace\b", r"\\tr"), (r"\\sigmoid\b", r"\\sigma"),
    (r"\\ReLU\b", r"\\relu"), (r"\\(?:dfrac|tfrac)", r"\\frac"), (r"\\ast\b", "*"),
    (r"\^\s*\{?\s*\\(?:mathsf|mathrm|text|mathit)\{T\}\s*\}?", r"^{\\top}"),
    (r"\\(?:mathcal|mathscr|mathrm)\{([A-Za-z])\}", r"\1"), (r"\\ell\b", "l"),
    (r"\\[bB]igg?[lr]?(?![A-Za-z])", ""),
    (r"\\sqrt\s*([A-Za-z0-9])", r"\\sqrt{\1}"),
    (r"(?<![\w.])(\d+(?:\.\d+)?[eE][-+]?\d+)", lambda m: np.format_float_positional(
        float(m.group(1)), trim="-")),
    (r"\^\s*(\d\d+|\d+\.\d+)", r"^{\1}"),
    (r"\^\s*-\s*1\b", "^{-1}"), (r"\^\s*-\s*(?:T\b|\\top)", r"^{-\\top}"),
    (r"(?<![\\A-Za-z.])sum(?=\s*_)", r"\\sum"),
]
# the same functions written as words (plain text): tanh(x), sigmoid(z), max(0, x)
_WORDS = {"tanh": "\\tanh", "exp": "\\exp", "log": "\\log", "ln": "\\ln", "sin": "\\sin",
          "cos": "\\cos", "sinh": "\\sinh", "cosh": "\\cosh", "sigmoid": "\\sigma",
          "sigma": "\\sigma", "diag": "\\diag", "tr": "\\tr", "trace": "\\tr", "det": "\\det",
          "sign": "\\sign", "erf": "\\erf", "softmax": "\\softmax", "relu": "\\relu",
          "inv": "\\inv", "max": "\\max", "min": "\\min", "sqrt": "\\sqrt", "pi": "\\pi"}


def normalise(text: str, names: Iterable[str] = ()) -> str:
    """``text`` in the grammar's spelling: Unicode symbols as LaTeX commands, functions
    written as words (``tanh(x)``) as commands unless one of ``names`` is spelled so, and
    ``|x|`` as ``\\abs{x}``."""
    for symbol, command in _SYMBOLS:
        text = text.replace(symbol, command)
    for pattern, replacement in _PATTERNS:
        text = re.sub(pattern, replacement, text)
    names = set(names)

    def command(match: re.Match) -> str:
        word = match.group(0)
        return word if word in names else _WORDS[word] + " "

    text = re.sub(r"(?<![\\A-Za-z])(" + "|".join(sorted(_WORDS, key=len, reverse=True))
                  + r")(?![A-Za-z])", command, text)
    text = re.sub(r"\\sqrt\s*\(", r"\\sqrt(", text)
    text = re.sub(r"\\sqrt\(([^()]*)\)", r"\\sqrt{\1}", text)
    return _bars_as_abs(text)


def _bars_as_abs(text: str) -> str:
    """``|x|`` pairs, read left to right, as ``\\abs{x}``."""
    if text.count("|") % 2 or "||" in text:
        if "|" in text:
            raise FormulaError("the bars | ... | do not pair up: write |x| for an absolute "
                               "value, one pair at a time")
        return text
    parts = text.split("|")
    out = parts[0]
    for i in range(1, len(parts), 2):
        out += "\\abs{" + parts[i] + "}" + parts[i + 1]
    return out


@lru_cache(maxsize=1)
def _parser():
    from lark import Lark  # imported when a whiteboard formula is first read
    return Lark(GRAMMAR, parser="earley", lexer="dynamic", ambiguity="resolve",
                propagate_positions=True)


# -- the tree: the parse, in known operations --------------------------------------------------
class Ask(FormulaError):
    """Notation with more than one usual meaning: the message asks which one."""


_ELEMENTWISE = {"\\tanh": np.tanh, "\\exp": np.exp, "\\log": np.log, "\\ln": np.log,
                "\\sin": np.sin, "\\cos": np.cos, "\\sinh": np.sinh, "\\cosh": np.cosh,
                "\\sign": np.sign, "\\sigma": lambda z: 0.5 * (1 + np.tanh(0.5 * z)),
                "\\relu": lambda z: np.maximum(z, 0.0)}
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
        return _in_unicode(piece) if self.plain else piece

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
        return self._with_prefix("", ("indexed", last[1], labels)) if prefix is None else (
            "product", "juxtapose", prefix, ("indexed", last[1], labels), word)

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


_LEFT_SIDES = [re.compile(pattern) for pattern in (
    r"\\frac\{\\partial[A-Za-z]*\}\{\\partial([A-Za-z]\w*?)(?:_\{?([A-Za-z,]+)\}?)?\}",
    r"\\partial[A-Za-z]*/\\partial([A-Za-z]\w*?)(?:_\{?([A-Za-z,]+)\}?)?",
    r"d([A-Za-z]\w*?)(?:_\{?([A-Za-z,]+)\}?)?",
    r"\\bar\{?([A-Za-z]\w*?)\}?(?:_\{?([A-Za-z,]+)\}?)?",
    r"\\nabla_\{?([A-Za-z]\w*?)(?:_\{?([A-Za-z,]+)\}?)?\}?[A-Za-z]*")]


def left_side(text: str) -> tuple[str, str] | None:
    """(name, indices) of a gradient's left side in the grammar's spelling (∂L/∂W_{ij},
    dW, \\frac{\\partial L}{\\partial W}, \\bar{W}), or None if ``text`` is none."""
    text = re.sub(r"\s+", "", text)
    for pattern in _LEFT_SIDES:
        found = pattern.fullmatch(text)
        if found is not None:
            return found.group(1), (found.group(2) or "").replace(",", "")
    return None


def equations(text: str) -> list[tuple[str | None, str]]:
    """The equations of a block of whiteboard text (a ``%%derivation`` cell, a Markdown
    cell's LaTeX): one per line, per ``$$ ... $$`` block or per ``\\\\`` line break, each
    as (the name of the input its left side is the gradient of, or None; its text).
    LaTeX comments (``%``) and alignment marks (``&``) are dropped."""
    text = re.sub(r"(?<!\\)%.*", "", text)
    text = text.replace("\\begin{aligned}", "\n").replace("\\end{aligned}", "\n")
    found = []
    for chunk in re.split(r"\$\$|\n|\\\\", text):
        chunk = chunk.replace("&", "").strip().strip("$").strip()
        if not chunk:
            continue
        left = normalise(chunk.split("=", 1)[0]) if "=" in chunk else ""
        named = left_side(left) if left else None
        found.append((named[0] if named else None, chunk))
    return found


def _in_unicode(piece: str) -> str:
    """A piece of a formula written without LaTeX, as its writer spelled it: the commands
    :func:`normalise` made from its symbols and words turned back."""
    for symbol, command in _SYMBOLS:
        if command.strip() and command.startswith("\\"):
            piece = piece.replace(command.strip() + " ", symbol).replace(command.strip(),
                                                                        symbol)
    piece = piece.replace("^{\\top}", "ᵀ").replace("^{-1}", "⁻¹")
    for word, command in _WORDS.items():
        piece = re.sub(re.escape(command) + r"\b ?", word, piece)
    piece = re.sub(r"\\abs\{([^{}]*)\}", r"|\1|", piece)
    return re.sub(r"  +", " ", piece)


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


# -- evaluating the tree on the learner's arrays ----------------------------------------------
class Row:
    """A 1-D array transposed: a row vector (a plain 1-D array is a column)."""

    def __init__(self, values: np.ndarray):
        self.values = values


class Labelled:
    """An array whose axes are named by index letters (index notation)."""

    def __init__(self, values: np.ndarray, labels: str):
        self.values, self.labels = values, labels


class _Identity:
    """``scale`` I: the identity matrix, of the size its neighbour needs (or, alone, of
    the size of the gradient)."""

    def __init__(self, scale: float = 1.0):
        self.scale = scale

    def sized(self, n: int) -> np.ndarray:
        return self.scale * np.eye(n)



def _is_scalar(v) -> bool:
    return isinstance(v, int | float) or (isinstance(v, np.ndarray) and v.ndim == 0)


def _capped(shape: tuple) -> None:
    if int(np.prod(shape, dtype=np.float64)) > MAX_ELEMENTS:
        raise FormulaError(f"the formula would make an array of shape {shape}, more than "
                           f"{MAX_ELEMENTS:,} numbers")


def _shape_of(v) -> str:
    if isinstance(v, Row):
        return f"a row vector of {v.values.shape[0]}"
    if isinstance(v, np.ndarray) and v.ndim == 1:
        return f"a column vector of {v.shape[0]}"
    return f"shape {tuple(np.shape(v))}"


class Evaluation:
    """One evaluation of a read formula on ``arrays`` (names to arrays, sizes to ints)."""

    def __init__(self, arrays: dict):
        self.arrays = arrays

    def value(self, node):  # noqa: C901 - one branch per kind of node
        kind = node[0]
        if kind == "number":
            return node[1]
        if kind == "name":
            value = self.arrays[node[1]]
            return float(value) if isinstance(value, int | np.integer) else np.asarray(value)
        if kind == "identity":
            return _Identity()
        if kind == "top":
            raise FormulaError("ᵀ (a transpose) belongs after what it transposes: Wᵀ")
        if kind in ("add", "sub"):
            return self._add(self.value(node[1]), self.value(node[2]), kind == "sub")
        if kind == "negate":
            return self._map(self.value(node[1]), np.negative)
        if kind == "product":
            return self._product(node[1], self.value(node[2]), self.value(node[3]), node[4])
        if kind == "divide":
            return self._product("divide", self.value(node[1]), self.value(node[2]), node[3])
        if kind == "power":
            return self._power(node[1], node[2], node[3])
        if kind == "sqrt":
            return self._map(self.value(node[1]), np.sqrt)
        if kind == "absolute":
            return self._map(self.value(node[1]), np.abs)
        if kind == "bars":
            inside = self.value(node[1])
            if node[1][0] == "name" and isinstance(inside, np.ndarray) and inside.ndim == 2:
                name = node[1][1]
                raise Ask(f"|{name}| of a matrix can mean its determinant or each entry's "
                          f"absolute value: write \\det({name}) for the first, "
                          f"\\operatorname{{abs}}({name}) for the second")
            return self._map(inside, np.abs)
        if kind == "indicator":
            return self._indicator(self.value(node[1]), node[2], self.value(node[3]))
        if kind == "apply":
            return self._apply(node[1], self.value(node[2]), node[3])
        if kind == "minmax":
            both = np.maximum if node[1] == "\\max" else np.minimum
            return self._elementwise(self.value(node[2]), self.value(node[3]), both,
                                     "\\max" if both is np.maximum else "\\min")
        if kind == "indexed":
            return self._indexed(node[1], node[2])
        if kind == "sum":
            return self._sum(node[1], self.value(node[2]))
        raise FormulaError(f"{kind} is not something a formula here can compute")

    # -- pieces ----------------------------------------------------------------------------
    def _indexed(self, name: str, labels: str) -> Labelled:
        values = np.asarray(self.arrays[name])
        if values.ndim != len(labels):
            raise FormulaError(f"{name}_{{{labels}}} has {len(labels)} indices, but {name} has "
                               f"{values.ndim} axes (shape {values.shape})")
        return Labelled(values, labels)

    def _map(self, v, function):
        if isinstance(v, Row):
            return Row(function(v.values))
        if isinstance(v, Labelled):
            return Labelled(function(v.values), v.labels)
        if isinstance(v, _Identity):
            return _Identity(function(v.scale))
        return function(v)

    def _apply(self, name: str, v, piece: str):
        if name in _ELEMENTWISE:
            with np.errstate(all="ignore"):
                return self._map(v, _ELEMENTWISE[name])
        if name == "\\erf":
            from autograd_core.ops.special import erf
            return self._map(v, erf)
        if name == "\\softmax":
            def softmax(z):
                e = np.exp(z - np.max(z, axis=-1, keepdims=True))
                return e / e.sum(axis=-1, keepdims=True)
            return self._map(v, softmax)
        matrix = v.values if isinstance(v, Row) else v
        if isinstance(matrix, Labelled):
            raise FormulaError(f"`{piece}`: {name[1:]} takes a matrix, not an indexed term")
        if name == "\\diag":
            if np.ndim(matrix) not in (1, 2):
                raise FormulaError(f"`{piece}`: diag takes a vector (giving a matrix) or a "
                                   f"matrix (giving its diagonal), not {_shape_of(v)}")
            _capped((np.shape(matrix)[0],) * 2)
            return np.diag(matrix)
        square = np.ndim(matrix) == 2 and np.shape(matrix)[0] == np.shape(matrix)[1]
        if name == "\\tr":
            if np.ndim(matrix) != 2:
                raise FormulaError(f"`{piece}`: tr takes a matrix, not {_shape_of(v)}")
            return np.trace(matrix)
        if not square:
            raise FormulaError(f"`{piece}`: {name[1:]} takes a square matrix, not "
                               f"{_shape_of(v)}")
        if name == "\\det":
            return np.linalg.det(matrix)
        return _inverse(matrix, piece)

    def _indicator(self, left, compare: str, right):
        test = {">": np.greater, "\\gt": np.greater, "<": np.less, "\\lt": np.less,
                ">=": np.greater_equal, "\\geq": np.greater_equal, "\\ge": np.greater_equal,
                "<=": np.less_equal, "\\leq": np.less_equal, "\\le": np.less_equal}[compare]
        return self._elementwise(left, right, lambda a, b: test(a, b).astype(np.float64),
                                 "a comparison")

    def _elementwise(self, a, b, function, what: str):
        """``function(a, b)`` elementwise: numbers with anything, like with like."""
        if isinstance(a, Labelled) or isinstance(b, Labelled):
            return _labelled_elementwise(a, b, function, what)
        if isinstance(a, Row) and isinstance(b, Row):
            return Row(function(a.values, b.values))
        if isinstance(a, Row) or isinstance(b, Row):
            if _is_scalar(a) or _is_scalar(b):
                row = a if isinstance(a, Row) else b
                other = b if row is a else a
                return Row(function(row.values, other) if row is a
                           else function(other, row.values))
            row, other = (a, b) if isinstance(a, Row) else (b, a)
            if isinstance(other, np.ndarray) and other.ndim >= 2:  # a row against each row
                values = (function(row.values, other) if row is a
                          else function(other, row.values))
                return values
            raise FormulaError(f"{what} between {_shape_of(a)} and {_shape_of(b)}: transpose "
                               "one of them so both are rows or both columns")
        if isinstance(a, _Identity) or isinstance(b, _Identity):
            a, b = _sized_identity(a, b), _sized_identity(b, a)
        try:
            _capped(np.broadcast_shapes(np.shape(a), np.shape(b)))
            with np.errstate(all="ignore"):
                return function(a, b)
        except ValueError:
            raise FormulaError(f"{what} between {_shape_of(a)} and {_shape_of(b)}, which do not "
                               "line up (sizes are compared from the right, each pair equal or "
                               "1)") from None

    def _add(self, a, b, subtract: bool):
        function = np.subtract if subtract else np.add
        return self._elementwise(a, b, function, "a sum" if not subtract else "a difference")

    def _product(self, operation: str, a, b, piece: str):
        if isinstance(a, _Identity) and _is_scalar(b) or isinstance(b, _Identity) and \
                _is_scalar(a):
            identity, number = (a, b) if isinstance(a, _Identity) else (b, a)
            if operation == "divide" and identity is b:
                raise FormulaError(f"`{piece}` divides by I, which has no inverse entry by entry")
            scale = identity.scale / number if operation == "divide" else identity.scale * number
            return _Identity(scale)
        if operation == "divide":
            return self._elementwise(a, b, np.divide, f"`{piece}` (a division)")
        if _is_scalar(a) or _is_scalar(b) or operation == "elementwise":
            return self._elementwise(a, b, np.multiply, f"`{piece}` (an elementwise product)")
        if isinstance(a, Labelled) or isinstance(b, Labelled):
            return _labelled_elementwise(a, b, np.multiply, f"`{piece}`")
        if operation == "dot":
            raise Ask(f"`{piece}`: · between two arrays can mean a matrix product or an "
                      "elementwise one: write them side by side (or @) for the matrix "
                      "product, ⊙ (or *) for the elementwise one")
        if operation == "times":
            raise Ask(f"`{piece}`: × between two arrays is not one product: write them side by "
                      "side for the matrix product, ⊙ for the elementwise one")
        return _matrix_product(a, b, piece)

    def _power(self, base_node, exponent, piece: str):
        if exponent == ("top",):
            return _transpose(self.value(base_node), piece)
        if exponent == ("inverse_top",):
            base = self.value(base_node)
            if not (isinstance(base, np.ndarray) and base.ndim == 2
                    and base.shape[0] == base.shape[1]):
                raise FormulaError(f"`{piece}`: only a square matrix has an inverse, and this "
                                   f"is {_shape_of(base)}")
            return _inverse(base, piece).T
        if base_node == ("number", float(np.e)):
            return self._map(self.value(exponent), np.exp)
        power = self.value(exponent)
        base = self.value(base_node)
        if not _is_scalar(power):
            raise FormulaError(f"`{piece}`: an exponent is a number here")
        if power == -1 and isinstance(base, np.ndarray) and base.ndim >= 1:
            if base.ndim == 2 and base.shape[0] == base.shape[1]:
                return _inverse(base, piece)
            raise FormulaError(f"`{piece}`: only a square matrix has an inverse, and this is "
                               f"{_shape_of(base)}; for 1 over each entry write 1/x (⊘)")
        if base_node[0] == "name" and isinstance(base, np.ndarray) and base.ndim == 2:
            name, k = base_node[1], f"{float(power):g}"
            if float(power).is_integer() and 2 <= power <= 4:
                times = " ".join([name] * int(power))
                entries = " ⊙ ".join([name] * int(power))
                raise Ask(f"`{piece}` of a matrix can mean the matrix product {times} or each "
                          f"entry to the power {k}: write {times} for the first, {entries} "
                          "for the second")
            raise Ask(f"`{piece}` of a matrix can mean a matrix power or each entry to the "
                      f"power {k}; this reader takes neither as written: for each entry, use "
                      f"the Python form, {name}**{k}")
        with np.errstate(all="ignore"):
            return self._map(base, lambda v: np.power(v, power))

    def _sum(self, labels: str, v):
        if not isinstance(v, Labelled):
            raise FormulaError(f"∑_{labels} adds up over indices, so what follows it is written "
                               f"with indices too, as in ∑_n x_{{ni}} g_{{nj}}")
        missing = [label for label in labels if label not in v.labels]
        if missing:
            raise FormulaError(f"∑_{labels} adds up over {missing[0]}, which no term after it "
                               "has as an index")
        keep = "".join(label for label in v.labels if label not in labels)
        return Labelled(np.einsum(f"{v.labels}->{keep}", v.values), keep)


def _inverse(matrix: np.ndarray, piece: str) -> np.ndarray:
    try:
        return np.linalg.inv(matrix)
    except np.linalg.LinAlgError:
        raise FormulaError(f"`{piece}`: the matrix is singular on this draw, so it has no "
                           "inverse") from None


def _transpose(v, piece: str):
    if isinstance(v, Row):
        return v.values
    if isinstance(v, Labelled):
        raise FormulaError(f"`{piece}`: in index notation the indices give the order, so "
                           "nothing is transposed: swap the letters instead")
    if _is_scalar(v) or isinstance(v, _Identity):
        return v
    if v.ndim == 1:
        return Row(v)
    return np.swapaxes(v, -1, -2)


def _sized_identity(v, other):
    if not isinstance(v, _Identity):
        return v
    if isinstance(other, np.ndarray) and other.ndim == 2 and other.shape[0] == other.shape[1]:
        return v.sized(other.shape[0])
    raise Ask("I has no size here: it takes the size of the square matrix beside it (A + I)")


def _matrix_product(a, b, piece: str):
    """``a b`` on the whiteboard: a matrix product, with 1-D arrays as columns."""
    if isinstance(a, _Identity) or isinstance(b, _Identity):
        identity, other = (a, b) if isinstance(a, _Identity) else (b, a)
        return other * identity.scale if not isinstance(other, Row) else Row(
            other.values * identity.scale)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.ndim == b.ndim == 1:
        raise Ask(f"`{piece}` sets two column vectors side by side: write aᵀ b for a number "
                  "(their dot product), a bᵀ for a matrix (their outer product), or a ⊙ b "
                  "for the elementwise product")
    if isinstance(a, Row) and isinstance(b, Row):
        raise Ask(f"`{piece}` sets two row vectors side by side: transpose one of them")
    left = a.values[None, :] if isinstance(a, Row) else a
    right = b.values[None, :] if isinstance(b, Row) else b
    left = left[:, None] if left.ndim == 1 else left
    right = right[:, None] if right.ndim == 1 else right
    if left.shape[-1] != right.shape[-2] and np.shape(a) == np.shape(b) and not isinstance(
            a, Row):
        raise FormulaError(f"`{piece}` sets two arrays of {_shape_of(a)} side by side, which is "
                           "a matrix product here, and their sizes do not fit one: for the "
                           "product entry by entry write ⊙ (or *) between them")
    if left.shape[-1] != right.shape[-2]:
        raise FormulaError(f"`{piece}` is a matrix product of {_shape_of(a)} and "
                           f"{_shape_of(b)}: the inner sizes {left.shape[-1]} and "
                           f"{right.shape[-2]} differ (a transpose is often what is missing)")
    _capped(left.shape[:-1] + right.shape[-1:])
    out = left @ right
    column, row = isinstance(b, np.ndarray) and b.ndim == 1, isinstance(a, Row)
    if column and row:
        return out[..., 0, 0] if out.ndim == 2 else out.reshape(out.shape[:-2])
    if column:
        return out[..., 0]
    if row:
        return Row(out[..., 0, :]) if out.ndim == 2 else out
    return out


def _labelled_elementwise(a, b, function, what: str):
    """Two indexed terms side by side: each index an axis, shared ones aligned (an einsum
    without a sum); a number with an indexed term."""
    if _is_scalar(a) or _is_scalar(b):
        labelled = a if isinstance(a, Labelled) else b
        other = b if labelled is a else a
        values = (function(labelled.values, other) if labelled is a
                  else function(other, labelled.values))
        return Labelled(values, labelled.labels)
    if not (isinstance(a, Labelled) and isinstance(b, Labelled)):
        raise FormulaError(f"{what} mixes index notation (x_{{ni}}) with matrix notation: "
                           "write the whole formula one way")
    labels = "".join(dict.fromkeys(a.labels + b.labels))  # each index once, in order
    sizes = {}
    for term in (a, b):
        for label, size in zip(term.labels, term.values.shape):
            if sizes.setdefault(label, size) != size:
                raise FormulaError(f"{what}: index {label} runs over {sizes[label]} values in "
                                   f"one term and {size} in another")
    _capped(tuple(sizes[x] for x in labels))
    full = [np.einsum(f"{t.labels}->{''.join(x for x in labels if x in t.labels)}",
                      t.values)
            .reshape([sizes[x] if x in t.labels else 1 for x in labels]) for t in (a, b)]
    return Labelled(function(*full), labels)


# -- reading ------------------------------------------------------------------------------------
def read_whiteboard(text: str, names: Iterable[str], *, part: str | None = None,
                    sizes: Iterable[str] = ()) -> Callable:
    """A function of the named arrays (keyword arguments, ``g`` and the named ``sizes``)
    computing the formula ``text`` in whiteboard notation (see the module); raises
    :class:`FormulaError` (or :class:`Ask`) with a sentence when it cannot be read.
    ``part`` is the input the formula is the gradient of: a left side naming another one
    is refused."""
    from lark.exceptions import LarkError, UnexpectedInput
    inputs = set(names) | {"g"}
    clean = normalise(text, inputs | set(sizes))
    left = None
    if "=" in clean:  # the left side says which gradient this is (and its indices' order)
        said, clean = clean.split("=", 1)
        left = left_side(said)
        if left is None:
            raise FormulaError(f"the left side `{said.strip()}` is not one this reader knows: "
                               "write ∂L/∂W = ... (or dW = ...)")
        if part is not None and left[0] != part:
            raise FormulaError(f"the left side is the gradient of {left[0]}, but this formula "
                               f"is for d{part}")
    if not clean.strip():
        raise FormulaError("the formula is empty")
    _refuse_unclear_fractions(clean)
    if _depth(clean) > MAX_DEPTH:
        raise FormulaError(f"the formula nests brackets more than {MAX_DEPTH} deep")
    try:
        tree = _parser().parse(clean)
    except UnexpectedInput as error:
        column = getattr(error, "column", None)
        near = clean[max(column - 1, 0):column + 11].strip() if isinstance(column, int) and \
            column > 0 else ""
        unparsed = FormulaError(f"{text.strip()!r} is not notation this reader knows"
                                + (f", from `{near}` on" if near else "")
                                + ": the spellings it reads are listed in "
                                  "help(check_derivation)")
        unparsed.unparsed = True
        raise unparsed from None
    except LarkError:
        unparsed = FormulaError(f"{text.strip()!r} is not notation this reader knows")
        unparsed.unparsed = True
        raise unparsed from None
    except RecursionError:
        raise FormulaError("the formula is too long or nested too deeply to read") from None
    reading = Reading(clean, inputs, sizes, plain="\\" not in text)
    try:
        node = reading.node(tree)
    except RecursionError:
        raise FormulaError("the formula is too long or nested too deeply to read") from None

    def formula(**arrays):
        with np.errstate(all="ignore"):  # nan and inf pass through, as in NumPy
            try:
                value = Evaluation(arrays).value(node)
            except RecursionError:
                raise FormulaError("the formula is too long or nested too deeply to "
                                   "compute") from None
        name = left[0] if left else part or ""
        if isinstance(value, _Identity) and np.ndim(arrays.get(name)) == 2:
            shape = np.shape(arrays[name])
            if shape[0] == shape[1]:
                return value.sized(shape[0])
        return _as_answer(value, left[1] if left else "", name, np.shape(arrays.get(name)))

    formula.uses_g = any(n[:2] in (("name", "g"), ("indexed", "g")) for n in _nodes(node))
    formula.text = text
    return formula


MAX_DEPTH = 40  # brackets deeper than this are not a whiteboard's


def _depth(text: str) -> int:
    """How deep the brackets of ``text`` nest."""
    deepest = depth = 0
    for char in text:
        depth += char in "({[" and 1 or -(char in ")}]")
        deepest = max(deepest, depth)
    return deepest


def _refuse_unclear_fractions(text: str) -> None:
    """``1/2N`` reads as 1/(2N) to some and (1/2)·N to others: ask, never guess."""
    found = re.search(r"(\S+)\s*/\s*(\d+(?:\.\d+)?)([A-Za-z]\w*)", text)
    if found is not None:
        a, b, c = found.groups()
        raise Ask(f"`{found.group(0).strip()}` can mean {a}/({b}{c}) or ({a}/{b})·{c}: write "
                  f"\\frac{{{a}}}{{{b}{c}}} (or {a}/({b} {c})) for the first, ({a}/{b}) {c} "
                  "for the second")


def _nodes(node):
    """Every node of the tree under ``node`` (a stack, not recursion: a long formula is a
    deep tree)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child for child in current[1:] if isinstance(child, tuple))


def _as_answer(value, labels: str, name: str, shape: tuple) -> np.ndarray:
    """The formula's value as an array: a row or column as 1-D, indices in the left side's
    order (an index of the left side that no term on the right has: the value is the same
    all along it, for as many values as ``shape``, the gradient's, says)."""
    if isinstance(value, _Identity):
        raise Ask("I alone has no size: write it beside a square matrix (A + I)")
    if isinstance(value, Row):
        return value.values
    if not isinstance(value, Labelled):
        return np.asarray(value, dtype=np.float64)
    free = "".join(dict.fromkeys(value.labels))
    if not labels:
        if len(free) > 1:
            raise Ask(f"the formula leaves the indices {free}: write the left side, "
                      f"∂L/∂{name or 'W'}_{{{free}}} = ..., so their order is known")
        return np.einsum(f"{value.labels}->{free}", value.values)
    extra = [x for x in free if x not in labels]
    if extra:
        raise FormulaError(f"index {extra[0]} is on the right but not on the left: add it up "
                           f"with ∑_{extra[0]}, or put it on the left")
    missing = [x for x in labels if x not in free]
    if missing and len(shape) != len(labels):
        raise FormulaError(f"index {missing[0]} is on the left but in no term on the right, "
                           f"and the left side has {len(labels)} indices where the gradient "
                           f"has {len(shape)} axes")
    values = np.einsum(f"{value.labels}->{free}", value.values)  # each index once
    if not missing:
        return np.einsum(f"{free}->{labels}", values)
    kept = "".join(x for x in labels if x in free)  # in the left side's order
    ordered = np.einsum(f"{free}->{kept}", values)
    expanded = ordered.reshape([ordered.shape[kept.index(x)] if x in free else 1
                                for x in labels])
    _capped(shape)
    try:  # the same value all along each index the right side does not have
        return np.broadcast_to(expanded, shape).copy()
    except ValueError:
        raise FormulaError(f"the indices {labels} run over sizes that do not fit {name}'s "
                           f"shape {shape}") from None
