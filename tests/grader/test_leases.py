"""Nothing lost, nothing twice: graders sharing a PostgreSQL gradebook lease each submission
before grading it (grader/autograd_lab_grader/gradebook/leases.py). A grader killed with
SIGKILL half way and started again finishes its part, every submission graded exactly once; two graders given the
same part split it between them; shards are dealt by submission, not by a hash of the id.

Every write of a grade is counted by a trigger on the status table (one row written per
grading that finished), and the leases table counts the gradings each run started."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import clusterclass as cc
import gradingcourse as gc
from autograd_lab_grader.gradebook import leases, status
from autograd_lab_grader.steps import grade
from pgserver import MISSING

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

COUNT_WRITES = """
CREATE TABLE grade_writes (lesson text, student text, status text,
                           at timestamp DEFAULT clock_timestamp());
CREATE FUNCTION count_grade_write() RETURNS trigger AS $$
BEGIN
    INSERT INTO grade_writes (lesson, student, status)
        VALUES (NEW.lesson, NEW.student, NEW.status);
    RETURN NULL;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER count_grade_write AFTER INSERT OR UPDATE ON autograd_lab_submission
    FOR EACH ROW EXECUTE FUNCTION count_grade_write();
"""


@pytest.fixture(scope="module")
def pg(postgresql):
    """The module's PostgreSQL server (tests/conftest.py)."""
    return postgresql


def _course(pg, tmp_path, name, slow=0.0):
    url = pg.create(name)
    course = cc.make(tmp_path / "course", url, slow=slow)
    status.tables(course)
    pg.sql(name, COUNT_WRITES)
    return course


def _writes(pg, name) -> dict[str, int]:
    """Grades written per learner (missing learners left out: they have no submission)."""
    return {student: int(n) for student, n in pg.sql(
        name, "SELECT student, count(*) FROM grade_writes WHERE status <> 'missing' "
              "GROUP BY student")}


def _grader(course, *args):
    return subprocess.Popen([sys.executable, "-m", "autograd_lab_grader", "-C",
                             str(course.root), "--db-url", course.db_url, "grade", gc.LESSON,
                             *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=cc.environ())


def _final(course):
    stored = status.read(course, gc.LESSON)
    return {student: (row.status, row.score) for (_, student), row in stored.items()}


def test_shards_are_dealt_by_submission_and_cover_the_class_once():
    students = [f"learner{i:04d}" for i in range(1001)]
    parts = [grade.Shard(k, 7).pick(reversed(students)) for k in range(1, 8)]
    assert sorted(s for part in parts for s in part) == students      # each once
    assert {len(part) for part in parts} == {143}                     # 1001 = 7 x 143
    parts = [grade.Shard(k, 4).pick(students[:10]) for k in range(1, 5)]
    assert [len(p) for p in parts] == [3, 3, 2, 2]
    # ids sharing a prefix, or all hashing alike, are dealt out all the same
    same = [f"2024-{i}" for i in range(8)]
    assert [len(grade.Shard(k, 8).pick(same)) for k in range(1, 9)] == [1] * 8
    with pytest.raises(ValueError):
        grade.Shard.parse("0/3")


def test_a_grader_killed_half_way_and_started_again_grades_each_submission_once(pg, tmp_path):
    course = _course(pg, tmp_path, "killed", slow=1.0)
    run = ["--run", "array-17", "--jobs", "2"]
    first = _grader(course, *run)
    # kill it (SIGKILL, as the out-of-memory killer or a lost node does) once it has graded
    # some submissions, just after it began grading another (whose grading process would have
    # seconds of work left, were it to outlive its grader)
    deadline = time.monotonic() + 240
    seen = set()
    while True:
        held = {s for (_, s), c in leases.read(course).items() if c["done_at"] is None}
        if len(_writes(pg, "killed")) >= 3 and held - seen:
            break
        seen |= held
        assert first.poll() is None, first.communicate()[0]
        assert time.monotonic() < deadline, "the grader graded nothing in 240 s"
        time.sleep(0.05)
    time.sleep(0.3)                           # (its grading process has started)
    below = cc.descendants(first.pid)         # its grading processes, their kernels, ...
    assert below
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    first.stdout.close()
    # nothing of the killed grader goes on grading (or writing nbgrader's tables): its
    # grading processes and their kernels are killed with it, and multiprocessing's
    # forkserver ends once it sees the grader gone. Each takes a moment: beside three busy
    # processes, one of them was still alive 1 s later in 2 runs of 4 (which one, 14 runs
    # that named them did not catch); the folders they leave are the SIGKILL note of
    # docs/instructors/large-class.md.
    killed = time.monotonic()
    while cc.alive(below) and time.monotonic() - killed < 20:
        time.sleep(0.1)
    assert not cc.alive(below), [Path(f"/proc/{pid}/cmdline").read_bytes()[:200]
                                 for pid in cc.alive(below)]
    before = _final(course)
    in_flight = {s for (_, s), c in leases.read(course).items() if c["done_at"] is None}
    assert in_flight and in_flight.isdisjoint(before)   # being graded, nothing recorded yet
    graded_before = {s for s, (state, _) in before.items() if state != status.MISSING}
    assert "ada" in graded_before and before["ada"][0] == status.FAILED
    assert len(graded_before) >= 3

    again = _grader(course, *run)
    output = again.communicate(timeout=300)[0]
    # (ada failed before the kill: the run graded her, and does not grade her again)
    assert again.returncode == 0, output
    assert "Traceback" not in output, output
    # every submission graded and written exactly once, the killed one's included
    assert _writes(pg, "killed") == {s: 1 for s in cc.CLASS}
    final = _final(course)
    assert final == cc.expected_statuses()
    for student in graded_before:
        assert final[student] == before[student]          # what was graded stays graded
    taken = leases.read(course)
    assert {c["run"] for c in taken.values()} == {"array-17"}
    assert all(c["done_at"] is not None for c in taken.values())
    # the rerun started again only what the killed grader had not finished
    assert {s for (_, s), c in taken.items() if c["attempts"] == 2} == in_flight
    assert {c["attempts"] for (_, s), c in taken.items() if s not in in_flight} == {1}


def test_a_grader_stopped_with_sigterm_leaves_no_process_no_folder_and_no_half_grade(pg,
                                                                                    tmp_path):
    """scancel, a Slurm requeue or time limit, and Kubernetes stopping a pod all send SIGTERM
    first: the grader stops its grading processes and their kernels, removes its warm server's
    and its processes' folders (a learner's staged notebook among them), and gives its claims
    back, recording nothing for what it was grading."""
    course = _course(pg, tmp_path, "stopped", slow=1.0)
    # its own TMPDIR, traversable as /tmp is (a kernel's user passes through to its folder)
    tmp = Path(tempfile.mkdtemp(prefix="autograd-lab-test-sigterm-", dir="/tmp"))
    tmp.chmod(0o755)
    try:
        grader = subprocess.Popen(
            [sys.executable, "-m", "autograd_lab_grader", "-C", str(course.root), "--db-url",
             course.db_url, "grade", gc.LESSON, "--jobs", "2"], stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, env=dict(cc.environ(), TMPDIR=str(tmp)))
        deadline = time.monotonic() + 240
        while not (_writes(pg, "stopped") and {
                s for (_, s), c in leases.read(course).items() if c["done_at"] is None}):
            assert grader.poll() is None, grader.communicate()[0]
            assert time.monotonic() < deadline, "the grader graded nothing in 240 s"
            time.sleep(0.05)
        time.sleep(0.3)                       # (its grading process has started)
        staged = [p for p in tmp.iterdir() if p.name.startswith("autograd-lab-run-")]
        assert staged and any(p.is_dir() for p in staged[0].iterdir()), \
            "a submission is staged in the run's folder"
        below = cc.descendants(grader.pid)
        assert below
        stopped = time.monotonic()
        grader.send_signal(signal.SIGTERM)
        # again and again while it cleans up (the warm server, the run's folder, the claims):
        # still done in full
        while grader.poll() is None and time.monotonic() - stopped < 60:
            time.sleep(0.05)
            grader.send_signal(signal.SIGTERM)
        output = grader.communicate(timeout=60)[0]
        assert grader.returncode == 128 + signal.SIGTERM, output
        assert time.monotonic() - stopped < 15, "the grader took its time to stop"
        # (multiprocessing's forkserver ends once it sees its grader gone: a moment later)
        while cc.alive(below) and time.monotonic() - stopped < 20:
            time.sleep(0.1)
        assert not cc.alive(below), [Path(f"/proc/{pid}/cmdline").read_bytes()[:200]
                                     for pid in cc.alive(below)]
        assert list(tmp.iterdir()) == [], "the stopped grader left folders behind"
        in_flight = {s for (_, s), c in leases.read(course).items() if c["done_at"] is None}
        assert in_flight and in_flight.isdisjoint(_final(course))   # nothing half recorded
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_two_graders_given_the_same_part_grade_each_submission_once(pg, tmp_path):
    course = _course(pg, tmp_path, "twice", slow=0.5)
    # graded once before, so that --force has something to grade again
    assert cc.grade_here(course, "--jobs", "3", "--shard", "2/2").returncode == 0
    pg.sql("twice", "DELETE FROM grade_writes")
    # the worst case: two runs of their own (no shared --run), both forced, on the same part
    graders = [_grader(course, "--force", "--jobs", "1", "--shard", "2/2")]
    time.sleep(1.0)
    graders.append(_grader(course, "--force", "--jobs", "1", "--shard", "2/2"))
    outputs = [g.communicate(timeout=300)[0] for g in graders]
    for output in outputs:
        assert "Traceback" not in output, output
    mine = grade.Shard(2, 2).pick(cc.CLASS)
    assert _writes(pg, "twice") == {s: 1 for s in mine}
    owners = {c["owner"] for (_, s), c in leases.read(course).items() if s in mine}
    assert len(owners) == 2, owners          # both graded some of it, neither twice
    assert _final(course) == {s: v for s, v in cc.expected_statuses().items() if s in mine}


def test_the_gradebook_indexes_the_foreign_keys_nbgrader_scores_through(pg, tmp_path):
    """Without these, every notebook graded reads the class's whole `grade` table (nbgrader's
    score subqueries): 500 learners read 58,000 rows a notebook (benchmarks/cluster.py)."""
    _course(pg, tmp_path, "indexed")
    names = {name for (name,) in pg.sql("indexed", "SELECT indexname FROM pg_indexes")}
    assert {f"autograd_lab_{t}_{c}" for t, c in status.INDEXES.items()} <= names
    plan = pg.sql("indexed", "SET enable_seqscan = off; "
                             "EXPLAIN SELECT * FROM grade WHERE notebook_id = 'n'")
    assert "autograd_lab_grade_notebook_id" in str(plan)
