"""nbgrader's formgrader on the gradebook ``grade`` writes.

The formgrader is a Jupyter server extension: it reads its gradebook from nbgrader's
configuration as nbgrader loads it (the Jupyter configuration folders, then the
``nbgrader_config.py`` of the server's working folder), never from ``--db-url`` or
``AUTOGRAD_LAB_DB_URL``, which are ``autograd-lab``'s. The course's configuration names the
gradebook for both (``c.CourseDirectory.db_url``, from ``AUTOGRAD_LAB_DB_URL`` where it is
set: ``CONFIG_LINES``); where it does not, a formgrader would open a gradebook of its own (a
new, empty ``gradebook.db``) and hand grades given there would reach no export.
``autograd-lab formgrader`` starts JupyterLab at the course with that variable set to
``grade``'s gradebook, after checking that the formgrader will open that one
(``formgrader_gradebook``), and refuses to start one that would open another.
"""
from __future__ import annotations

import contextlib
import os

from ..course import Course

ENV = "AUTOGRAD_LAB_DB_URL"

# what a course's nbgrader_config.py says so that nbgrader (its formgrader) opens the
# gradebook `autograd-lab` opens
CONFIG_LINES = '''\
import os

# The gradebook: gradebook.db in this folder, unless AUTOGRAD_LAB_DB_URL names the database
# several graders share (postgresql://grader@host/course). autograd-lab reads the same
# variable, so nbgrader's formgrader opens the gradebook autograd-lab grades in.
if os.environ.get("AUTOGRAD_LAB_DB_URL"):
    c.CourseDirectory.db_url = os.environ["AUTOGRAD_LAB_DB_URL"].replace(
        "postgresql://", "postgresql+psycopg://", 1)    # (the driver the grader installs)
'''


def normal(url: str) -> str:
    """A gradebook's URL as both sides would open it: the grader's PostgreSQL driver, the
    password left out (so it is never printed)."""
    from sqlalchemy.engine import make_url

    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://"):]
    return make_url(url).render_as_string(hide_password=True)


@contextlib.contextmanager
def _as_server(root, environ):
    before_cwd, before_env = os.getcwd(), dict(os.environ)
    os.chdir(root)
    os.environ.clear()
    os.environ.update(environ)
    try:
        yield
    finally:
        os.chdir(before_cwd)
        os.environ.clear()
        os.environ.update(before_env)


def formgrader_gradebook(course: Course, environ: dict) -> str:
    """The gradebook a formgrader of a Jupyter server started at the course root with
    `environ` opens: nbgrader's configuration loaded as its formgrader loads it."""
    from nbgrader.apps.baseapp import NbGrader
    from nbgrader.coursedir import CourseDirectory

    with _as_server(course.root, environ):
        app = NbGrader()
        app.load_cwd_config = True
        app.load_config_file()
        return normal(CourseDirectory(config=app.config).db_url)


def refusal(course: Course, environ: dict) -> str:
    """Why a formgrader started with `environ` would open another gradebook than ``grade``
    does, with what makes it the same; "" when it opens the same."""
    ours = normal(course.gradebook_url)
    theirs = formgrader_gradebook(course, environ)
    if ours == theirs:
        return ""
    config = course.root / "nbgrader_config.py"
    reads_env = ENV in config.read_text(errors="replace")
    fix = (f"nbgrader_config.py names another db_url: make it read {ENV} (or name {ours}"
           " itself)" if reads_env or "db_url" in config.read_text(errors="replace")
           else f"add these lines to {config}:\n\n{CONFIG_LINES}")
    return (f"nbgrader's formgrader would open the gradebook {theirs}, but autograd-lab "
            f"grades in {ours}: hand grades given there would reach no export. Not "
            f"starting it: {fix}\nThen `autograd-lab -C {course.root} formgrader` opens "
            f"the formgrader on {ours}.")


def environ_for(course: Course) -> dict:
    """The environment the formgrader's server runs with: ours, with ``grade``'s gradebook
    in AUTOGRAD_LAB_DB_URL (the course's nbgrader_config.py reads it), and the server's
    bin/ on PATH (nbgrader runs `alembic` by name)."""
    import sys

    environ = dict(os.environ)
    url = course.gradebook_url
    from sqlalchemy.engine import make_url

    # (the gradebook.db nbgrader names by default needs no variable)
    default = normal(f"sqlite:///{course.root / 'gradebook.db'}")
    if normal(url) != default:
        environ[ENV] = make_url(url).render_as_string(hide_password=False)
    else:
        environ.pop(ENV, None)
    bindir = os.path.dirname(sys.executable)
    environ["PATH"] = bindir + os.pathsep + environ.get("PATH", "")
    return environ
