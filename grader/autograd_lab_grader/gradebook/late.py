"""Due dates, extensions, submission times and the late policy, in one place for every export.

- A lesson's due date is nbgrader's own ``duedate`` on the assignment (naive UTC): set by
  ``release --due``, ``due``, or the course's ``c.AutogradLab.due = {lesson: date}`` in
  ``nbgrader_config.py`` (read by ``release``).
- A learner's extension is a due date of their own for a lesson, kept in the gradebook's
  database (``autograd_lab_extension``), where export, grade's summary and report read it;
  it is also written as nbgrader's ``extension`` of the learner's submission where nbgrader
  has one, so the formgrader shows it too.
- A submission's time is its ``timestamp.txt`` (collect writes it: an LMS zip's time, Canvas's
  ``_late`` mark, the time given with a notebook placed by hand, or the time a hub's machine
  recorded for its file).
- The late policy is nbgrader's: ``c.AssignLatePenalties.plugin_class`` (nbgrader's
  ``LateSubmissionPlugin`` unless the course names its own, a module at its root, which
  ``course.py``'s ``course_plugin`` loads), with
  ``c.LateSubmissionPlugin.penalty_method`` ``none`` (nbgrader's default: late is flagged, no
  penalty) or ``zero``. It is applied here, at export, to the final score (hand grades
  included) with the learner's own due date, the same way for grades.csv, Canvas and Moodle.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import Column, DateTime, MetaData, String, Table, create_engine, delete, select

_metadata = MetaData()
extensions = Table(
    "autograd_lab_extension", _metadata,
    Column("lesson", String(128), primary_key=True),
    Column("student", String(128), primary_key=True),
    Column("due", DateTime, nullable=False),        # naive UTC
)


def parse_when(text: str, tz=timezone.utc) -> datetime:
    """A date and time as an instructor writes it (``2026-11-20 23:59``, ``2026-11-20``: the
    end of that day), in `tz` unless it names its own offset; naive UTC, as nbgrader keeps it."""
    import dateutil.parser

    try:
        when = dateutil.parser.isoparse(text.strip())
    except ValueError:
        try:
            when = dateutil.parser.parse(text)
        except (ValueError, OverflowError):
            raise ValueError(f"{text!r} is not a date and time (write 2026-11-20 23:59)") from None
    if len(text.strip()) == 10:                         # a date alone: the end of that day
        when = when.replace(hour=23, minute=59, second=59)
    if when.tzinfo is None:
        when = when.replace(tzinfo=tz)
    return when.astimezone(timezone.utc).replace(tzinfo=None)


def show(when: datetime | None) -> str:
    return "" if when is None else when.strftime("%Y-%m-%d %H:%M:%S UTC")


def set_due(course, lesson: str, when: datetime | None) -> None:
    """nbgrader's duedate of `lesson` (None: no due date)."""
    with course.gradebook() as gb:
        gb.update_or_create_assignment(lesson, duedate=when)


def dues(course) -> dict[str, datetime]:
    with course.gradebook() as gb:
        return {a.name: a.duedate for a in gb.assignments if a.duedate is not None}


def _engine(course):
    course.gradebook().close()
    engine = create_engine(course.gradebook_url, future=True)
    _metadata.create_all(engine)
    return engine


def extend(course, grants: list[tuple[str, str, datetime | None]]) -> None:
    """Give each (lesson, student) its own due date (None: take the extension back)."""
    from nbgrader.api import MissingEntry

    engine = _engine(course)
    with engine.begin() as db:
        for lesson, student, due in grants:
            db.execute(delete(extensions).where(extensions.c.lesson == lesson,
                                                extensions.c.student == student))
            if due is not None:
                db.execute(extensions.insert().values(lesson=lesson, student=student, due=due))
    engine.dispose()
    with course.gradebook() as gb:
        for lesson, student, due in grants:
            try:
                submission = gb.find_submission(lesson, student)
            except MissingEntry:
                continue
            base = submission.assignment.duedate
            submission.extension = (due - base if due is not None and base is not None
                                    and due > base else None)
        gb.db.commit()


def read_extensions(course) -> dict[tuple[str, str], datetime]:
    engine = _engine(course)
    with engine.connect() as db:
        found = {(r.lesson, r.student): r.due for r in db.execute(select(extensions))}
    engine.dispose()
    return found


def read_csv(course, path: Path, tz=timezone.utc) -> list[tuple[str, str, datetime | None]]:
    """Extensions from a CSV with ``student``, ``lesson`` and ``due`` (a date, or a number of
    days after the lesson's due date; empty takes the extension back)."""
    import csv
    from datetime import timedelta

    with Path(path).open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        headers = {(h or "").strip().lower(): h for h in reader.fieldnames or []}
        missing = [h for h in ("student", "lesson", "due") if h not in headers]
        if missing:
            raise ValueError(f"{path}: no {', '.join(missing)} column (it needs student, lesson "
                             "and due: a date, or days after the lesson's due date)")
        rows = list(reader)
    due_dates = dues(course)
    grants = []
    for number, row in enumerate(rows, start=2):
        student = (row[headers["student"]] or "").strip()
        lesson = course.lesson((row[headers["lesson"]] or "").strip())
        text = (row[headers["due"]] or "").strip()
        if not text:
            grants.append((lesson, student, None))
            continue
        try:
            days = float(text)
        except ValueError:
            grants.append((lesson, student, parse_when(text, tz)))
            continue
        if lesson not in due_dates:
            raise ValueError(f"{path}, line {number}: {days:g} days after {lesson}'s due date, "
                             "but it has none (set it with `autograd-lab due`)")
        grants.append((lesson, student, due_dates[lesson] + timedelta(days=days)))
    return grants


def submitted_at(folder: Path) -> datetime | None:
    """A submission's time, from its timestamp.txt (naive UTC), or None."""
    from nbgrader.utils import parse_utc

    stamp = folder / "timestamp.txt"
    if stamp.is_symlink() or not stamp.is_file():
        return None
    try:
        return parse_utc(stamp.read_text()[:100].strip())
    except (ValueError, OverflowError):
        return None


@dataclass
class Lateness:
    submitted: datetime | None
    due: datetime | None
    extended: bool = False

    @property
    def seconds(self) -> float:
        if self.submitted is None or self.due is None:
            return 0.0
        return max((self.submitted - self.due).total_seconds(), 0.0)

    @property
    def late(self) -> bool | None:
        """True, False, or None when it cannot be said (no due date, no time)."""
        if self.submitted is None or self.due is None:
            return None
        return self.seconds > 0


class Policy:
    """The course's late policy: nbgrader's plugin as its configuration names it (resolved by
    ``Course.config``: the course's own class, from its root)."""

    def __init__(self, course):
        config = course.config()
        from nbgrader.plugins import LateSubmissionPlugin

        plugin = config.AssignLatePenalties.get("plugin_class", LateSubmissionPlugin)
        self.plugin = plugin(config=config)
        if plugin is LateSubmissionPlugin:
            method = self.plugin.penalty_method
            self.name = (f"nbgrader's, penalty_method {method!r}: "
                         + ("late work scores 0" if method == "zero"
                            else "late work is flagged, nothing is taken"))
        else:
            self.name = f"the course's own, {plugin.__module__}.{plugin.__name__}"

    def penalty(self, student: str, score: float, lateness: Lateness) -> float:
        if not lateness.late:
            return 0.0
        penalty = self.plugin.late_submission_penalty(student, score, lateness.seconds)
        return min(max(penalty or 0.0, 0.0), score)
