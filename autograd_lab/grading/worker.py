"""Grade one submission, inside a process of its own (``grade.py`` starts one per submission).

The learner's folder is first copied to a private staging folder, so that nothing the grader
does (nbgrader included) can change a submitted file, and so that a notebook saved under the
wrong name is graded under the lesson's name. nbgrader's ``autograde`` then runs on that copy
with this package's kernel (``kernel.py``), and the outcome comes back as a status row.
"""
from __future__ import annotations

import re
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
from nbgrader.converters import Autograde
from nbgrader.preprocessors import Execute, LimitOutput

from . import kernel, sandbox, status
from .course import Course
from .kernel import GradingExecute, TruncateOutput

# what nbgrader's log says when a submission could not be graded, and what to tell the instructor
_FAILURES = [
    (r"DeadKernelError|Kernel died", "the kernel died (os._exit, a crash, or the memory limit)"),
    (r"ignored the interrupt|UnresponsiveKernelError|kernel became unresponsive",
     "a cell ran past the time limit and did not stop when interrupted"),
    (r"SchemaTooOld|old version .*of the nbgrader metadata",
     "the notebook's nbgrader metadata is in an old format"),
    (r"SchemaTooNew|newer version .*of the nbgrader metadata",
     "the notebook's nbgrader metadata is from a newer nbgrader"),
]


class NotGradable(Exception):
    def __init__(self, status, reason):
        super().__init__(reason)
        self.status, self.reason = status, reason


def stage(source: Path, staged: Path, lesson: str) -> str:
    """Copy a submission folder to `staged`, the notebook named `<lesson>.ipynb`. Returns a note
    for the instructor ("" when nothing needed saying)."""
    if not source.is_dir():
        raise NotGradable(status.MISSING, "no submission")
    shutil.copytree(source, staged)
    expected = staged / f"{lesson}.ipynb"
    note = ""
    if not expected.exists():
        notebooks = sorted(p.name for p in staged.glob("*.ipynb"))
        if not notebooks:
            raise NotGradable(status.MISSING, f"no notebook in {source}")
        if len(notebooks) > 1:
            raise NotGradable(status.FAILED, f"no {lesson}.ipynb, and several other notebooks "
                                             f"to choose from: {', '.join(notebooks)}")
        (staged / notebooks[0]).rename(expected)
        note = f"graded {notebooks[0]!r} as {expected.name!r}"
    try:
        nbformat.read(expected, as_version=4)
    except Exception as error:          # not JSON, not a notebook: nbformat says which
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise NotGradable(status.FAILED, f"not a valid notebook ({type(error).__name__}: "
                                         f"{first_line[:200]})")
    return note


def _failure_reason(log: str) -> str:
    for pattern, reason in _FAILURES:
        if re.search(pattern, log):
            return reason
    errors = [line for line in log.splitlines() if line.startswith("[ERROR]")]
    return errors[0][len("[ERROR] "):][:300] if errors else "nbgrader failed (see the log)"


def _timeouts(notebook: Path) -> list[str]:
    """The cells of an autograded notebook that the time limit stopped."""
    nb = nbformat.read(notebook, as_version=4)
    return [cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell {i}"
            for i, cell in enumerate(nb.cells)
            if any(o.get("ename") == "CellTimeoutError" for o in cell.get("outputs", []))]


def _sandbox_note(graded: Path | None, sandboxed: bool) -> str:
    """What the sandbox refused and which limits stopped something, for the instructor."""
    if not sandboxed:
        return sandbox.OFF
    seen = list(kernel.INCIDENTS)
    if graded is not None and graded.exists():
        seen += [i for i in sandbox.refusals(nbformat.read(graded, as_version=4)) if i not in seen]
    return "; ".join(seen)


def grade_one(course: Course, lesson: str, student: str, *, timeout: int | None = None,
              memory: int | None = None, sandboxed: bool = True, server: str = "") -> dict:
    """Autograde one submission in this process; returns its status row. `server`: the socket
    of the run's warm-kernel server (warm.py), if it has one."""
    started = time.monotonic()
    kernel.INCIDENTS.clear()
    row = dict(lesson=lesson, student=student, score=None, max_score=None, reason="")
    with tempfile.TemporaryDirectory(prefix="autograd-lab-") as tmp:
        try:
            note = stage(course.submission(lesson, student), Path(tmp) / student / lesson, lesson)
        except NotGradable as error:
            return dict(row, status=error.status, reason=error.reason,
                        seconds=time.monotonic() - started)
        preprocessors = (course.config().Autograde.get("autograde_preprocessors")
                         or Autograde.class_traits()["autograde_preprocessors"].default())
        ours = []
        for pp in preprocessors:
            ours.append(GradingExecute if pp is Execute else pp)
            if pp is LimitOutput:
                ours.append(TruncateOutput)
        execute = {"shutdown_kernel": "immediate"}
        if timeout:
            execute.update(timeout=timeout, iopub_timeout=max(timeout, 10))
        else:
            execute["iopub_timeout"] = 30
        if memory:
            execute["memory_limit"] = memory
        execute["sandboxed"] = sandboxed
        execute["warm_server"] = server if sandboxed else ""
        api = course.api(CourseDirectory={"submitted_directory": tmp},
                         Autograde={"autograde_preprocessors": ours},
                         GradingExecute=execute)
        result = api.autograde(lesson, student, force=True, create=True)
    print(result.get("log", ""), result.get("error") or "", sep="\n")   # into the grading log
    seconds = time.monotonic() - started
    graded = course.directory("autograded") / student / lesson / f"{lesson}.ipynb"
    row["sandbox"] = _sandbox_note(graded if result["success"] else None, sandboxed)
    if not result["success"]:
        return dict(row, status=status.FAILED,
                    reason=_failure_reason(result.get("log", "") + (result.get("error") or "")),
                    seconds=seconds)
    with course.gradebook() as gb:
        submission = gb.find_submission(lesson, student)
        score, max_score = submission.score, submission.max_score
        manual = submission.needs_manual_grade
    notes = [note] if note else []
    stopped = _timeouts(graded) if graded.exists() else []
    if stopped:
        notes.append("stopped at the time limit: " + ", ".join(stopped))
    return dict(row, status=status.MANUAL if manual else status.GRADED, score=score,
                max_score=max_score, reason="; ".join(notes), seconds=seconds)
