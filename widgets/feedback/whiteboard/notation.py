"""The whiteboard's notation: the grammar a formula is parsed with (:data:`GRAMMAR`, read
by Lark), the spellings it takes (Unicode symbols and LaTeX's synonyms, rewritten into the
grammar's by :func:`normalise`), the left sides of equations (∂L/∂W, dW) and how a block
of equations is cut into lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import numpy as np

from ..formula_text import FormulaError

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
def parser():
    from lark import Lark  # imported when a whiteboard formula is first read
    return Lark(GRAMMAR, parser="earley", lexer="dynamic", ambiguity="resolve",
                propagate_positions=True)


class Ask(FormulaError):
    """Notation with more than one usual meaning: the message asks which one."""


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


def in_unicode(piece: str) -> str:
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


MAX_DEPTH = 40  # brackets deeper than this are not a whiteboard's


def bracket_depth(text: str) -> int:
    """How deep the brackets of ``text`` nest."""
    deepest = depth = 0
    for char in text:
        depth += char in "({[" and 1 or -(char in ")}]")
        deepest = max(deepest, depth)
    return deepest


def refuse_unclear_fractions(text: str) -> None:
    """``1/2N`` reads as 1/(2N) to some and (1/2)·N to others: ask, never guess."""
    found = re.search(r"(\S+)\s*/\s*(\d+(?:\.\d+)?)([A-Za-z]\w*)", text)
    if found is not None:
        a, b, c = found.groups()
        raise Ask(f"`{found.group(0).strip()}` can mean {a}/({b}{c}) or ({a}/{b})·{c}: write "
                  f"\\frac{{{a}}}{{{b}{c}}} (or {a}/({b} {c})) for the first, ({a}/{b}) {c} "
                  "for the second")


