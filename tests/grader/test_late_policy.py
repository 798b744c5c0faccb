"""A course's own late policy, placed as term.md says (`c.AssignLatePenalties.plugin_class =
"latepolicy.TenPercentADay"`, a module at the course's root), in a fresh course graded and
exported by fresh processes run from another folder with `-C` and nothing on PYTHONPATH: every
grading process and export loads it, and grade's summary says the policy and what it took."""
import csv
import os
import shutil
import subprocess
import sys

import gradingcourse as gc

POLICY = '''\
import math

from nbgrader.plugins import LateSubmissionPlugin


class TenPercentADay(LateSubmissionPlugin):
    """A tenth of the score for each day late, or part of a day."""

    def late_submission_penalty(self, student_id, score, total_seconds):
        return min(score, score * 0.1 * math.ceil(total_seconds / 86400))
'''


def command(root, *args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-m", "autograd_lab_grader", "-C", str(root),
                           *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          env=dict(env, COLUMNS="200"), timeout=600)
    return done.returncode, done.stdout + done.stderr


def test_a_courses_own_late_policy_grades_and_exports_from_any_folder(tmp_path):
    root = gc.make_course(tmp_path / "course")
    (root / "latepolicy.py").write_text(POLICY)
    with open(root / "nbgrader_config.py", "a") as config:
        config.write('c.AssignLatePenalties.plugin_class = "latepolicy.TenPercentADay"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # a lesson in solutions/ that was never released: the error is the last thing said
    lesson_03 = root / "solutions" / "03_vector_backward"
    lesson_03.mkdir()
    (lesson_03 / "03_vector_backward.ipynb").write_bytes(
        (root / "solutions" / gc.LESSON / f"{gc.LESSON}.ipynb").read_bytes())
    code, said = command(root, "grade", "03", "--jobs", "1", cwd=elsewhere)
    assert code == 1, said
    lines = [line for line in said.splitlines() if line.strip()]
    assert lines[-1].startswith("03_vector_backward is not in the gradebook: release it first")
    assert not any("grading 03" in line for line in lines), said

    code, said = command(root, "due", gc.LESSON, "2026-11-20 23:59", cwd=elsewhere)
    assert code == 0, said
    times = {"ontime": "2026-11-20 12:00", "late": "2026-11-22 09:00"}
    # the release, answered, as each learner handed it in
    drafts = {student: gc.submit(root, student).rename(tmp_path / f"{student}.ipynb")
              for student in times}
    shutil.rmtree(root / "submitted")
    for student, when in times.items():
        path = drafts[student]
        code, said = command(root, "collect", path, "--student", student, "--lesson",
                             gc.LESSON, "--time", when, cwd=elsewhere)
        assert code == 0, said
    code, said = command(root, "grade", gc.LESSON, "--jobs", "2", cwd=elsewhere)
    assert code == 0, said
    assert "failed" not in said, said
    # (late by 1 d 9 h: two days begun, a fifth of 5 points)
    assert ("late policy: the course's own, latepolicy.TenPercentADay; 1 late, it took 1 "
            "points in all (late: 1 of 5)") in said, said
    code, said = command(root, "export", cwd=elsewhere)
    assert code == 0, said
    with open(root / "grades" / "grades.csv", newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert rows["ontime"]["status"] == rows["late"]["status"] == "graded"
    assert (rows["ontime"]["score"], rows["ontime"]["late"]) == ("5", "no")
    assert (rows["late"]["score"], rows["late"]["late_penalty"], rows["late"]["late"]) == \
        ("4", "1", "yes")
