"""Grades out: one row per learner and lesson, with a status, so a failure is never read as 0.

Who: every learner nbgrader knows (the roster, and anyone graded), everyone with a folder in
submitted/, and anyone whose submission failed before nbgrader saw it. Which lessons: those
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
               and what the grading sandbox refused (or that it was off)
questions.csv  a row per learner, lesson and question (nbgrader grade cell)
lms.py's two LMSs take their own files back: ``fill_canvas`` fills the lesson's column of
Canvas's gradebook export, ``fill_moodle`` the Grade and Feedback comments of Moodle's grading
worksheet; every other cell is kept as it was, and a learner left empty is listed with why.

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

from . import late as lateness, status
from .course import Course
from .roster import display_name

GRADES = ("student", "name", "lesson", "status", "score", "max_score", "late", "late_penalty",
          "submitted", "due", "reason", "sandbox")
QUESTIONS = ("student", "lesson", "question", "status", "score", "max_score")
_KNOWN = {"lesson", "student", "status", "reason", "score", "max_score", "seconds", "graded_at",
          "sandbox"}


_FORMULA = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def cell(value):
    """A CSV cell a spreadsheet shows as text, never runs as a formula: a text that starts
    like one gets a leading ``'``; a plain number stays a number."""
    if isinstance(value, str) and value.startswith(_FORMULA) and not _PLAIN_NUMBER.fullmatch(value):
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


def _number(value):
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
        learners = sorted(set(names) | on_disk | {s for _, s in recorded} | {s for _, s in refused})
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


def _yes(flag: bool | None) -> str:
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
                           status=out.status, score=_number(out.score),
                           max_score=_number(out.max_score),
                           late=_yes(out.late), late_penalty=_number(out.late_penalty),
                           submitted=lateness.show(out.when.submitted) if out.when else "",
                           due=lateness.show(out.when.due) if out.when else "",
                           reason=out.reason, sandbox=out.sandbox,
                           **{k: "" if v is None else v for k, v in out.extra.items()}))
        by_name = {q["question"]: q for q in out.questions}
        for name, most in cells.get(out.lesson, []):
            q = by_name.get(name)
            questions.append(dict(student=out.student, lesson=out.lesson, question=name,
                                  status=q["status"] if q else out.status,
                                  score=_number(q["score"]) if q else "",
                                  max_score=_number(most)))
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


# -- the LMSs' own files ------------------------------------------------------------------

@dataclass
class Filled:
    path: Path
    filled: int = 0
    left_empty: list[tuple[str, str, str, str]] = field(default_factory=list)  # student, name, lesson, why
    not_in_file: list[tuple[str, str]] = field(default_factory=list)          # student, lesson
    columns: dict[str, str] = field(default_factory=dict)                      # lesson -> column
    late: list[tuple[str, str, str, str]] = field(default_factory=list)       # student, name, lesson, how
    scaled: dict[str, tuple[float, float]] = field(default_factory=dict)       # lesson -> (ours, theirs)


def _read_lms_csv(path: Path):
    raw = Path(path).read_bytes()
    bom = raw.startswith(b"\xef\xbb\xbf")
    text = raw.decode("utf-8-sig")
    newline = "\r\n" if "\r\n" in text else "\n"
    table = list(csv.reader(io.StringIO(text, newline="")))
    if not table:
        raise ValueError(f"{path} is empty")
    return table, bom, newline


def _points(value: float) -> str:
    return f"{value:.2f}"


def how_late(out: Outcome) -> str:
    """`late by 1 d 9 h (own due date 2026-11-21 23:59:00 UTC), penalty 3 of 4`"""
    seconds = int(out.when.seconds)
    days, rest = divmod(seconds, 86400)
    span = (f"{days} d {rest // 3600} h" if days else f"{rest // 3600} h {rest % 3600 // 60} min"
            if rest >= 3600 else f"{max(rest // 60, 1)} min")
    own = f" (own due date {lateness.show(out.when.due)})" if out.when.extended else ""
    penalty = (f", penalty {_number(out.late_penalty)} of {_number(out.late_penalty + out.score)}"
               if out.late_penalty is not None and out.score is not None else "")
    return f"late by {span}{own}{penalty}"


_COMMENT_CELL, _COMMENTS = 1000, 4000      # characters: a comment, all of a learner's


def _plain(text: str, most: int) -> str:
    """A grader's comment as one line of plain text (Moodle shows its comments as HTML: an
    angle bracket or an ampersand is shown, never read as markup), at most `most` characters."""
    import html

    text = html.escape(re.sub(r"\s+", " ", "".join(c if c.isprintable() else " " for c in text))
                       .strip(), quote=False)
    return text if len(text) <= most else text[:most - 1].rstrip() + "…"


def moodle_comment(out: Outcome) -> str:
    """What Moodle's Feedback comments gets: the score, lateness, and the grader's comments."""
    text = (f"{_number(out.score)} of {_number(out.max_score)} points"
            + (f" ({how_late(out)})" if out.late else "") + ".")
    for cell_name, comment in out.comments:
        text += f" {cell_name}: {_plain(comment, _COMMENT_CELL)}"
    text = text if len(text) <= _COMMENTS else text[:_COMMENTS - 1].rstrip() + "…"
    return text + " Your feedback page shows what each check found."


def _why_empty(out: Outcome) -> str:
    return {status.FAILED: f"failed: {out.reason}", status.MISSING: "missing",
            status.MANUAL: "needs manual grading (written answers: "
                           + ", ".join(out.awaiting) + ")",
            status.UNGRADED: f"not graded yet ({out.reason})"}.get(out.status, out.status)


_CANVAS_FIXED = {"Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Integration ID",
                 "Root Account"}


def canvas_column(headers: list[str], lesson: str) -> str:
    """The gradebook column of a lesson's assignment: its title (``<name> (<id>)``) holds the
    lesson id, or the lesson's number and a word of its name (``Lesson 02: scalar backward``);
    ValueError unless exactly one does."""
    assignments = [h for h in headers if re.search(r"\(\d+\)\s*$", h) and h not in _CANVAS_FIXED]
    number = int(lesson.split("_")[0]) if lesson.split("_")[0].isdigit() else None
    words = [w for w in lesson.lower().split("_")[1:] if len(w) >= 4]

    def matches(title):
        name = re.sub(r"\s*\(\d+\)\s*$", "", title)
        if lesson.lower() in name.lower():
            return True
        numbers = [int(n) for n in re.findall(r"\d+", name)]
        return number in numbers and any(w in name.lower() for w in words)

    found = [h for h in assignments if matches(h)]
    if len(found) != 1:
        raise ValueError(f"{'no' if not found else 'several'} assignment column of the gradebook "
                         f"for {lesson} ({'; '.join(found or assignments)}): name it with "
                         f"--column '{lesson}=<column title>'")
    return found[0]


def fill_canvas(course: Course, gradebook: Path, target: Path, wanted: list[str] | None = None,
                columns: dict[str, str] | None = None) -> Filled:
    """Canvas's gradebook export with the lessons' columns filled (points scaled to the
    column's Points Possible); everything else as it was. Rows are matched by ``ID``."""
    table, bom, newline = _read_lms_csv(gradebook)
    headers = [h.strip() for h in table[0]]
    if "ID" not in headers or "Student" not in headers:
        raise ValueError(f"{gradebook}: not Canvas's gradebook export (no Student and ID columns)")
    id_at = headers.index("ID")
    chosen = lessons(course, wanted)
    result = Filled(Path(target))
    for lesson in chosen:
        title = (columns or {}).get(lesson) or canvas_column(headers, lesson)
        if title not in headers:
            raise ValueError(f"{gradebook} has no column {title!r}")
        result.columns[lesson] = title
    possible = next((row for row in table[1:] if row and row[0].strip() == "Points Possible"), None)
    by_key = {(o.lesson, o.student): o for o in outcomes(course, chosen)}
    seen = set()
    for row in table[1:]:
        if len(row) <= id_at or not row[id_at].strip().isdigit() or row is possible:
            continue
        student = row[id_at].strip()
        for lesson, title in result.columns.items():
            out = by_key.get((lesson, student))
            if out is None:
                continue
            seen.add((lesson, student))
            at = headers.index(title)
            while len(row) <= at:
                row.append("")
            if not out.has_score:
                row[at] = ""
                result.left_empty.append((student, out.name, lesson, _why_empty(out)))
                continue
            score = out.score
            theirs = _float(possible[at]) if possible and len(possible) > at else None
            if theirs and out.max_score and theirs != out.max_score:
                score = score * theirs / out.max_score
                result.scaled[lesson] = (out.max_score, theirs)
            row[at] = _points(score)
            result.filled += 1
            if out.late:
                result.late.append((student, out.name, lesson, how_late(out)))
    result.not_in_file = sorted((o.student, o.lesson) for o in by_key.values()
                                if (o.lesson, o.student) not in seen)
    write_csv(target, table, bom=bom, newline=newline)
    return result


def _float(text: str) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def fill_moodle(course: Course, worksheet: Path, target: Path, lesson: str) -> Filled:
    """Moodle's grading worksheet for one lesson's assignment with Grade (scaled to its
    Maximum grade) and Feedback comments filled; rows are matched by Identifier
    (``Participant <id>``), a row Moodle says cannot be changed is left alone."""
    table, bom, newline = _read_lms_csv(worksheet)
    headers = [h.strip() for h in table[0]]
    for needed in ("Identifier", "Grade"):
        if needed not in headers:
            raise ValueError(f"{worksheet}: not Moodle's grading worksheet (no {needed} column)")
    if "Late" not in headers:       # (Moodle's upload reads Identifier, Grade, Feedback comments)
        headers.append("Late")
        table[0].append("Late")
    at = {h: headers.index(h) for h in headers}
    result = Filled(Path(target), columns={lesson: "Grade"})
    by_student = {o.student: o for o in outcomes(course, [lesson])}
    seen = set()
    for row in table[1:]:
        match = re.fullmatch(r"\s*Participant\s+(\d+)\s*", row[at["Identifier"]] if row else "")
        if not match or match[1] not in by_student:
            continue
        out = by_student[match[1]]
        seen.add(out.student)
        while len(row) < len(headers):
            row.append("")
        row[at["Late"]] = _yes(out.late)
        if "Grade can be changed" in at and row[at["Grade can be changed"]].strip().lower() == "no":
            result.left_empty.append((out.student, out.name, lesson,
                                      "Moodle says its grade cannot be changed"))
            continue
        comment = ""
        if not out.has_score:
            row[at["Grade"]] = ""
            result.left_empty.append((out.student, out.name, lesson, _why_empty(out)))
        else:
            most = _float(row[at["Maximum grade"]]) if "Maximum grade" in at else None
            score = out.score
            if most and out.max_score and most != out.max_score:
                score = score * most / out.max_score
                result.scaled[lesson] = (out.max_score, most)
            row[at["Grade"]] = _points(score)
            comment = moodle_comment(out)
            result.filled += 1
            if out.late:
                result.late.append((out.student, out.name, lesson, how_late(out)))
        if "Feedback comments" in at and comment:
            row[at["Feedback comments"]] = comment
    result.not_in_file = sorted((s, lesson) for s in by_student if s not in seen)
    write_csv(target, table, bom=bom, newline=newline)
    return result
