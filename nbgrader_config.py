"""nbgrader's configuration for the course (nbgrader 0.9.6).

Lessons are written in solutions/<lesson>/<lesson>.ipynb (each paired with a jupytext .py file)
and released by `nbgrader generate_assignment` into notebooks/<lesson>/<lesson>.ipynb, which is
what learners open. Paths stay relative: the Validate button in JupyterLab loads this file from
the server's working directory, the repository's root.
"""
import os

c = get_config()  # noqa: F821 -- provided by traitlets when nbgrader loads this file

c.CourseDirectory.root = "."
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
c.CourseDirectory.course_id = "autograd-lab"

# The gradebook: gradebook.db in this folder, unless AUTOGRAD_LAB_DB_URL names the database
# several graders share (postgresql://grader@host/course). autograd-lab reads the same
# variable, so nbgrader's formgrader opens the gradebook autograd-lab grades in.
if os.environ.get("AUTOGRAD_LAB_DB_URL"):
    c.CourseDirectory.db_url = os.environ["AUTOGRAD_LAB_DB_URL"].replace(
        "postgresql://", "postgresql+psycopg://", 1)    # (the driver the grader installs)

# A cell that runs longer than this is interrupted (an endless loop) and grading goes on.
c.Execute.timeout = 30
# A learner who deleted a test cell still gets it back, graded, instead of a manual-grading flag.
c.OverwriteCells.add_missing_cells = True
# Each solution notebook's jupytext twin (<lesson>.py) holds the solutions as text: it must never
# be released, collected or copied into feedback.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.py"]
