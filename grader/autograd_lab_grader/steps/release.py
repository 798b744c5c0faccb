"""What learners get: the released notebooks, and a repository to hand out for a graded class:
with `--binder OWNER/REPO` (its GitHub repository), Binder and Colab links to every lesson, and
each lesson's install cell pointed at it (Colab installs the course from there)."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from autograd_lab.checks.written import (ANSWERS_FILE, model_answers as _model_answers,
                                         write as write_model_answers)
from ..course import Course

LEARNER_README = """\
# autograd-lab: the course

A course on how PyTorch's autograd works, on `autograd_lab`, a small engine that behaves
like it. The lessons are in `notebooks/`, one folder each, in order.

## Open it

{binder}- On your machine (Python 3.11 or newer):

      python -m venv .venv
      .venv/bin/pip install -e '.[lab]'
      PATH="$PWD/.venv/bin:$PATH" bash binder/postBuild    # Validate only, as on Binder
      .venv/bin/jupyter lab notebooks

## Work on a lesson

Write your answers where a cell says `# YOUR CODE HERE`, run the check cell under it, and read
its message: when a check fails it says what it expected, what it found, and which
misconception that usually means. The Validate button runs every check before you hand in.
Hand in the notebook file itself, keeping its name.

## The course as a website

`docs/` builds every lesson, run as released, into a site with a Binder and a download
button on each lesson; `.github/workflows/pages.yml` publishes it on GitHub Pages (Settings >
Pages > Source: GitHub Actions). On your machine: `pip install -e '.[lab,docs]'`,
`npm ci --prefix docs`, then `python -m sphinx -b html docs docs/_build/html`.
"""

BINDER = """\
- In the browser, with nothing to install: [![Launch on Binder]\
(https://mybinder.org/badge_logo.svg)]({link}) opens the first lesson. Binder throws its
  copy away when you close the tab or leave it idle: **download your notebook** (File >
  Download) before you go, and upload it again next time (the upload button in the file
  browser). Lessons:
{lessons}
- In Google Colab: [![Open in Colab]\
(https://colab.research.google.com/assets/colab-badge.svg)]({colab}) opens the first lesson;
  its first cell installs the course there. Colab has no Validate button: run the lesson's
  cells, then `from autograd_lab.checks import validate; validate()` in a last cell. Save a
  copy in your Drive (File > Save a copy in Drive) to keep your work, and download it (File >
  Download > Download .ipynb) to hand it in. Lessons:
{colab_lessons}
"""

#: the learners' repository a lesson's install cell clones in Colab, as the lessons are written
#: (the site's default, docs/conf.py); student-repo writes the real one into every lesson
DEFAULT_COURSE = "https://github.com/ourschool/autograd-class"

GITIGNORE = """\
# what Jupyter and Python leave behind: never part of the course
.ipynb_checkpoints/
__pycache__/
*.pyc
*.egg-info/
.venv/
build/
# the course's site: its build and the MathJax npm installs for it
docs/_build/
docs/node_modules/
"""

MARK = ".autograd-lab-student-repo"      # a repository student-repo wrote (and may update)

# GitHub Pages builds and publishes the course's site from the learners' repository: every
# lesson there run as released (docs/conf.py), its Binder buttons opening this repository
PAGES_WORKFLOW = """\
# The course's site on GitHub Pages (Settings > Pages > Source: GitHub Actions): every lesson
# of notebooks/ run as released, with Binder and download buttons. Written by
# `autograd-lab student-repo`.
name: Course site
on:
  push:
    branches: [main]
  workflow_dispatch:
permissions:
  contents: read
  pages: write
  id-token: write
concurrency:
  group: pages
  cancel-in-progress: false
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - name: graphviz draws the lessons' graphs
        run: sudo apt-get update -qq && sudo apt-get install -y -qq graphviz
      - name: the course and the site's tools
        run: python -m pip install -e '.[lab,docs]'
      - name: the MathJax the site ships (docs/package-lock.json)
        run: npm ci --prefix docs --no-audit --no-fund
      - name: build (warnings are errors)
        env:
          AUTOGRAD_LAB_REPO: ${{ github.repository }}
        run: python -m sphinx -W --keep-going -b html docs docs/_build/html
      - uses: actions/upload-pages-artifact@v3
        with:
          path: docs/_build/html
  deploy:
    needs: build
    runs-on: ubuntu-latest
    environment:
      name: github-pages
      url: ${{ steps.deployment.outputs.page_url }}
    steps:
      - id: deployment
        uses: actions/deploy-pages@v4
"""
# what of the course's docs/ the learners get: the site's sources, not its build, its
# installed MathJax or the instructor's screenshots
# (the instructors', maintainers' and measurements' guides are the course's, not the learners')
_SITE_SKIP = shutil.ignore_patterns("_build", "node_modules", "*.png", "learners-repo.txt",
                                    "__pycache__", "*.pyc", ".ipynb_checkpoints",
                                    "instructors", "maintainers", "measurements")


def binder_link(owner_repo: str, lesson: str, ref: str = "HEAD") -> str:
    """Binder's launch link opening a lesson's notebook in JupyterLab."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", owner_repo or ""):
        raise ValueError(f"--binder takes OWNER/REPO (the learners' GitHub repository), "
                         f"not {owner_repo!r}")
    return (f"https://mybinder.org/v2/gh/{owner_repo}/{ref}"
            f"?urlpath=lab/tree/notebooks/{lesson}/{lesson}.ipynb")


def colab_link(owner_repo: str, lesson: str, branch: str = "main") -> str:
    """Colab's link opening a lesson's notebook from the learners' GitHub repository (on the
    branch student-repo commits to)."""
    binder_link(owner_repo, lesson)             # (refuses what is not OWNER/REPO)
    return (f"https://colab.research.google.com/github/{owner_repo}/blob/{branch}"
            f"/notebooks/{lesson}/{lesson}.ipynb")


def _install_from(notebook: Path, owner_repo: str) -> None:
    """Point the lesson's install cell (tagged course-install) at the learners' repository:
    Colab clones the course from there."""
    import json
    text = notebook.read_text(encoding="utf-8")
    cells = json.loads(text).get("cells", [])
    if not any("course-install" in c.get("metadata", {}).get("tags", []) for c in cells):
        return
    old = json.dumps(f'COURSE = "{DEFAULT_COURSE}"')[1:-1]
    new = json.dumps(f'COURSE = "https://github.com/{owner_repo}"')[1:-1]
    if old not in text:
        raise ValueError(f"{notebook.name}: its install cell names no learners' repository "
                         f"({DEFAULT_COURSE}) to replace")
    notebook.write_text(text.replace(old, new, 1), encoding="utf-8")


# what a released file must never contain
_SECRETS = re.compile(r"BEGIN (HIDDEN TESTS|SOLUTION)|END (HIDDEN TESTS|SOLUTION)")
_SKIP_NAMES = ("__pycache__", "*.pyc", ".ipynb_checkpoints", "*.egg-info")
_SKIP = shutil.ignore_patterns(*_SKIP_NAMES)


def release(course: Course, lessons: list[str] | None = None, *, due=None, tz=None):
    """Run nbgrader's generate_assignment for each lesson (by number or id); yields (lesson,
    ok, log, due date). A lesson released gets `due` (naive UTC) as nbgrader's duedate, else
    the one the course's configuration gives it (``c.AutogradLab.due = {"02": "2026-11-20
    23:59"}``, in `tz`), else keeps the one it has."""
    from datetime import timezone

    from ..gradebook import late

    api = course.api()
    configured = {course.lesson(k): v for k, v in
                  dict(course.config().AutogradLab.get("due", {}) or {}).items()}
    for lesson in course.resolve(lessons) or course.lessons():
        result = api.generate_assignment(lesson, force=True, create=True)
        ok = result["success"]
        if ok:          # beside the learner's notebook: the written answers' model answers
            write_model_answers(course.directory("source") / lesson / f"{lesson}.ipynb",
                                course.directory("release") / lesson)
        when = due or (late.parse_when(configured[lesson], tz or timezone.utc)
                       if lesson in configured else None)
        if ok and when is not None:
            late.set_due(course, lesson, when)
        yield (lesson, ok, result.get("log", "") + (result.get("error") or ""),
               late.dues(course).get(lesson) if ok else None)


def model_answer_lines(course: Course, lessons: list[str]) -> list[str]:
    """The lines of the lessons' model answers and rubrics (from the solutions) long enough to
    be theirs alone, as text and as a JSON file (a notebook) spells them: what a learners'
    repository without them must hold nowhere. A line the released notebook itself holds (a
    model answer quoting its question) is not one."""
    found = set()
    for lesson in lessons:
        solution = course.directory("source") / lesson / f"{lesson}.ipynb"
        if not solution.is_file():
            continue
        release = course.directory("release") / lesson / f"{lesson}.ipynb"
        released = release.read_text(encoding="utf-8") if release.is_file() else ""
        for answer in _model_answers(json.loads(solution.read_text(encoding="utf-8"))).values():
            for line in answer.splitlines():
                forms = {line.strip(), json.dumps(line.strip(), ensure_ascii=False)[1:-1]}
                if len(line.strip()) >= _ANSWER_LINE and not any(f in released for f in forms):
                    found |= forms
    return sorted(found)


_ANSWER_LINE = 30       # characters: a line this long is a model answer's own, not a phrase


def _handed_out(dest: Path) -> bool:
    """Whether any commit of the learners' repository at dest has held model answers."""
    names = _git(dest, "log", "--all", "--format=", "--name-only")
    return any(Path(name).name == ANSWERS_FILE for name in names.splitlines())


def _git(dest: Path, *args: str) -> str:
    import subprocess

    identity = []
    for key, fallback in (("user.name", "autograd-lab"), ("user.email", "autograd-lab@localhost")):
        found = subprocess.run(["git", "-C", str(dest), "config", key], capture_output=True,
                               text=True).stdout.strip()
        if not found:
            identity += ["-c", f"{key}={fallback}"]
    return subprocess.run(["git", *identity, "-C", str(dest), *args], check=True,
                          capture_output=True, text=True).stdout


def student_repo(course: Course, dest: Path, *, binder: str | None = None,
                 lessons: list[str] | None = None, self_study: bool = False) -> list[Path]:
    """Write the learners' repository to dest, a git repository (one commit a release); returns
    the files written. `lessons`: only these (run again with more for a weekly release: the
    lessons already there stay). `self_study`: hand out the written answers' model answers
    and rubrics (``model_answers.json``, which ``reveal`` shows after an attempt), for
    learners on their own; without it the repository holds none, for a class whose written
    answers are graded. Refuses (ValueError) when anything in it would hold a solution, a
    hidden test or (unless `self_study`) a model answer, when a repository whose history
    holds model answers is updated without `self_study` (a commit cannot take them back), and
    a non-empty dest it did not write."""
    dest = Path(dest)
    released = course.directory("release")
    known = sorted(p.name for p in released.iterdir() if (p / f"{p.name}.ipynb").is_file())
    unknown = [l for l in lessons or [] if l not in known]
    if unknown:
        raise ValueError(f"not released: {', '.join(unknown)} (released: {', '.join(known)})")
    update = dest.is_dir() and (dest / MARK).is_file() and (dest / ".git").is_dir()
    if dest.exists() and any(dest.iterdir()) and not update:
        raise ValueError(f"{dest} is not empty, nor a learners' repository written by "
                         "student-repo")
    if update and not self_study and _handed_out(dest):
        raise ValueError(
            f"{dest}'s history holds model answers ({ANSWERS_FILE}: written with --self-study, "
            "or by a student-repo older than --self-study, which handed them out unless told "
            "not to); a new commit cannot take them back. For a class whose written answers "
            "you grade, write a new repository (and push it in place of this one); to keep "
            "handing them out, run this again with --self-study")
    before = sorted(p.name for p in (dest / "notebooks").iterdir()) if update else []
    chosen = sorted(set(before) | set(lessons or known))
    if update:
        for name in ("autograd_lab", "notebooks", "binder", "docs"):
            shutil.rmtree(dest / name, ignore_errors=True)
    dest.mkdir(parents=True, exist_ok=True)
    root = course.root
    # the learner's distribution as it is: the engine (with its checks) and its pyproject.toml
    # (the grader is a distribution of its own, which learners do not get), from the course's
    # checkout, else from the checkout the installed engine comes from
    package = root / "autograd_lab"
    if not package.is_dir():
        import autograd_lab
        package = Path(autograd_lab.__file__).resolve().parent
    pyproject = package.parent / "pyproject.toml"
    if not pyproject.is_file():
        raise ValueError(f"no pyproject.toml beside {package}: student-repo hands out the "
                         "course's checkout (run it there, or with -C pointing there)")
    shutil.copytree(package, dest / "autograd_lab",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    skip = _SKIP if self_study else shutil.ignore_patterns(ANSWERS_FILE, *_SKIP_NAMES)
    for lesson in chosen:
        shutil.copytree(released / lesson, dest / "notebooks" / lesson, ignore=skip)
        if binder:
            binder_link(binder, lesson)                   # (refuses what is not OWNER/REPO)
            _install_from(dest / "notebooks" / lesson / f"{lesson}.ipynb", binder)
    if (root / "binder").is_dir():
        shutil.copytree(root / "binder", dest / "binder", ignore=_SKIP)
    if (root / "docs" / "conf.py").is_file():
        # the site's sources (docs/notebooks stays a link to ../notebooks) and its workflow
        shutil.copytree(root / "docs", dest / "docs", symlinks=True, ignore=_SITE_SKIP)
        if binder:
            binder_link(binder, "00")                     # (refuses what is not OWNER/REPO)
            (dest / "docs" / "learners-repo.txt").write_text(binder + "\n")
        workflow = dest / ".github" / "workflows" / "pages.yml"
        workflow.parent.mkdir(parents=True, exist_ok=True)
        workflow.write_text(PAGES_WORKFLOW)
    for name in ("LICENSE", "nbgrader_config.py"):
        if (root / name).is_file():
            shutil.copy2(root / name, dest / name)
    shutil.copy2(pyproject, dest / "pyproject.toml")
    (dest / ".gitignore").write_text(GITIGNORE)
    (dest / MARK).write_text("written by `autograd-lab student-repo`; run it again to add "
                             "lessons\n")
    badge = ""
    if binder:
        def listed(link):
            return "\n".join(f"  [{l}]({link(binder, l)})" + ("," if i < len(chosen) - 1
                                                              else ".")
                             for i, l in enumerate(chosen))
        badge = BINDER.format(link=binder_link(binder, chosen[0]), lessons=listed(binder_link),
                              colab=colab_link(binder, chosen[0]),
                              colab_lessons=listed(colab_link))
    (dest / "README.md").write_text(LEARNER_README.format(binder=badge))
    written = sorted(p for p in dest.rglob("*") if p.is_file() and ".git" not in p.parts)
    answers = [] if self_study else model_answer_lines(course, chosen)
    leaks = []
    for path in written:
        text = path.read_text(errors="ignore")
        if _SECRETS.search(text):
            leaks.append(f"{path.relative_to(dest)} (a solution or a hidden test)")
        elif any(line in text for line in answers):
            leaks.append(f"{path.relative_to(dest)} (a model answer: --self-study hands them "
                         "out)")
    if leaks:
        shutil.rmtree(dest)
        raise ValueError(f"the learners' repository would hand out: {', '.join(leaks)}")
    if not update:
        _git(dest, "init", "-q", "-b", "main")
    _git(dest, "add", "-A")
    if _git(dest, "status", "--porcelain").strip():
        added = [l for l in chosen if l not in before]
        _git(dest, "commit", "-q", "-m", ("Lessons " if len(added) > 1 else "Lesson ")
             + ", ".join(added) if added else "Update the course")
    return written
