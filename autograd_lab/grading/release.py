"""What learners get: the released notebooks, and a repository to hand out for a graded class."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

from .course import Course

LEARNER_README = """\
# autograd-lab: the course

A course on how PyTorch's autograd works, on `autograd_lab`, a small engine that behaves
like it. The lessons are in `notebooks/`, one folder each, in order.

## Open it

- In the browser: open this repository on Binder (the `binder/` folder sets it up), then
  `notebooks/<lesson>/<lesson>.ipynb`.
- On your machine (Python 3.11 or newer):

      python -m venv .venv
      .venv/bin/pip install -e '.[course]'
      .venv/bin/jupyter lab notebooks

## Work on a lesson

Write your answers where a cell says `# YOUR CODE HERE`, run the check cell under it, and read
its message: when a check fails it says what it expected, what it found, and which
misconception that usually means. The Validate button runs every check before you hand in.
Hand in the notebook file itself, keeping its name.
"""

# what a released file must never contain
_SECRETS = re.compile(r"BEGIN (HIDDEN TESTS|SOLUTION)|END (HIDDEN TESTS|SOLUTION)")
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", "*.egg-info")


def release(course: Course, lessons: list[str] | None = None):
    """Run nbgrader's generate_assignment for each lesson; yields (lesson, ok, log)."""
    api = course.api()
    for lesson in lessons or course.lessons():
        result = api.generate_assignment(lesson, force=True, create=True)
        yield lesson, result["success"], result.get("log", "") + (result.get("error") or "")


def student_repo(course: Course, dest: Path) -> list[Path]:
    """Write the learners' repository to dest; returns the files written. Refuses (ValueError)
    when anything in it would hold a solution or a hidden test."""
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise ValueError(f"{dest} is not empty")
    dest.mkdir(parents=True, exist_ok=True)
    root = course.root
    # the package without its grading side: learners need the engine and the checks
    package = root / "autograd_lab"
    if not package.is_dir():
        import autograd_lab
        package = Path(autograd_lab.__file__).parent
    shutil.copytree(package, dest / "autograd_lab",
                    ignore=shutil.ignore_patterns("grading", "__pycache__", "*.pyc"))
    shutil.copytree(course.directory("release"), dest / "notebooks", ignore=_SKIP)
    if (root / "binder").is_dir():
        shutil.copytree(root / "binder", dest / "binder", ignore=_SKIP)
    for name in ("pyproject.toml", "LICENSE", "nbgrader_config.py"):
        if (root / name).is_file():
            shutil.copy2(root / name, dest / name)
    (dest / "README.md").write_text(LEARNER_README)
    written = sorted(p for p in dest.rglob("*") if p.is_file())
    leaks = [str(p.relative_to(dest)) for p in written
             if _SECRETS.search(p.read_text(errors="ignore"))]
    if leaks:
        shutil.rmtree(dest)
        raise ValueError(f"solutions or hidden tests would be handed out in: {', '.join(leaks)}")
    return written
