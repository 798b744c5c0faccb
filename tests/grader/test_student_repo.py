"""`autograd-lab student-repo`: the learners' repository of the real course, as handed out
week by week: a git repository with a working Binder badge, only the lessons asked for, and an
install that brings no instructor command."""
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autograd_lab_grader.commands.cli import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    dest = tmp_path_factory.mktemp("learners") / "class-repo"
    result = runner.invoke(app, ["-C", str(ROOT), "student-repo", str(dest), "--binder", "o/r",
                                 "--lessons", "00", "01"])
    assert result.exit_code == 0, result.output
    return dest


def test_a_git_repository_of_one_commit_with_the_lessons_asked(repo):
    assert _git(repo, "log", "--format=%s").splitlines() == [
        "Lessons 00_start_here, 01_tensors_that_remember"]
    files = _git(repo, "ls-files").splitlines()
    assert sorted({f.split("/")[1] for f in files if f.startswith("notebooks/")}) == [
        "00_start_here", "01_tensors_that_remember"]
    assert ".gitignore" in files and "README.md" in files and "pyproject.toml" in files
    assert not [f for f in files if f.startswith(("solutions/", "grader/"))]
    assert ".ipynb_checkpoints/" in (repo / ".gitignore").read_text()
    assert _git(repo, "status", "--porcelain") == ""


def test_the_binder_badge_opens_the_first_lesson_of_this_repository(repo):
    readme = (repo / "README.md").read_text()
    badge = re.search(r"\[!\[[^\]]*\]\(https://mybinder\.org/badge_logo\.svg\)\]\((\S+?)\)", readme)
    assert badge, readme
    link = re.fullmatch(r"https://mybinder\.org/v2/gh/([^/]+)/([^/]+)/HEAD\?urlpath=lab/tree/(\S+)",
                        badge[1])
    assert link and link.group(1, 2) == ("o", "r"), badge[1]
    assert link[3] == "notebooks/00_start_here/00_start_here.ipynb"
    assert link[3] in _git(repo, "ls-files").splitlines()      # it opens a file that is there
    assert "download your notebook" in readme
    for lesson in ("00_start_here", "01_tensors_that_remember"):
        assert f"lab/tree/notebooks/{lesson}/{lesson}.ipynb" in readme


def test_installing_it_brings_no_instructor_command(repo, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--target", str(target), str(repo)],
                   check=True, capture_output=True)
    assert not (target / "bin").exists()                       # no console script at all
    entry_points = list(target.glob("*.dist-info/entry_points.txt"))
    assert entry_points == [] or "autograd-lab" not in entry_points[0].read_text()
    ran = subprocess.run([sys.executable, "-c", "import autograd_lab, autograd_lab.checks; "
                          "print(autograd_lab.tensor([1.0]).sum().item())"],
                         env={"PYTHONPATH": str(target)}, cwd=tmp_path, capture_output=True,
                         text=True)
    assert ran.returncode == 0 and ran.stdout.strip() == "1.0", ran.stderr
    assert "typer" not in (repo / "pyproject.toml").read_text()


def test_running_it_again_with_more_lessons_adds_a_commit(repo):
    result = runner.invoke(app, ["-C", str(ROOT), "student-repo", str(repo), "--binder", "o/r",
                                 "--lessons", "02"])
    assert result.exit_code == 0, result.output
    assert _git(repo, "log", "--format=%s").splitlines()[0] == "Lesson 02_scalar_backward"
    assert sorted(p.name for p in (repo / "notebooks").iterdir()) == [
        "00_start_here", "01_tensors_that_remember", "02_scalar_backward"]
    again = runner.invoke(app, ["-C", str(ROOT), "student-repo", str(repo), "--binder", "o/r"
                                , "--lessons", "02"])
    assert again.exit_code == 0 and len(_git(repo, "log", "--format=%s").splitlines()) == 2


def test_it_refuses_a_folder_it_did_not_write_and_a_bad_repository_name(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "thesis.tex").write_text("mine")
    result = runner.invoke(app, ["-C", str(ROOT), "student-repo", str(other)])
    assert result.exit_code == 1 and "not empty" in result.output
    assert sorted(p.name for p in other.iterdir()) == ["thesis.tex"]
    bad = runner.invoke(app, ["-C", str(ROOT), "student-repo", str(tmp_path / "new"),
                              "--binder", "OWNER"])
    assert bad.exit_code == 1 and "OWNER/REPO" in bad.output


def test_model_answers_go_out_unless_the_written_answers_are_graded(repo, tmp_path):
    """For learners on their own the written answers' model answers go with the lessons (a
    lesson reveals one after an attempt); --no-model-answers leaves them out."""
    assert (repo / "notebooks" / "01_tensors_that_remember" / "model_answers.json").is_file()
    graded = tmp_path / "graded-term"
    result = runner.invoke(app, ["-C", str(ROOT), "student-repo", str(graded), "--lessons",
                                 "01", "--no-model-answers"])
    assert result.exit_code == 0, result.output
    assert (graded / "notebooks" / "01_tensors_that_remember").is_dir()
    assert not list(graded.rglob("model_answers.json"))


def test_the_learners_get_the_learners_guide_only(repo):
    docs = repo / "docs"
    assert (docs / "learners").is_dir()
    assert not [d for d in ("instructors", "maintainers", "measurements") if (docs / d).exists()]
