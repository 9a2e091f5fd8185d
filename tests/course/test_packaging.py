"""Packaging checks: the two install paths agree, and the engine stays NumPy-only.

* pyproject.toml (pip) and environment.yml (conda / mamba / Binder) must name the
  same distributions, with the same version specs: core + [widgets] + [lessons] (what a
  learner needs), [test] (pytest, nbval, ...: what an instructor validates lessons with)
  and [course] (otter-grader). Only [torch] is pip-only: a large optional install.
* autograd_core imports only the standard library, NumPy and itself, so it runs
  in any Python without Jupyter, Graphviz or matplotlib.
* The lessons' JupyterLab extension is installed where JupyterLab looks, as shipped.
"""

import ast
import re
import sys
from pathlib import Path

import yaml
from packaging.markers import Marker

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "autograd-lessons"
ENVIRONMENT_EXTRAS = ("widgets", "lessons", "test", "course")
PIP_ONLY_EXTRAS = ("torch",)  # documented in environment.yml's header
NOT_PACKAGES = {"python", "pip"}  # conda-side entries that are not project dependencies
ENVIRONMENT_PYTHON = "3.11"  # environment.yml's python: markers for others do not apply
ENGINE_MAY_IMPORT = set(sys.stdlib_module_names) | {"numpy", "autograd_core"}


def parse(spec: str) -> tuple[str, str]:
    """(normalised name, version spec): 'Scikit_Learn >=1' -> ('scikit-learn', '>=1')."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[.*?\])?(.*)", spec)
    assert match, f"cannot read a package name from {spec!r}"
    return re.sub(r"[._]", "-", match.group(1).lower()), re.sub(r"\s", "", match.group(3))


def pyproject_deps() -> dict[str, str]:
    """Core + ENVIRONMENT_EXTRAS, name -> version spec; 'autograd-lessons[widgets]' is
    expanded."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    deps: dict[str, str] = {}
    todo = list(project["dependencies"])
    for extra in ENVIRONMENT_EXTRAS:
        todo += extras[extra]
    while todo:
        spec, _, marker = todo.pop().partition(";")
        if marker and not Marker(marker).evaluate({"python_version": ENVIRONMENT_PYTHON}):
            continue
        name, version = parse(spec)
        if name == PROJECT:
            for extra in re.search(r"\[(.*?)\]", spec).group(1).split(","):
                todo += extras[extra.strip()]
        else:
            deps[name] = version
    return deps


def environment_deps() -> dict[str, str]:
    """environment.yml, conda entries and its pip: section alike, name -> version spec."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    deps: dict[str, str] = {}
    for entry in env["dependencies"]:
        deps.update(parse(spec) for spec in (entry["pip"] if isinstance(entry, dict) else [entry]))
    return {name: version for name, version in deps.items() if name not in NOT_PACKAGES}


def test_environment_yml_matches_pyproject():
    pip_side, conda_side = pyproject_deps(), environment_deps()
    assert pip_side, "no dependencies read from pyproject.toml"
    only_pip = sorted(pip_side.keys() - conda_side.keys())
    only_conda = sorted(conda_side.keys() - pip_side.keys())
    assert not only_pip, (
        f"in pyproject.toml but missing from environment.yml: {only_pip}; "
        "add them to environment.yml (conda-forge, or under pip:)"
    )
    assert not only_conda, (
        f"in environment.yml but not in pyproject.toml {ENVIRONMENT_EXTRAS}: {only_conda}; "
        "add them to pyproject.toml or drop them"
    )
    differ = {n: (v, conda_side[n]) for n, v in pip_side.items() if v != conda_side[n]}
    assert not differ, f"version specs differ (pyproject.toml, environment.yml): {differ}"


def test_every_extra_is_in_environment_yml_or_said_to_be_pip_only():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert set(extras) == set(ENVIRONMENT_EXTRAS) | set(PIP_ONLY_EXTRAS), (
        "a new extra in pyproject.toml: add it to ENVIRONMENT_EXTRAS (and environment.yml) "
        "or to PIP_ONLY_EXTRAS (and say so in environment.yml's header)")
    header = (ROOT / "environment.yml").read_text().split("name:")[0]
    assert all(f"[{extra}]" in header for extra in (*ENVIRONMENT_EXTRAS, *PIP_ONLY_EXTRAS))


def test_nbval_is_in_environment_yml():
    """Instructors validate lessons with pytest --nbval in the conda environment too."""
    assert {"nbval", "pytest"} <= environment_deps().keys()


def top_level_imports(path: Path):
    """(line, top-level module) for every absolute import in a Python file."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.lineno, node.module.split(".")[0]


def test_engine_imports_numpy_and_stdlib_only():
    files = sorted((ROOT / "autograd_core").rglob("*.py"))
    assert files, "autograd_core/ has no Python files"
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in files
        for line, module in top_level_imports(path)
        if module not in ENGINE_MAY_IMPORT
    ]
    assert not bad, (
        "autograd_core must import only the standard library and NumPy "
        "(presentation belongs in widgets/):\n" + "\n".join(bad)
    )


def test_the_lab_extension_is_installed_where_jupyterlab_looks():
    """The install (editable or not) puts widgets/labextension where JupyterLab finds
    extensions, byte for byte: an editable install copies it, so an edit to it needs
    `pip install -e .` again, which this test asks for."""
    from jupyter_core.paths import jupyter_path

    source = ROOT / "widgets" / "labextension"
    installed = [Path(p) / "autograd-lessons" for p in jupyter_path("labextensions")
                 if (Path(p) / "autograd-lessons" / "package.json").exists()]
    assert installed, "the lab extension is not installed: pip install -e '.[lessons]'"
    files = sorted(p.relative_to(source) for p in source.rglob("*") if p.is_file())
    stale = [str(f) for f in files if (installed[0] / f).read_bytes() != (source / f).read_bytes()]
    assert not stale, f"installed copies differ from widgets/labextension: {stale} " \
                      "(run pip install -e '.[lessons]' again)"
