"""The engine's folders are its layers, and imports only go down.

``autograd_core`` is laid out so that a learner can read it bottom up: the tensor and
its graph (``recording/``), the ops (``ops/``), the reverse sweep (``sweep/``), transforms
of functions (``func/``), layers and optimizers (``nn/``, ``optim/``), the tools that
watch the engine (``tools/``), and on top the public names (``__init__.py``,
``autograd.py``, ``utils/``, ``tensor_methods.py``). The sentences of the errors
(``errors/``) sit below everything. This test reads every import of every file (also
those inside functions) and fails on one that goes up a layer, and on any circle of
imports between files, naming the files.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "autograd_core"

# bottom to top: a file may import from its own layer and the layers below it
LAYERS = [
    ("the sentences of errors", ("errors",)),
    ("tensor and graph", ("recording",)),
    ("ops", ("ops",)),
    ("the sweep", ("sweep",)),
    ("transforms", ("func",)),
    ("nn and optim", ("nn", "optim")),
    ("tools", ("tools",)),
    ("public names", ("__init__", "autograd", "utils", "tensor_methods", "serialization",
                      "linalg")),
]


def module_name(path: Path) -> str:
    parts = ["autograd_core", *path.relative_to(ENGINE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    top = module.split(".")[1] if "." in module else "__init__"
    for index, (_, folders) in enumerate(LAYERS):
        if top in folders:
            return index
    raise AssertionError(f"{module} is in no layer of LAYERS: add its folder there")


MODULES = {module_name(p): p for p in sorted(ENGINE.rglob("*.py"))}


def imported_modules(module: str, path: Path) -> set[str]:
    """The engine modules ``module`` imports, at its top or inside a function."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                name = f"{target}.{alias.name}"
                found.add(name if name in MODULES else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in MODULES and m != module}


IMPORTS = {m: imported_modules(m, p) for m, p in MODULES.items()}


def test_every_file_is_in_a_layer():
    for module in MODULES:
        layer_of(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_go_down(module):
    here = layer_of(module)
    up = sorted(m for m in IMPORTS[module] if layer_of(m) > here)
    assert not up, (f"{module} ({LAYERS[here][0]}) imports from a layer above it: "
                    + ", ".join(f"{m} ({LAYERS[layer_of(m)][0]})" for m in up))


def test_no_circle_of_imports():
    state: dict[str, str] = {}  # "open" while on the current path, "done" after

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in sorted(IMPORTS[module]):
            if state.get(target) == "open":
                circle = path[path.index(target):] + [target]
                raise AssertionError("a circle of imports: " + " -> ".join(circle))
            if target not in state:
                visit(target, [*path, target])
        state[module] = "done"

    for module in sorted(MODULES):
        if module not in state:
            visit(module, [module])


def test_the_layer_test_sees_an_import_that_goes_up(tmp_path):
    """The reader finds imports inside functions and relative ones (a control): the same
    import, read as if written in a real ops module, is seen, and that module's own
    imports do not have it."""
    assert (ENGINE / "ops" / "shape.py").is_file()  # the module stood in for is real
    fake = tmp_path / "shape.py"
    fake.write_text("def f():\n    from ..sweep.engine import backward\n")
    assert "autograd_core.sweep.engine" in imported_modules("autograd_core.ops.shape", fake)
    assert "autograd_core.sweep.engine" not in IMPORTS["autograd_core.ops.shape"]
