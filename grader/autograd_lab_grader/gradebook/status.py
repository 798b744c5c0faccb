"""What happened to each submission, kept in the gradebook's own database next to nbgrader's tables.

nbgrader records a score, and a failed autograde leaves a bare 0.0 that looks like a real zero.
This table adds what the instructor needs to tell them apart: a status and its reason, and
what the grading sandbox refused or which limit stopped something (``sandbox``), and whether
the grader found the grade itself forged (``forgery``, a flag, and ``forgery_reason``,
the grader's own words: never text the learner's code printed). It lives
in the same database (SQLite or the PostgreSQL that several graders share), so every grader and
every later step (export, feedback, report) reads one record. A row is a ``Row``: what a
grading process sends back, what ``record`` stores and ``read`` returns.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import (Boolean, Column, DateTime, Float, MetaData, String, Table, Text,
                        create_engine, delete, false, inspect, select, text, update)
from sqlalchemy.exc import DBAPIError

GRADED, FAILED, MISSING, MANUAL = "graded", "failed", "missing", "needs manual grading"
# (never stored: what export says of a submission collected and not graded since)
UNGRADED = "not graded yet"

_metadata = MetaData()
submissions = Table(
    "autograd_lab_submission", _metadata,
    Column("lesson", String(128), primary_key=True),
    Column("student", String(128), primary_key=True),
    Column("status", String(32), nullable=False),
    Column("reason", Text, nullable=False, default=""),
    Column("score", Float, nullable=True),        # None unless the submission was graded
    Column("max_score", Float, nullable=True),
    Column("seconds", Float, nullable=True),
    Column("graded_at", DateTime, nullable=False),
    Column("sandbox", Text, nullable=False, default=""),
    # the grader found the submission forging its grade (a kernel that claimed points the
    # grader did not give, or answered a check as no unchanged kernel does; code handed in
    # beside the notebook); the reason is the grader's
    Column("forgery", Boolean, nullable=False, default=False, server_default=false()),
    Column("forgery_reason", Text, nullable=False, default="", server_default=""),
    # what the hidden tests found, in full (their inputs, expected and found values): the
    # instructor's alone; the learner's page names only the check and the misconception
    Column("hidden", Text, nullable=False, default="", server_default=""),
)


@dataclass(frozen=True)
class Row:
    """What grading did to one learner's submission of a lesson: a row of ``submissions``, as
    grading makes it, ``record`` stores it and ``read`` gives it back (a field a row does not
    set is the column's default)."""
    lesson: str
    student: str
    status: str                         # GRADED, FAILED, MISSING or MANUAL
    reason: str = ""
    score: float | None = None          # None unless the submission was graded
    max_score: float | None = None
    seconds: float | None = None        # how long grading it took
    sandbox: str = ""                   # what the sandbox refused, which limit stopped it
    forgery: bool = False               # the grader found it forging its grade
    forgery_reason: str = ""            # why, in the grader's words
    hidden: str = ""                    # what the hidden tests found, for the instructor
    graded_at: datetime | None = None   # when it was recorded (naive UTC): set by ``record``


# how a forgery was marked before the flag existed: a part of the sandbox column starting so
_OLD_MARK = "ATTEMPT: "


# nbgrader's foreign keys that lead no index of its own: neither SQLite nor PostgreSQL indexes
# a foreign key, and nbgrader's scores (a subquery of `grade` per notebook, of
# `submitted_notebook` per submission) then read the whole table for every submission graded,
# exported or reported -- a class's grading grows with the square of its size (500 learners
# of one lesson on PostgreSQL: 58,000 rows read a notebook)
INDEXES = {"grade": "notebook_id", "comment": "notebook_id",
           "submitted_notebook": "assignment_id", "submitted_assignment": "student_id",
           "base_cell": "notebook_id", "source_cell": "notebook_id", "notebook": "assignment_id"}


_indexed: set[str] = set()        # gradebooks this process has seen indexed


def _indexes(engine) -> None:
    # Looked up before made: CREATE INDEX locks its table against writes even when the index
    # exists, and other graders are writing grades
    if engine.url.render_as_string() in _indexed:
        return
    look = inspect(engine)
    for table, column in INDEXES.items():
        name = f"autograd_lab_{table}_{column}"
        if name not in {ix["name"] for ix in look.get_indexes(table)}:
            with engine.begin() as db:
                db.execute(text(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({column})"))
    _indexed.add(engine.url.render_as_string())


def _engine(course):
    # nbgrader decides that a database is new when it has no tables: let it set itself up first
    course.gradebook().close()
    engine = create_engine(course.gradebook_url, future=True)
    for tries in range(3):
        try:
            _metadata.create_all(engine)
            _migrate(engine)
            _indexes(engine)
            return engine
        except DBAPIError:
            # graders sharing a PostgreSQL gradebook start together: another one made the
            # table (or the column, or an index) between this one's look and its CREATE;
            # look again
            if tries == 2:
                raise
            time.sleep(0.1)


def _migrate(engine) -> None:
    """The columns a gradebook written by an older grader lacks, added."""
    table = submissions.name
    columns = {c["name"] for c in inspect(engine).get_columns(table)}
    if "sandbox" not in columns:        # a gradebook written before the sandbox existed
        with engine.begin() as db:
            db.execute(text(f"ALTER TABLE {table} ADD COLUMN sandbox TEXT NOT NULL DEFAULT ''"))
    if "forgery_reason" not in columns:
        with engine.begin() as db:
            db.execute(text(f"ALTER TABLE {table} "
                            "ADD COLUMN forgery_reason TEXT NOT NULL DEFAULT ''"))
    if "hidden" not in columns:
        with engine.begin() as db:
            db.execute(text(f"ALTER TABLE {table} ADD COLUMN hidden TEXT NOT NULL DEFAULT ''"))
    if "forgery" not in columns:
        # a gradebook written before the flag: a forgery was an ATTEMPT in the sandbox
        # column, read so once, here (on PostgreSQL in the transaction that adds the column)
        no = "0" if engine.dialect.name == "sqlite" else "FALSE"
        with engine.begin() as db:
            db.execute(text(f"ALTER TABLE {table} ADD COLUMN forgery BOOLEAN NOT NULL "
                            f"DEFAULT {no}"))
            old = select(submissions.c.lesson, submissions.c.student, submissions.c.sandbox)
            for row in db.execute(old.where(submissions.c.sandbox.contains("ATTEMPT"))).all():
                if "ATTEMPT" not in row.sandbox:     # (LIKE ignores case on SQLite)
                    continue
                parts = row.sandbox.split("; ")
                flagged = [p for p in parts if p.startswith(_OLD_MARK)]
                db.execute(update(submissions).where(
                    submissions.c.lesson == row.lesson, submissions.c.student == row.student
                ).values(forgery=True,
                         forgery_reason="; ".join(p[len(_OLD_MARK):] for p in flagged)
                         or "marked ATTEMPT by an older grader (see the sandbox column)",
                         sandbox="; ".join(p for p in parts if p not in flagged)))


def tables(course) -> None:
    """Make nbgrader's tables and this module's, where they are not yet."""
    _engine(course).dispose()


def record(course, rows: list[Row]) -> None:
    """Store the outcome of grading each (lesson, student) in rows, replacing an earlier one."""
    engine = _engine(course)
    with engine.begin() as db:
        write(db, rows)
    engine.dispose()


def write(db, rows: list[Row]) -> None:
    """record's rows, on a connection inside its transaction (leases.py records a grade on
    the connection that holds its lease). One statement a row that inserts or replaces
    (PostgreSQL's and SQLite's INSERT ... ON CONFLICT DO UPDATE), so that two graders
    recording one learner at once (a `missing` row each) cannot collide on the key."""
    if db.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    elif db.dialect.name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    else:
        raise ValueError(f"no gradebook on {db.dialect.name}: SQLite or PostgreSQL")
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    for row in rows:
        # (every column is written: one the row leaves at its default is reset to it)
        values = dict(dataclasses.asdict(row), graded_at=now)
        statement = insert(submissions).values(**values)
        db.execute(statement.on_conflict_do_update(
            index_elements=[c.name for c in submissions.primary_key],
            set_={k: v for k, v in values.items() if k not in ("lesson", "student")}))


def read(course, lesson: str | None = None) -> dict[tuple[str, str], Row]:
    """{(lesson, student): row} for one lesson or all."""
    engine = _engine(course)
    query = select(submissions)
    if lesson is not None:
        query = query.where(submissions.c.lesson == lesson)
    with engine.connect() as db:
        rows = {(r.lesson, r.student): Row(**r._mapping) for r in db.execute(query)}
    engine.dispose()
    return rows


# What collect could not place, for a learner and lesson it could still name (a file over the
# size limit, several notebooks): the learner is then `failed` with that reason, not `missing`,
# until a submission of theirs is placed.
refusals = Table(
    "autograd_lab_refusal", _metadata,
    Column("lesson", String(128), primary_key=True),
    Column("student", String(128), primary_key=True),
    Column("reason", Text, nullable=False),
    Column("at", DateTime, nullable=False),
)


def record_refusals(course, refused: dict[tuple[str, str], str],
                    done: list[tuple[str, str]] = ()) -> None:
    """Keep collect's refusals {(lesson, student): why}; forget those of `done` (placed or
    unchanged since)."""
    if not refused and not done:
        return
    engine = _engine(course)
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    with engine.begin() as db:
        for lesson, student in list(refused) + list(done):
            db.execute(delete(refusals).where(refusals.c.lesson == lesson,
                                              refusals.c.student == student))
        for (lesson, student), reason in refused.items():
            db.execute(refusals.insert().values(lesson=lesson, student=student, reason=reason,
                                                at=now))
    engine.dispose()


def read_refusals(course) -> dict[tuple[str, str], str]:
    engine = _engine(course)
    with engine.connect() as db:
        found = {(r.lesson, r.student): r.reason for r in db.execute(select(refusals))}
    engine.dispose()
    return found


# Learners taken out of the term (a learner who dropped the course): in no export, count or
# warning, and not graded; their files, history and grades stay where they are, so taking
# the drop back (`undrop`) brings them back as they were.
dropped = Table(
    "autograd_lab_dropped", _metadata,
    Column("student", String(128), primary_key=True),
    Column("at", DateTime, nullable=False),
    Column("note", Text, nullable=False, default=""),
)


def drop(course, students: list[str], note: str = "") -> None:
    engine = _engine(course)
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    with engine.begin() as db:
        for student in students:
            db.execute(delete(dropped).where(dropped.c.student == student))
            db.execute(dropped.insert().values(student=student, at=now, note=note))
    engine.dispose()


def undrop(course, students: list[str]) -> list[str]:
    """Take the drop of `students` back; returns those who had been dropped."""
    engine = _engine(course)
    with engine.begin() as db:
        back = [s for s in students if db.execute(
            delete(dropped).where(dropped.c.student == s)).rowcount]
    engine.dispose()
    return back


def read_dropped(course) -> dict[str, dict]:
    """{student: {"at": when, "note": why}} of the learners taken out of the term."""
    engine = _engine(course)
    with engine.connect() as db:
        found = {r.student: {"at": r.at, "note": r.note} for r in db.execute(select(dropped))}
    engine.dispose()
    return found


# The file name an LMS's download gave a learner's submission (Canvas's
# `<lastfirst>[_late]_<user id>_<submission id>_<file>`): the feedback zip Canvas's "Re-upload
# Submissions" takes names each learner's page so (lms/canvas.py's feedback_zip).
lms_files = Table(
    "autograd_lab_lms_file", _metadata,
    Column("lesson", String(128), primary_key=True),
    Column("student", String(128), primary_key=True),
    Column("lms", String(32), nullable=False),
    Column("name", Text, nullable=False),
)


def record_lms_files(course, files: dict[tuple[str, str], tuple[str, str]]) -> None:
    """Keep {(lesson, student): (lms, the download's file name)}, replacing older ones."""
    if not files:
        return
    engine = _engine(course)
    with engine.begin() as db:
        for (lesson, student), (kind, name) in files.items():
            db.execute(delete(lms_files).where(lms_files.c.lesson == lesson,
                                               lms_files.c.student == student))
            db.execute(lms_files.insert().values(lesson=lesson, student=student, lms=kind,
                                                 name=name))
    engine.dispose()


def read_lms_files(course, lesson: str) -> dict[str, tuple[str, str]]:
    """{student: (lms, file name)} of a lesson's submissions collected from an LMS."""
    engine = _engine(course)
    with engine.connect() as db:
        found = {r.student: (r.lms, r.name) for r in db.execute(
            select(lms_files).where(lms_files.c.lesson == lesson))}
    engine.dispose()
    return found
