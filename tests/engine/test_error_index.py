"""Which part of the engine raises which sentence, said where the sentences are.

The engine's sentences live in ``autograd_core/errors/``, one module per family, so
that one sentence can serve several ops (``broadcast`` is raised by add, where and
expand). To keep it easy to go from a sentence to the op that raises it, each of those
modules ends its docstring with a line ``Raised from: <files>.``; this test reads every
engine file, finds each ``errors.<builder>`` it calls, and fails when a module's line
names other files than the ones that really use its sentences, or when a sentence is
raised from nowhere.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "autograd_core"
FAMILIES = sorted(p for p in (ENGINE / "errors").glob("*.py") if not p.name.startswith("_"))


def builders() -> dict[str, str]:
    """Each public sentence builder (or error class) -> its family module's name."""
    found = {}
    for path in FAMILIES:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_"):
                found[node.name] = path.stem
    return found


def users() -> tuple[dict[str, set[str]], set[str]]:
    """Family -> the engine files that raise its sentences; and every builder used."""
    names = builders()
    files, used = defaultdict(set), set()
    for path in sorted(ENGINE.rglob("*.py")):
        if "errors" in path.relative_to(ENGINE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            name = None
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id.endswith("errors"):
                name = node.attr
            elif isinstance(node, ast.ImportFrom) and node.module \
                    and node.module.split(".")[-1] in ("errors", *(p.stem for p in FAMILIES)):
                for alias in node.names:
                    if alias.name in names:
                        files[names[alias.name]].add(path.relative_to(ENGINE).as_posix())
                        used.add(alias.name)
            if name in names:
                files[names[name]].add(path.relative_to(ENGINE).as_posix())
                used.add(name)
    return files, used


def stated(path: Path) -> list[str]:
    """The files a family's docstring names (its last lines may wrap)."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    match = re.search(r"^Raised from: (.*?)\.$", doc, re.M | re.S)
    return re.sub(r"\s+", " ", match.group(1)).split(", ") if match else []


@pytest.mark.parametrize("path", FAMILIES, ids=lambda p: p.stem)
def test_each_family_says_where_it_is_raised_from(path):
    files, _ = users()
    expected = sorted(files[path.stem])
    assert stated(path) == expected, (
        f"errors/{path.name}: end its docstring with the line\n"
        f"Raised from: {', '.join(expected)}.")


def test_every_sentence_is_raised_from_somewhere():
    _, used = users()
    internal = {name for name in builders() if name.endswith("Error")}  # classes raised by name
    unused = sorted(set(builders()) - used - internal)
    assert not unused, f"sentences no engine file raises: {unused}"
