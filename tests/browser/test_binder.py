"""binder/, what a learner's Binder builds, checked without a Docker daemon:

- repo2docker (--no-build) writes a Dockerfile that installs graphviz and binder/requirements.txt
  on runtime.txt's Python, one nbgrader 0.9.6 accepts, and runs postBuild after them;
- requirements.txt pins what pyproject.toml asks for, and leaves PyTorch out;
- installed into a fresh virtual environment (tests/support/learner_env.py), it runs every released
  notebook, its exercises answered. Its size is written to
  test-artifacts/learner-env.txt. (That postBuild leaves a learner the Validate button and none
  of the instructor's tools is seen where it shows, in JupyterLab: tests/browser/test_browser.py.)
"""
import importlib.metadata
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

import course
from learner_env import BINDER, ROOT, python_of, size_mb

RUNTIME = re.fullmatch(r"python-(3\.\d+)\s*", (BINDER / "runtime.txt").read_text()).group(1)


def requirements():
    """binder/requirements.txt as {name: Requirement}, and its other lines (such as -e .)."""
    reqs, other = {}, []
    for line in (BINDER / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-"):
            other.append(line)
        elif line:
            req = Requirement(line)
            reqs[req.name.lower()] = req
    return reqs, other


def test_repo2docker_installs_graphviz_and_the_requirements_on_the_runtime_python():
    done = subprocess.run([sys.executable, "-m", "repo2docker", "--no-build", "--no-run", str(ROOT)],
                          capture_output=True, text=True, check=True)
    dockerfile = done.stdout
    assert f"environment for python={RUNTIME}\n" in done.stderr
    assert re.search(r"apt-get install [^\n]*\bgraphviz\b", dockerfile)
    install = re.search(r'pip install [^\n]*-r "?binder/requirements\.txt', dockerfile)
    post_build = dockerfile.find("./binder/postBuild")
    assert install and post_build > install.end()


def test_the_runtime_python_is_one_nbgrader_accepts():
    (nbgrader,) = [r for r in requirements()[0].values() if r.name == "nbgrader"]
    assert nbgrader.specifier.contains(importlib.metadata.version("nbgrader"))    # the one tested
    accepts = SpecifierSet(importlib.metadata.metadata("nbgrader")["Requires-Python"])
    assert accepts.contains(RUNTIME)


def test_requirements_pin_what_pyproject_asks_for_and_leave_pytorch_out():
    reqs, other = requirements()
    assert "-e ." in other                   # the engine itself (repo2docker ignores pyproject.toml)
    assert "torch" not in reqs
    assert "uv" not in reqs                  # the installer is none of the learner's set
    for req in reqs.values():
        (pin,) = req.specifier
        assert pin.operator == "==", f"{req} is not pinned"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    asked = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["lab"]]
    for want in asked:
        if want.name.lower() in reqs:
            (pin,) = reqs[want.name.lower()].specifier
            assert want.specifier.contains(Version(pin.version)), f"{pin} of {want.name} is not {want}"
    for want in project["dependencies"]:
        assert Requirement(want).name.lower() in reqs, f"{want} is not pinned"


# -- the fresh environment ------------------------------------------------------------------

def in_env(learner_env, code, *args):
    """Run Python ``code`` in the learner's environment; what it printed."""
    venv, environ = learner_env
    done = subprocess.run([python_of(venv), "-c", code, *map(str, args)], env=environ, cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_environment_is_binders_python_with_the_course_and_without_pytorch(learner_env):
    venv, _ = learner_env
    found = json.loads(in_env(learner_env, """if True:
        import importlib.util, json, platform, autograd_lab
        print(json.dumps([platform.python_version(), autograd_lab.__file__,
                          importlib.util.find_spec("torch") is not None,
                          importlib.util.find_spec("autograd_lab_grader") is not None,
                          sorted(n for n in ("typer", "rich", "psycopg", "latex2mathml")
                                 if importlib.util.find_spec(n))]))"""))
    version, engine, has_torch, has_grader, grader_libraries = found
    assert version.rsplit(".", 1)[0] == RUNTIME
    assert Path(engine) == ROOT / "autograd_lab" / "__init__.py"      # -e . of this checkout
    assert not has_torch
    # the learner's distribution alone: no instructor command, no grader to import
    assert not has_grader and not (Path(venv) / "bin" / "autograd-lab").exists()
    assert grader_libraries == []          # the grader's own libraries (grader/pyproject.toml)
    (ROOT / "test-artifacts").mkdir(exist_ok=True)
    (ROOT / "test-artifacts" / "learner-env.txt").write_text(
        f"binder/requirements.txt in a fresh venv (no bytecode): {size_mb(venv):.0f} MB\n")


RUN_NOTEBOOKS = """if True:
    import json, sys, nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    failed = {}
    for path, folder in zip(sys.argv[1::2], sys.argv[2::2]):
        nb = nbformat.read(path, as_version=4)
        try:
            NotebookClient(nb, timeout=120, kernel_name="python3",
                           resources={"metadata": {"path": folder}}).execute()
        except CellExecutionError as e:
            failed[path] = str(e)
    print(json.dumps(failed))"""


def test_every_released_notebook_runs_there_answered(learner_env, tmp_path):
    """Each released notebook with the solution's answers typed into its exercises (what a
    learner who got them right has), top to bottom, in its own folder; cells tagged
    raises-exception may raise (nbclient allows them), nothing else may."""
    assert course.LESSONS
    args = []
    for lesson in course.LESSONS:
        path = tmp_path / f"{lesson}.ipynb"
        nbformat.write(course.submission(lesson), path)
        args += [path, course.release_path(lesson).parent]
    failed = json.loads(in_env(learner_env, RUN_NOTEBOOKS, *args).splitlines()[-1])
    assert not failed, "\n\n".join(f"{p}:\n{e}" for p, e in failed.items())


def test_binder_and_run_lab_open_the_first_lesson():
    from autograd_lab_grader.steps.release import binder_link

    first = course.release_path(course.LESSONS[0]).relative_to(ROOT).as_posix()
    # the badge is made for the learners' repository (student-repo --binder OWNER/REPO, whose
    # own test opens it); this README and its guides (docs/) have no launch link with a
    # placeholder in it
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*/*.md"))]:
        assert not re.findall(r"https://mybinder\.org/v2/gh/", page.read_text()), page
    assert binder_link("o/r", course.LESSONS[0]).endswith(f"?urlpath=lab/tree/{first}")
    run_lab = re.search(r"^\s*lab\)(.*?);;", (ROOT / "run").read_text(), re.M | re.S).group(1)
    assert f"--LabApp.default_url=/lab/tree/{first} " in run_lab
