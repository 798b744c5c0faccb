"""Grades out: one row per learner and lesson, with a status, so a failure is never read as 0.

Who: every learner nbgrader knows (the roster, and anyone graded), everyone with a folder in
submitted/, and anyone whose submission failed before nbgrader saw it, but a learner taken
out of the term (``autograd-lab drop``: their files and grades stay, in no file). Which lessons: those
asked for, else every lesson anything was collected or graded for (a lesson released but
never assigned is not eight rows of ``missing``).

Each (learner, lesson) has one status, read afresh from nbgrader's gradebook, so that hand
grades entered in the formgrader (or through nbgrader's API) count at once, without grading
again:
  - ``graded``: every cell has a score (a hand grade included); the score is nbgrader's, less
    its late penalty;
  - ``needs manual grading``: a written answer has no hand grade yet (its score is not 0: it is
    empty, and so is the total);
  - ``failed`` (the reason): grading failed, or collect refused the file; no score;
  - ``missing``: nothing handed in;
  - ``not graded yet``: collected, but not graded since (run ``grade``).

grades.csv     a row per learner and lesson: name, status, score, max, late penalty, reason,
               what the grading sandbox refused (or that it was off), and whether the grader
               flagged the submission as a forgery (``yes``), and why
questions.csv  a row per learner, lesson and question (nbgrader grade cell)
The two LMSs take their own files back (``lms/``): ``canvas.fill_gradebook`` fills the
lesson's column of Canvas's gradebook export, ``moodle.fill_worksheet`` the Grade and Feedback
comments of Moodle's grading worksheet; every other cell is kept as it was, and a learner left
empty is listed with why (``why_empty``), a late one with how late (``how_late``).

Every CSV is written by ``write_csv``: a learner chooses their own name on many LMSs, and a
spreadsheet reads a cell starting with = + - @ (or a tab or carriage return) as a formula, so
such a text cell gets a leading ``'`` (OWASP's advice on CSV injection); a number (``-1.5``)
and an id (digits) are written as they are, so the LMS still reads its file back.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import timezone
from pathlib import Path

from nbgrader.api import MissingEntry

from ..gradebook import late as lateness, status
from ..reading.plain import printable
from ..course import Course
from ..lms import display_name

GRADES = ("student", "name", "lesson", "status", "score", "max_score", "late", "late_penalty",
          "submitted", "due", "reason", "sandbox", "forgery", "forgery_reason")
QUESTIONS = ("student", "lesson", "question", "status", "score", "max_score")
_KNOWN = {"lesson", "student", "status", "reason", "score", "max_score", "seconds", "graded_at",
          "sandbox", "forgery", "forgery_reason", "hidden"}


_FORMULA = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def cell(value):
    """A CSV cell a spreadsheet shows as text, never runs as a formula: a text that starts
    like one gets a leading ``'``; a plain number stays a number. No control character but
    newline and tab is in it (``plain.printable``): a CSV is read in a terminal too."""
    if not isinstance(value, str):
        return value
    value = printable(value)
    if value.startswith(_FORMULA) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def write_csv(path: Path, table, *, bom: bool = False, newline: str = "\r\n") -> Path:
    """Write rows (lists of cells) as CSV, every cell through ``cell``: the one way this
    package writes a CSV."""
    out = io.StringIO()
    csv.writer(out, lineterminator=newline).writerows([cell(c) for c in row] for row in table)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_bytes((b"\xef\xbb\xbf" if bom else b"") + out.getvalue().encode("utf-8"))
    return Path(path)


def show_number(value):
    return "" if value is None else f"{round(value, 4):g}"


def _last_change(folder: Path) -> float | None:
    if not folder.is_dir():
        return None
    return max((p.stat().st_mtime for p in folder.rglob("*")), default=folder.stat().st_mtime)


def lessons(course: Course, wanted: list[str] | None = None) -> list[str]:
    """The lessons to export: `wanted`, else those with anything collected or graded."""
    known = course.lessons()
    if wanted:
        unknown = [l for l in wanted if l not in known]
        if unknown:
            raise ValueError(f"no lesson {', '.join(unknown)} in this course ({', '.join(known)})")
        return list(wanted)
    used = {lesson for lesson, _ in status.read(course)}
    used |= {lesson for lesson, _ in status.read_refusals(course)}
    submitted = course.directory("submitted")
    if submitted.is_dir():
        used |= {p.name for folder in submitted.iterdir() if folder.is_dir()
                 for p in folder.iterdir() if p.is_dir()}
    with course.gradebook() as gb:
        used |= {a.name for a in gb.assignments if a.num_submissions}
    return [lesson for lesson in known if lesson in used]


@dataclass
class Outcome:
    student: str
    name: str
    lesson: str
    status: str
    score: float | None = None          # after nbgrader's late penalty
    max_score: float | None = None
    late_penalty: float | None = None
    reason: str = ""
    sandbox: str = ""
    forgery: bool = False               # the grader found the submission forging its grade
    forgery_reason: str = ""            # why (the grader's words)
    awaiting: list[str] = field(default_factory=list)   # written answers with no hand grade
    questions: list[dict] = field(default_factory=list)
    extra: dict = field(default_factory=dict)           # further status columns, as recorded
    when: lateness.Lateness | None = None               # submitted, due (their own), late
    comments: list[tuple[str, str]] = field(default_factory=list)   # (cell, the grader's comment)

    @property
    def late(self) -> bool | None:
        return self.when.late if self.when is not None else None

    @property
    def has_score(self) -> bool:
        return self.status == status.GRADED


def outcomes(course: Course, wanted: list[str] | None = None) -> list[Outcome]:
    """Every learner's outcome for every lesson exported, sorted by lesson then student."""
    chosen = lessons(course, wanted)
    recorded = status.read(course)
    refused = status.read_refusals(course)
    submitted = course.directory("submitted")
    on_disk = {p.name for p in submitted.iterdir() if p.is_dir()} if submitted.is_dir() else set()
    result = []
    policy = lateness.Policy(course)
    extended = lateness.read_extensions(course)
    with course.gradebook() as gb:
        names = {s.id: display_name(s) for s in gb.students}
        # (a learner taken out of the term is in no export, count or warning: status.drop)
        learners = sorted((set(names) | on_disk | {s for _, s in recorded}
                           | {s for _, s in refused}) - set(status.read_dropped(course)))
        for lesson in chosen:
            try:
                assignment = gb.find_assignment(lesson)
            except MissingEntry:
                assignment = None
            for student in learners:
                outcome = _outcome(course, gb, assignment, lesson, student,
                                   recorded.get((lesson, student)), refused.get((lesson, student)),
                                   policy, extended.get((lesson, student)))
                outcome.name = names.get(student, "")
                result.append(outcome)
    return result


def _outcome(course, gb, assignment, lesson, student, row, refusal, policy=None,
             extension=None) -> Outcome:
    out = Outcome(student, "", lesson, status.MISSING, reason="no submission",
                  max_score=assignment.max_score if assignment else None)
    due = extension or (assignment.duedate if assignment is not None else None)
    submitted = lateness.submitted_at(course.submission(lesson, student))
    if submitted is not None or extension is not None:
        out.when = lateness.Lateness(submitted, due, extended=extension is not None)
    if row is not None:
        out.sandbox = row.get("sandbox") or ""
        out.forgery = bool(row.get("forgery"))
        out.forgery_reason = row.get("forgery_reason") or ""
        out.extra = {k: v for k, v in row.items() if k not in _KNOWN}
    changed = _last_change(course.submission(lesson, student))
    if changed is not None and row is not None and row["status"] != status.MISSING and \
            changed > row["graded_at"].replace(tzinfo=timezone.utc).timestamp():
        out.status, out.reason = status.UNGRADED, "collected again since it was graded"
        return out
    if row is not None and row["status"] == status.FAILED:
        out.status, out.reason = status.FAILED, row["reason"]
        return out
    submission = None
    if assignment is not None and (row is None or row["status"] in (status.GRADED, status.MANUAL)):
        try:
            submission = gb.find_submission(lesson, student)
        except MissingEntry:
            submission = None
    if submission is None:
        if refusal:
            out.status, out.reason = status.FAILED, refusal
        elif changed is not None:
            out.status, out.reason = status.UNGRADED, "collected, not graded yet"
        return out
    raw = submission.score
    if out.when is None or out.when.submitted is None:       # (graded by nbgrader, from its time)
        out.when = lateness.Lateness(submission.timestamp, due, extended=extension is not None)
    out.max_score = submission.max_score
    out.reason = row["reason"] if row is not None else "graded by nbgrader"
    if row is None:
        out.sandbox = "unknown: graded by nbgrader"
    for notebook in submission.notebooks:
        # what a grader typed in the formgrader's comment boxes (nbgrader's Comment rows)
        out.comments.extend((c.name, c.manual_comment) for c in notebook.comments
                            if (c.manual_comment or "").strip())
        for grade in notebook.grades:
            # a hand grade counts whatever nbgrader's review flag says (autograding again sets
            # it back on every hand-graded cell); a cell with neither score waits for a human
            waiting = grade.manual_score is None and grade.needs_manual_grade
            if waiting:
                out.awaiting.append(grade.name)
            out.questions.append(dict(question=grade.name, status=status.MANUAL if waiting
                                      else status.GRADED,
                                      score=None if waiting else grade.score,
                                      max_score=grade.max_score))
    if out.awaiting:
        out.status = status.MANUAL
    else:
        # the course's late policy on the final score (hand grades included) and the learner's
        # own due date: nbgrader's stored penalty was worked out at autograding, before both
        penalty = policy.penalty(student, raw, out.when) if policy and out.late else 0.0
        out.late_penalty = penalty if out.late else None
        out.status, out.score = status.GRADED, max(raw - penalty, 0.0)
    return out


def yes(flag: bool | None) -> str:
    return {True: "yes", False: "no"}.get(flag, "")


def rows(course: Course, wanted: list[str] | None = None):
    """(grades rows, questions rows) as lists of dicts."""
    grades, questions = [], []
    cells = {}
    with course.gradebook() as gb:
        for assignment in gb.assignments:
            cells[assignment.name] = [(c.name, c.max_score) for nb in assignment.notebooks
                                      for c in nb.grade_cells]
    for out in outcomes(course, wanted):
        grades.append(dict(student=out.student, name=out.name, lesson=out.lesson,
                           status=out.status, score=show_number(out.score),
                           max_score=show_number(out.max_score),
                           late=yes(out.late), late_penalty=show_number(out.late_penalty),
                           submitted=lateness.show(out.when.submitted) if out.when else "",
                           due=lateness.show(out.when.due) if out.when else "",
                           reason=out.reason, sandbox=out.sandbox,
                           forgery="yes" if out.forgery else "",
                           forgery_reason=out.forgery_reason,
                           **{k: "" if v is None else v for k, v in out.extra.items()}))
        by_name = {q["question"]: q for q in out.questions}
        for name, most in cells.get(out.lesson, []):
            q = by_name.get(name)
            questions.append(dict(student=out.student, lesson=out.lesson, question=name,
                                  status=q["status"] if q else out.status,
                                  score=show_number(q["score"]) if q else "",
                                  max_score=show_number(most)))
    return grades, questions


def export(course: Course, out: Path, wanted: list[str] | None = None) -> list[Path]:
    """grades.csv and questions.csv of the whole class in `out`; lessons asked for by name
    go to grades-<lesson>.csv and questions-<lesson>.csv, never over the class-wide files."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    grades, questions = rows(course, wanted)
    extra = sorted({k for row in grades for k in row} - set(GRADES))   # e.g. a later flag
    suffix = "-" + "-".join(lessons(course, wanted)) if wanted else ""
    for name, fields, table in ((f"grades{suffix}.csv", GRADES + tuple(extra), grades),
                                (f"questions{suffix}.csv", QUESTIONS, questions)):
        paths.append(write_csv(out / name, [list(fields)] + [[row.get(k, "") for k in fields]
                                                            for row in table]))
    return paths


# -- what an LMS's file says of an outcome (lms/canvas.py, lms/moodle.py fill them) --------

def took(out: Outcome) -> str:
    """The one wording of a late penalty, wherever it is said (grade's summary, export's
    tables, Moodle's comment, the feedback page): `the late policy took 3 of 4 points`."""
    return (f"the late policy took {show_number(out.late_penalty)} of "
            f"{show_number(out.late_penalty + out.score)} points")


def how_late(out: Outcome, penalty: bool = True) -> str:
    """`late by 1 d 9 h (own due date 2026-11-21 23:59:00 UTC); the late policy took 3 of 4
    points` (without the penalty when `penalty` is False, or nothing was taken)."""
    seconds = int(out.when.seconds)
    days, rest = divmod(seconds, 86400)
    span = (f"{days} d {rest // 3600} h" if days else f"{rest // 3600} h {rest % 3600 // 60} min"
            if rest >= 3600 else f"{max(rest // 60, 1)} min")
    own = f" (own due date {lateness.show(out.when.due)})" if out.when.extended else ""
    taken = (f"; {took(out)}" if penalty and out.late_penalty and out.score is not None
             else "")
    return f"late by {span}{own}{taken}"


def late_summary(outs: list[Outcome], policy: lateness.Policy) -> str:
    """What the late policy is and what it took of a class's outcomes, in one line:
    `late policy: nbgrader's, penalty_method 'zero': late work scores 0; 2 late, it took 7
    points in all (100003: 3 of 3; 100012: 4 of 4)`."""
    late = [o for o in outs if o.late]
    text = f"late policy: {policy.name}"
    if not late:
        return text + "; nothing handed in late"
    scored = [o for o in late if o.has_score]
    taken = sum(o.late_penalty or 0.0 for o in scored)
    each = "; ".join(f"{o.student}: {show_number(o.late_penalty)} of "
                     f"{show_number(o.late_penalty + o.score)}" for o in scored
                     if o.late_penalty)
    text += (f"; {len(late)} late, it took {show_number(taken)} points in all"
             + (f" ({each})" if each else ""))
    waiting = len(late) - len(scored)
    if waiting:
        text += (f"; {waiting} late not graded in full yet (the policy takes its share of "
                 "the final score)")
    return text


def why_empty(out: Outcome) -> str:
    return {status.FAILED: f"failed: {out.reason}", status.MISSING: "missing",
            status.MANUAL: "needs manual grading (written answers: "
                           + ", ".join(out.awaiting) + ")",
            status.UNGRADED: f"not graded yet ({out.reason})"}.get(out.status, out.status)
