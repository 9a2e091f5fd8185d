"""What a class gets wrong: a report over many learners' exported progress or graded work.

Every check names the mistake it found (a transpose, a missing batch sum, a path left
out) and progress counts each named mistake. Given a folder of progress files that
learners exported (``exercises.export_progress()``, one JSON file each), or of otter's
grades of their submissions (``results.json`` from ``otter run`` or Gradescope), or
both, this writes, per item: how many learners tried it, the share who solved it, the
share who solved it only after seeing the solution, the median number of wrong tries,
and the named mistakes ranked by how many learners made them; a bar chart per lesson;
and a CSV for the LMS.

    python -m widgets.course report SUBMISSIONS/ OUT/

The folder's files read: every ``*.json`` in it, and ``*/results.json`` one folder down
(otter's one folder per submission). A learner is named by the name they chose
(progress), else by the file's stem, or for ``results.json`` by its folder's name. A
graded submission is read by :mod:`widgets.course.otter_results`: otter grades once, so
there a learner's "wrong tries" at an item are its wrong questions, and whether they saw
the solution is unknown (counted as not). A file that is neither is left out, with a
sentence, and never changed.

Private by design: nothing is sent anywhere, and the report holds no learner's name
unless the instructor asks for it (``--names``), and then only beside each mistake.
"""

from __future__ import annotations

import csv
import html
import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from ..exercises.tracking import LESSONS, MISTAKE, TRIES


@dataclass(frozen=True)
class Learner:
    """One learner: a name (their chosen one, or the file's or folder's name) and every
    item's record, from exported progress, or from otter's grades (``graded``)."""

    name: str
    items: dict
    graded: bool = False


@dataclass
class ItemSummary:
    """What the class did with one item."""

    item: str
    lesson: str
    tried: int = 0
    solved: int = 0
    after_solution: int = 0
    tries: list[int] = field(default_factory=list)
    mistakes: dict[str, list[str]] = field(default_factory=dict)  # mistake -> learners

    @property
    def median_tries(self) -> float | None:
        """The median number of wrong tries among the learners who tried the item."""
        return statistics.median(self.tries) if self.tries else None

    def ranked_mistakes(self) -> list[tuple[str, list[str]]]:
        """The named mistakes, most learners first (ties by name)."""
        return sorted(self.mistakes.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def learner_files(folder: Path) -> list[Path]:
    """The files a report reads in ``folder``: every ``*.json`` in it and every
    ``*/results.json`` one folder down, in order of their paths."""
    found = [*folder.glob("*.json"), *folder.glob("*/results.json")]
    return sorted(found, key=lambda path: path.relative_to(folder).as_posix())


def read_learner(path: Path) -> Learner:
    """The learner of one exported progress file or otter ``results.json``; a ValueError
    saying (in one clause) why it is neither."""
    from .otter_results import is_otter_results, learner_from_results

    name = path.parent.name if path.name == "results.json" else path.stem
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"it is not an exported progress file or otter results "
                         f"({str(error)[:80]})") from None
    if isinstance(data, dict) and isinstance(data.get("items"), dict):
        learner = data.get("learner")
        return Learner(learner if isinstance(learner, str) else name, data["items"])
    if not is_otter_results(data):
        raise ValueError("it is not an exported progress file or otter results (it holds "
                         "neither progress items nor graded tests)")
    try:
        return learner_from_results(data, name)
    except ValueError as error:
        raise ValueError(f"it is otter results the report cannot read ({error})") from None


def read_folder(folder: Path) -> tuple[list[Learner], list[str]]:
    """Every learner in ``folder`` (exported progress files and otter's results, see
    :func:`learner_files`), and a sentence for each file that is neither (it is left out,
    never changed)."""
    learners, skipped = [], []
    for path in learner_files(folder):
        try:
            learners.append(read_learner(path))
        except ValueError as error:
            skipped.append(f"{path.relative_to(folder).as_posix()} was left out: {error}.")
    return learners, skipped


def describe(mistake: str) -> str:
    """``mistake:gradients:dB:transpose`` as a reader says it: ``dB: transpose``."""
    _, _, rest = mistake.partition(MISTAKE)
    check, part, kind = (rest.split(":", 2) + ["", ""])[:3]
    where = part or check
    return f"{where}: {kind.replace('_', ' ')}"


def summarise(learners: list[Learner]) -> list[ItemSummary]:
    """One summary per item, in lesson order, for every item any learner tried."""
    summaries = []
    for number, (_, ids) in LESSONS.items():
        for item in ids:
            s = ItemSummary(item, number)
            for learner in learners:
                entry = learner.items.get(item)
                if not isinstance(entry, dict) or not (entry.get("parts") or entry.get("misses")):
                    continue
                s.tried += 1
                misses = entry.get("misses") or {}
                if entry.get("solved"):
                    s.solved += 1
                    s.after_solution += bool(entry.get("after_solution"))
                s.tries.append(int(misses.get(TRIES, 0)))
                for key in misses:
                    if key.startswith(MISTAKE):
                        s.mistakes.setdefault(describe(key), []).append(learner.name)
            if s.tried:
                summaries.append(s)
    return summaries


def _share(n: int, of: int) -> str:
    return f"{100 * n / of:.0f} %" if of else "–"


def write_csv(summaries: list[ItemSummary], path: Path) -> None:
    """One row per item: the counts, the median tries and the three commonest mistakes."""
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["lesson", "item", "tried", "solved", "solved_after_solution",
                      "median_wrong_tries", "commonest_mistakes"])
        for s in summaries:
            top = "; ".join(f"{m} ({len(who)})" for m, who in s.ranked_mistakes()[:3])
            out.writerow([s.lesson, s.item, s.tried, s.solved, s.after_solution,
                          "" if s.median_tries is None else f"{s.median_tries:g}", top])


def plot_lesson(summaries: list[ItemSummary], path: Path) -> str:
    """A bar chart of one lesson's items (solved alone, solved after the solution, not
    solved), saved to ``path``; returns its text alternative."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [s.item for s in summaries]
    alone = [100 * (s.solved - s.after_solution) / s.tried for s in summaries]
    helped = [100 * s.after_solution / s.tried for s in summaries]
    open_ = [100 - a - h for a, h in zip(alone, helped)]
    fig, ax = plt.subplots(figsize=(max(3.0, 0.6 * len(names)) + 2.6, 3.2), dpi=100)
    ax.bar(names, alone, color="#0072b2", label="solved without the solution")
    ax.bar(names, helped, bottom=alone, color="#e69f00", hatch="//",
           label="solved after the solution")
    ax.bar(names, open_, bottom=[a + h for a, h in zip(alone, helped)], color="#dddddd",
           hatch="..", label="not solved")
    ax.set_ylabel("% of learners who tried")
    ax.set_ylim(0, 100)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=9, frameon=False)
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    return "; ".join(f"{s.item}: {s.solved - s.after_solution} of {s.tried} solved, "
                     f"{s.after_solution} after the solution" for s in summaries)


def learners_text(n: int) -> str:
    """``1 learner`` or ``12 learners``.

    >>> learners_text(1), learners_text(3)
    ('1 learner', '3 learners')
    """
    return f"{n:,} learner" + ("" if n == 1 else "s")


def write_report(learners: list[Learner], out: Path, *, names: bool = False,
                 skipped: list[str] = ()) -> Path:
    """Write ``report.html``, ``report.csv`` and a chart per lesson into ``out``; returns
    the HTML file. With ``names``, each mistake lists who made it."""
    out.mkdir(parents=True, exist_ok=True)
    summaries = summarise(learners)
    write_csv(summaries, out / "report.csv")
    body = [f"<h1>What the class got wrong</h1><p>The work of {learners_text(len(learners))}; "
            f"{len(summaries)} items tried by at least one of them.</p>"]
    graded = sum(learner.graded for learner in learners)
    if graded:
        body.append(f"<p>{graded} of them from otter's grades: otter grades a submission "
                    "once, so their wrong tries at an item are its wrong questions, and "
                    "they count as not having seen the solution.</p>")
    body += [f"<p>{html.escape(sentence)}</p>" for sentence in skipped]
    for number, (title, _) in LESSONS.items():
        lesson = [s for s in summaries if s.lesson == number]
        if not lesson:
            continue
        chart = f"lesson_{number}.png"
        alt = plot_lesson(lesson, out / chart)
        body.append(f"<h2>{number} {html.escape(title)}</h2>"
                    f'<img src="{chart}" alt="{html.escape(alt)}">')
        body.append("<table><thead><tr><th scope='col'>item</th><th scope='col'>tried</th>"
                    "<th scope='col'>solved (in all)</th>"
                    "<th scope='col'>solved after the solution</th>"
                    "<th scope='col'>median wrong tries</th>"
                    "<th scope='col'>named mistakes, most learners first</th>"
                    "</tr></thead><tbody>")
        for s in lesson:
            ranked = "".join(
                f"<li>{html.escape(m)}: {len(who)} learner{'s' if len(who) != 1 else ''}"
                + (f" ({html.escape(', '.join(sorted(set(who))))})" if names else "")
                + "</li>" for m, who in s.ranked_mistakes())
            median = "–" if s.median_tries is None else f"{s.median_tries:g}"
            body.append(f"<tr><th scope='row'>{s.item}</th><td>{s.tried}</td>"
                        f"<td>{_share(s.solved, s.tried)}</td>"
                        f"<td>{_share(s.after_solution, s.tried)}</td><td>{median}</td>"
                        f"<td><ol>{ranked}</ol></td></tr>")
        body.append("</tbody></table>")
    page = out / "report.html"
    page.write_text(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<title>What the class got wrong</title><style>"
        "body{font-family:sans-serif;max-width:70em;margin:2em auto;color:#1a1a1a;"
        "background:#fff}table{border-collapse:collapse}th,td{border:1px solid #767676;"
        "padding:.3em .6em;text-align:left;vertical-align:top}ol{margin:0;padding-left:1.4em}"
        "</style></head><body><main>" + "".join(body) + "</main></body></html>", encoding="utf-8")
    return page
