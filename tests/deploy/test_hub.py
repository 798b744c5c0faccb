"""The course on a real JupyterHub (docs/instructors/jupyterhub.md): JupyterHub on 127.0.0.1 with
its npm proxy, two learners with accounts of their own who log in through its login page, each
single-user server the learners' environment (Binder's, from the lock, with the hub's
jupyterhub-singleuser, as The Littlest JupyterHub's user environment has it), the learners'
repository cloned into each home. Each learner opens lesson 02 and saves it answered (the
contents API, as JupyterLab saves), one before the due date and one after, and hands it in with
`nbgrader submit` to nbgrader's exchange. The instructor collects from the homes (ids from a
mapping file) and from the exchange (nbgrader's ids), and grades and exports: each learner
under their id, with the time this machine recorded, the late one late. A link planted in a
home and a folder planted in the exchange in a classmate's name are refused."""
import csv
import shutil
import subprocess
import tempfile
import time
from datetime import datetime, timedelta, timezone
from importlib.metadata import version
from pathlib import Path

import nbformat
import pytest
from typer.testing import CliRunner

import course as cs
import localhub
from autograd_lab_grader.commands.cli import app
from autograd_lab_grader.course import Course
from learner_env import build, installer, python_of

pytestmark = [pytest.mark.needs_root,
              pytest.mark.skipif(localhub.missing() is not None, reason=localhub.missing() or "")]

ROOT = Path(__file__).resolve().parents[2]
LESSON = "02_scalar_backward"
ADA, BEN = "alab-ada", "alab-ben"           # the hub's user names
IDS = {ADA: "100201", BEN: "100202"}        # their ids in the course (the LMS's)
REPO = "autograd-class"                     # where the clone is in each home
runner = CliRunner()


def cli(root, *args):
    from autograd_lab_grader.commands import cli as command
    command.console.width = 250
    return runner.invoke(app, ["-C", str(root), *map(str, args)])


def _course(root: Path) -> Course:
    root.mkdir(parents=True)
    shutil.copy(ROOT / "nbgrader_config.py", root)
    with open(root / "nbgrader_config.py", "a") as config:
        config.write('c.LateSubmissionPlugin.penalty_method = "zero"\n')
    for folder in ("solutions", "notebooks"):
        shutil.copytree(ROOT / folder / LESSON, root / folder / LESSON)
    result = cli(root, "release", "02")
    assert result.exit_code == 0, result.output
    return Course(root)


def _answered(notebook: dict) -> dict:
    """The notebook the learner opened, with every answer written (the solution's)."""
    nb = nbformat.from_dict(notebook)
    solved = cs.submission(LESSON)
    answers = {cs.grade_id(c): c.source for c in solved.cells if cs.grade_id(c)}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cs.grade_id(cell) in answers:
            cell.source = answers[cs.grade_id(cell)]
    return nbformat.from_dict(nb)


def _hand_grade(course):
    with course.gradebook() as gb:
        for submission in gb.assignment_submissions(LESSON):
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.needs_manual_grade and grade.auto_score is None:
                        grade.manual_score = grade.max_score
                        grade.needs_manual_grade = False
        gb.db.commit()


def _grades(course):
    result = cli(course.root, "grade", "02", "--jobs", "2")
    assert result.exit_code == 0, result.output
    _hand_grade(course)
    result = cli(course.root, "export")
    assert result.exit_code == 0, result.output
    with open(course.root / "grades" / "grades.csv", newline="") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


def _stamp(course, student):
    text = (course.submission(LESSON, student) / "timestamp.txt").read_text().strip()
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S UTC")


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    base = tmp_path_factory.mktemp("hub")
    # what the learners' accounts read must be readable by them: a folder of its own in /tmp
    shared = Path(tempfile.mkdtemp(prefix="autograd-lab-hub-"))
    shared.chmod(0o755)
    try:
        venv = shared / "learner-env"
        build(venv, base / "build-home")
        done = subprocess.run(installer(python_of(venv)) + [f"jupyterhub=={version('jupyterhub')}"],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        course = _course(base / "course")
        result = cli(course.root, "student-repo", shared / "class-repo", "--lessons", "02")
        assert result.exit_code == 0, result.output
        exchange = shared / "exchange"
        exchange.mkdir()
        exchange.chmod(0o777)
        # the instructor releases lesson 02 into nbgrader's exchange (plain nbgrader)
        cs.nbgrader(["release_assignment", LESSON, f"--Exchange.root={exchange}"],
                    cwd=course.root)
        learner_path = {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin"}
        notebook = f"{REPO}/notebooks/{LESSON}/{LESSON}.ipynb"
        times = {}
        with localhub.Learners([ADA, BEN], shared / "home") as users, \
                localhub.Hub(users, venv, base / "hub") as hub:
            for name in (ADA, BEN):     # the learners' repository, as a clone in each home
                # (here a folder of root's: git asks for it to be named safe first)
                users.run(name, ["git", "config", "--global", "--add", "safe.directory",
                                 shared / "class-repo" / ".git"], cwd=users.home(name))
                users.run(name, ["git", "clone", "-q", shared / "class-repo", REPO],
                          cwd=users.home(name))

            def work(name):
                session = hub.login(name)
                session.save(notebook, _answered(session.open(notebook)))
                users.run(name, [venv / "bin" / "nbgrader", "submit", LESSON,
                                 "--course=autograd-lab", f"--Exchange.root={exchange}"],
                          cwd=users.home(name) / REPO / "notebooks", env=learner_path)
                times[name] = datetime.now(timezone.utc).replace(tzinfo=None)

            work(ADA)
            # the due date falls between the two learners' work
            due = (times[ADA] + timedelta(seconds=2)).replace(microsecond=0)
            result = cli(course.root, "due", "02", due.isoformat() + "Z")
            assert result.exit_code == 0, result.output
            while datetime.now(timezone.utc).replace(tzinfo=None) < due + timedelta(seconds=1.5):
                time.sleep(0.2)
            work(BEN)
            hub_log = hub.log()
            ids = base / "hub-ids.csv"
            ids.write_text("user,id\n" + "".join(f"{u},{i}\n" for u, i in IDS.items()))
            homes = Path(tempfile.mkdtemp(dir=base))
            shutil.rmtree(homes)
            shutil.copytree(course.root, homes)      # the same course, twice
            from_homes, from_exchange = Course(homes), course
            out = {"homes": cli(from_homes.root, "collect", users.homes, "--homes", REPO,
                                "--lesson", "02", "--ids", ids),
                   "exchange": cli(from_exchange.root, "collect", exchange, "--exchange")}
            graded = {"homes": _grades(from_homes), "exchange": _grades(from_exchange)}
            # ben, an attacker: a folder named as ada's in the exchange, and his notebook in
            # his home made a link to ada's
            planted = exchange / "autograd-lab" / "inbound" / f"{ADA}+{LESSON}+2026-01-01 00:00:00.000000 UTC+forged"
            users.run(BEN, ["mkdir", planted], cwd="/")
            users.run(BEN, ["cp", users.home(BEN) / notebook, planted / f"{LESSON}.ipynb"],
                      cwd="/")
            ben_file = users.home(BEN) / notebook
            users.run(BEN, ["ln", "-sf", users.home(ADA) / notebook, ben_file], cwd="/")
            third = Course(shutil.copytree(course.root, base / "third",
                                           ignore=shutil.ignore_patterns("submitted*")))
            out["attacked homes"] = cli(third.root, "collect", users.homes, "--homes", REPO,
                                        "--lesson", "02", "--ids", ids)
            out["attacked exchange"] = cli(third.root, "collect", exchange, "--exchange")
            yield dict(course=course, homes=from_homes, exchange=from_exchange, out=out,
                       graded=graded, times=times, due=due, hub_log=hub_log, third=third)
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_two_learners_on_the_hub_are_collected_and_graded(term):
    out, times, due = term["out"], term["times"], term["due"]
    for where in ("homes", "exchange"):
        assert out[where].exit_code == 0, out[where].output
        assert "2 new, 0 replaced, 0 unchanged, 0 not placed" in out[where].output, \
            out[where].output
        assert "this machine recorded" in out[where].output
    ids = {"homes": IDS, "exchange": {ADA: ADA, BEN: BEN}}
    for where in ("homes", "exchange"):
        course = term[where]
        ada, ben = ids[where][ADA], ids[where][BEN]
        # each under their id, with the time their work was written here: ada's before the
        # due date, ben's after it
        assert sorted(course.students_with(LESSON)) == sorted([ada, ben])
        assert _stamp(course, ada) <= due < _stamp(course, ben)
        assert times[ADA] - timedelta(seconds=30) <= _stamp(course, ada) <= times[ADA]
        assert due < _stamp(course, ben) <= times[BEN]
        rows = term["graded"][where]
        assert set(rows) == {ada, ben}
        assert (rows[ada]["status"], rows[ada]["late"]) == ("graded", "no"), rows[ada]
        assert float(rows[ada]["score"]) == float(rows[ada]["max_score"]) > 0
        # late, and the course's "zero" policy took it all
        assert (rows[ben]["status"], rows[ben]["late"], rows[ben]["score"]) == \
            ("graded", "yes", "0"), rows[ben]
        assert rows[ben]["late_penalty"] == rows[ada]["score"]


def test_what_a_learner_plants_on_the_hub_is_refused(term):
    out, third = term["out"], term["third"]
    said = out["attacked homes"].output
    assert out["attacked homes"].exit_code == 0, said
    assert f"{LESSON}.ipynb: a symbolic link (not followed)" in said, said
    said = out["attacked exchange"].output
    assert f"named as {ADA}'s, but owned by {BEN}" in said, said
    # ada's own submission is the one placed as hers, from the exchange and from her home
    from autograd_lab_grader.gradebook import status

    assert IDS[BEN] not in third.students_with(LESSON)
    assert status.read_refusals(third)[(LESSON, IDS[BEN])].startswith("collect refused")
    original = (term["exchange"].submission(LESSON, ADA) / f"{LESSON}.ipynb").read_bytes()
    assert (third.submission(LESSON, ADA) / f"{LESSON}.ipynb").read_bytes() == original
