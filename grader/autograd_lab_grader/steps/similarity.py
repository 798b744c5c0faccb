"""Which learners of a lesson handed in answers alike beyond chance: evidence for the
instructor to read, never a verdict.

Each learner's answer cells (the code cells the release leaves for them to write, found by
their nbgrader ids in the release, and the code cells they added) are fingerprinted with
copydetect (winnowed k-grams of the code as Python's tokens, every name and string replaced
by one letter, so a renamed variable or a rewritten comment changes nothing). What every
answer shares by right is left out first: the lesson's given code (every code cell of the
release, the parts of an answer cell it gives included) and the model solution's code, so
two learners who both wrote the model answer are not alike through it. Cells are compared
with the same cell of the other learner; a side's share is the part of its own remaining code
that the other holds too (copydetect's per-file similarity, summed over the cells, out of at
least ``MIN_CODE`` tokens), and a pair's similarity is the lower of the two.

Chance: in any class most pairs share a little (the same idioms for the same task). A pair is
named alike beyond chance when its similarity stands above the class's own spread
(``threshold``: the median of all pairs plus six times their median absolute deviation, and
at least ``FLOOR``), so the line moves with the lesson and the class. The page
(``reports/<lesson>-similarity.html``) shows those pairs first, then the next ones, each with
the shared code marked side by side; it runs no script and fetches nothing (the report's
content security policy), and every learner's text on it is escaped.

Everything read here is the learners': a notebook is read at most ``MAX_NOTEBOOK`` bytes,
never followed as a link, and an answer's code is cut at ``MAX_CODE`` characters.
"""
from __future__ import annotations

import html
import os
import stat
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from ..course import Course
from ..gradebook import status
from ..reading import page

K, WINDOW = 25, 1           # copydetect's noise threshold (25 tokens), every k-gram kept
FLOOR = 0.5                 # no pair below this is named, however alike the class is
MAX_NOTEBOOK = 32 * 1024**2
MAX_CODE = 100_000
SHOWN = 10                  # pairs shown on the page beyond those named


@dataclass
class Pair:
    a: str
    b: str
    similarity: float                   # the lower of the two sides' shares
    shares: tuple[float, float]         # each side's share the other holds
    slices: dict = field(default_factory=dict)    # cell -> copydetect's slices of each side
    beyond: bool = False


@dataclass
class Similarity:
    lesson: str
    learners: list[str] = field(default_factory=list)
    code: dict[str, dict[str, str]] = field(default_factory=dict)   # student -> cell -> code
    pairs: list[Pair] = field(default_factory=list)       # every pair, most alike first
    threshold: float = FLOOR
    median: float = 0.0
    unread: list[tuple[str, str]] = field(default_factory=list)    # student, why

    @property
    def named(self) -> list[Pair]:
        return [p for p in self.pairs if p.beyond]


def _read_notebook(path: Path):
    import nbformat

    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ValueError("not a regular file")
        data = f.read(MAX_NOTEBOOK + 1)
    if len(data) > MAX_NOTEBOOK:
        raise ValueError(f"larger than {MAX_NOTEBOOK // 1024**2} MB")
    return nbformat.reads(data.decode("utf-8", errors="replace"), as_version=4)


def _source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _given(course: Course, lesson: str) -> tuple[list[str], dict[str, str]]:
    """(the answer cells' ids, in the release's order; for each and for the cells a learner
    adds (``ADDED``), the code every answer shares by right: the release's code cells and the
    model solution's code of that cell)."""
    import nbformat

    release = nbformat.read(course.directory("release") / lesson / f"{lesson}.ipynb",
                            as_version=4)
    answers, code = [], []
    for cell in release.cells:
        if cell.cell_type != "code":
            continue
        code.append(_source(cell))
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id"):
            answers.append(meta["grade_id"])
    given = {g: list(code) for g in answers + [ADDED]}
    solution = course.directory("source") / lesson / f"{lesson}.ipynb"
    if solution.is_file():
        for cell in nbformat.read(solution, as_version=4).cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in answers:
                model = (_source(cell).replace("### BEGIN SOLUTION", "")
                         .replace("### END SOLUTION", ""))
                given[grade_id].append(model)
                given[ADDED].append(model)
    return answers, {g: "\n\n".join(parts) for g, parts in given.items()}


ADDED = "(cells the learner added)"


def answer_cells(nb, answers: list[str], given: dict[str, str]) -> dict[str, str]:
    """A learner's answer cells by id, in the release's order, and the code cells they added
    (``ADDED``: none of the release's own), each at most MAX_CODE characters."""
    by_id, added = {}, []
    release_code = given.get(ADDED, "")
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        grade_id = (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")
        source = _source(cell)
        if grade_id in answers and grade_id not in by_id:
            by_id[grade_id] = source[:MAX_CODE]
        elif not grade_id and source.strip() and source not in release_code:
            added.append(source)
    cells = {g: by_id[g] for g in answers if g in by_id}
    if added:
        cells[ADDED] = "\n\n".join(added)[:MAX_CODE]
    return cells


def threshold(scores: list[float]) -> tuple[float, float]:
    """(the line above which a pair is alike beyond the class's chance, the median)."""
    if not scores:
        return FLOOR, 0.0
    median = statistics.median(scores)
    spread = statistics.median(abs(s - median) for s in scores)
    return max(FLOOR, median + 6 * spread), median


def _compare(cells_a: dict, cells_b: dict):
    """(the lower share, each side's share, {cell: (slices of a, slices of b)}) of two
    learners' fingerprinted cells, cell by cell: a side's share is the part of its own
    answer code (beyond the given) that the other's same cell holds too, out of at least
    MIN_CODE (a few lines of its own are not enough to be alike)."""
    from copydetect import compare_files

    shared, own, slices = [0.0, 0.0], [0.0, 0.0], {}
    for cell in set(cells_a) | set(cells_b):
        for side, prints in enumerate((cells_a, cells_b)):
            if cell in prints:
                own[side] += prints[cell].token_coverage
    for cell in set(cells_a) & set(cells_b):
        fa, fb = cells_a[cell], cells_b[cell]
        if not (fa.hashes & fb.hashes) or not fa.token_coverage or not fb.token_coverage:
            continue
        _, shares, cut = compare_files(fa, fb)
        shared[0] += shares[0] * fa.token_coverage
        shared[1] += shares[1] * fb.token_coverage
        slices[cell] = cut
    each = tuple(float(shared[i] / max(own[i], MIN_CODE)) for i in (0, 1))
    return min(each), each, slices


MIN_CODE = 100              # tokens of a learner's own answer code a share is taken of, at least


def similarity(course: Course, lesson: str) -> Similarity:
    from copydetect import CodeFingerprint
    import io
    import numpy as np

    result = Similarity(lesson)
    answers, given = _given(course, lesson)
    boilerplate = {cell: np.array(sorted(CodeFingerprint(
        "given.py", K, 1, fp=io.StringIO(code), language="python").hashes))
        for cell, code in given.items()}
    out = set(status.read_dropped(course))
    prints = {}
    for student in course.students_with(lesson):
        if student in out:
            continue
        path = course.submission(lesson, student) / f"{lesson}.ipynb"
        try:
            nb = _read_notebook(path)
        except Exception as error:              # the learner's file: any way it can be wrong
            result.unread.append((student, f"{type(error).__name__}: {str(error)[:200]}"))
            continue
        cells = answer_cells(nb, answers, given)
        result.learners.append(student)
        result.code[student] = cells
        prints[student] = {cell: CodeFingerprint(f"{student}.py", K, WINDOW,
                                                 boilerplate=boilerplate[cell],
                                                 fp=io.StringIO(code), language="python")
                           for cell, code in cells.items()}
    students = result.learners
    for i, a in enumerate(students):
        for b in students[i + 1:]:
            alike, shares, slices = _compare(prints[a], prints[b])
            result.pairs.append(Pair(a, b, alike, shares, slices))
    result.pairs.sort(key=lambda p: (-p.similarity, p.a, p.b))
    result.threshold, result.median = threshold([p.similarity for p in result.pairs])
    for pair in result.pairs:
        pair.beyond = pair.similarity >= result.threshold and pair.similarity > 0
    return result


_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 80em; color: #222; }
section { border-top: 1px solid #ccc; margin-top: 1.5em; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
pre { background: #f6f6f6; padding: .6em; overflow-x: auto; white-space: pre-wrap; }
mark { background: #ffe08a; }
.beyond { color: #b3261e; font-weight: 600; }
"""


def _marked(code: str, slices) -> str:
    """`code` escaped, the shared slices in <mark>."""
    from copydetect.utils import highlight_overlap

    if slices is None or len(slices) == 0 or slices.shape[-1] == 0:
        return html.escape(code)
    marked, _ = highlight_overlap(code, slices, "\x00", "\x01", escape_html=True)
    return marked.replace("\x00", "<mark>").replace("\x01", "</mark>")


def render(result: Similarity, names: dict[str, str]) -> str:
    e = html.escape

    def who(student):
        return e(student) + (f" ({e(names[student])})" if names.get(student) else "")

    named = result.named
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>",
        f'<meta http-equiv="Content-Security-Policy" content="{e(page.CSP, quote=False)}">',
        '<meta charset="utf-8">', f"<title>{e(result.lesson)}: answers alike</title>",
        f'<style type="text/css">{_STYLE}</style>', "</head>", "<body>", "<main>",
        f"<h1>{e(result.lesson)}: answers alike</h1>",
        f"<p>{len(result.learners)} learners' answer cells compared, "
        f"{len(result.pairs)} pairs; the lesson's given code and the model solution's code "
        f"are left out. Half the pairs share {result.median:.0%} or less; "
        f"{len(named)} pair(s) share {result.threshold:.0%} or more, beyond this class's "
        "chance. This is evidence to read, not a verdict: learners who worked together as "
        "allowed, or followed the same worked example, look alike too; ask them before "
        "deciding anything. This page is yours: do not hand it out.</p>",
    ]
    if result.unread:
        parts.append("<p>Not read: " + "; ".join(f"{e(s)}: {e(w)}" for s, w in result.unread)
                     + "</p>")
    for pair in result.pairs[:len(named) + SHOWN]:
        if pair.similarity <= 0:
            break
        mark = ' <span class="beyond">beyond chance</span>' if pair.beyond else ""
        cells = []
        for cell, (cut_a, cut_b) in sorted((pair.slices or {}).items()):
            sides = "".join(
                f"<div><h4>{who(student)}</h4>"
                f"<pre>{_marked(result.code[student].get(cell, ''), cut)}</pre></div>"
                for student, cut in ((pair.a, cut_a), (pair.b, cut_b)))
            cells.append(f"<h3>{e(cell)}</h3><div class=\"sides\">{sides}</div>")
        parts.append(f'<section id="pair-{e(pair.a)}-{e(pair.b)}"><h2>{who(pair.a)} and '
                     f"{who(pair.b)}: {pair.similarity:.0%}{mark}</h2>"
                     f"<p>Shared: {pair.shares[0]:.0%} of {e(pair.a)}'s own answer code, "
                     f"{pair.shares[1]:.0%} of {e(pair.b)}'s.</p>{''.join(cells)}</section>")
    parts += ["</main>", "</body>", "</html>", ""]
    return "\n".join(parts)


def write_page(course: Course, result: Similarity, path: Path | None = None) -> Path:
    from ..steps.roster import names

    path = Path(path or course.root / "reports" / f"{result.lesson}-similarity.html")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(result, names(course)), encoding="utf-8")
    return path
