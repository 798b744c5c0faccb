"""Who is grading a submission, so that graders sharing a gradebook grade each one once.

Several graders share one PostgreSQL gradebook: the tasks of a Slurm array or the pods of a
Kubernetes Job, each grading its part of the class (``grade.Shard``). A grader can die half
way (a node fails, a pod is evicted, the out-of-memory killer) and be started again (Slurm's
requeue, the Job's retry) while, now and then, the one it replaces still runs. So before it
grades a submission, a grader takes a *lease* on it, and it records the grade only while it
holds the lease:

- The lease is a PostgreSQL session-level advisory lock on the submission
  (``pg_try_advisory_lock``), held by the grader's own connection while the submission is
  graded. It lasts exactly as long as the grader's connection. A grader
  that dies, however it dies, loses its connection and with it every lease at once (the
  server sees the socket close; for a machine gone silent, the TCP keepalives set below end
  the session within about a minute), so the grader started in its place takes the
  submission over at once, and never while the first one still runs. A lease taken by
  someone else is skipped: that grader is grading it.
- Under the lease, the table ``autograd_lab_claim`` (named so before leases were called
  leases: gradebooks have it) says what has become of the submission: which run
  (``--run``: every grader of one Slurm array or Kubernetes Job shares it) graded it last,
  how many gradings of it that run started (``attempts``: the one thing "attempt" means in
  the grader) and when the last one ended
  (``done_at``, the database's clock). A submission is not graded again by a grader when
  its run has graded it already (a restarted or duplicated grader of the run), or when any
  grader finished it after this one started (two graders given the same part). The grade
  itself (``status.submissions``) and ``done_at`` are written in one transaction, on the
  connection that holds the lease: if that connection is gone, nothing is written.

What a lease cannot cover: nbgrader writes its own tables from the grading process, not
under the lease. That process dies with its grader (``grade._child``), so a dead grader
stops writing at once; a grader cut off from the database while its grading process still
reaches it (a network split that leaves one connection and breaks the other) could let a
second grader grade that one submission too. Its grade is then written once, by whoever
still holds the lease.

A SQLite gradebook is a file on one machine, for one grader at a time: the table and its
rules are the same, without the lock.
"""
from __future__ import annotations

import hashlib
import os
import socket
from datetime import datetime, timezone
from typing import Callable

from sqlalchemy import (Column, DateTime, Integer, MetaData, String, Table, create_engine,
                        select, text)
from sqlalchemy.exc import DBAPIError

from . import status

_metadata = MetaData()
leases = Table(
    "autograd_lab_claim", _metadata,
    Column("lesson", String(128), primary_key=True),
    Column("student", String(128), primary_key=True),
    Column("run", String(128), nullable=False),       # the run that graded it last
    Column("owner", String(256), nullable=False),     # host:pid of that grader
    Column("attempts", Integer, nullable=False),      # gradings of it that run started
    Column("started_at", DateTime, nullable=False),
    Column("done_at", DateTime, nullable=True),       # None: started, not finished
)

# a dead peer ends its session (and its advisory locks) after about idle + interval x count s
KEEPALIVES = dict(idle=30, interval=10, count=3)


def lock_key(lesson: str, student: str) -> int:
    """The submission's advisory lock: 64 bits of a hash, signed as PostgreSQL's bigint."""
    digest = hashlib.blake2b(f"autograd-lab\0{lesson}\0{student}".encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "big", signed=True)


def _connect_args(url: str) -> dict:
    if not url.startswith("postgresql"):
        return {}
    k = KEEPALIVES
    return dict(keepalives=1, keepalives_idle=k["idle"], keepalives_interval=k["interval"],
                keepalives_count=k["count"],
                # the server's side: it is the server that must notice a grader gone silent
                options=f"-c tcp_keepalives_idle={k['idle']} "
                        f"-c tcp_keepalives_interval={k['interval']} "
                        f"-c tcp_keepalives_count={k['count']}")


class _NotOurs(Exception):
    """(rolls back the transaction that found a lease no longer this grader's)"""


class Leases:
    """One grader's leases, over a connection of its own for the length of a grading run
    (a context manager). `run` names the run (graders of one Slurm array or Kubernetes Job
    share it)."""

    def __init__(self, course, run: str):
        self.course, self.run = course, run
        self.owner = f"{socket.gethostname()}:{os.getpid()}"[:256]
        self.held: set[tuple[str, str]] = set()

    def __enter__(self) -> "Leases":
        status.tables(self.course)          # nbgrader's tables and the status table first
        url = self.course.gradebook_url
        self.postgres = url.startswith("postgresql")
        self.engine = create_engine(url, future=True, connect_args=_connect_args(url))
        for tries in range(3):
            try:
                _metadata.create_all(self.engine)
                break
            except DBAPIError:
                # graders starting together: another made the table between look and CREATE
                if tries == 2:
                    raise
        self.db = self.engine.connect()
        self.started = self._now()
        return self

    def __exit__(self, *exc):
        try:
            for lesson, student in list(self.held):
                self.release(lesson, student)
            self.db.close()
        finally:
            self.engine.dispose()

    def _now(self) -> datetime:
        """The database's clock (one clock for every grader), naive UTC as status keeps it."""
        if self.postgres:
            with self.db.begin():
                now = self.db.execute(text("SELECT clock_timestamp() AT TIME ZONE 'UTC'"))
                return now.scalar_one()
        return datetime.now(timezone.utc).replace(tzinfo=None)

    def _lock(self, lesson: str, student: str) -> bool:
        if not self.postgres:
            return True
        with self.db.begin():
            return self.db.execute(text("SELECT pg_try_advisory_lock(:key)"),
                                   {"key": lock_key(lesson, student)}).scalar_one()

    def _unlock(self, lesson: str, student: str) -> None:
        if self.postgres:
            with self.db.begin():
                self.db.execute(text("SELECT pg_advisory_unlock(:key)"),
                                {"key": lock_key(lesson, student)})

    def take(self, lesson: str, student: str, wanted: Callable[[status.Row | None], bool],
             changed_after: Callable[[datetime], bool] = lambda when: False) -> bool:
        """Lease a submission to grade it now. False when another grader holds it, when this
        run graded it already or another grader finished it after this one started (unless
        `changed_after(that time)`: collected again since), or when `wanted(its status row,
        or None)` says it needs no grading (graded before and unchanged since)."""
        if not self._lock(lesson, student):
            return False
        try:
            with self.db.begin():
                key = (leases.c.lesson == lesson) & (leases.c.student == student)
                lease = self.db.execute(select(leases).where(key)).first()
                row = self.db.execute(select(status.submissions).where(
                    (status.submissions.c.lesson == lesson)
                    & (status.submissions.c.student == student))).first()
                done = lease is not None and lease.done_at is not None and (
                    lease.run == self.run or lease.done_at > self.started) \
                    and not changed_after(lease.done_at)
                if done or not wanted(status.Row(**row._mapping) if row is not None else None):
                    taken = False
                else:
                    attempts = lease.attempts + 1 if lease is not None and lease.run == self.run \
                        else 1
                    values = dict(run=self.run, owner=self.owner, attempts=attempts,
                                  started_at=self._clock(), done_at=None)
                    if lease is None:
                        self.db.execute(leases.insert().values(lesson=lesson, student=student,
                                                               **values))
                    else:
                        self.db.execute(leases.update().where(key).values(**values))
                    taken = True
        except BaseException:
            self._unlock(lesson, student)
            raise
        if not taken:
            self._unlock(lesson, student)
            return False
        self.held.add((lesson, student))
        return True

    def _clock(self):
        """now() inside a transaction already begun."""
        if self.postgres:
            return self.db.execute(text("SELECT clock_timestamp() AT TIME ZONE 'UTC'")
                                   ).scalar_one()
        return datetime.now(timezone.utc).replace(tzinfo=None)

    def finish(self, row: status.Row) -> bool:
        """Record a leased submission's status row and mark it done, in one transaction on
        the connection that holds the lease; then let the lease go. False (nothing written)
        when the lease is no longer this grader's."""
        lesson, student = row.lesson, row.student
        try:
            with self.db.begin():
                done = self.db.execute(leases.update().where(
                    (leases.c.lesson == lesson) & (leases.c.student == student)
                    & (leases.c.owner == self.owner) & (leases.c.run == self.run)
                    & leases.c.done_at.is_(None)).values(done_at=self._clock()))
                if done.rowcount != 1:
                    raise _NotOurs()
                status.write(self.db, [row])
        except _NotOurs:
            return False
        finally:
            self.release(lesson, student)
        return True

    def release(self, lesson: str, student: str) -> None:
        """Let a lease go (its submission not finished: the next grader takes it)."""
        if (lesson, student) in self.held:
            self.held.discard((lesson, student))
            self._unlock(lesson, student)


def read(course) -> dict[tuple[str, str], dict]:
    """{(lesson, student): lease row} (tests, and an instructor asking who graded what)."""
    engine = create_engine(course.gradebook_url, future=True)
    try:
        _metadata.create_all(engine)
        with engine.connect() as db:
            return {(r.lesson, r.student): dict(r._mapping) for r in db.execute(select(leases))}
    finally:
        engine.dispose()
