"""Several graders share one PostgreSQL gradebook (nbgrader's db_url) and split the class with
--shard K/N: a throwaway PostgreSQL server on loopback, two graders at once, one gradebook."""
import os
import subprocess
import sys

import pytest

import gradingcourse as gc
from autograd_lab_grader.gradebook import status
from autograd_lab_grader.steps import export, grade
from autograd_lab_grader.course import Course
from pgserver import MISSING

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


@pytest.fixture(scope="module")
def postgres(postgresql):
    return postgresql.create("course")


CLASS = {"ann": ({}, 5), "ben": ({"answer_square": "def square(x):\n    return 2 * x"}, 3),
         "cat": ({"answer_slope": "def slope(x):\n    return x"}, 2), "dan": ({}, 5),
         "eve": ({"answer_square": "import os\nos._exit(1)"}, None), "fay": ({}, 5)}


def test_two_graders_split_a_class_over_one_postgresql_gradebook(postgres, tmp_path):
    root = tmp_path / "course"
    # the course is released once against the shared gradebook, then graded by two graders
    gc.make_course(root, timeout=5, db_url=postgres)
    course = Course(root, postgres)
    assert course.gradebook_url == postgres.replace("postgresql:", "postgresql+psycopg:")
    assert not (root / "gradebook.db").exists()
    for student, (answers, _) in CLASS.items():
        gc.submit(root, student, answers)
    shards = [grade.Shard(k, 2) for k in (1, 2)]
    assert [len(shard.pick(CLASS)) for shard in shards] == [3, 3]   # balanced
    graders = [subprocess.Popen([sys.executable, "-m", "autograd_lab_grader", "-C", str(root),
                                 "--db-url", postgres, "grade", gc.LESSON, "--jobs", "1",
                                 "--shard", f"{shard.k}/{shard.n}"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=dict(os.environ, COLUMNS="200"))
               for shard in shards]
    outputs = [g.communicate(timeout=300)[0] for g in graders]
    # eve's kernel dies: the grader whose shard has her exits non-zero, the other zero
    for shard, g, output in zip(shards, graders, outputs):
        assert g.returncode == (1 if "eve" in shard.pick(CLASS) else 0), output
        assert "Traceback" not in output, output         # exit 1 for eve, not for a crash
    stored = status.read(course, gc.LESSON)
    assert {student for _, student in stored} == set(CLASS)
    for student, (_, score) in CLASS.items():
        row = stored[gc.LESSON, student]
        assert row.score == score, row
        assert row.status == (status.FAILED if score is None else status.GRADED), row
    grades, _ = export.rows(course)
    assert {r["student"]: r["status"] for r in grades}["eve"] == status.FAILED
