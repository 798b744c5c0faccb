"""The course directory as the grading commands see it: its nbgrader configuration, its lessons.

nbgrader's ``NbGraderAPI()`` silently ignores ``nbgrader_config.py``, so every step builds its
configuration here, from that file, with the course root made absolute (the file keeps it
relative so that JupyterLab's Validate button finds it from the server's working directory).
"""
from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

CONFIG_FILE = "nbgrader_config.py"


@functools.cache
def alembic_head() -> str:
    """The newest of nbgrader's gradebook migrations, as `alembic heads` names it first."""
    from alembic.script import ScriptDirectory
    import nbgrader

    script = ScriptDirectory(os.path.join(os.path.dirname(nbgrader.__file__), "alembic"))
    return script.get_revisions("heads")[0].revision


def _read_alembic_head_here():
    """nbgrader stamps each gradebook it creates with its newest migration, which it asks the
    `alembic` program for: a Python process started for every new gradebook (a second, more
    on a busy machine). The same answer is read here, once a process."""
    from . import patches

    patches.replace_alembic_version(alembic_head)


_engines: dict = {}
# (a process forked with a gradebook open must not use its connections: a child starts afresh)
os.register_at_fork(after_in_child=_engines.clear)


def _engine(url, **options):
    """One SQLAlchemy engine per gradebook and process, where nbgrader makes a new one for every
    Gradebook it opens (a grading process opens three): SQLAlchemy keeps the statements it
    compiled per engine, and compiling them again was a sixth of a grading process's Python
    time (py-spy, lesson 03). Gradebook.close() disposes of the engine's connections; the
    engine makes new ones when it is next used."""
    from sqlalchemy import create_engine

    key = (str(url), repr(sorted(options.items())))
    engine = _engines.get(key)
    if engine is None:
        engine = _engines[key] = create_engine(url, **options)
    return engine


def _one_engine_per_gradebook():
    from . import patches

    patches.replace_create_engine(_engine)


_metadata_validators: dict = {}


def _check_nbgrader_metadata(instance, schema):
    """jsonschema.validate, with the validator built once per schema: it checks the schema
    itself against jsonschema's meta-schema, then builds a validator, on every call. nbgrader
    calls it for each graded cell each time it reads, writes or checks a notebook: 1.4 ms a
    cell, against 0.09 with the validator kept (the inside-backward lesson's seven cells, 10 ms a pass). The
    same error is raised: the best match among the validator's errors. (nbgrader loads its
    schema afresh for every validator it makes, so a schema is known by its text.)"""
    import json

    import jsonschema

    key = json.dumps(schema, sort_keys=True)
    validator = _metadata_validators.get(key)
    if validator is None:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        validator = _metadata_validators[key] = cls(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    if error is not None:
        raise error


def _metadata_schema_checked_once():
    from . import patches

    patches.replace_metadata_validate(_check_nbgrader_metadata)


@dataclass(frozen=True)
class Course:
    root: Path
    db_url: str | None = None     # None: the configuration's, else nbgrader's gradebook.db

    def __post_init__(self):
        object.__setattr__(self, "root", Path(self.root).resolve())
        if self.db_url and self.db_url.startswith("postgresql://"):
            # the driver the course installs (SQLAlchemy's default differs between versions)
            object.__setattr__(self, "db_url", "postgresql+psycopg" + self.db_url[10:])
        if not (self.root / CONFIG_FILE).is_file():
            raise FileNotFoundError(f"{self.root} has no {CONFIG_FILE}: not a course directory")
        # nbgrader runs the `alembic` program where it upgrades a gradebook (`nbgrader db
        # upgrade`); a venv's python started by its full path does not have the venv's bin/ on
        # PATH
        bindir = os.path.dirname(sys.executable)
        if bindir not in os.environ.get("PATH", "").split(os.pathsep):
            os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
        _read_alembic_head_here()
        _one_engine_per_gradebook()
        _metadata_schema_checked_once()

    def config(self, **sections) -> Config:
        """The course's nbgrader configuration, then ``sections`` ({"Execute": {"timeout": 5}})."""
        config = PyFileConfigLoader(CONFIG_FILE, path=str(self.root)).load_config()
        config.CourseDirectory.root = str(self.root)
        # nbconvert checks the whole notebook against nbformat's schema after every one of a
        # step's preprocessors, its own eleven included (18 in autograde; with nbgrader's
        # metadata checks, an eighth of a grading process's Python time, py-spy, the inside-backward lesson);
        # optimistic, once after the last, which names no culprit
        if "optimistic_validation" not in config.Exporter:
            config.Exporter.optimistic_validation = True
        if self.db_url:
            config.CourseDirectory.db_url = self.db_url
        config.merge(Config(sections))
        plugin = config.AssignLatePenalties.get("plugin_class")
        if isinstance(plugin, str):
            # the course's own late policy, a module at its root: nbgrader would import the
            # name from sys.path, where the course is not (a grading process, `-C`)
            config.AssignLatePenalties.plugin_class = course_plugin(self.root, plugin)
        return config

    def api(self, **sections):
        from nbgrader.apps import NbGraderAPI
        from nbgrader.coursedir import CourseDirectory

        config = self.config(**sections)
        return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)

    @property
    def gradebook_url(self) -> str:
        from nbgrader.coursedir import CourseDirectory

        return CourseDirectory(config=self.config()).db_url

    def gradebook(self):
        """nbgrader's Gradebook for this course (a context manager)."""
        from nbgrader.api import Gradebook
        from nbgrader.coursedir import CourseDirectory

        coursedir = CourseDirectory(config=self.config())
        return Gradebook(coursedir.db_url, coursedir.course_id)

    def directory(self, step: str) -> Path:
        """Where nbgrader keeps a step (source, release, submitted, autograded, feedback)."""
        from nbgrader.coursedir import CourseDirectory

        name = getattr(CourseDirectory(config=self.config()), f"{step}_directory")
        return self.root / name

    def lessons(self) -> list[str]:
        """Every lesson of the course: the folders of the source directory holding a notebook."""
        source = self.directory("source")
        return sorted(p.name for p in source.iterdir()
                      if p.is_dir() and (p / f"{p.name}.ipynb").is_file())

    def lesson(self, spec: str) -> str:
        """A lesson named by its id (``02_scalar_backward``) or its number (``02``, ``2``):
        every command resolves lessons here. ValueError unless exactly one lesson is meant."""
        known = self.lessons()
        spec = (spec or "").strip()
        if spec in known:
            return spec
        found = [l for l in known if spec.isdigit() and l.split("_")[0].isdigit()
                 and int(l.split("_")[0]) == int(spec)]
        if len(found) == 1:
            return found[0]
        raise ValueError(f"no {'single ' if found else ''}lesson {spec!r} in this course "
                         f"(a number or an id: {', '.join(known)})")

    def resolve(self, specs) -> list[str]:
        """`lesson` for each of `specs`, in their order, once each."""
        return list(dict.fromkeys(self.lesson(spec) for spec in specs or ()))

    def submission(self, lesson: str, student: str) -> Path:
        return self.directory("submitted") / student / lesson

    def students_with(self, lesson: str) -> list[str]:
        """Students who have a folder for ``lesson`` under submitted/."""
        submitted = self.directory("submitted")
        if not submitted.is_dir():
            return []
        return sorted(p.name for p in submitted.iterdir() if (p / lesson).is_dir())


def course_plugin(root: Path, dotted: str):
    """The class a course's configuration names by its dotted path (``latepolicy.TenPercentADay``):
    from a module at the course's root (``latepolicy.py``, or a package ``latepolicy/``) when
    there is one, else an installed module. Every process that reads the configuration
    (``Course.config``) resolves it here, so nbgrader's autograde, export and feedback find the
    course's own plugin wherever the command runs from, with nothing on ``PYTHONPATH``. A
    module of the course is loaded from its own file for each course (two courses may each
    have a ``latepolicy``); it is the instructor's code, never a learner's."""
    import importlib
    import importlib.util

    module_name, _, name = dotted.rpartition(".")
    if not module_name:
        raise ValueError(f"c.AssignLatePenalties.plugin_class = {dotted!r}: name the module "
                         "and the class (latepolicy.TenPercentADay)")
    top = Path(root) / module_name.replace(".", "/")
    path = top.with_suffix(".py") if top.with_suffix(".py").is_file() else top / "__init__.py"
    if not path.is_file():
        return getattr(importlib.import_module(module_name), name)
    key = (str(path), path.stat().st_mtime_ns, name)
    found = _plugins.get(key)
    if found is None:
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        before = sys.modules.get(module_name)
        # (in sys.modules while it runs, as an import has it; then the name is given back)
        sys.modules[module_name] = module
        sys.path.insert(0, str(root))
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(str(root))
            if before is None:
                sys.modules.pop(module_name, None)
            else:
                sys.modules[module_name] = before
        try:
            found = _plugins[key] = getattr(module, name)
        except AttributeError:
            raise ValueError(f"c.AssignLatePenalties.plugin_class = {dotted!r}: {path.name} "
                             f"has no {name}") from None
    return found


_plugins: dict = {}
