"""Setting up for instructors: `./run setup` sets up and exits, and the grader's distribution
alone (`pip install . ./grader`: autograd-lab-grader, with the engine's `lab` extra) is enough for
every `autograd-lab` command, without the test tools; the learner's `lab` extra brings none of
the grader's own."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
TEST_TOOLS = {"torch", "playwright", "pytest", "nbval", "hypothesis", "jupyter-repo2docker"}


def test_run_sets_up_what_each_command_needs_and_setup_exits(tmp_path):
    """./run with a stand-in setup script that records how it was called: a learner's `./run lab`
    sets up a learner's machine only; `./run setup [KIND]` sets up and exits."""
    shutil.copy(ROOT / "run", tmp_path / "run")
    (tmp_path / "scripts").mkdir()
    stub = tmp_path / "scripts" / "setup.sh"
    stub.write_text('#!/bin/sh\necho "setup $*" >> calls.txt\nexit 3\n')   # (lab stops there)
    stub.chmod(0o755)
    for args, called in ((["setup"], "setup all"), (["setup", "grader"], "setup grader"),
                         (["setup", "lab"], "setup lab"), (["lab"], "setup lab"),
                         (["test"], "setup all")):
        (tmp_path / "calls.txt").unlink(missing_ok=True)
        done = subprocess.run([str(tmp_path / "run"), *args], cwd=tmp_path, timeout=30,
                              capture_output=True, text=True)
        assert done.returncode == 3, done.stderr
        assert (tmp_path / "calls.txt").read_text().splitlines() == [called]
    # the real script knows the three and refuses anything else before installing anything
    refused = subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh"), "everything"],
                             capture_output=True, text=True, timeout=30)
    assert refused.returncode == 2 and "usage" in refused.stderr


def test_setup_lab_installs_the_learners_distribution_from_the_lock_and_nothing_more(tmp_path):
    """`./run lab`'s set-up on a machine without the test tools: a .venv with the engine and
    its JupyterLab tools at uv.lock's versions; no grader, no `autograd-lab`, no test tool."""
    if not shutil.which("dot"):
        pytest.skip("graphviz is not installed (setup.sh lab would install it as root)")
    venv = tmp_path / "venv"
    done = subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh"), "lab"], cwd=ROOT,
                          env={**os.environ, "VENV": str(venv)}, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    probe = ("import importlib.util as u, json, importlib.metadata as m, autograd_lab\n"
             "print(json.dumps({'engine': autograd_lab.__file__, 'dists': sorted(\n"
             "    d.metadata['Name'].lower().replace('_', '-') for d in m.distributions())}))")
    found = json.loads(subprocess.run([str(venv / "bin" / "python"), "-c", probe],
                                      capture_output=True, text=True, check=True).stdout)
    assert Path(found["engine"]) == ROOT / "autograd_lab" / "__init__.py"
    dists = set(found["dists"])
    assert {"jupyterlab", "nbgrader", "matplotlib", "ipywidgets", "numpy", "graphviz"} <= dists
    # (bleach comes with nbconvert, and so with JupyterLab, too)
    grader_only = {"autograd-lab-grader", "typer", "rich", "psycopg", "latex2mathml"}
    assert not dists & (TEST_TOOLS | grader_only), dists & (TEST_TOOLS | grader_only)
    assert not (venv / "bin" / "autograd-lab").exists()
    # uv installs the set and is none of it: no 37 MB program in a learner's .venv
    assert "uv" not in dists and not list((venv / "bin").glob("uv*")), sorted(venv.glob("bin/uv*"))
    # nor what binder/postBuild removes as loaded by nothing of a learner's JupyterLab
    site = next(venv.glob("lib/python3*/site-packages"))
    for unused in ("nbgrader/docs", "nbgrader/tests", "notebook/static", "widgetsnbextension/static"):
        assert not (site / unused).exists(), unused
    assert (site / "nbgrader" / "validator.py").exists()
    # at the lock's versions (binder/requirements.txt is the lock's export of this set)
    pins = dict(line.split(" ;")[0].split("==") for line in
                (ROOT / "binder" / "requirements.txt").read_text().splitlines()
                if "==" in line and ("python_full_version < '3.12'" in line or ";" not in line))
    versions = json.loads(subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import json, importlib.metadata as m; print(json.dumps("
         "{d.metadata['Name'].lower().replace('_', '-'): d.version for d in m.distributions()}))"],
        capture_output=True, text=True, check=True).stdout)
    for name in ("jupyterlab", "nbgrader", "numpy", "matplotlib"):
        assert versions[name] == pins[name], name
    # a learner's JupyterLab, as Binder's (binder/postBuild): Validate, none of the
    # instructor's tools, in the lab and on the server
    listed = {}
    for kind in ("labextension", "server extension"):
        done = subprocess.run([str(venv / "bin" / "jupyter"), *kind.split(), "list"],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"})
        listed[kind] = done.stdout + done.stderr
    lab = listed["labextension"]
    for plugin in ("formgrader", "create-assignment", "course-list", "assignment-list", "menu"):
        assert f"@jupyter/nbgrader:{plugin}" in lab.split("Disabled extensions:")[1], lab
    # (nor Notebook 7's pages, whose front end postBuild removes)
    for plugin in ("interface-switcher", "launch-tree"):
        assert f"@jupyter-notebook/lab-extension:{plugin}" in lab.split("Disabled extensions:")[1]
    assert "@jupyter/nbgrader:validate-assignment" not in lab.split("Disabled extensions:")[1]
    server = dict(re.findall(r"^\s*([\w.]+) (enabled|disabled)$",
                             re.sub(r"\x1b\[[0-9;]*m", "", listed["server extension"]), re.M))
    for extension in ("formgrader", "assignment_list", "course_list"):
        assert server[f"nbgrader.server_extensions.{extension}"] == "disabled", server
    assert server["nbgrader.server_extensions.validate_assignment"] == "enabled", server
    assert server["notebook"] == "disabled" and server["jupyterlab"] == "enabled", server
    # and again: set up already, nothing is installed
    again = subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh"), "lab"], cwd=ROOT,
                           env={**os.environ, "VENV": str(venv)}, capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 0 and "installing" not in again.stdout, again.stdout
    # a learner's .venv set up when uv was installed into it loses it at its next set-up
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
                    "uv>=0.5"], check=True, capture_output=True, timeout=300)
    assert (venv / "bin" / "uv").exists()
    (venv / ".installed-lab").unlink()
    again = subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh"), "lab"], cwd=ROOT,
                           env={**os.environ, "VENV": str(venv)}, capture_output=True,
                           text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    assert not list((venv / "bin").glob("uv*")) and (venv / ".installed-lab").exists()


def _closure(pyproject: Path, extra: str | None = None) -> set[str]:
    """The distributions the project of `pyproject` brings (with `extra`), its requirements'
    requirements included."""
    from importlib import metadata

    import tomllib

    project = tomllib.loads(pyproject.read_text())["project"]
    todo = [Requirement(r) for r in project["dependencies"]
            + (project["optional-dependencies"][extra] if extra else [])]
    seen, done = set(), set()
    while todo:
        requirement = todo.pop()
        name = requirement.name.lower().replace("_", "-")
        key = (name, frozenset(requirement.extras))
        if key in done:
            continue
        done.add(key)
        seen.add(name)
        try:
            requires = metadata.requires(requirement.name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            sub = Requirement(text)
            wanted = requirement.extras or {""}
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in wanted):
                todo.append(sub)
    return seen


# (bleach is the grader's too, but nbconvert brings it to every Jupyter)
GRADER_ONLY = {"typer", "rich", "psycopg", "latex2mathml", "autograd-lab-grader"}


def test_the_learners_lab_extra_brings_nothing_of_the_grader():
    lab = _closure(ROOT / "pyproject.toml", "lab")
    assert not lab & (GRADER_ONLY | TEST_TOOLS), lab & (GRADER_ONLY | TEST_TOOLS)


def test_the_grader_distribution_is_all_the_instructor_command_needs():
    course = _closure(ROOT / "grader" / "pyproject.toml")
    assert not course & TEST_TOOLS, course & TEST_TOOLS
    probe = ("import json, sys\n"
             "from importlib.metadata import packages_distributions\n"
             "import autograd_lab_grader.commands.cli, autograd_lab_grader.steps.collect, "
             "autograd_lab_grader.steps.export, autograd_lab_grader.steps.feedback, "
             "autograd_lab_grader.reading.page, autograd_lab_grader.steps.report, "
             "autograd_lab_grader.steps.roster, autograd_lab_grader.steps.grade, "
             "autograd_lab_grader.steps.release, autograd_lab_grader.steps.worker, "
             "autograd_lab_grader.lms.canvas, autograd_lab_grader.lms.moodle\n"
             "autograd_lab_grader.steps.report.write_figure  # matplotlib is imported when drawn\n"
             "import matplotlib.figure\n"
             "dists = packages_distributions()\n"
             # (a package's own vendored copies, setuptools' jaraco, are that package's)
             "top = {m.split('.')[0] for m, mod in list(sys.modules.items())\n"
             "       if '/_vendor/' not in (getattr(mod, '__file__', None) or '/_vendor/')}\n"
             "print(json.dumps(sorted({d for m in top for d in dists.get(m, [])})))\n")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            cwd=ROOT, env={**os.environ,
                                           "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'grader'}"},
                            check=True)
    used = {d.lower().replace("_", "-") for d in json.loads(loaded.stdout.splitlines()[-1])}
    used -= {"autograd-lab", "autograd-lab-grader"}
    assert used, loaded.stdout
    assert not used & TEST_TOOLS, used & TEST_TOOLS
    assert used <= course, f"imported but not brought by the grader's distribution: {used - course}"


def test_a_new_gradebook_is_stamped_with_what_alembic_heads_says(tmp_path, monkeypatch):
    """nbgrader asks the `alembic` program for the version it stamps a new gradebook with;
    the grading commands read it in their own process (course.py), starting no
    program. The stamp is what that program prints, so `nbgrader db upgrade` goes on from
    the right place."""
    import sqlite3

    import gradingcourse as gc
    import nbgrader.api
    from nbgrader.dbutil import _temp_alembic_ini

    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:
        printed = subprocess.run([str(Path(sys.executable).parent / "alembic"), "-c", ini,
                                  "heads"], capture_output=True, text=True, check=True).stdout
    def no_program(*args, **kwargs):
        raise AssertionError(f"a program was started: {args}")
    monkeypatch.setattr(nbgrader.api.sp, "check_output", no_program)
    root = gc.make_course(tmp_path / "course")
    with sqlite3.connect(root / "gradebook.db") as db:
        (stamp,) = db.execute("SELECT version_num FROM alembic_version").fetchone()
    assert printed.split()[0] == stamp


def test_loading_nbgrader_builds_no_grammar():
    """jsonschema 4.25 and later build an RFC 3987 grammar with Lark when imported, 1.5 s here for
    every process that loads nbformat (every nbgrader and autograd-lab command, grading run and
    Jupyter server); the lab extra and the grader keep jsonschema below them (pyproject.toml,
    grader/pyproject.toml)."""
    done = subprocess.run(
        [sys.executable, "-c", "import sys, nbgrader.apps, jupyter_server.serverapp; "
                               "print(sorted({'lark', 'rfc3987_syntax'} & set(sys.modules)))"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_grading_process_forked_after_the_preload_compiles_no_schema():
    """grade.py's forkserver loads steps/preload.py before it forks a process per submission:
    nbformat's validators (strict, as a notebook is read, and relaxed, as nbconvert checks it
    after each preprocessor) are built there, not again in each of those processes, and the
    gradebook's ORM set up."""
    code = """if True:
        import importlib, fastjsonschema, nbformat, sys
        from autograd_lab_grader.steps import grade
        importlib.import_module(grade.PRELOAD)
        def refuse(*args, **kwargs):
            raise AssertionError("a schema was compiled again")
        fastjsonschema.compile = refuse
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
        nbformat.validate(nbformat.reads(nbformat.writes(nb), as_version=4))
        nbformat.validate(nb, relax_add_props=True)
        import nbgrader.api, sqlalchemy
        from autograd_lab_grader import course
        assert sqlalchemy.inspect(nbgrader.api.SubmittedNotebook).configured   # the ORM's mappers
        assert nbgrader.api.create_engine is course._engine     # (a Course unpickled: no init)
        print("IPython" in sys.modules)
    """
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"      # jupyter_client's kernel-spec lookup imports it


RENDER_RELEASED = """if True:
    import json, sys
    from autograd_lab_grader.steps import grade
    preload = __import__(grade.PRELOAD, fromlist=["x"])
    from autograd_lab_grader.reading import page
    nb = json.load(open(sys.argv[1], encoding="utf-8"))
    sources = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    def refuse(*args):
        raise AssertionError("rendered again")
    kept = all(s in page._rendered.kept for s in sources)
    if kept:
        page._markdown = refuse             # (what the preload rendered is not rendered again)
    shown = [page.render_markdown(s) for s in sources]
    print(json.dumps([grade.PRELOAD_RELEASED == preload.RELEASED, kept, shown]))
"""


def test_the_preload_renders_the_released_markdown_before_the_processes_fork(tmp_path):
    """grade.run names the lessons' released notebooks to the preload (in its forkserver's
    environment, or by a call where it forks from the command itself): each Markdown cell of
    them is rendered and cleaned there, so a grading process forked after finds it done, and
    renders it as a process that rendered it afresh does. A path that is not there, or not a
    notebook, is passed over."""
    release = ROOT / "notebooks" / "02_scalar_backward" / "02_scalar_backward.ipynb"
    (tmp_path / "not.ipynb").write_text("[1, 2]")
    names = os.pathsep.join([str(tmp_path / "missing.ipynb"), str(tmp_path / "not.ipynb"),
                             str(release)])
    runs = {}
    for kind, released in (("prefilled", names), ("afresh", "")):
        env = dict(os.environ, AUTOGRAD_LAB_RELEASED=released)
        done = subprocess.run([sys.executable, "-c", RENDER_RELEASED, str(release)],
                              capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
        assert done.returncode == 0, done.stderr
        runs[kind] = json.loads(done.stdout)
    same_name, kept, shown = runs["prefilled"]
    assert same_name and kept and len(shown) > 10
    assert shown == runs["afresh"][2]
    assert runs["afresh"][1] is False       # (the check can fail: nothing kept without it)


def test_a_run_names_the_released_notebook_of_each_lesson_it_grades_once(tmp_path):
    """What grade.run hands the preload: the released notebook (as nbgrader's release step
    wrote it) of each lesson among its submissions, once however many learners."""
    import gradingcourse as gc
    from autograd_lab_grader.course import Course
    from autograd_lab_grader.steps import grade

    course = Course(gc.make_course(tmp_path / "course"))
    named = grade._released(course, [(gc.LESSON, "ann"), (gc.LESSON, "bob")])
    assert named == [str(tmp_path / "course" / "notebooks" / gc.LESSON / f"{gc.LESSON}.ipynb")]
    assert Path(named[0]).is_file()
    assert grade._released(course, []) == []


def test_the_gradebooks_of_a_process_share_one_engine_and_a_forked_child_makes_its_own(tmp_path):
    """nbgrader makes an engine for every Gradebook; course.py keeps one a gradebook,
    so that SQLAlchemy compiles each statement once a process (its cache is the engine's)."""
    import gradingcourse as gc
    from autograd_lab_grader.course import Course

    course = Course(gc.make_course(tmp_path / "course"))
    with course.gradebook() as first:
        engine = first.engine
        first.add_student("ann")
    with course.gradebook() as second:       # after close(): the same engine, connected again
        assert second.engine is engine
        assert [s.id for s in second.students] == ["ann"]
    pid = os.fork()
    if pid == 0:                              # (the child: never back into pytest)
        ok = False
        try:
            with course.gradebook() as child:
                ok = child.engine is not engine and [s.id for s in child.students] == ["ann"]
        finally:
            os._exit(0 if ok else 1)
    _, code = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(code) == 0


def test_nbgraders_metadata_check_builds_its_validator_once_and_raises_what_jsonschema_does(
        tmp_path):
    """nbgrader checks each graded cell's metadata with jsonschema.validate, which checks the
    schema against its meta-schema and builds a validator on every call (course.py keeps one):
    the same errors, and no schema checked again after the first notebook."""
    import jsonschema
    import nbformat
    from nbgrader.nbgraderformat import ValidationError
    from nbgrader.nbgraderformat.v3 import MetadataValidatorV3

    import gradingcourse as gc
    from autograd_lab_grader.course import Course

    def notebook(**changes):
        cell = nbformat.v4.new_code_cell(metadata={"nbgrader": dict({
            "schema_version": 3, "grade": True, "solution": False, "locked": True,
            "grade_id": "test_x", "points": 2}, **changes)})
        return nbformat.v4.new_notebook(cells=[cell])

    bad = notebook(points="lots")
    with pytest.raises(jsonschema.ValidationError) as plain:
        jsonschema.validate(bad.cells[0].metadata.nbgrader, MetadataValidatorV3().schema)
    Course(gc.make_course(tmp_path / "course"))            # (makes the course's patches)
    MetadataValidatorV3().validate_nb(notebook())
    checks = []
    validator = jsonschema.validators.validator_for(MetadataValidatorV3().schema)
    original = validator.check_schema
    validator.check_schema = classmethod(lambda cls, schema: checks.append(schema))
    try:
        for _ in range(3):
            MetadataValidatorV3().validate_nb(notebook())
        with pytest.raises(ValidationError) as patched:
            MetadataValidatorV3().validate_nb(bad)
    finally:
        validator.check_schema = original
    assert checks == []
    assert patched.value.message == plain.value.message
    assert list(patched.value.path) == list(plain.value.path) == ["points"]


def test_each_nbgrader_step_checks_the_notebook_against_nbformats_schema_once(tmp_path,
                                                                              monkeypatch):
    """nbconvert checks the whole notebook after every preprocessor unless told to be
    optimistic; the course's configuration tells every step to be (unless its own file says
    otherwise): once, after the last."""
    import nbconvert.exporters.exporter as exporter
    import nbformat
    from nbconvert.exporters import NotebookExporter
    from nbconvert.preprocessors import Preprocessor

    import gradingcourse as gc
    from autograd_lab_grader.course import Course

    course = Course(gc.make_course(tmp_path / "course"))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
    checked = []
    # (the relaxed check is nbconvert's after a preprocessor; writing the result checks too)
    monkeypatch.setattr(exporter.nbformat, "validate",
                        lambda nb, **kwargs: checked.append(kwargs.get("relax_add_props")))
    class Nothing(Preprocessor):
        def preprocess(self, nb, resources):
            return nb, resources

    steps = NotebookExporter(config=course.config())
    for _ in range(4):
        steps.register_preprocessor(Nothing(enabled=True))
    steps.from_notebook_node(nb)
    assert checked.count(True) == 1
    (root := Path(course.root)).joinpath("nbgrader_config.py").write_text(
        (root / "nbgrader_config.py").read_text() + "\nc.Exporter.optimistic_validation = False\n")
    assert course.config().Exporter.optimistic_validation is False
