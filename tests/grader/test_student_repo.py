"""`autograd-lab student-repo`: the learners' repository of the real course, as handed out
week by week: a git repository with a working Binder badge, only the lessons asked for, and an
install that brings no instructor command; Colab links to every lesson, whose install cell
clones this repository and installs the engine in a fresh environment standing in for
Colab's, where the lesson then runs, reveals and validates with no notebook file on disk."""
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


def test_its_set_up_turns_off_the_instructors_tools_as_binder_does(repo):
    """The README's steps on a learner's machine run binder/postBuild (nbgrader's Validate
    only), which the repository holds, as Binder runs it."""
    readme = (repo / "README.md").read_text()
    steps = readme[readme.index("pip install -e"):readme.index("jupyter lab notebooks")]
    assert 'PATH="$PWD/.venv/bin:$PATH" bash binder/postBuild' in steps
    assert (repo / "binder" / "postBuild").read_text() == (ROOT / "binder" / "postBuild").read_text()


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


# -- model answers: with the instructor, unless the repository is for self-study -------------

def _model_answer_lines(only=None):
    """Every line of every lesson's (or `only` these lessons') model answers and rubrics (the solutions' hand-graded
    Markdown answers) long enough to be theirs alone, as text and as a notebook's JSON spells
    it; none that the released notebook holds too."""
    import json

    import nbformat

    import course as lessons

    found = set()
    for lesson in only or lessons.LESSONS:
        released = lessons.release_path(lesson).read_text()
        for cell in nbformat.read(lessons.solution_path(lesson), as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "markdown" and meta.get("grade") and meta.get("solution"):
                for line in map(str.strip, cell.source.splitlines()):
                    forms = {line, json.dumps(line, ensure_ascii=False)[1:-1]}
                    if len(line) >= 30 and not any(f in released for f in forms):
                        found |= forms
    assert len(found) > (4 if only else 50)          # (the search has something to find)
    return found


def _everything_in(repo):
    """The text of every file in the tree (git's own folder aside) and of every object in
    its git history (every version of every file, every commit message)."""
    texts = {str(p.relative_to(repo)): p.read_bytes().decode(errors="replace")
             for p in repo.rglob("*") if p.is_file() and ".git" not in p.relative_to(repo).parts}
    objects = _git(repo, "rev-list", "--all", "--objects").splitlines()
    for sha in {line.split()[0] for line in objects}:      # ("<sha> <path>", or a bare sha)
        texts[f"git:{sha}"] = subprocess.run(
            ["git", "-C", str(repo), "cat-file", "-p", sha], capture_output=True,
            check=True).stdout.decode(errors="replace")
    return texts


def _leaks(repo, lines):
    return sorted({name for name, text in _everything_in(repo).items()
                   if any(line in text for line in lines)})


def _guide_commands(guide):
    """The `autograd-lab student-repo` command lines of a guide, as its code blocks have them."""
    import shlex

    text = (ROOT / "docs" / "instructors" / guide).read_text()
    found = [shlex.split(line, comments=True)[1:] for line in text.splitlines()
             if line.strip().startswith("autograd-lab student-repo ")]
    assert found, guide
    return found


@pytest.mark.parametrize("guide", ["term.md", "learners-repo.md"])
def test_the_repository_the_guides_write_holds_no_model_answer_nor_its_history(guide, tmp_path):
    """Run as the guide runs it, then again a week later with one more lesson (as it says):
    no model answer and no rubric in any file of the tree or in any version of its history."""
    lines = _model_answer_lines()
    dest = tmp_path / "class-repo"
    for args in _guide_commands(guide):
        args = [str(dest) if a == "../class-repo" else a for a in args]
        assert str(dest) in args, args
        result = runner.invoke(app, ["-C", str(ROOT), *args])
        assert result.exit_code == 0, result.output
        assert "no model answer in it" in result.output
    again = runner.invoke(app, ["-C", str(ROOT), "student-repo", str(dest), "--lessons", "02"])
    assert again.exit_code == 0, again.output
    assert "02_scalar_backward" in _git(dest, "ls-files")
    assert not list(dest.rglob("model_answers.json"))
    assert _leaks(dest, lines) == []


def test_a_self_study_repository_hands_them_out(tmp_path):
    """--self-study: each lesson's model_answers.json is the release's, and the search that
    finds nothing in a class's repository finds them here."""
    import json

    dest = tmp_path / "self-study"
    result = runner.invoke(app, ["-C", str(ROOT), "student-repo", str(dest), "--lessons", "01",
                                 "02", "--self-study"])
    assert result.exit_code == 0, result.output
    assert "with the model answers and rubrics" in result.output
    for lesson in ("01_tensors_that_remember", "02_scalar_backward"):
        kept = dest / "notebooks" / lesson / "model_answers.json"
        assert json.loads(kept.read_text()) == json.loads(
            (ROOT / "notebooks" / lesson / "model_answers.json").read_text())
        assert "Rubric" in kept.read_text()
    assert "notebooks/02_scalar_backward/model_answers.json" in _leaks(dest,
                                                                   _model_answer_lines())


def test_a_repository_that_handed_them_out_is_not_updated_as_a_classs(tmp_path):
    """Its history holds them (a self-study repository, or one an older student-repo wrote):
    a new commit would not take them back, so it is refused, saying what to do."""
    dest = tmp_path / "handed-out"
    assert runner.invoke(app, ["-C", str(ROOT), "student-repo", str(dest), "--lessons", "01",
                               "--self-study"]).exit_code == 0
    head = _git(dest, "rev-parse", "HEAD")
    refused = runner.invoke(app, ["-C", str(ROOT), "student-repo", str(dest), "--lessons", "02"])
    assert refused.exit_code == 1
    said = " ".join(refused.output.split())
    assert "history holds model answers" in said and "write a new repository" in said
    assert _git(dest, "rev-parse", "HEAD") == head and _git(dest, "status", "--porcelain") == ""
    again = runner.invoke(app, ["-C", str(ROOT), "student-repo", str(dest), "--lessons", "02",
                                "--self-study"])
    assert again.exit_code == 0, again.output


def test_the_old_flags_still_say_what_they_do(tmp_path):
    """--no-model-answers is the default now and still accepted; --model-answers (the old
    default's own name) is refused, naming --self-study."""
    dest = tmp_path / "graded-term"
    result = runner.invoke(app, ["-C", str(ROOT), "student-repo", str(dest), "--lessons",
                                 "01", "--no-model-answers"])
    assert result.exit_code == 0, result.output
    assert (dest / "notebooks" / "01_tensors_that_remember").is_dir()
    assert not list(dest.rglob("model_answers.json"))
    old = runner.invoke(app, ["-C", str(ROOT), "student-repo", str(tmp_path / "x"),
                              "--model-answers"])
    assert old.exit_code == 1 and "--self-study" in old.output
    assert not (tmp_path / "x").exists()


def test_a_model_answer_in_any_file_it_would_write_is_refused(tmp_path):
    """The last look before the commit: a model answer's line in a file beside a lesson (an
    instructor's notes, a copy of the solutions' text) stops it, and nothing is left."""
    import shutil

    from autograd_lab_grader.course import Course
    from autograd_lab_grader.steps.release import student_repo

    lesson = "02_scalar_backward"
    course = tmp_path / "course"
    for part in ("solutions", "notebooks"):
        shutil.copytree(ROOT / part / lesson, course / part / lesson)
    for name in ("nbgrader_config.py", "pyproject.toml"):
        shutil.copy(ROOT / name, course / name)
    shutil.copytree(ROOT / "autograd_lab", course / "autograd_lab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (course / "notebooks" / lesson / "model_answers.json").unlink()
    line = sorted(l for l in _model_answer_lines([lesson]) if "Rubric" in l and "\\" not in l)[0]
    (course / "notebooks" / lesson / "notes.md").write_text(f"For the TA:\n{line}\n")
    dest = tmp_path / "class-repo"
    with pytest.raises(ValueError, match=r"notes.md \(a model answer: --self-study"):
        student_repo(Course(course), dest)
    assert not dest.exists()


def test_the_learners_get_the_learners_guide_only(repo):
    docs = repo / "docs"
    assert (docs / "learners").is_dir()
    assert not [d for d in ("instructors", "maintainers", "measurements") if (docs / d).exists()]


# --- Colab ------------------------------------------------------------------------------------

LESSON_01 = "01_tensors_that_remember"


def _install_cell(nb):
    (cell,) = [c for c in nb.cells if "course-install" in c.metadata.get("tags", [])]
    return cell


def test_each_lesson_opens_in_colab_and_installs_the_course_from_this_repository(repo):
    import nbformat
    from autograd_lab_grader.steps.release import DEFAULT_COURSE
    readme = (repo / "README.md").read_text()
    badge = re.search(r"\[!\[Open in Colab\]\(https://colab\.research\.google\.com/assets/"
                      r"colab-badge\.svg\)\]\((\S+?)\)", readme)
    assert badge, readme
    files = _git(repo, "ls-files").splitlines()
    for lesson in sorted(p.name for p in (repo / "notebooks").iterdir()):
        path = f"notebooks/{lesson}/{lesson}.ipynb"
        assert f"https://colab.research.google.com/github/o/r/blob/main/{path}" in readme
        assert path in files
        nb = nbformat.read(repo / path, as_version=4)
        install = _install_cell(nb)
        assert nb.cells.index(install) == next(i for i, c in enumerate(nb.cells)
                                                if c.cell_type == "code")   # the first
        assert 'COURSE = "https://github.com/o/r"' in install.source
        assert "nbgrader" not in install.metadata              # no checksum to break
        course = nbformat.read(ROOT / path, as_version=4)       # the course's own: the default
        assert f'COURSE = "{DEFAULT_COURSE}"' in _install_cell(course).source
        assert [c.source for c in course.cells if c is not _install_cell(course)] == \
            [c.source for c in nb.cells if c is not install]
    assert badge[1] == ("https://colab.research.google.com/github/o/r/blob/main/"
                        "notebooks/00_start_here/00_start_here.ipynb")
    assert _git(repo, "branch", "--show-current").strip() == "main"
    assert "validate()" in readme and "Download .ipynb" in readme


@pytest.fixture()
def self_study(tmp_path):
    """A learners' repository for self-study (model answers handed out) of lesson 01."""
    dest = tmp_path / "self-study"
    result = runner.invoke(app, ["-C", str(ROOT), "student-repo", str(dest), "--binder", "o/r",
                                 "--lessons", "01", "--self-study"])
    assert result.exit_code == 0, result.output
    return dest


@pytest.fixture()
def colab(self_study, tmp_path, monkeypatch):
    """A fresh virtual environment standing in for Colab's runtime: a kernel with Python's
    own pip and none of the course, in a folder of its own (Colab's /content); GitHub stands
    in as the learners' repository (for self-study) on disk (git's insteadOf, in a git config
    of the test's own)."""
    repo = self_study
    import json
    import venv
    import learner_env
    env_dir, content, kernels = tmp_path / "colab", tmp_path / "content", tmp_path / "jupyter"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = learner_env.python_of(env_dir)
    learner_env._run(learner_env.installer(python) + ["ipykernel"])
    spec = kernels / "kernels" / "colab"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Colab stand-in", "language": "python"}))
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(f'[url "file://{repo}"]\n\tinsteadOf = https://github.com/o/r\n')
    content.mkdir()
    monkeypatch.setenv("JUPYTER_PATH", str(kernels))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    for name in ("PYTHONPATH", "VIRTUAL_ENV", "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)
    unimported = subprocess.run([python, "-c", "import autograd_lab"], capture_output=True)
    assert unimported.returncode != 0                         # the course is not there
    return python, content


def _run_in(nb, content):
    from nbclient import NotebookClient
    NotebookClient(nb, timeout=600, kernel_name="colab", allow_errors=True,
                   resources={"metadata": {"path": str(content)}}).execute()
    return nb


def _errors(cell):
    return [f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error"]


def _said(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def test_the_install_cell_works_in_a_fresh_environment_standing_in_for_colab(self_study, colab):
    """Lesson 01 of the learners' repository, answered, run top to bottom in the stand-in: the
    install cell clones the repository and installs the engine, every cell runs, the graph is
    drawn in words, a reveal with the answer handed over shows the model answer, and validate()
    passes; in a second kernel (Colab's restart) the install cell finds the course and does
    nothing."""
    import json
    import nbformat
    import course
    python, content = colab
    repo = self_study
    nb = course.submission(LESSON_01)
    ours = nbformat.read(repo / "notebooks" / LESSON_01 / f"{LESSON_01}.ipynb", as_version=4)
    _install_cell(nb).source = _install_cell(ours).source
    reveal = next(i for i, c in enumerate(nb.cells) if "reveal(" in c.source)
    gid = course.grade_id(nb.cells[reveal - 1])
    nb.cells.insert(reveal + 1, nbformat.v4.new_code_cell(
        f"from autograd_lab.checks.written import reveal\nreveal({gid!r}, 'A grad_fn records "
        "the operation that made a tensor, so y, which nothing made, has none.')"))
    nb.cells += [nbformat.v4.new_code_cell("import autograd_lab\nprint(autograd_lab.__file__)"),
                 nbformat.v4.new_code_cell("from autograd_lab.checks import validate\nvalidate()")]
    _run_in(nb, content)
    for cell in nb.cells:
        if cell.cell_type == "code" and "raises-exception" not in cell.metadata.get("tags", []):
            assert not _errors(cell), (cell.source, _errors(cell))
    assert _said(nb.cells[-2]).strip() == str(content / "r" / "autograd_lab" / "__init__.py")
    drawn = [o for c in nb.cells if c.source.startswith("viz.draw(") for o in c.outputs]
    assert drawn and "MulBackward0" in drawn[0]["data"]["text/plain"]
    model = json.loads((repo / "notebooks" / LESSON_01 / "model_answers.json").read_text())
    shown = "".join(o.data.get("text/markdown", "") for o in nb.cells[reveal + 1].outputs
                    if o.output_type == "display_data")
    assert model[gid] in shown
    assert "No saved notebook here holds" in _said(nb.cells[reveal])     # before the attempt
    assert _said(nb.cells[-1]).rstrip().endswith("Success! Your notebook passes all the tests.")

    again = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(_install_cell(ours).source),
        nbformat.v4.new_code_cell("import autograd_lab\nprint(autograd_lab.__file__)")])
    _run_in(again, content)
    assert not again.cells[0].outputs and not _errors(again.cells[1])
    assert _said(again.cells[1]).strip() == str(content / "r" / "autograd_lab" / "__init__.py")
