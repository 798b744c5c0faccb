"""Grade a lesson for a whole class: one process per submission, ``jobs`` at a time.

nbgrader grades a class in one process, one submission after another, and one submission that
breaks it (a dead kernel, an old metadata format) can stop or spoil the rest. Here every
submission is graded by a process of its own (``worker.grade_one``), forked from a process that
has nbgrader imported already (the run's forkserver, or the command itself: ``_context``), so a
process costs milliseconds; whatever happens inside it, the others go on, and a process that
hangs past its wall-clock limit is killed with its kernel.

Several graders (the tasks of a Slurm array, the pods of a Kubernetes Job) split a class with
``Shard``, and lease each submission before they grade it (``gradebook/leases.py``), so that a
grader restarted, or started twice, grades nothing twice and leaves nothing out.
"""
from __future__ import annotations

import contextlib
import dataclasses
import importlib
import multiprocessing
import resource
import select
import signal
import threading
import os
import re
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from multiprocessing import forkserver
from multiprocessing.connection import wait
from pathlib import Path
from typing import Callable, Iterable

from ..gradebook import leases, secret, status
from ..reading.plain import printable
from ..sandbox import warm
from ..course import Course

# what the forkserver loads before forking a grading process (preload.py)
PRELOAD = "autograd_lab_grader.steps.preload"
PRELOAD_RELEASED = "AUTOGRAD_LAB_RELEASED"  # (preload.RELEASED: what it renders first)
# bytes of address space a grading process may use (its kernel has a limit of its own): a
# learner's answer that stands for more than the grader can hold fails its own submission,
# never the machine (the out-of-memory killer takes other gradings with it). A grading
# process of lesson 02 peaks at about 600 MB of address space, 100 MB of it resident.
GRADER_MEMORY = 3 * 1024**3


@dataclass(frozen=True)
class Shard:
    """Part K of N of the class (K counts from 1). The learners with a submission, sorted by
    id, are dealt out in turn (the first to part 1, the second to part 2, ...), and so are
    those without one: the parts differ by one submission at most, and every grader works its
    part out alone, from the same submitted/ folder and roster, without talking to the
    others. (Collect before the graders start: a learner collected while they plan moves
    the deal for those after them; leases keep anyone from being graded twice, and the
    export after the run lists what is not graded yet.)"""
    k: int = 1
    n: int = 1

    @classmethod
    def parse(cls, text: str) -> "Shard":
        k, _, n = text.partition("/")
        shard = cls(int(k), int(n))
        if not 1 <= shard.k <= shard.n:
            raise ValueError(f"--shard K/N needs 1 <= K <= N, not {text}")
        return shard

    def pick(self, students: Iterable[str]) -> list[str]:
        """This part's share of students, sorted."""
        return sorted(students)[self.k - 1::self.n]


# Below this many submissions a run starts its kernels cold: the warm server's start (a sandbox
# that imports what every kernel imports) costs more than it saves on so few kernels
# (benchmarks/grading_cpu.py: docs/measurements/grading.md)
WARM_FROM = 3


@dataclass(frozen=True)
class Options:
    jobs: int = 0                 # 0: one more than the cores (default_jobs)
    force: bool = False           # grade again what was graded before
    timeout: int | None = None    # seconds per cell; None: the course's Execute.timeout
    memory: int | None = None     # bytes of address space per kernel; None: start.Limits'
    grader_memory: int = GRADER_MEMORY  # bytes of address space per grading process
    shard: Shard = Shard()
    sandboxed: bool = True        # False: learners' code runs as the grader (--no-sandbox)
    # kernels forked from a warm server where it can run (warm.py); False: every kernel cold;
    # None: warm when the run grades at least WARM_FROM submissions (the command's default)
    warm: bool | None = True
    students: tuple[str, ...] = ()  # only these learners, graded again whatever they were
    # the grading run this grader is part of (leases.py): every grader of a Slurm array or a
    # Kubernetes Job shares one, so that a restarted or duplicated grader grades nothing the
    # run has graded; "": a run of its own
    run: str = ""

    def __post_init__(self):
        # (a negative --jobs would start nothing and wait for ever)
        for name in ("jobs", "timeout", "memory", "grader_memory"):
            value = getattr(self, name)
            if value is not None and value < (0 if name == "jobs" else 1):
                raise ValueError(f"grading option {name} must be "
                                 f"{'0 or more' if name == 'jobs' else 'positive'}, not {value}")


def _last_change(folder: Path) -> float:
    return max((p.stat().st_mtime for p in folder.rglob("*")), default=folder.stat().st_mtime)


def _child(course, lesson, student, options, server, output, conn, grader, scratch):
    """A grading process: its output, and its kernel's (``start.KernelLog``), go to `output`
    (the pipe its grading log is written from, ``Log``), its result to conn; its staging
    folder is made in `scratch`, the run's. It dies with the grader that holds its lease
    (`grader`: its pid), so that a grader killed half way leaves nothing grading, and writing
    nbgrader's tables, behind it."""
    _die_with(grader)
    os.dup2(output.fileno(), 1)
    os.dup2(output.fileno(), 2)
    output.close()
    # (forked from the command (_context): not its way of stopping, nor its progress bar's
    # hold on the standard streams)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    print("grading process forked from "
          + ("the command" if os.getppid() == grader else "the run's forkserver"), flush=True)
    from .worker import grade_one, out_of_memory
    limit_memory(options.grader_memory)
    started = time.monotonic()
    try:
        row = grade_one(course, lesson, student, timeout=options.timeout, memory=options.memory,
                        sandboxed=options.sandboxed, server=server, scratch=scratch)
    except MemoryError:
        # (what held the memory is gone with the frames the error left: a row is small)
        row = status.Row(lesson, student, status.FAILED, reason=out_of_memory(),
                         seconds=time.monotonic() - started)
        print(f"autograd-lab: {row.reason}", file=sys.stderr, flush=True)
    conn.send(row)


class Log:
    """A grading log (``grading-logs/<lesson>/<student>.log``), written from a pipe
    (``read``): what its grading process writes to its standard output and error, its
    kernel's output among it (``start.KernelLog`` copies a bounded part of it there). Every
    control character but newline and tab is written as its escape (``plain.printable``: a
    kernel writes what it likes, and an instructor reads the log in a terminal), invalid UTF-8
    as ``\\x..``, and no more than ``LOG_LIMIT`` bytes (a kernel run without the sandbox
    writes to the pipe itself, past any file-size limit), what is left out said at the end.
    The pipe is read by a thread of the grader, to its end: once its writers have all ended."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # (appending: no writer may rewrite what came before)
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        self._readers = []

    def read(self, receive, limit: int | None = None) -> None:
        """Write what comes through `receive` (a pipe's reading end) into the log, in a thread."""
        reader = threading.Thread(target=self._copy, args=(receive, limit), daemon=True,
                                  name=f"log {self.path.name}")
        self._readers.append(reader)
        reader.start()

    def _copy(self, receive, limit):
        import codecs

        from ..reading.plain import printable

        decode = codecs.getincrementaldecoder("utf-8")(errors="backslashreplace").decode
        written = left_out = 0
        try:
            while chunk := os.read(receive.fileno(), 1 << 16):
                data = printable(decode(chunk)).encode()
                if limit is not None:
                    kept = data[:max(0, limit - written)]
                    left_out += len(data) - len(kept)
                    data = kept
                written += len(data)
                self._put(data)
            self._put(printable(decode(b"", final=True)).encode())
            if left_out:
                self._put(f"\n[{left_out} more bytes of output not kept]\n".encode())
        finally:
            receive.close()

    def _put(self, data: bytes) -> None:
        data = memoryview(data)
        while data:
            data = data[os.write(self._fd, data):]

    def done(self, timeout: float = 10.0) -> None:
        """Wait for the log to be written to its end (its process and kernel gone), a while
        at most; then close it."""
        deadline = time.monotonic() + timeout
        for reader in self._readers:
            reader.join(max(0.0, deadline - time.monotonic()))
        if not any(reader.is_alive() for reader in self._readers) and self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def limit_memory(limit: int) -> None:
    """Hold this process to `limit` bytes of address space (the soft limit: a kernel it
    starts sets its own, `--memory`, above it or below). Past it an allocation fails with
    MemoryError instead of growing until the out-of-memory killer ends some process."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    print(f"memory limit of the grading process: {limit // 1024**2} MB", flush=True)


def _die_with(grader: int) -> None:
    """Kill this process the moment `grader` ends (its kernel dies with it: kernel/start.py).
    (Its parent is the forkserver, which outlives the grader as long as any process it
    forked does: a parent-death signal would never come.)"""
    try:
        pidfd = os.pidfd_open(grader)
    except ProcessLookupError:
        os._exit(1)

    def watch():
        select.select([pidfd], [], [])        # readable once the grader has ended
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, daemon=True, name="die-with-grader").start()


def default_jobs() -> int:
    """One more than the cores: a grading process spends part of its time waiting for its
    kernel and its kernel for it (lesson 03, 30 submissions, 2 cores: 0.72 s a notebook with
    two at a time, 0.65 with three, 2026-11-25)."""
    return (os.cpu_count() or 1) + 1


def _cell_timeout(course: Course, options: Options) -> int:
    return options.timeout or course.config().Execute.get("timeout", 30)


def wall_limit(course: Course, lesson: str, options: Options) -> float:
    """Seconds one submission may take in all: every code cell at its time limit, and a minute."""
    import nbformat

    release = course.directory("release") / lesson / f"{lesson}.ipynb"
    cells = sum(c.cell_type == "code" for c in nbformat.read(release, as_version=4).cells)
    return _cell_timeout(course, options) * cells + 60


def plan(course: Course, lesson: str, options: Options):
    """(students to grade, rows of the missing, students graded before and unchanged)."""
    with course.gradebook() as gb:
        gb.find_assignment(lesson)        # MissingEntry: the lesson was never released here
        known = {s.id for s in gb.students}
    submitted = set(course.students_with(lesson))
    previous = status.read(course, lesson)
    if options.students:
        unknown = sorted(set(options.students) - known - submitted)
        if unknown:
            raise ValueError(f"no learner {', '.join(unknown)} in the gradebook or in "
                             f"submitted/ for {lesson}")
    todo, rows, skipped = [], [], []
    # a learner taken out of the term is not graded (status.drop: undone, they are graded
    # as anyone else, from their files as they are)
    out = set(status.read_dropped(course))
    if set(options.students) & out:
        raise ValueError(f"{', '.join(sorted(set(options.students) & out))}: taken out of the "
                         "term, not graded (`autograd-lab drop --undo ID` brings them back)")
    submitted, known = submitted - out, known - out
    mine = set(options.shard.pick(submitted)) | set(options.shard.pick(known - submitted))
    for student in sorted(mine):
        if options.students and student not in options.students:
            continue
        if student not in submitted:
            rows.append(status.Row(lesson, student, status.MISSING, reason="no submission"))
            continue
        if not _wanted(course, lesson, student, options, previous.get((lesson, student))):
            skipped.append(student)
            continue
        todo.append(student)
    return todo, rows, skipped


def _wanted(course: Course, lesson: str, student: str, options: Options,
            before: status.Row | None):
    """Whether a submission is to be graded, given its status row: not when it was graded
    before and has not changed since (unless forced, or its learner named)."""
    return (options.force or bool(options.students) or before is None
            or before.status not in (status.GRADED, status.MANUAL)
            or _last_change(course.submission(lesson, student))
            > before.graded_at.replace(tzinfo=timezone.utc).timestamp())


def grade(course: Course, lesson: str, options: Options = Options(),
          on_start: Callable[[int, list[str]], None] = lambda total, skipped: None,
          on_done: Callable[[status.Row], None] = lambda row: None,
          on_running: Callable[[list], None] = lambda running: None) -> list[status.Row]:
    """Grade every submission of `lesson` in the shard; returns a status row per submission
    graded (or found missing) by this run, and records them in the gradebook. on_start gets
    how many will be graded, and who was skipped (graded before, unchanged since); on_running,
    about once a second, (student, seconds so far) of those being graded, longest first."""
    if not options.run:
        options = dataclasses.replace(options, run=uuid.uuid4().hex)
    todo, rows, skipped = plan(course, lesson, options)
    status.record(course, rows)
    on_start(len(todo), skipped)

    def wanted(lesson, student, row):
        # (looked at again under the lease: another grader may have graded it since the plan)
        return _wanted(course, lesson, student, options, row)

    def changed_after(lesson, student, when):
        return _last_change(course.submission(lesson, student)) \
            > when.replace(tzinfo=timezone.utc).timestamp()

    return rows + run(course, [(lesson, student) for student in todo], options, on_done,
                      on_running, wanted, changed_after)


def run(course: Course, submissions: list[tuple[str, str]], options: Options = Options(),
        on_done: Callable[[status.Row], None] = lambda row: None,
        on_running: Callable[[list], None] = lambda running: None,
        wanted: Callable[[str, str, status.Row | None], bool] = lambda lesson, student, row:
        True,
        changed_after: Callable[[str, str, datetime], bool] = lambda lesson, student, when:
        False) -> list[status.Row]:
    """Grade (lesson, student) pairs, `options.jobs` processes at a time; record and return
    their status rows. Each is leased first (leases.py): one that another grader is grading,
    that this run has graded, that another grader finished since this one started (unless
    `changed_after(lesson, student, then)`), or that `wanted(lesson, student, its status
    row)` no longer wants, is left out (no row)."""
    _enrol(course, {student for _, student in submissions})
    if submissions:
        secret.ready(course)        # (made here once: the grading processes only read it)
    with contextlib.ExitStack() as stack:
        # first in, so last out: once stopping, a SIGTERM stays ignored until every clean-up
        # below (the warm server, the run's folder, the leases) is done
        stack.enter_context(_stopped_by_sigterm())
        held = stack.enter_context(leases.Leases(course, options.run or uuid.uuid4().hex))
        # Every grading process stages its learner's notebook in this folder of the run's, so
        # that a run that ends early leaves none behind (a killed process removes nothing).
        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="autograd-lab-run-"))
        server = None
        warm_start = options.warm if options.warm is not None \
            else len(submissions) >= WARM_FROM
        if options.sandboxed and warm_start and submissions:
            try:
                server = stack.enter_context(warm.Server())
            except (warm.Unavailable, OSError) as error:
                print(f"autograd-lab: kernels start cold: {error}", file=sys.stderr)
        context = _context(len(submissions), options.jobs or default_jobs())
        # (the lessons' released Markdown, rendered where the grading processes fork from)
        released = _released(course, submissions)
        if context.get_start_method() == "fork":
            # (once, here: each process forked has it)
            importlib.import_module(PRELOAD).render_released(released)
        elif submissions:
            context.set_forkserver_preload([PRELOAD])
            # importing nbgrader there while the server imports (a forkserver started by an
            # earlier run of this process is used as it is)
            with _environment(PRELOAD_RELEASED, os.pathsep.join(released)):
                forkserver.ensure_running()
        socket = ""
        if server is not None:
            try:
                socket = server.ready()
            except warm.Unavailable as error:
                print(f"autograd-lab: kernels start cold: {error}", file=sys.stderr)
        return _run(course, submissions, options, context, socket, on_done, on_running,
                    held, wanted, changed_after, scratch)


def _context(submissions: int, jobs: int) -> multiprocessing.context.BaseContext:
    """How a run starts its grading processes. Each is forked from a forkserver, a process
    started afresh that imports what grading needs (``preload``) and nothing of the run:
    no connection, no thread, none of the command's state. That import is 2 CPU-seconds, paid
    once a run, and most of it the command has made already: a regrade of one learner paid
    it twice, a third again over nbgrader's own CPU (docs/measurements/grading.md). So a run
    that forks all its processes at once, before any thread of its own starts, forks them
    from this process instead (one with threads alive, a progress bar's or a test runner's,
    could hand a child a lock held for ever). A child forked here takes no connection of the
    run's (the engines are dropped at the fork: course.py; the leases' it never uses), and
    the warm server's socket is all it needs of that server."""
    # (on Linux: macOS's own libraries are not safe in a child forked without exec)
    if submissions <= jobs and threading.active_count() == 1 and sys.platform == "linux":
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver")


def _released(course: Course, submissions: list[tuple[str, str]]) -> list[str]:
    """The released notebook of each lesson graded, once each."""
    return [str(course.directory("release") / lesson / f"{lesson}.ipynb")
            for lesson in sorted({lesson for lesson, _ in submissions})]


@contextlib.contextmanager
def _environment(name: str, value: str):
    """`name` set to `value` in this process's environment, then as it was."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


def _enrol(course: Course, students: set[str]) -> None:
    """Every learner about to be graded into the gradebook first, from this one process.
    Otherwise each grading process adds its own learner (nbgrader's autograde), and two
    adding one learner at once (two lessons of one learner graded together, as selftest
    grades its "solution" of each lesson) collide: one failed with "UNIQUE constraint failed:
    student.id". Another grader adding the same learner meanwhile is no error."""
    from nbgrader.api import InvalidEntry

    with course.gradebook() as gb:
        for student in sorted(students - {s.id for s in gb.students}):
            try:
                gb.add_student(student)
            except InvalidEntry:
                pass


@contextlib.contextmanager
def _stopped_by_sigterm():
    """SIGTERM (Slurm's scancel, requeue and time limit, Kubernetes stopping a pod, kill)
    ends the run as an interrupt does: its grading processes are stopped, its warm server and
    folders removed, its leases given back for the next grader, instead of dying on the spot.
    (Only in the main thread, where Python can take a signal.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    stopping = []

    def stop(signum, frame):
        # once: a second SIGTERM must not cut the clean-up short (the folders, the leases),
        # nor kill the process on its way out once it is done
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stopping.append(signum)
        raise SystemExit(128 + signum)
    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        if not stopping:
            signal.signal(signal.SIGTERM, before)


def _run(course, submissions, options, context, server, on_done, on_running, held, wanted,
         changed_after, scratch):
    jobs = options.jobs or default_jobs()
    limits = {lesson: wall_limit(course, lesson, options) for lesson, _ in submissions}
    waiting = list(reversed(submissions))
    running = {}     # pipe -> (process, lesson, student, started)
    rows = []
    forked = []      # (log, its pipe's reading end) of the processes this round started
    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                lesson, student = waiting.pop()
                if not held.take(lesson, student,
                                 lambda row, lesson=lesson, student=student:
                                 wanted(lesson, student, row),
                                 lambda when, lesson=lesson, student=student:
                                 changed_after(lesson, student, when)):
                    continue
                receive, send = context.Pipe(duplex=False)
                log = Log(_log(course, lesson, student))
                read_log, write_log = context.Pipe(duplex=False)
                process = context.Process(target=_child, daemon=True, args=(
                    course, lesson, student, options, server, write_log, send, os.getpid(),
                    scratch))
                process.start()
                for end in (send, write_log):
                    end.close()
                forked.append((log, read_log))
                running[receive] = (process, lesson, student, time.monotonic(), log)
            # (the logs' readers are threads: started once this round's processes are all
            # forked, so that a run forking from this process (_context) forks with none)
            for log, read_log in forked:
                log.read(read_log, LOG_LIMIT)
            forked.clear()
            now = time.monotonic()
            on_running(sorted(((student, now - started) for _, _, student, started, _
                               in running.values()), key=lambda item: -item[1]))
            # a pipe is ready when its process sent its row, or died without one (end of file)
            ready = wait(list(running), timeout=1.0)
            now = time.monotonic()
            for receive, (process, lesson, student, started, log) in list(running.items()):
                over = now - started > limits[lesson]
                if receive not in ready and not over:
                    continue
                row = _collect(process, receive, lesson, student, over, limits[lesson],
                               now - started, log, options.grader_memory)
                del running[receive]
                if not held.finish(row):
                    print(f"autograd-lab: {printable(student)}: this grader's lease was lost (its database "
                          "connection ended); its grade is not recorded", file=sys.stderr)
                    continue
                rows.append(row)
                on_done(row)
    finally:
        # stopped early (SIGTERM, an error): no grading goes on once the run has ended,
        # and none outlives it while its lease is given back
        for process, *_ in running.values():
            if process.is_alive():
                process.kill()         # its kernel dies with it (kernel/start.py)
        for process, *_, log in running.values():
            process.join()
            log.done(1.0)
    return rows


# bytes a grading log keeps: twice what its kernel's output may take of it
# (start.Limits.file_size, start.KernelLog's limit)
LOG_LIMIT = 128 * 1024**2


def _log(course: Course, lesson: str, student: str) -> Path:
    return course.root / "grading-logs" / lesson / f"{student}.log"


def _tail(log: Path, size: int = 64 * 1024) -> str:
    """The end of a grading log (a kernel writes there too, up to its file-size limit)."""
    try:
        with open(log, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - size))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def _last_line(log: Path) -> str:
    lines = _tail(log).strip().splitlines()
    return lines[-1][:300] if lines else ""


# what the end of a grading log shows when its process ran out of memory (Python's own
# MemoryError, or one it could not even raise: "Fatal Python error: ... MemoryError")
_OUT_OF_MEMORY = re.compile(r"MemoryError|Cannot allocate memory|std::bad_alloc")


def _died(process, log: Path, grader_memory: int) -> str:
    """Why a grading process ended without a row, as far as its exit code and log say."""
    from .worker import out_of_memory
    code = process.exitcode
    tail = _tail(log)
    if _OUT_OF_MEMORY.search(tail[-4096:]):
        return out_of_memory(grader_memory)
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        said = (" (likely the system's out-of-memory killer, or its cgroup's)"
                if -code == signal.SIGKILL else "")
        return f"the grading process was killed by {name}{said}: {_last_line(log)}"[:400]
    return f"the grading process died (exit code {code}): {_last_line(log)}"


def _collect(process, receive, lesson, student, over, limit, seconds, log: Log,
             grader_memory=GRADER_MEMORY) -> status.Row:
    row = None
    if receive.poll():
        try:
            row = receive.recv()
        except EOFError:
            row = None
    if row is None:
        if process.is_alive():
            process.kill()     # its kernel dies with it (kernel/start.py)
        process.join()
        log.done()             # (what it said last is read from the log)
        reason = (f"grading took longer than {limit:.0f} s and was stopped" if over else
                  _died(process, log.path, grader_memory))
        row = status.Row(lesson, student, status.FAILED, reason=reason, seconds=seconds)
    process.join()
    log.done()
    receive.close()
    return row
