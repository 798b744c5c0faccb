"""The key each submission's hidden tests draw their inputs with.

A hidden test of an exercise about a method (use backward, walk the graph yourself, one
backward per row, micro-batches) tries the learner's function on inputs of its own making:
functions, graphs and batches drawn at grading time (``autograd_lab.checks.judging``). They
are drawn from a key made here from the course's secret and the learner and lesson, so that

- no learner can know them before grading (the secret never leaves the gradebook's database,
  which no grading kernel can reach), so no answer can be written for them in advance;
- one learner's cases tell nothing of another's;
- the same submission graded again draws the same cases, and gets the same grade.

The secret is made once per course, at random, the first time anything is graded, and kept in
the gradebook's own database (SQLite, or the PostgreSQL that several graders share, so every
grader of a class draws alike).
"""
from __future__ import annotations

import hashlib
import hmac
import secrets

from sqlalchemy import Column, MetaData, String, Table, create_engine, select
from sqlalchemy.exc import DBAPIError

_metadata = MetaData()
_table = Table(
    "autograd_lab_secret", _metadata,
    Column("name", String(64), primary_key=True),
    Column("value", String(128), nullable=False),
)
_NAME = "hidden-test-inputs"
_known: dict[str, bytes] = {}           # gradebook url -> its secret, read once a process


def _secret(course) -> bytes:
    url = course.gradebook_url
    if url in _known:
        return _known[url]
    course.gradebook().close()          # (nbgrader sets a new database up itself first)
    engine = create_engine(url, future=True)
    read = select(_table.c.value).where(_table.c.name == _NAME)
    try:
        # (read first: every grading process of a run reads it, and only the first writes)
        with engine.connect() as db:
            value = db.execute(read).scalar_one_or_none()
    except DBAPIError:                  # no table yet
        value = None
    if value is None:
        _metadata.create_all(engine)
        with engine.begin() as db:
            if db.dialect.name == "postgresql":
                from sqlalchemy.dialects.postgresql import insert
            else:
                from sqlalchemy.dialects.sqlite import insert
            # two graders starting together: the first one's secret is every one's
            db.execute(insert(_table).values(name=_NAME, value=secrets.token_hex(32))
                       .on_conflict_do_nothing(index_elements=["name"]))
            value = db.execute(read).scalar_one()
    engine.dispose()
    _known[url] = bytes.fromhex(value)
    return _known[url]


def ready(course) -> None:
    """Make the course's secret now, if it has none (``grade`` does, before its grading
    processes start: they then only read it)."""
    _secret(course)


def key(course, lesson: str, student: str) -> bytes:
    """The key the hidden tests of ``student``'s ``lesson`` draw their inputs with."""
    return hmac.new(_secret(course), f"{lesson}\0{student}".encode(), hashlib.sha256).digest()
