"""A student build of the package for a graded class: the same engine, lessons' tools and
checks, with no worked solution and no skeleton in the exercises' words.

Self-learners install the project as it is, and ``G6.solution`` prints the worked solution
(stepped help: hint, skeleton, solution, each recorded when shown). In a graded class that
would hand out the answers, so the instructor builds a wheel for the hub image instead:

    python -m widgets.course student-build OUT/

writes ``OUT/autograd_lessons-<version>-py3-none-any.whl``, in which
``widgets/exercises/texts.toml`` keeps every title, question and hint (and the words shown
only after an item is solved) but no ``skeleton``, and a ``solution`` that says it is
withheld; and ``OUT/requirements-student.txt``, the line the hub image installs. The
autograder keeps the full words (it is exported from the instructor's checkout).
"""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from .lesson import LessonError

ROOT = Path(__file__).resolve().parents[2]
TEXTS = "widgets/exercises/texts.toml"
WITHHELD = ("The worked solution is not part of this class's install (a graded course): "
            "your instructor shares it after the deadline. The hint is still here: .hint.")
WITHHELD_NOTE = "no worked solutions or skeletons; the autograder keeps them"
_KEY = re.compile(r"^(solution|skeleton) = ")


def student_words(text: str) -> str:
    """``texts.toml`` for a student build: each ``skeleton`` removed and each ``solution``
    replaced by :data:`WITHHELD`, everything else as it was (checked by parsing both)."""
    kept, closing = [], None
    for line in text.splitlines(keepends=True):
        if closing is not None:  # inside a multi-line value being left out
            if line.rstrip("\n").endswith(closing):
                closing = None
            continue
        match = _KEY.match(line)
        if match is None:
            kept.append(line)
            continue
        value = line[match.end():].strip()
        for quotes in ("'''", '"""'):
            if value.startswith(quotes) and (value == quotes or not value.endswith(quotes)
                                             or len(value) < 6):
                closing = quotes
        if match.group(1) == "solution":
            kept.append(f'solution = "{WITHHELD}"\n')
    result = "".join(kept)
    _check_student_words(tomllib.loads(text), tomllib.loads(result))
    return result


def _check_student_words(full: dict, student: dict) -> None:
    for item, words in full.items():
        expected = {k: v for k, v in words.items() if k != "skeleton"}
        if "solution" in expected:
            expected["solution"] = WITHHELD
        if student.get(item) != expected:
            raise LessonError(f"the student build of texts.toml lost or changed words of "
                              f"{item}; nothing was written.")


@dataclass(frozen=True)
class StudentBuild:
    """What ``student_build`` wrote: the wheel and the requirements file."""

    wheel: Path
    requirements: Path

    def __str__(self) -> str:
        return (f"Wrote {self.wheel.name} (no worked solutions, no skeletons) and "
                f"{self.requirements.name} into {self.wheel.parent}: put both in the hub "
                f"image and run pip install -r {self.requirements.name} there.")


def student_build(out: Path, source: Path = ROOT) -> StudentBuild:
    """Build the project's wheel from ``source`` and write its student version into
    ``out`` (see the module docstring). A problem is a :class:`LessonError` sentence."""
    out = Path(out)
    if not (source / "pyproject.toml").is_file() or not (source / TEXTS).is_file():
        raise LessonError(f"{source} is not a checkout of the project (no pyproject.toml "
                          f"and {TEXTS}): run the student build from the instructor's "
                          "checkout.")
    if out.exists() and not out.is_dir():
        raise LessonError(f"{out} is a file; give a folder to write the student build in.")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        built = _pip_wheel(source, Path(scratch))
        wheel = out / built.name
        _rewrite_wheel(built, wheel, student_words((source / TEXTS).read_text("utf-8")))
    requirements = out / "requirements-student.txt"
    requirements.write_text(f"# the student build for a graded class ({WITHHELD_NOTE})\n"
                            f"./{wheel.name}[lessons]\n", encoding="utf-8")
    return StudentBuild(wheel, requirements)



def _pip_wheel(source: Path, into: Path) -> Path:
    """``pip wheel`` of the project (no dependencies): the path of the wheel it built."""
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                           str(into), str(source)], capture_output=True, text=True)
    wheels = sorted(into.glob("*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise LessonError(f"pip could not build the project's wheel ({last[:200]}).")
    return wheels[0]


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _rewrite_wheel(built: Path, wheel: Path, texts: str) -> None:
    """Copy the wheel ``built`` to ``wheel`` with ``texts`` as its texts.toml, and the
    RECORD line of that file updated (pip checks every file against RECORD)."""
    data = texts.encode("utf-8")
    with zipfile.ZipFile(built) as source, zipfile.ZipFile(
            wheel, "w", compression=zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            content = source.read(info)
            if info.filename == TEXTS:
                content = data
            elif info.filename.endswith(".dist-info/RECORD"):
                lines = [(_record_line(TEXTS, data) if line.startswith(f"{TEXTS},")
                          else line) for line in content.decode("utf-8").splitlines()]
                content = ("\n".join(lines) + "\n").encode("utf-8")
            target.writestr(info, content)
