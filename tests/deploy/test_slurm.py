"""Grading a class with a Slurm job array (deploy/slurm/): a real one-node Slurm (munged,
slurmctld and slurmd on loopback, tests/support/slurmcluster.py) and a real PostgreSQL gradebook; the
array's tasks grade their parts in the sandbox, the dependent job grades what is left, exports
and reports, and what they decided equals the one-machine `grade` of the same class. A task
requeued half way (as Slurm requeues after a node failure) finishes its part: every submission
graded once, and the report waits for it."""
import csv
import re
import subprocess
import time
from pathlib import Path

import pytest

import clusterclass as cc
import gradingcourse as gc
import slurmcluster
from autograd_lab_grader.gradebook import leases, status
from autograd_lab_grader.steps import grade
from pgserver import MISSING

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "slurm"
_why = MISSING or slurmcluster.missing()
pytestmark = pytest.mark.skipif(_why is not None, reason=_why or "")

COUNT_WRITES = """
CREATE TABLE grade_writes (student text, status text);
CREATE FUNCTION count_grade_write() RETURNS trigger AS $$
BEGIN INSERT INTO grade_writes VALUES (NEW.student, NEW.status); RETURN NULL; END
$$ LANGUAGE plpgsql;
CREATE TRIGGER count_grade_write AFTER INSERT OR UPDATE ON autograd_lab_submission
    FOR EACH ROW EXECUTE FUNCTION count_grade_write();
"""


@pytest.fixture(scope="module")
def pg(postgresql):
    """The module's PostgreSQL server (tests/conftest.py)."""
    return postgresql


@pytest.fixture(scope="module")
def slurm(slurm_cluster):
    return slurm_cluster


@pytest.fixture(scope="module")
def one_machine(tmp_path_factory):
    """The class graded by `autograd-lab grade` on this machine, its gradebook gradebook.db."""
    top = tmp_path_factory.mktemp("one-machine")
    course = cc.make(top / "course")
    result = cc.grade_here(course, "--jobs", "3")
    assert result.returncode == 1, result.stdout + result.stderr     # ada's kernel dies
    return cc.decided(course, top / "grades")


def _course(pg, tmp_path, name, slow=0.0):
    course = cc.make(tmp_path / "course", pg.create(name), slow=slow)
    status.tables(course)
    pg.sql(name, COUNT_WRITES)
    return course


def _submit(slurm, course, n):
    """deploy/slurm/submit.sh from the course directory; (array job id, report job id, run)."""
    env = dict(cc.environ(), SLURM_CONF=str(slurm.conf), AUTOGRAD_LAB_DB_URL=course.db_url)
    # (the node has 2 CPUs: a CPU a task, so that two tasks run at once)
    said = subprocess.run([str(DEPLOY / "submit.sh"), gc.LESSON, str(n), "--cpus-per-task=1"],
                          cwd=course.root, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"grading array (\d+) \((\d+) tasks\), then job (\d+) .*, run (\S+);",
                      said.stdout)
    assert found and found.group(2) == str(n), said.stdout + said.stderr
    return found.group(1), found.group(3), found.group(4)


def _writes(pg, name):
    return {s: int(n) for s, n in pg.sql(name, "SELECT student, count(*) FROM grade_writes "
                                               "WHERE status <> 'missing' GROUP BY student")}


def _show(slurm, job) -> dict:
    line = slurm.run("scontrol", "-o", "show", "job", job).splitlines()[0]
    return dict(f.split("=", 1) for f in line.split() if "=" in f)


def _logs(course, tail=3000) -> str:
    """The jobs' output files (the last `tail` characters of each; None: all)."""
    folder = course.root / "grading-logs" / "slurm"
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-(tail or 0):]}"
                     for p in sorted(folder.glob("*.out")))


def test_a_slurm_array_grades_the_class_as_one_machine_does(pg, slurm, one_machine, tmp_path):
    course = _course(pg, tmp_path, "array")
    array, report, run = _submit(slurm, course, 2)
    states = slurm.wait(array, report, timeout=600)
    parts = {k: grade.Shard(k, 2).pick(cc.CLASS) for k in (1, 2)}
    # a task's state is its grader's exit: 1 where a submission failed (ada's kernel died)
    expected = {f"{array}_{k}": "FAILED" if "ada" in parts[k] else "COMPLETED" for k in (1, 2)}
    assert states == {**expected, report: "COMPLETED"}, (states, _logs(course))
    # the report job's own export, and everything grading decided, as on one machine
    assert cc.decided(course, tmp_path / "again") == one_machine
    # (an export of one lesson writes grades-<lesson>.csv and questions-<lesson>.csv)
    names = [name for name in one_machine if name.endswith(".csv")]
    assert sorted(names) == [f"grades-{gc.LESSON}.csv", f"questions-{gc.LESSON}.csv"]
    for name in names:
        with (course.root / "grades" / name).open(newline="", encoding="utf-8") as f:
            assert list(csv.reader(f)) == one_machine[name]
    assert (course.root / "reports" / f"{gc.LESSON}.png").stat().st_size > 0
    # each task graded its own part, under the array's run; the report job had nothing left
    taken = leases.read(course)
    assert {c["run"] for c in taken.values()} == {run}
    by_owner = {}
    for (_, student), c in taken.items():
        by_owner.setdefault(c["owner"], set()).add(student)
    assert sorted(by_owner.values(), key=sorted) == [set(parts[1]), set(parts[2])]
    assert _writes(pg, "array") == {s: 1 for s in cc.CLASS}
    log = _logs(course, tail=None)
    assert f"part 1/2, run {run}" in log and f"part 2/2, run {run}" in log


def test_a_task_requeued_half_way_finishes_its_part_and_the_report_waits(pg, slurm, tmp_path):
    course = _course(pg, tmp_path, "requeued", slow=0.5)
    array, report, run = _submit(slurm, course, 2)
    task = f"{array}_1"
    mine = set(grade.Shard(1, 2).pick(cc.CLASS))
    # requeue task 1 (Slurm kills every process of the task and queues it again, as after a
    # node failure) once it has graded two of its part and is grading another
    deadline = time.monotonic() + 300
    while True:
        taken = leases.read(course)
        done = {s for (_, s), c in taken.items() if s in mine and c["done_at"] is not None}
        held = {s for (_, s), c in taken.items() if s in mine and c["done_at"] is None}
        if len(done) >= 2 and held:
            break
        assert slurm.states(task).get(task) in ("PENDING", "RUNNING"), _logs(course)
        assert time.monotonic() < deadline, _logs(course)
        time.sleep(0.1)
    slurm.run("scontrol", "requeue", task)
    # (Slurm starts it again cred_expire seconds later: 5 on the test cluster, not 120.
    #  Forcing an earlier start makes the start fail now and then: the node still holds the
    #  credential the requeue revoked.)
    deadline = time.monotonic() + 60
    while _show(slurm, task).get("JobState") != "PENDING":
        assert time.monotonic() < deadline, _show(slurm, task)
        time.sleep(0.2)
    in_flight = {s for (_, s), c in leases.read(course).items()
                 if s in mine and c["done_at"] is None}
    states = slurm.wait(array, report, timeout=600)
    assert states[report] == "COMPLETED", (states, _logs(course))
    shown = _show(slurm, task)
    assert shown["Restarts"] == "1", shown
    # the report started after the requeued task had ended
    assert _show(slurm, report)["StartTime"] >= shown["EndTime"]
    # every submission graded exactly once; the requeued task graded again only what it was
    # grading when it was killed
    assert _writes(pg, "requeued") == {s: 1 for s in cc.CLASS}
    final = {s: (r.status, r.score) for (_, s), r in status.read(course, gc.LESSON).items()}
    assert final == cc.expected_statuses()
    taken = leases.read(course)
    again = {s for (_, s), c in taken.items() if c["attempts"] == 2}
    assert again and again <= in_flight | held, (again, in_flight, held)
    assert all(c["attempts"] <= 2 and c["done_at"] is not None for c in taken.values())
    log = _logs(course, tail=None)
    # (on failure: the task as Slurm shows it and what slurmctld did with the jobs, to tell a
    #  second start that never came from one that left no output)
    assert f"part 1/2, run {run}, start 0" in log and f"part 1/2, run {run}, start 1" in log, (
        log, _show(slurm, task),
        [line for line in slurm.log("slurmctld.log").splitlines() if "JobId=" in line][-40:])
