"""A submission's outcome: what became of one learner's work on one lesson, typed, and the
reads of the gradebook that build it (``outcomes``), for every step that says it (export's
CSV files, Canvas's and Moodle's files, the feedback page, the report, grade's summary).

Each (learner, lesson) has one status, read afresh from nbgrader's gradebook and this
package's own table of what grading did (``status.py``), so that hand grades entered in the
formgrader (or through nbgrader's API) count at once, without grading again:
  - ``graded``: every cell has a score (a hand grade included); the score is nbgrader's, less
    the course's late penalty (``late.py``), worked out on the final score with the learner's
    own due date;
  - ``needs manual grading``: a written answer has no hand grade yet (its score is not 0: it is
    empty, and so is the total);
  - ``failed`` (the reason): grading failed, or collect refused the file; no score;
  - ``missing``: nothing handed in;
  - ``not graded yet``: collected, but not graded since (run ``grade``).

Who: every learner nbgrader knows (the roster, and anyone graded), everyone with a folder in
submitted/, and anyone whose submission failed before nbgrader saw it, but a learner taken
out of the term (``autograd-lab drop``: their files and grades stay, in no file). Which
lessons: those asked for, else every lesson anything was collected or graded for (a lesson
released but never assigned is not eight rows of ``missing``).

The wordings of an outcome every file shares are here too (``how_late``, ``took``,
``why_empty``), so that a late penalty or an empty grade reads the same wherever it is said.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timezone
from pathlib import Path

from nbgrader.api import MissingEntry

from ..course import Course
from . import late as lateness, status


def display_name(student) -> str:
    """A learner's name as the LMS wrote it, from nbgrader's Student row."""
    first, last = student.first_name or "", student.last_name or ""
    return f"{first} {last}".strip() if first and last else (last or first)


def show_number(value):
    return "" if value is None else f"{round(value, 4):g}"


def yes(flag: bool | None) -> str:
    return {True: "yes", False: "no"}.get(flag, "")


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


@dataclass(frozen=True)
class GradeCell:
    """One nbgrader grade cell of a graded submission: its score (None while it waits for a
    hand grade, ``status.MANUAL``) out of its most."""
    question: str                       # the cell's grade_id
    status: str                         # status.GRADED or status.MANUAL
    score: float | None
    max_score: float | None


@dataclass
class Outcome:
    """What became of one learner's submission of one lesson (``outcomes`` reads them).

    ``status`` is one of ``status.GRADED``, ``MANUAL``, ``FAILED``, ``MISSING``, ``UNGRADED``,
    and ``reason`` says why; ``score`` (after the course's late penalty, ``late_penalty``)
    out of ``max_score`` is there when ``has_score``. ``sandbox`` is what the grading sandbox
    refused or which limit stopped something; ``forgery`` whether the grader found the
    submission forging its grade, and ``forgery_reason`` why (the grader's words). ``when``
    is its lateness (submitted, its own due date), ``questions`` its grade cells (a hand
    grade included, ``awaiting`` those that wait for one), and ``comments`` what a grader
    typed in the formgrader's comment boxes."""
    student: str
    name: str
    lesson: str
    status: str
    score: float | None = None          # after the late penalty
    max_score: float | None = None
    late_penalty: float | None = None
    reason: str = ""
    sandbox: str = ""
    forgery: bool = False
    forgery_reason: str = ""
    awaiting: list[str] = field(default_factory=list)   # written answers with no hand grade
    questions: list[GradeCell] = field(default_factory=list)
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


def _outcome(course, gb, assignment, lesson, student, row: status.Row | None, refusal,
             policy=None, extension=None) -> Outcome:
    out = Outcome(student, "", lesson, status.MISSING, reason="no submission",
                  max_score=assignment.max_score if assignment else None)
    due = extension or (assignment.duedate if assignment is not None else None)
    submitted = lateness.submitted_at(course.submission(lesson, student))
    if submitted is not None or extension is not None:
        out.when = lateness.Lateness(submitted, due, extended=extension is not None)
    if row is not None:
        out.sandbox, out.forgery, out.forgery_reason = row.sandbox, row.forgery, row.forgery_reason
    changed = _last_change(course.submission(lesson, student))
    if changed is not None and row is not None and row.status != status.MISSING and \
            changed > row.graded_at.replace(tzinfo=timezone.utc).timestamp():
        out.status, out.reason = status.UNGRADED, "collected again since it was graded"
        return out
    if row is not None and row.status == status.FAILED:
        out.status, out.reason = status.FAILED, row.reason
        return out
    submission = None
    if assignment is not None and (row is None or row.status in (status.GRADED, status.MANUAL)):
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
    out.reason = row.reason if row is not None else "graded by nbgrader"
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
            out.questions.append(GradeCell(grade.name, status.MANUAL if waiting
                                           else status.GRADED,
                                           None if waiting else grade.score, grade.max_score))
    if out.awaiting:
        out.status = status.MANUAL
    else:
        # the course's late policy on the final score (hand grades included) and the learner's
        # own due date: nbgrader's stored penalty was worked out at autograding, before both
        penalty = policy.penalty(student, raw, out.when) if policy and out.late else 0.0
        out.late_penalty = penalty if out.late else None
        out.status, out.score = status.GRADED, max(raw - penalty, 0.0)
    return out


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
