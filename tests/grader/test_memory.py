"""The grader's memory is bounded by what an answer stands for, not by its description: lesson 02
graded by `autograd-lab grade` (real nbgrader, real bwrap) for a class where one learner's
functions return one list shared at every level of eight (a description of a few kB that stands
for 10**16 numbers, which a `repr` or `np.asarray` in the grader would try to walk), beside two
honest learners. That learner's items fail with a reason that says so (or, at worst, its
notebook fails for the grader's memory), its grading process stays within its memory limit,
and the honest learners are graded as when graded alone. And a grading process that does run
out of memory, or is killed, fails its own submission only, with a reason that says why.
"""
import multiprocessing
import os
import re
import shutil
import signal
import sys
from pathlib import Path

import nbformat
import pytest

import course as lessons
from autograd_lab_grader.gradebook import status
from autograd_lab_grader.steps import grade
from autograd_lab_grader.course import Course

LESSON = "02_scalar_backward"
pytestmark = pytest.mark.skipif(LESSON not in lessons.LESSONS, reason="lesson 02 is missing")

# one list shared at every level: 100 references at each of 8 levels
HOARD = """
def _hoard():
    shared = [0.0] * 100
    for _ in range(7):
        shared = [shared] * 100
    return shared
"""
HOARDER = {"chain_rule": HOARD + "\ndef dy_dx(x):\n    return _hoard()\n",
           "numerical_derivative": "def numerical_derivative(f, x, h):\n    return _hoard()\n"}
HOARDED_ITEMS = {"chain_rule_test": 2, "numerical_derivative_test": 3}
# the two honest learners: right everywhere (9 of 9), and wrong in four places (4 of 9)
WRONG = {"predict_cube": "predicted_grad = 1.0",
         "predict_seed": "predicted_grad_10 = 3.0",
         "chain_rule": "def dy_dx(x):\n    return 3 * (x ** 2 + 1) ** 2",
         "numerical_derivative": "def numerical_derivative(f, x, h):\n"
                                 "    return (f(x + h) - f(x)) / h"}
HONEST = {"right": {}, "wrong": WRONG}
LIMIT_MB = 1024         # the grading processes' limit in this run (a third of the default)


def _course(root: Path, learners: dict) -> Course:
    root.mkdir(parents=True)
    shutil.copy(lessons.ROOT / "nbgrader_config.py", root)
    shutil.copytree(lessons.ROOT / "solutions" / LESSON, root / "solutions" / LESSON)
    course = Course(root)
    assert course.api().generate_assignment(LESSON)["success"]
    for student, answers in learners.items():
        folder = course.submission(LESSON, student)
        folder.mkdir(parents=True)
        nbformat.write(lessons.submission(LESSON, answers), folder / f"{LESSON}.ipynb")
    return course


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class in one run under a small limit, two at a time; the honest learners alone."""
    course = _course(tmp_path_factory.mktemp("memory") / "course", {"hoarder": HOARDER, **HONEST})
    rows = {r.student: r for r in grade.grade(
        course, LESSON, grade.Options(jobs=2, grader_memory=LIMIT_MB * 1024**2))}
    alone = _course(tmp_path_factory.mktemp("alone") / "course", HONEST)
    alone_rows = {r.student: r for r in grade.grade(alone, LESSON, grade.Options(jobs=2))}
    return course, rows, alone, alone_rows


def _log(course, student) -> str:
    return (course.root / "grading-logs" / LESSON / f"{student}.log").read_text(errors="replace")


def _scores(course, student) -> dict:
    """grade_id -> points of each autograded test cell."""
    with course.gradebook() as gb:
        submission = gb.find_submission_notebook(LESSON, LESSON, student)
        return {g.name: g.score for g in submission.grades if g.cell_type == "code"
                and g.auto_score is not None}


def _error(course, student, grade_id) -> str:
    nb = nbformat.read(course.root / "autograded" / student / LESSON / f"{LESSON}.ipynb",
                       as_version=4)
    cell = next(c for c in nb.cells if lessons.grade_id(c) == grade_id)
    return "\n".join(f"{o.ename}: {o.evalue}" for o in cell.outputs
                     if o.output_type == "error")


def test_the_hoarders_items_fail_with_a_reason_that_says_why(graded):
    course, rows, _, _ = graded
    row = rows["hoarder"]
    if row.status == status.FAILED:     # the grader ran out of memory: the notebook fails
        assert re.fullmatch(r"the grader ran out of memory reading this notebook's answers "
                            r"\(limit 1 GB\)", row.reason), row
        return
    assert row.status in (status.GRADED, status.MANUAL), row
    scores = _scores(course, "hoarder")
    right = _scores(course, "right")
    for item, points in HOARDED_ITEMS.items():
        assert (scores[item], right[item]) == (0, points), (item, scores)
        said = _error(course, "hoarder", item)
        assert re.search(r"more than \d+ MB|too large|larger than", said), (item, said)
    # every other item scores as the right answers do
    assert {k: v for k, v in scores.items() if k not in HOARDED_ITEMS} == \
        {k: v for k, v in right.items() if k not in HOARDED_ITEMS}


def test_every_grading_process_stays_within_its_memory_limit(graded):
    course, rows, _, _ = graded
    for student in rows:
        log = _log(course, student)
        assert f"memory limit of the grading process: {LIMIT_MB} MB" in log, student
        peak = re.findall(r"peak memory of the grading process: (\d+) MB "
                          r"\(address space (\d+) MB\)", log)
        if rows[student].status != status.FAILED:
            resident, address_space = map(int, peak[-1])
            assert address_space <= LIMIT_MB and resident < 400, (student, peak)


def test_the_honest_learners_are_graded_as_when_graded_alone(graded):
    course, rows, alone, alone_rows = graded
    for student in HONEST:
        row, by_itself = rows[student], alone_rows[student]
        assert row.status in (status.GRADED, status.MANUAL), row
        assert (row.status, row.score, row.reason, row.sandbox) == (
            by_itself.status, by_itself.score, by_itself.reason, by_itself.sandbox)
        assert _scores(course, student) == _scores(alone, student)
    assert sum(_scores(course, "right").values()) == 9
    assert sum(_scores(course, "wrong").values()) == 4


# -- a grading process that runs out of memory, or is killed -------------------------------
def _hog(*args, **kwargs):
    """In place of worker.grade_one: more memory than the grading process may have."""
    hoard = bytearray(512 * 1024**2)
    return {"never": len(hoard)}


def _address_space() -> int:
    with open("/proc/self/status") as f:
        return int(re.search(r"^VmSize:\s*(\d+) kB", f.read(), re.MULTILINE).group(1)) * 1024


def _in_child(tmp_path, target, *args):
    """Run `target` in a forked process, its output and its kernel's written to a grading log
    as grade.py's are; (its row or None, the process, its log)."""
    fork = multiprocessing.get_context("fork")
    receive, send = fork.Pipe(duplex=False)
    log = grade.Log(tmp_path / "logs" / "learner.log")
    read_log, write_log = fork.Pipe(duplex=False)
    process = fork.Process(target=target, args=(*args, send, write_log))
    process.start()
    for end in (send, write_log):
        end.close()
    log.read(read_log, grade.LOG_LIMIT)
    process.join(60)
    try:
        row = receive.recv() if receive.poll() else None
    except EOFError:            # it ended without sending anything
        row = None
    return row, process, log


def _graded_by_a_hog(limit, send, output):
    from autograd_lab_grader.steps import worker
    worker.grade_one = _hog
    # (as in a grading process: its output goes to the descriptors _child points at its log)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)
    grade._child(None, LESSON, "learner", grade.Options(grader_memory=limit), "", output, send,
                 os.getppid(), None)


def _killed(send, output):
    os.write(output.fileno(), b"graded so far\n")
    os.kill(os.getpid(), signal.SIGKILL)


def _out_of_memory_unsaid(send, output):
    os.write(output.fileno(), b"Traceback (most recent call last):\n  ...\nMemoryError\n")
    os._exit(1)


def test_a_grading_process_out_of_memory_or_killed_fails_its_submission_and_says_why(tmp_path):
    # a MemoryError in the grading process, under its limit: its row says so
    limit = _address_space() + 128 * 1024**2
    row, process, log = _in_child(tmp_path, _graded_by_a_hog, limit)
    assert process.exitcode == 0
    gb = f"{limit / 1024**3:.3g}"
    assert row is not None and (row.status, row.reason) == (
        status.FAILED, f"the grader ran out of memory reading this notebook's answers "
                        f"(limit {gb} GB)"), row
    log.done()
    assert f"memory limit of the grading process: {limit // 1024**2} MB" in log.path.read_text()
    # a MemoryError nbgrader caught (in a preprocessor: judging a test cell) and logged
    from autograd_lab_grader.steps import worker
    logged = ("[AutogradeApp | ERROR] There was an error processing assignment: x\n"
              "[AutogradeApp | ERROR] Traceback (most recent call last):\n"
              '  File "verdict.py", line 1, in judge\nMemoryError\n\n'
              "[AutogradeApp | ERROR] There was an error processing assignment 'x' for 'y'\n")
    assert worker._failure_reason(logged).startswith(
        "the grader ran out of memory reading this notebook's answers")
    # one that dies without a row: what its exit and its log say
    for target, said in ((_killed, r"the grading process was killed by SIGKILL \(likely the "
                                   r"system's out-of-memory killer.*\): graded so far"),
                         (_out_of_memory_unsaid, r"the grader ran out of memory reading this "
                                                 r"notebook's answers \(limit 3 GB\)")):
        row, process, log = _in_child(tmp_path, target)
        assert row is None
        receive, send = multiprocessing.Pipe(duplex=False)
        send.close()
        found = grade._collect(process, receive, LESSON, "learner", False, 60, 1.0, log)
        assert found.status == status.FAILED and found.score is None, found
        assert re.fullmatch(said, found.reason), found
