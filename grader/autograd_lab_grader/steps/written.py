"""Written answers, one question at a time across the class: an HTML page per hand-graded
question (as otter's written-answer export makes a PDF of them), for reading every learner's
answer to one question together before typing the scores into nbgrader's formgrader.

A page holds the question as the release asks it, the model answer from ``solutions/`` (its
rubric), and then each learner's answer as graded (the autograded notebook, what the formgrader
shows), those that wait for a hand grade first: who wrote it, and its hand grade, "not graded
yet", or nbgrader's "no response" for an answer left as released. It is the instructor's page
(the model answer is on it) and, like a feedback page (page.py), the learners' text on it is
hostile: Markdown through ``page.safe_markdown``, code and names escaped, a content security
policy that runs no script and fetches nothing.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..reading import page
from ..gradebook import status
from ..gradebook.outcome import display_name, outcomes
from ..course import Course


@dataclass
class Answer:
    student: str
    name: str
    source: str
    markdown: bool
    score: float | None          # the hand grade, or nbgrader's own score of an empty answer
    waiting: bool                # no hand grade yet, and nbgrader asks for one
    unanswered: bool             # left as released ("No response." in nbgrader)
    comment: str = ""


@dataclass
class Question:
    name: str                    # the answer cell's grade_id
    max_score: float
    prompt: str = ""             # the release's Markdown just before the answer
    model: str = ""              # the solution's answer (its rubric)
    answers: list[Answer] = field(default_factory=list)


def _cells(path: Path) -> list:
    try:
        return nbformat.read(path, as_version=4).cells
    except Exception:
        return []


def _grade_id(cell) -> str | None:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
    return grade_id if isinstance(grade_id, str) else None


def _prompts(cells) -> dict[str, str]:
    """grade_id -> the Markdown cells between the previous nbgrader cell and it."""
    found, since = {}, []
    for cell in cells:
        grade_id = _grade_id(cell)
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if grade_id and (meta.get("grade") or meta.get("solution")):
            found[grade_id] = "\n\n".join(since)
            since = []
        elif cell.cell_type == "markdown":
            since.append(cell.source)
    return found


def hand_graded(course: Course, lesson: str) -> list[tuple[str, str, float]]:
    """(notebook, grade_id, points) of every answer a person grades: an nbgrader cell that is
    both graded and an answer (solution), in the lesson's order."""
    with course.gradebook() as gb:
        found = []
        for notebook in gb.find_assignment(lesson).notebooks:
            answers = {c.name for c in notebook.solution_cells}
            found += [(notebook.name, c.name, c.max_score) for c in notebook.grade_cells
                      if c.name in answers]
    release = {_grade_id(c): i for i, c in
               enumerate(_cells(course.directory("release") / lesson / f"{lesson}.ipynb"))}
    return sorted(found, key=lambda q: release.get(q[1], len(release)))


def questions(course: Course, lesson: str) -> list[Question]:
    """Every hand-graded question of `lesson`, with the answer of every learner graded."""
    asked = hand_graded(course, lesson)
    release = _prompts(_cells(course.directory("release") / lesson / f"{lesson}.ipynb"))
    models = {_grade_id(c): c.source
              for c in _cells(course.directory("source") / lesson / f"{lesson}.ipynb")}
    result = {name: Question(name, points, release.get(name, ""), models.get(name, ""))
              for _, name, points in asked}
    graded = [o for o in outcomes(course, [lesson]) if o.status in (status.GRADED, status.MANUAL)]
    with course.gradebook() as gb:
        for out in graded:
            for notebook, name, _ in asked:
                path = course.directory("autograded") / out.student / lesson / f"{notebook}.ipynb"
                cell = next((c for c in _cells(path) if _grade_id(c) == name), None)
                if cell is None:
                    continue
                grade = gb.find_grade(name, notebook, lesson, out.student)
                comment = gb.find_comment(name, notebook, lesson, out.student)
                waiting = grade.manual_score is None and grade.needs_manual_grade
                result[name].answers.append(Answer(
                    out.student, out.name, cell.source, cell.cell_type == "markdown",
                    None if waiting else grade.score, waiting,
                    (comment.auto_comment or "").startswith("No response"),
                    comment.manual_comment or ""))
    for question in result.values():
        question.answers.sort(key=lambda a: (not a.waiting, a.unanswered, a.student))
    return list(result.values())


_STYLE = """
body { font-family: system-ui, sans-serif; font-size: 15px; line-height: 1.45; margin: 0;
       color: #1d1d1d; background: #fafafa; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem; }
section { border: 1px solid #9ab; border-radius: 4px; background: white; margin: 0.8rem 0; }
section > h2 { font-size: 1rem; background: #e8eef3; margin: 0; padding: 0.3rem 0.6rem;
               display: flex; justify-content: space-between; }
section > div { padding: 0.3rem 0.6rem; }
.question, .model { background: #f4f4f4; }
.pending { color: #8a5a00; font-weight: bold; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; }
img { max-width: 100%; }
"""


def _points(x: float | None) -> str:
    return "" if x is None else f"{x:g}"


def _shown(source: str, markdown: bool) -> str:
    if markdown:
        return page.safe_markdown(source)
    return f"<pre>{html.escape(source)}</pre>"


def render(lesson: str, question: Question) -> str:
    """The page of one question (see the module's docstring)."""
    e = html.escape
    waiting = sum(a.waiting for a in question.answers)
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>",
        f'<meta http-equiv="Content-Security-Policy" content="{e(page.CSP, quote=False)}">',
        '<meta charset="utf-8">',
        f"<title>{e(lesson)}: {e(question.name)}</title>",
        f'<style type="text/css">{_STYLE}</style>', "</head>", "<body>", "<main>",
        f"<h1>{e(lesson)}: {e(question.name)} ({_points(question.max_score)} points)</h1>",
        f"<p>{len(question.answers)} answers, {waiting} waiting for a hand grade (listed "
        "first). Type each score in nbgrader's formgrader.</p>",
    ]
    if question.prompt:
        parts.append(f'<section><h2>The question</h2><div class="question">'
                     f"{page.safe_markdown(question.prompt)}</div></section>")
    if question.model:
        model = re.sub(r"^\s*### (BEGIN|END) SOLUTION\s*$", "", question.model, flags=re.M)
        parts.append(f'<section><h2>The model answer</h2><div class="model">'
                     f"{_shown(model.strip(), True)}</div></section>")
    for answer in question.answers:
        if answer.waiting:
            said = '<span class="pending">not graded yet</span>'
        else:
            said = (f"{_points(answer.score)} / {_points(question.max_score)}"
                    + (" (no response)" if answer.unanswered else ""))
        who = e(answer.student) + (f" &mdash; {e(answer.name)}" if answer.name else "")
        parts.append(f'<section id="learner-{e(answer.student)}"><h2><span>{who}</span>'
                     f"<span>{said}</span></h2><div>{_shown(answer.source, answer.markdown)}"
                     "</div>")
        if answer.comment.strip():
            parts.append(f"<div><em>Comment:</em> {e(answer.comment)}</div>")
        parts.append("</section>")
    parts += ["</main>", "</body>", "</html>", ""]
    return "\n".join(parts)


def write_pages(course: Course, lesson: str, folder: Path | None = None) -> list[Path]:
    """reports/<lesson>-written/<question>.html for every hand-graded question of `lesson`."""
    folder = Path(folder or course.root / "reports" / f"{lesson}-written")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for question in questions(course, lesson):
        name = re.sub(r"[^A-Za-z0-9_-]", "_", question.name) or "question"
        path = folder / f"{name}.html"
        path.write_text(render(lesson, question), encoding="utf-8")
        written.append(path)
    return written


def render_hidden(lesson: str, found: dict[str, str], names: dict[str, str]) -> str:
    """The instructor's page of what the hidden tests of ``lesson`` found, per learner (their
    inputs, expected and found values): what no learner's page shows."""
    e = html.escape
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>",
        f'<meta http-equiv="Content-Security-Policy" content="{e(page.CSP, quote=False)}">',
        '<meta charset="utf-8">', f"<title>{e(lesson)}: what the hidden tests found</title>",
        f'<style type="text/css">{_STYLE}</style>', "</head>", "<body>", "<main>",
        f"<h1>{e(lesson)}: what the hidden tests found</h1>",
        f"<p>{len(found)} learners with a hidden test that failed or spoke. Their pages say "
        "only which check failed and the misconception it points to; this page is yours (it "
        "holds the hidden cases): do not hand it out.</p>",
    ]
    for student in sorted(found):
        who = e(student) + (f" &mdash; {e(names[student])}" if names.get(student) else "")
        parts.append(f'<section id="learner-{e(student)}"><h2><span>{who}</span></h2>'
                     f"<div><pre>{e(found[student])}</pre></div></section>")
    parts += ["</main>", "</body>", "</html>", ""]
    return "\n".join(parts)


def write_hidden_page(course: Course, lesson: str, folder: Path | None = None) -> Path:
    """reports/<lesson>-hidden-tests.html: what each learner's hidden tests found."""
    found = {student: row.hidden for (_, student), row
             in status.read(course, lesson).items() if row.hidden.strip()}
    with course.gradebook() as gb:
        names = {s.id: display_name(s) for s in gb.students}
    folder = Path(folder or course.root / "reports")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{lesson}-hidden-tests.html"
    path.write_text(render_hidden(lesson, found, names), encoding="utf-8")
    return path
