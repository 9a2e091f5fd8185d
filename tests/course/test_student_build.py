"""The student build for a graded class: a wheel whose exercise words hold no worked
solution and no skeleton (every hint, question and after-solving word kept), with a valid
RECORD, that a Python importing it shows the withheld sentence from; self-study installs
keep the solutions. Built once for the module (pip wheel, a few seconds)."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile

import pytest
from solutions import words

from widgets.course.__main__ import main
from widgets.course.student_build import ROOT, TEXTS, WITHHELD, student_words
from widgets.exercises import registry
from widgets.exercises.ids import _item_words

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    assert main(["student-build", str(out)]) == 0
    (wheel,) = out.glob("*.whl")
    return out, wheel


def solution_lines() -> set[str]:
    """Every line of a worked solution or a skeleton long enough to give something away."""
    found = set()
    for item in _item_words():
        for key in ("solution", "skeleton"):
            for line in words(item).get(key, "").splitlines():
                if len(line.strip()) >= 20:
                    found.add(line.strip())
    return found


def test_no_worked_solution_line_is_anywhere_in_the_wheel(build):
    _, wheel = build
    lines = solution_lines()
    assert len(lines) > 200  # the check has something to look for
    with zipfile.ZipFile(wheel) as z:
        raw = z.read(TEXTS).decode("utf-8")
        given = "\n".join(str(v) for item in _item_words() for k, v in words(item).items()
                          if k not in ("solution", "skeleton"))  # a question, hint, snippet
        leaked = [line for line in lines if line in raw and line not in given]
        assert not leaked, f"{TEXTS} holds solution lines: {leaked[:2]}"
        texts = tomllib.loads(raw)
        for name in z.namelist():  # every other file of the packages is the checkout's
            if name.startswith(("autograd_core/", "widgets/")) and name != TEXTS:
                assert z.read(name) == (ROOT / name).read_bytes(), name
    for item, kept in texts.items():
        full = words(item)
        assert "skeleton" not in kept, item
        assert kept.get("solution") == WITHHELD, item
        assert {k: v for k, v in kept.items() if k != "solution"} == \
            {k: v for k, v in full.items() if k not in ("solution", "skeleton")}, item


def test_the_wheels_record_matches_every_file(build):
    _, wheel = build
    with zipfile.ZipFile(wheel) as z:
        record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
        for line in z.read(record).decode().splitlines():
            name, digest, size = line.rsplit(",", 2)
            if not digest:
                continue  # RECORD itself
            data = z.read(name)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == f"sha256={expected.decode()}" and int(size) == len(data), name


def test_a_student_sees_the_withheld_sentence_and_the_hint(build, tmp_path):
    _, wheel = build
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp_path)
    shown = subprocess.run(
        [sys.executable, "-c", "from widgets import exercises as ex; "
         "print(ex.G6.solution); print(ex.G6.skeleton); print(ex.G6.hint)"],
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin",
             "AUTOGRAD_LESSONS_PROGRESS": str(tmp_path / "progress")},
        cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert WITHHELD in shown and "None" in shown
    assert str(registry()["G6"].hint).splitlines()[0] in shown


def test_self_study_keeps_its_solutions(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress"))
    assert str(registry()["G6"].solution).strip() == words("G6")["solution"].strip()
    assert registry()["G6"].skeleton is not None


def test_the_requirements_line_names_the_wheel(build):
    out, wheel = build
    line = (out / "requirements-student.txt").read_text().splitlines()[-1]
    assert line == f"./{wheel.name}[lessons]"


def test_a_changed_word_is_refused_not_written():
    text = '[X1]\ntitle = "t"\nsolution = """a\nb"""\nhint = "h"\n'
    assert 'solution = "' in student_words(text)
    # a hint whose text has a line that looks like a solution key: removing that line
    # would change the hint, so the build refuses
    broken = '[X1]\ntitle = "t"\nsolution = "s"\nhint = """see\nsolution = "x"\n"""\n'
    with pytest.raises(Exception, match="lost or changed"):
        student_words(broken)


def test_a_file_for_out_gets_a_sentence(tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("x")
    assert main(["student-build", str(target)]) == 2
    assert "is a file" in capsys.readouterr().err
