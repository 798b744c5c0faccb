"""Several graders share one PostgreSQL gradebook (nbgrader's db_url) and split the class with
--shard K/N: a throwaway PostgreSQL server on loopback, two graders at once, one gradebook."""
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import gradingcourse as gc
from autograd_lab.grading import export, grade, status
from autograd_lab.grading.course import Course

BIN = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
pytestmark = pytest.mark.skipif(not BIN, reason="PostgreSQL is not installed (scripts/setup.sh "
                                                "installs it when run as root)")


def _as_server_user(args, **kw):
    """initdb refuses to run as root: as root, run the server programs as `postgres`."""
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return subprocess.run(prefix + args, check=True, capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def postgres():
    bin_dir = Path(BIN[-1])
    top = Path(tempfile.mkdtemp(prefix="autograd-lab-pg-"))
    data = top / "data"
    data.mkdir()
    if os.geteuid() == 0:
        top.chmod(0o755)
        shutil.chown(data, "postgres", "postgres")
    with socket.socket() as s:            # a free port on loopback
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "grader"])
    _as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(data / "log"), "-w",
                     "-o", f"-k {data} -c listen_addresses=127.0.0.1 -p {port}", "start"])
    try:
        _as_server_user([str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port),
                         "-U", "grader", "course"])
        yield f"postgresql://grader@127.0.0.1:{port}/course"
    finally:
        _as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"])
        shutil.rmtree(top, ignore_errors=True)


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
    assert all(any(s in shard for s in CLASS) for shard in shards)   # both have work
    graders = [subprocess.Popen([sys.executable, "-m", "autograd_lab.grading", "-C", str(root),
                                 "--db-url", postgres, "grade", gc.LESSON, "--jobs", "1",
                                 "--shard", f"{shard.k}/{shard.n}"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=dict(os.environ, COLUMNS="200"))
               for shard in shards]
    outputs = [g.communicate(timeout=300)[0] for g in graders]
    # eve's kernel dies: the grader whose shard has her exits non-zero, the other zero
    for shard, g, output in zip(shards, graders, outputs):
        assert g.returncode == (1 if "eve" in shard else 0), output
        assert "Traceback" not in output, output         # exit 1 for eve, not for a crash
    stored = status.read(course, gc.LESSON)
    assert {student for _, student in stored} == set(CLASS)
    for student, (_, score) in CLASS.items():
        row = stored[gc.LESSON, student]
        assert row["score"] == score, row
        assert row["status"] == (status.FAILED if score is None else status.GRADED), row
    grades, _ = export.rows(course)
    assert {r["student"]: r["status"] for r in grades}["eve"] == status.FAILED
