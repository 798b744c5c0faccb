"""Grade one submission, inside a process of its own (``grade.py`` starts one per submission).

The learner's notebook (and nothing else they handed in) is first copied to a private staging
folder, so that nothing the grader does (nbgrader included) can change a submitted file, no
file of theirs reaches the kernel beside it, and a notebook saved under the wrong name is
graded under the lesson's name. nbgrader's ``autograde`` then runs on that copy with this
package's kernel (``kernel/start.py`` starts it, ``reading/execute.py`` runs the notebook in
it), which judges every test cell outside the kernel (``verdict.py``), and the outcome comes
back as a status row.
"""
from __future__ import annotations

import os
import re
import resource
import stat
import tempfile
import time
from pathlib import Path

import nbformat
from nbgrader.converters import Autograde
from nbgrader.preprocessors import Execute, LimitOutput

from ..kernel.start import INCIDENTS
from ..reading import outputs
from ..sandbox import sandbox
from ..gradebook import secret, status
from ..course import Course
from ..reading.inert import InertNotebook
from ..reading.execute import (HIDDEN_FOUND, MALFORMED, VERDICT_CLAIMS, GradingExecute,
                              TruncateOutput)

MAX_NOTEBOOK = 32 * 1024**2      # bytes of a submitted notebook (a lesson's is about 100 kB)

# what nbgrader's log says when a submission could not be graded, and what to tell the instructor
_FAILURES = [
    (r"DeadKernelError|Kernel died", "the kernel died (os._exit, a crash, or the memory limit)"),
    (r"ignored the interrupt|UnresponsiveKernelError|kernel became unresponsive",
     "a cell ran past the time limit and did not stop when interrupted"),
    (r"SchemaTooOld|old version [^\n]{0,200}of the nbgrader metadata",
     "the notebook's nbgrader metadata is in an old format"),
    (r"SchemaTooNew|newer version [^\n]{0,200}of the nbgrader metadata",
     "the notebook's nbgrader metadata is from a newer nbgrader"),
]
# (nbgrader's log quotes the notebook: each pattern looks a bounded way from where it starts)


def out_of_memory(limit: int | None = None) -> str:
    """The reason of a submission whose grading process ran out of memory (`limit`: its
    limit, bytes; None: this process's own)."""
    if limit is None:
        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    said = "" if limit == resource.RLIM_INFINITY else f" (limit {limit / 1024**3:.3g} GB)"
    return f"the grader ran out of memory reading this notebook's answers{said}"


# the last line of a traceback of the grading process's own MemoryError, in nbgrader's log
_GRADER_OUT_OF_MEMORY = re.compile(r"^\s*MemoryError\b", re.MULTILINE)


class NotGradable(Exception):
    def __init__(self, status, reason):
        super().__init__(reason)
        self.status, self.reason = status, reason


def _regular(path: Path) -> bool:
    """A regular file, not followed if it is a link (a learner's folder is theirs)."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _copy_regular(source: Path, target: Path, limit: int) -> None:
    """Copy a regular file without following a link, and at most ``limit`` bytes of it."""
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise NotGradable(status.FAILED, f"{source.name} is not a regular file")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise NotGradable(status.FAILED, f"{source.name} is larger than {limit // 1024**2} MB")
    target.write_bytes(data)


# what, handed in beside a notebook, Python would import: a learner's module of their own, or
# one named after a module the kernel imports later (a shadow); never staged, always said
_CODE = (".py", ".pyc", ".pyo", ".so", ".pyd", ".pth", ".egg", ".whl", ".zip")


def _beside(source: Path, chosen: str) -> tuple[list[str], list[str]]:
    """(code, other files): what was handed in beside the notebook, none of it staged."""
    names = sorted(p.name for p in source.iterdir() if p.name not in (chosen, "timestamp.txt"))
    code = [n for n in names if n.endswith(_CODE) or ".cpython-" in n
            or (source / n).is_dir() and not (source / n).is_symlink()]
    return code, [n for n in names if n not in code]


def stage(source: Path, staged: Path, lesson: str,
          release: Path | None = None) -> tuple[str, str]:
    """Copy a submission's notebook (only it, and nbgrader's timestamp.txt) to `staged`, named
    `<lesson>.ipynb`, its cells' nbgrader metadata as `release` (the released notebook, if
    there is one) gives it. Returns a note for the instructor and the reason to flag the
    submission as a forgery (code handed in beside the notebook); "" when nothing needed
    saying."""
    if not source.is_dir() or source.is_symlink():
        raise NotGradable(status.MISSING, "no submission")
    staged.mkdir(parents=True)
    expected = f"{lesson}.ipynb"
    note = ""
    if _regular(source / expected):
        chosen = expected
    else:
        notebooks = sorted(p.name for p in source.glob("*.ipynb") if _regular(p))
        if not notebooks:
            raise NotGradable(status.MISSING, f"no notebook in {source}")
        if len(notebooks) > 1:
            raise NotGradable(status.FAILED, f"no {lesson}.ipynb, and several other notebooks "
                                             f"to choose from: {', '.join(notebooks)}")
        chosen = notebooks[0]
        note = f"graded {chosen!r} as {expected!r}"
    _copy_regular(source / chosen, staged / expected, MAX_NOTEBOOK)
    if _regular(source / "timestamp.txt"):      # the submission's time: nbgrader reads it
        _copy_regular(source / "timestamp.txt", staged / "timestamp.txt", 1024)
    expected = staged / expected
    try:
        nb = nbformat.read(expected, as_version=4)
    except Exception as error:          # not JSON, not a notebook: nbformat says which
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise NotGradable(status.FAILED, f"not a valid notebook ({type(error).__name__}: "
                                         f"{first_line[:200]})") from None
    if release is not None:
        other = other_lesson(nb, lesson, release)
        if other:
            raise NotGradable(status.FAILED, other)
        note = "; ".join(filter(None, [note, restore_metadata(nb, expected, release)]))
    code, others = _beside(source, chosen)
    if others:
        note = "; ".join(filter(None, [note, f"left out {len(others)} other file(s) handed in "
                                             f"beside the notebook: {', '.join(others)[:200]}"]))
    # (the names are the learner's: quoted, each on one line, and cut)
    forged = (f"code handed in beside the notebook, left out: "
              f"{', '.join(repr(name[:64]) for name in code)[:200]}" if code else "")
    return note, forged


def _graded_ids(path: Path) -> set[str]:
    """The grade_ids of a released notebook's answer and test cells (what makes it its lesson)."""
    import json

    try:
        cells = json.loads(path.read_text()).get("cells", [])
    except (OSError, ValueError, AttributeError):
        return set()
    found = set()
    for cell in cells if isinstance(cells, list) else []:
        meta = cell.get("metadata", {}).get("nbgrader") if isinstance(cell, dict) else None
        if isinstance(meta, dict) and (meta.get("grade") or meta.get("solution")) \
                and isinstance(meta.get("grade_id"), str):
            found.add(meta["grade_id"])
    return found


def other_lesson(nb, lesson: str, release: Path) -> str:
    """Why a notebook is another lesson's, when it is: its answer and test cells (by their
    nbgrader grade_id) are more of another released lesson's than of `lesson`'s. (nbgrader
    fails such a notebook on the first test it cannot find, "KeyError: 'predict_cube'".)
    "" when it is this lesson's, or no lesson's."""
    cells = nb.get("cells")
    ids = {_grade_id(c) for c in cells if isinstance(c, dict)} if isinstance(cells, list) else set()
    ids.discard(None)
    own = len(ids & _graded_ids(release))
    best, most = None, own
    for path in sorted(release.parent.parent.glob("*/*.ipynb")):
        if path.parent.name == lesson or path.stem != path.parent.name:
            continue
        found = len(ids & _graded_ids(path))
        if found > most:
            best, most = path.parent.name, found
    if best is None:
        return ""
    return (f"this is lesson {best}'s notebook, handed in as {lesson}: {most} of its graded "
            f"cells are {best}'s, {own} {lesson}'s. Ask the learner for their {lesson} notebook "
            f"(or collect this file as {best})")


def restore_metadata(nb, notebook: Path, release: Path) -> str:
    """Give each cell of a staged notebook (`nb`, as read from the file `notebook`, which is
    written again if anything changed) the nbgrader metadata its lesson was released with
    (matched by grade_id), and take it from a cell whose grade_id the release does not have.
    What a cell is worth, and whether it is graded or locked, is the instructor's; a learner
    can edit it all the same (JupyterLab's property inspector shows it). nbgrader puts some of
    it back itself, but fails the whole notebook on a value it cannot read ("points": "lots",
    an older format) and on a graded cell the learner made up ("KeyError: 'grade_id'", for an
    id it does not know or none). Returns a note for the instructor: "" when nothing changed."""
    released = {}
    for cell in nbformat.read(release, as_version=4).cells:
        meta = cell.metadata.get("nbgrader")
        if meta and meta.get("grade_id"):
            released[meta["grade_id"]] = meta
    cells = nb.get("cells")
    cells = [c for c in cells if isinstance(c, dict)] if isinstance(cells, list) else []
    ids = [_grade_id(cell) for cell in cells]
    # A released cell copied: only its last copy keeps the metadata (the one nbgrader's own
    # DeduplicateIds keeps), so that copies cannot make the staged notebook grow.
    last = {grade_id: i for i, grade_id in enumerate(ids) if grade_id in released}
    restored, removed, copies = [], 0, 0
    for i, (cell, grade_id) in enumerate(zip(cells, ids)):
        metadata = cell.get("metadata")
        if not isinstance(metadata, dict) or "nbgrader" not in metadata:
            continue
        want = released.get(grade_id)
        if want is None or last[grade_id] != i:
            del metadata["nbgrader"]
            if want is None:
                removed += 1
            else:
                copies += 1
        elif metadata["nbgrader"] != want:
            metadata["nbgrader"] = want     # (only written out: one dict may serve)
            restored.append(grade_id)
    if not restored and not removed and not copies:
        return ""
    nbformat.write(nb, notebook)
    said = []
    if restored:
        names = ", ".join(sorted(restored))     # (the release's ids, each once)
        said.append(f"restored the nbgrader metadata of {len(restored)} cell(s) as released: "
                    f"{names[:200]}")
    if removed:
        said.append(f"removed nbgrader metadata from {removed} cell(s) the release does not have")
    if copies:
        said.append(f"removed nbgrader metadata from {copies} copied cell(s), the last copy of "
                    f"each kept (as nbgrader keeps it)")
    return "; ".join(said)


def _grade_id(cell) -> str | None:
    """A cell's nbgrader grade_id, if its metadata has one that could be a release's."""
    metadata = cell.get("metadata")
    meta = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
    return grade_id if isinstance(grade_id, str) else None


# the last line of a traceback: the exception and its message (nbgrader's log indents it)
_RAISED = re.compile(r"^\s*((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit)\b(?::.*)?)$")


def _failure_reason(log: str) -> str:
    # (nbgrader's log is the grading process's own: a kernel's MemoryError is a cell's output,
    #  or its death, never a line of this traceback)
    if _GRADER_OUT_OF_MEMORY.search(log):
        return out_of_memory()
    for pattern, reason in _FAILURES:
        if re.search(pattern, log):
            return reason
    lines = log.splitlines()
    errors = [i for i, line in enumerate(lines) if line.startswith("[ERROR]")]
    if not errors:
        return "nbgrader failed (see the log)"
    # nbgrader's first error only says that it failed, on the staging folder's path; what
    # failed is the last line of the traceback that follows it (a learner's edit of a cell's
    # nbgrader metadata: "ValueError: could not convert string to float: 'lots'")
    cause = None
    for line in lines[errors[0] + 1:]:
        if line.startswith("[") and not line.startswith("[ERROR] Traceback"):
            break
        raised = _RAISED.match(line)
        if raised:
            cause = raised.group(1)
    if cause:
        return f"nbgrader could not grade it: {cause}"[:300]
    return lines[errors[0]][len("[ERROR] "):][:300]


def _timeouts(notebook: Path) -> list[str]:
    """The cells of an autograded notebook that the time limit stopped."""
    nb = nbformat.read(notebook, as_version=4)
    return [cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell {i}"
            for i, cell in enumerate(nb.cells)
            if any(o.ename == "CellTimeoutError" for o in outputs.of_cell(cell))]


def _sandbox_note(graded: Path | None, sandboxed: bool) -> str:
    """What the sandbox refused and which limits stopped something, for the instructor."""
    if not sandboxed:
        return sandbox.OFF
    seen = list(INCIDENTS)
    if graded is not None and graded.exists():
        shown = outputs.of_notebook(nbformat.read(graded, as_version=4))
        seen += [i for i in sandbox.refusals(shown) if i not in seen]
    return "; ".join(seen)


def test_sources(course: Course, lesson: str) -> dict[str, str]:
    """grade_id -> the instructor's source of every test cell of the lesson (autograded code
    cells), as generate_assignment recorded it in the gradebook: what the grader judges."""
    found = {}
    with course.gradebook() as gb:
        for notebook in gb.find_assignment(lesson).notebooks:
            answers = {c.name for c in notebook.solution_cells}
            for cell in notebook.grade_cells:
                if cell.cell_type == "code" and cell.name not in answers:
                    found[cell.name] = gb.find_source_cell(cell.name, notebook.name,
                                                           lesson).source
    return found


def _forgery(verdict_claims, malformed=()) -> str:
    """Why a submission is flagged as a forgery, when its kernel claimed points the grader
    did not give, or answered a check with a reply no unchanged kernel sends ("" if not)."""
    found = []
    claimed = [(gid, c, g) for gid, c, g, _ in verdict_claims if c > g + 1e-9]
    if claimed:
        more = sum(c - g for _, c, g in claimed)
        cells = ", ".join(gid for gid, _, _ in claimed)
        found.append(f"the kernel's own run of {len(claimed)} test cell(s) claimed "
                     f"{more:g} point(s) the grader did not give ({cells})")
    if malformed:
        cells = ", ".join(dict.fromkeys(gid for gid, _ in malformed))
        found.append(f"the kernel answered {len(malformed)} test cell(s) with a reply "
                     f"of a shape no unchanged kernel sends ({cells}: {malformed[0][1][:200]})")
    return "; ".join(found)


def hidden_found(found) -> str:
    """What the hidden tests found, in full, as the instructor reads it (the report's page of
    hidden tests): a line ``grade_id: what`` per finding, the lines of each indented under it.
    The learner's page says only which check failed and the misconception."""
    lines = []
    for grade_id, text in found:
        first, *rest = text.splitlines() or [""]
        lines.append(f"{grade_id}: {first}")
        lines.extend(f"    {line}" for line in rest)
    return "\n".join(lines)[:100_000]


def _peak_address_space() -> int | str:
    """MB of address space this process has held at most (what its limit counts)."""
    try:
        with open("/proc/self/status") as f:
            found = re.search(r"^VmPeak:\s*(\d+) kB", f.read(), re.MULTILINE)
    except OSError:
        found = None
    return int(found.group(1)) // 1024 if found else "?"


def grade_one(course: Course, lesson: str, student: str, *, timeout: int | None = None,
              memory: int | None = None, sandboxed: bool = True, server: str = "",
              scratch: str | None = None) -> status.Row:
    """Autograde one submission in this process; returns its status row. `server`: the socket
    of the run's warm-kernel server (warm.py), if it has one; `scratch`: the folder to stage
    the submission in (the run's), else the system's."""
    started = time.monotonic()
    INCIDENTS.clear()
    VERDICT_CLAIMS.clear()
    MALFORMED.clear()
    HIDDEN_FOUND.clear()
    row = dict(lesson=lesson, student=student)      # (the fields known so far)
    # the feedback page of the grading this one replaces describes work graded no longer
    from .feedback import remove_page
    remove_page(course, lesson, student)
    graded = course.directory("autograded") / student / lesson / f"{lesson}.ipynb"
    hand_graded = answers(graded) if graded.is_file() else None   # what the hand grades saw
    with tempfile.TemporaryDirectory(prefix="autograd-lab-", dir=scratch) as tmp:
        try:
            release = course.directory("release") / lesson / f"{lesson}.ipynb"
            # (without a release, nbgrader says the lesson was never released)
            note, handed = stage(course.submission(lesson, student), Path(tmp) / student / lesson,
                                 lesson, release if release.is_file() else None)
        except NotGradable as error:
            return status.Row(**row, status=error.status, reason=error.reason,
                              seconds=time.monotonic() - started)
        preprocessors = (course.config().Autograde.get("autograde_preprocessors")
                         or Autograde.class_traits()["autograde_preprocessors"].default())
        ours = []
        for pp in preprocessors:
            ours.append(GradingExecute if pp is Execute else pp)
            if pp is LimitOutput:
                ours.append(TruncateOutput)
        # (last: nbgrader has saved its scores; what it writes is what the formgrader shows)
        ours.append(InertNotebook)
        execute = {"shutdown_kernel": "immediate"}
        if timeout:
            execute.update(timeout=timeout, iopub_timeout=max(timeout, 10))
        else:
            execute["iopub_timeout"] = 30
        if memory:
            execute["memory_limit"] = memory
        execute["sandboxed"] = sandboxed
        execute["warm_server"] = server if sandboxed else ""
        execute["test_sources"] = test_sources(course, lesson)
        execute["lesson_dir"] = str(course.directory("source") / lesson)
        execute["judge_key"] = secret.key(course, lesson, student).hex()
        execute["own_run"] = str(Path(tmp) / student / lesson / f"{lesson}.ipynb")
        api = course.api(CourseDirectory={"submitted_directory": tmp},
                         Autograde={"autograde_preprocessors": ours},
                         GradingExecute=execute)
        result = api.autograde(lesson, student, force=True, create=True)
    print(result.get("log", ""), result.get("error") or "", sep="\n")   # into the grading log
    seconds = time.monotonic() - started
    forged = [r for r in (handed, _forgery(VERDICT_CLAIMS, MALFORMED)) if r]
    row.update(forgery=bool(forged), forgery_reason="; ".join(forged),
               sandbox=_sandbox_note(graded if result["success"] else None, sandboxed),
               hidden=hidden_found(HIDDEN_FOUND))
    # (the grading process's own high-water mark: a kernel's output must not grow it)
    print(f"peak memory of the grading process: "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB "
          f"(address space {_peak_address_space()} MB)")
    if not result["success"]:
        return status.Row(**row, status=status.FAILED,
                          reason=_failure_reason(result.get("log", "")
                                                 + (result.get("error") or "")),
                          seconds=seconds)
    notes = [note] if note else []
    kept = keep_hand_grades(course, lesson, student, hand_graded,
                            (answers(graded) if graded.is_file() else None) or {})
    if kept:
        notes.append(kept)
    with course.gradebook() as gb:
        submission = gb.find_submission(lesson, student)
        score, max_score = submission.score, submission.max_score
        manual = submission.needs_manual_grade
    stopped = _timeouts(graded) if graded.exists() else []
    if stopped:
        notes.append("stopped at the time limit: " + ", ".join(stopped))
    return status.Row(**row, status=status.MANUAL if manual else status.GRADED, score=score,
                      max_score=max_score, reason="; ".join(notes), seconds=seconds)


def answers(notebook: Path) -> dict[str, str] | None:
    """grade_id -> source of every answer cell (nbgrader's solution cells) of a notebook; None
    if it cannot be read. A written answer as an inert notebook stores it (``page.stored``, a
    function of the Markdown alone, which gives a stored cell back as it is): the same for a
    notebook graded now and one graded before the grader made them inert."""
    from ..reading import page

    try:
        nb = nbformat.read(notebook, as_version=4)
    except Exception:
        return None
    found = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if isinstance(meta, dict) and meta.get("solution") and isinstance(meta.get("grade_id"), str):
            found[meta["grade_id"]] = (page.stored(cell.source) if cell.cell_type == "markdown"
                                       else cell.source)
    return found


def keep_hand_grades(course: Course, lesson: str, student: str, before: dict | None,
                     after: dict) -> str:
    """nbgrader's autograde marks every hand-graded cell for review again ("if there was
    previously a manual grade ... needs_manual_grade = True"), so its formgrader lists the
    learner for hand grading while the hand grade still counts. Here a hand grade whose answer
    is the one it was given to (`before`: the answers of the notebook graded last; `after`:
    now) is kept and its cell cleared of that flag; one whose answer changed is unset, so that
    the answer waits for a person again, and said. A hand grade of a test cell (a score
    overridden in the formgrader) stands for every answer of the notebook. Returns a note for
    the instructor ("" when nothing was unset)."""
    from nbgrader.api import MissingEntry

    stale = {}
    with course.gradebook() as gb:
        try:
            submission = gb.find_submission(lesson, student)
        except MissingEntry:
            return ""
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                if grade.manual_score is None:
                    continue
                cells = [grade.name] if grade.name in after else list(after)
                if before is None or all(before.get(c) == after.get(c) for c in cells):
                    grade.needs_manual_grade = False
                else:
                    stale[grade.name] = grade.manual_score
                    grade.manual_score = None
                    grade.needs_manual_grade = True
        gb.db.commit()
    if not stale:
        return ""
    given = ", ".join(f"{name} ({score:g})" for name, score in sorted(stale.items()))
    return f"hand grades given to another answer unset, grade them again: {given}"
