"""What a class gets wrong: a report over many learners' exported progress or graded work.

Every check names the mistake it found (a transpose, a missing batch sum, a path left
out) and progress counts each named mistake. Given a folder of progress files that
learners exported (``exercises.export_progress()``, one JSON file each), or of otter's
grades of their submissions (``results.json`` from ``otter run`` or Gradescope), or
both, this writes, per item: how many learners tried it, the share who solved it, the
share who solved it only with the skeleton or only after seeing the solution, the median
number of wrong tries, and the named mistakes ranked by how many learners made them; a bar
chart per lesson; and a CSV for the LMS.

    python -m widgets.course report SUBMISSIONS/ OUT/

The folder's files read: every ``*.json`` in it, and ``*/results.json`` one folder down
(otter's one folder per submission). A learner is named by the name they chose
(progress), else by the file's stem, or for ``results.json`` by its folder's name. A
graded submission is read by :mod:`widgets.course.otter_results`: otter grades once, so
there a learner's "wrong tries" at an item are its wrong questions, and whether they saw
the solution or the skeleton is unknown (counted as not: the student build withholds
both). The files are read by
:mod:`widgets.course.report_inputs`: what cannot be read is left out with a sentence, for
that file or field only, and no file is changed.

Each learner who tried an item counts once, in one of five groups that the chart, its text
alternative, the table and the CSV all use: solved without help, solved with the skeleton
(the item's code with blanks: help short of the solution), solved after seeing the
solution, partly solved (some part right, not all), not solved. The report is safe to
open anywhere: its HTML escapes every text, its CSV cells cannot start a spreadsheet
formula, and its charts are drawn without touching matplotlib's global backend (a
notebook's plots after it still show), in light and dark versions for the page's theme.

Private by design: nothing is sent anywhere, and the report holds no learner's name
unless the instructor asks for it (``--names``), and then only beside each mistake.
"""

from __future__ import annotations

import csv
import html
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from ..exercises.tracking import LESSONS, MISTAKE, TRIES
from .report_inputs import Learner


@dataclass
class ItemSummary:
    """What the class did with one item."""

    item: str
    lesson: str
    tried: int = 0
    solved: int = 0
    after_solution: int = 0
    with_skeleton: int = 0  # solved after reading the skeleton, but not the solution
    partly: int = 0  # not solved, but some part right at least once
    tries: list[int] = field(default_factory=list)
    mistakes: dict[str, list[str]] = field(default_factory=dict)  # mistake -> learners

    @property
    def median_tries(self) -> float | None:
        """The median number of wrong tries among the learners who tried the item."""
        return statistics.median(self.tries) if self.tries else None

    @property
    def alone(self) -> int:
        """Learners who solved it without help: neither the skeleton nor the solution."""
        return self.solved - self.after_solution - self.with_skeleton

    @property
    def not_solved(self) -> int:
        """Learners who tried it and got no part right."""
        return self.tried - self.solved - self.partly

    def ranked_mistakes(self) -> list[tuple[str, list[str]]]:
        """The named mistakes, most learners first (ties by name)."""
        return sorted(self.mistakes.items(), key=lambda kv: (-len(kv[1]), kv[0]))


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
                    after = bool(entry.get("after_solution"))
                    s.after_solution += after
                    s.with_skeleton += bool(entry.get("after_help")) and not after
                elif any(part.get("ever") for part in (entry.get("parts") or {}).values()):
                    s.partly += 1
                s.tries.append(int(misses.get(TRIES, 0)))
                for key in misses:
                    if key.startswith(MISTAKE):
                        s.mistakes.setdefault(describe(key), []).append(learner.name)
            if s.tried:
                summaries.append(s)
    return summaries


def _share(n: int, of: int) -> str:
    """``28 of 32 (88 %)``."""
    return f"{n} of {of} ({100 * n / of:.0f} %)" if of else "–"


def counted(n: int, word: str) -> str:
    """``1 item``, ``3 items``.

    >>> counted(1, "item"), counted(3, "learner")
    ('1 item', '3 learners')
    """
    return f"{n:,} {word}" + ("" if n == 1 else "s")


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # OWASP's CSV-injection list


def csv_cell(value: object) -> object:
    """A value as a CSV cell no spreadsheet runs: text that starts like a formula gets a
    leading apostrophe (OWASP's rule), so ``=cmd|...`` shows as text."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_csv(summaries: list[ItemSummary], path: Path) -> None:
    """One row per item: the counts, the median tries and the three commonest mistakes."""
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["lesson", "item", "tried", "solved", "solved_with_skeleton",
                      "solved_after_solution",
                      "partly_solved", "not_solved", "median_wrong_tries",
                      "commonest_mistakes"])
        for s in summaries:
            top = "; ".join(f"{m} ({len(who)})" for m, who in s.ranked_mistakes()[:3])
            row = [s.lesson, s.item, s.tried, s.solved, s.with_skeleton, s.after_solution,
                   s.partly,
                   s.not_solved, "" if s.median_tries is None else f"{s.median_tries:g}", top]
            out.writerow([csv_cell(value) for value in row])


# the chart's five groups: label, colour in the light and the dark theme, hatch (so
# that no group is told by colour alone)
GROUPS = (("solved without help", "#0072b2", "#56b4e9", ""),
          ("solved with the skeleton", "#56b4e9", "#9ad0f0", "\\\\"),
          ("solved after the solution", "#e69f00", "#e69f00", "//"),
          ("partly solved", "#009e73", "#2fc49a", "xx"),
          ("not solved", "#dddddd", "#4a4a4a", ".."))
THEMES = {"light": ("#ffffff", "#1a1a1a"), "dark": ("#1e1e1e", "#e8e8e8")}


def chart_text(summaries: list[ItemSummary]) -> str:
    """The chart's text alternative: each item's five groups, counted as in the table."""
    return "; ".join(f"{s.item}: of {counted(s.tried, 'learner')} who tried it, {s.alone} "
                     f"solved it without help, {s.with_skeleton} with the skeleton, "
                     f"{s.after_solution} after the solution, {s.partly} partly, "
                     f"{s.not_solved} not" for s in summaries)


def plot_lesson(summaries: list[ItemSummary], path: Path, theme: str = "light") -> str:
    """A bar chart of one lesson's items (the five groups of the module docstring, as
    shares of the learners who tried each), in ``theme``'s colours, saved to ``path``;
    returns its text alternative. It draws on a figure of its own: matplotlib's global
    backend and pyplot's state are left as they were."""
    from matplotlib.figure import Figure

    background, ink = THEMES[theme]
    names = [s.item for s in summaries]
    counts = [[s.alone, s.with_skeleton, s.after_solution, s.partly, s.not_solved]
              for s in summaries]
    fig = Figure(figsize=(max(3.0, 0.6 * len(names)) + 2.6, 3.2), dpi=100,
                 facecolor=background)
    ax = fig.subplots()
    ax.set_facecolor(background)
    bottom = [0.0] * len(names)
    for k, (label, light, dark, hatch) in enumerate(GROUPS):
        share = [100 * c[k] / s.tried for c, s in zip(counts, summaries)]
        ax.bar(names, share, bottom=bottom, color=light if theme == "light" else dark,
               hatch=hatch, edgecolor=ink, linewidth=0.4, label=label)
        bottom = [b + v for b, v in zip(bottom, share)]
    ax.set_ylabel("% of learners who tried", color=ink)
    ax.set_ylim(0, 100)
    ax.tick_params(colors=ink)
    for spine in ax.spines.values():
        spine.set_color(ink)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=9, frameon=False,
              labelcolor=ink)
    fig.savefig(path, bbox_inches="tight", facecolor=background)
    return chart_text(summaries)


def write_report(learners: list[Learner], out: Path, *, names: bool = False,
                 skipped: list[str] = ()) -> Path:
    """Write ``report.html``, ``report.csv`` and a chart per lesson into ``out``; returns
    the HTML file. With ``names``, each mistake lists who made it."""
    out.mkdir(parents=True, exist_ok=True)
    summaries = summarise(learners)
    write_csv(summaries, out / "report.csv")
    body = [f"<h1>What the class got wrong</h1><p>The work of {counted(len(learners), 'learner')}; "
            f"{counted(len(summaries), 'item')} tried by at least one of them. Each learner "
            "who tried an item counts once: solved without help, solved with the skeleton "
            "(code with blanks to fill), solved after seeing the solution, partly solved "
            "(some part right, not all), or not solved.</p>"]
    graded = sum(learner.graded for learner in learners)
    if graded:
        body.append(f"<p>{graded} of them from otter's grades: otter grades a submission "
                    "once, so their wrong tries at an item are its wrong questions, and "
                    "they count as having seen neither the skeleton nor the solution (the "
                    "student build withholds both).</p>")
    body += [f"<p>{html.escape(sentence)}</p>" for sentence in skipped]
    for number, (title, _) in LESSONS.items():
        lesson = [s for s in summaries if s.lesson == number]
        if not lesson:
            continue
        chart, dark = f"lesson_{number}.png", f"lesson_{number}_dark.png"
        alt = plot_lesson(lesson, out / chart)
        plot_lesson(lesson, out / dark, theme="dark")
        body.append(f"<h2>{number} {html.escape(title)}</h2>"
                    f'<picture><source media="(prefers-color-scheme: dark)" srcset="{dark}">'
                    f'<img src="{chart}" alt="{html.escape(alt)}"></picture>')
        body.append("<div class='scroll' role='region' tabindex='0' "
                    f"aria-label='lesson {number}, item by item'>"
                    "<table><thead><tr><th scope='col'>item</th><th scope='col'>tried</th>"
                    "<th scope='col'>solved (in all)</th>"
                    "<th scope='col'>of them after the solution</th>"
                    "<th scope='col'>of them with the skeleton</th>"
                    "<th scope='col'>partly solved</th><th scope='col'>not solved</th>"
                    "<th scope='col'>median wrong tries</th>"
                    "<th scope='col'>named mistakes, most learners first</th>"
                    "</tr></thead><tbody>")
        for s in lesson:
            ranked = "".join(
                f"<li>{html.escape(m)}: {counted(len(who), 'learner')}"
                + (f" ({html.escape(', '.join(sorted(set(who))))})" if names else "")
                + "</li>" for m, who in s.ranked_mistakes())
            median = "–" if s.median_tries is None else f"{s.median_tries:g}"
            body.append(f"<tr><th scope='row'>{s.item}</th><td>{s.tried}</td>"
                        f"<td>{_share(s.solved, s.tried)}</td><td>{s.after_solution}</td>"
                        f"<td>{s.with_skeleton}</td>"
                        f"<td>{_share(s.partly, s.tried)}</td>"
                        f"<td>{_share(s.not_solved, s.tried)}</td><td>{median}</td>"
                        f"<td><ol>{ranked}</ol></td></tr>")
        body.append("</tbody></table></div>")
    page = out / "report.html"
    page.write_text(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<title>What the class got wrong</title><style>"
        "body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 1em;"
        "color:#1a1a1a;background:#fff}table{border-collapse:collapse}"
        "th,td{border:1px solid #767676;padding:.3em .6em;text-align:left;vertical-align:top}"
        "ol{margin:0;padding-left:1.4em}img{max-width:100%;height:auto}"
        ".scroll{overflow-x:auto;max-width:100%}.scroll table{min-width:44em}"
        ".scroll:focus{outline:2px solid #0072b2}"
        "@media (prefers-color-scheme: dark){body{color:#e8e8e8;background:#1e1e1e}"
        "th,td{border-color:#8c8c8c}.scroll:focus{outline-color:#56b4e9}}"
        "</style></head><body><main>" + "".join(body) + "</main></body></html>", encoding="utf-8")
    return page
