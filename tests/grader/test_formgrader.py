"""Hand grading on the shared PostgreSQL gradebook, as hand-grading.md says: the course's
nbgrader_config.py reads AUTOGRAD_LAB_DB_URL, `autograd-lab formgrader` starts JupyterLab with
nbgrader's real formgrader, and a hand grade given through the formgrader's own REST API (what
its page calls when a grader types a score) reaches grades.csv; no gradebook.db appears in the
course. A formgrader that would open another gradebook is refused, with what opens the right
one."""
import csv
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest
from typer.testing import CliRunner

import gradingcourse as gc
import lmsclass as lc
from autograd_lab_grader.commands.cli import app
from autograd_lab_grader.steps.handgrading import CONFIG_LINES
from lab_browser import _free_port
from learner_env import jupyter_environ

A = lc.A
runner = CliRunner()


def cli(root, env, *args):
    from autograd_lab_grader.commands import cli as command
    command.console.width = 250
    return runner.invoke(app, ["-C", str(root), *map(str, args)], env=env)


def _course(root: Path, config_lines: str = CONFIG_LINES) -> Path:
    root.mkdir(parents=True)
    (root / "nbgrader_config.py").write_text(config_lines + gc.CONFIG.format(timeout=5))
    source = root / "solutions" / A
    source.mkdir(parents=True)
    (source / "fixturechecks.py").write_text(gc.CHECKS)
    nbformat.write(lc._lesson(A), source / f"{A}.ipynb")
    return root


class Formgrader:
    def __init__(self, port, token):
        self.base, self.token = f"http://127.0.0.1:{port}", token

    def call(self, method, path, body=None):
        request = urllib.request.Request(
            f"{self.base}/{path}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {self.token}",
                     "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")


@pytest.fixture
def served(postgresql, tmp_path):
    url = postgresql.create("course")
    env = {"AUTOGRAD_LAB_DB_URL": url}
    root = _course(tmp_path / "course")
    for step in (("release", "02"),):
        result = cli(root, env, *step)
        assert result.exit_code == 0, result.output
    for student, right in (("ann", True), ("ben", False)):
        path = tmp_path / f"{student}.ipynb"
        path.write_bytes(lc.notebook(root, A, right=right))
        result = cli(root, env, "collect", path, "--student", student, "--lesson", A)
        assert result.exit_code == 0, result.output
    result = cli(root, env, "grade", "02", "--jobs", "2")
    assert result.exit_code == 0, result.output
    # the formgrader as the guide starts it: from any folder, the variable exported
    port, token = _free_port(), "formgrader-test-token"
    environ = jupyter_environ(Path(sys.executable).parent.parent, tmp_path / "jupyter")
    environ.update(env)
    log = open(tmp_path / "formgrader.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "autograd_lab_grader", "-C", str(root),
                             "formgrader", "--no-browser", "--port", str(port),
                             f"--IdentityProvider.token={token}"],
                            cwd=tmp_path, env=environ, stdout=log, stderr=subprocess.STDOUT)
    server = Formgrader(port, token)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                server.call("GET", "api/status")
                break
            except (OSError, urllib.error.URLError) as error:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((tmp_path / "formgrader.log").read_text()) from error
                time.sleep(0.3)
        yield dict(root=root, env=env, server=server, url=url, tmp=tmp_path)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_a_hand_grade_in_the_formgrader_reaches_grades_csv(served):
    root, env, server = served["root"], served["env"], served["server"]
    # the formgrader shows the class autograd-lab graded: it opened the same gradebook
    assignments = {a["name"]: a for a in server.call("GET", "formgrader/api/assignments")}
    assert assignments[A]["num_submissions"] == 2
    notebooks = {n["student"]: n for n in server.call(
        "GET", f"formgrader/api/submitted_notebooks/{A}/{A}")}
    assert notebooks["ann"]["needs_manual_grade"] and notebooks["ben"]["needs_manual_grade"]
    grades = {g["name"]: g for g in server.call(
        "GET", f"formgrader/api/grades?submission_id={notebooks['ann']['id']}")}
    # what the formgrader's page sends when a grader types 1 in the written answer's box
    given = server.call("PUT", f"formgrader/api/grade/{grades['explain']['id']}",
                        {"manual_score": 1, "extra_credit": None})
    assert given["manual_score"] == 1 and not given["needs_manual_grade"]
    result = cli(root, env, "export")
    assert result.exit_code == 0, result.output
    with open(root / "grades" / "grades.csv", newline="") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert (rows["ann"]["status"], rows["ann"]["score"]) == ("graded", "3")
    assert rows["ben"]["status"] == "needs manual grading"
    assert not (root / "gradebook.db").exists()
    assert not list(root.rglob("*.db"))


def test_a_formgrader_that_would_open_another_gradebook_is_refused(postgresql, tmp_path):
    url = postgresql.create("other")
    env = {"AUTOGRAD_LAB_DB_URL": url}
    # a course whose nbgrader_config.py does not read the variable: nbgrader would open a
    # gradebook.db of its own there
    root = _course(tmp_path / "course", config_lines="")
    assert cli(root, env, "release", "02").exit_code == 0
    result = cli(root, env, "formgrader", "--no-browser")
    assert result.exit_code == 1, result.output
    said = result.output
    assert f"would open the gradebook sqlite:///{root}/gradebook.db" in said, said
    assert "but autograd-lab grades in postgresql+psycopg://grader@127.0.0.1:" in said
    assert "add these lines to" in said and 'os.environ["AUTOGRAD_LAB_DB_URL"]' in said
    assert f"autograd-lab -C {root} formgrader" in said
    assert not (root / "gradebook.db").exists()
    # with the lines, the same command passes the check (and would start the server)
    from autograd_lab_grader.course import Course
    from autograd_lab_grader.steps import handgrading

    (root / "nbgrader_config.py").write_text(CONFIG_LINES + gc.CONFIG.format(timeout=5))
    course = Course(root, url)
    assert handgrading.refusal(course, handgrading.environ_for(course)) == ""
    # and one naming another database itself is refused too
    (root / "nbgrader_config.py").write_text(
        gc.CONFIG.format(timeout=5) + f'c.CourseDirectory.db_url = "sqlite:///{tmp_path}/x.db"\n')
    why = handgrading.refusal(course, handgrading.environ_for(course))
    assert f"sqlite:///{tmp_path}/x.db" in why and "names another db_url" in why
