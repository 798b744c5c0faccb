"""Validate anywhere: a lesson's visible tests checked outside JupyterLab's Validate button.

Two ways, for VS Code, Colab, a terminal or CI:

* ``python -m autograd_lab.checks validate NOTEBOOK ...`` runs each notebook as the Validate
  button does (nbgrader's Validator, configured as the button configures it: from the
  ``nbgrader_config.py`` of the folder it is run in), prints the same messages and exits 1
  when a test fails (``nbgrader validate`` exits 0 then). It needs nbgrader, which the
  course's JupyterLab set brings (``autograd-lab[lab]``), not the instructor's grader.
* ``validate()``, called in a notebook's last cell, checks the notebook its kernel runs, even
  where no notebook file is beside the kernel (Colab keeps it in the browser): it reads the
  kernel's own record of what ran (IPython's history, ``In``), finds there the test cells (a
  cell that imports a lesson's checks and calls them on the learner's names), and reports
  each one's last run: what its checks said then (the checks note it, ``checks.NOTED``), or
  that it stopped before its check, an answer it needs missing. Where Jupyter names the
  notebook file (JupyterLab, VS Code), the test cells the kernel has not run yet are listed
  too. It tells in Validate's words; it cannot run hidden tests (only grading has them).
"""
from __future__ import annotations

import ast
import importlib
import json
import os
import re
import sys
import textwrap
from pathlib import Path

#: nbgrader's Validate messages (nbgrader/validator.py), which validate() speaks too
WIDTH = 90
SUCCESS = "Success! Your notebook passes all the tests."
FAILED = ("VALIDATION FAILED ON {n} CELL(S)! If you submit your assignment as it is, you WILL "
          "NOT receive full credit.")
_LESSON = re.compile(r"lesson\d\d")


# ---------------------------------------------------------------------------------------------
# in a notebook: the kernel's own record
# ---------------------------------------------------------------------------------------------
def _shell():
    ipython = sys.modules.get("IPython")
    return ipython and ipython.get_ipython()


def this_notebook(shell=None) -> Path | None:
    """The notebook file this kernel runs, where the front end says which: JupyterLab and
    Notebook (JPY_SESSION_NAME), VS Code (``__vsc_ipynb_file__``); None elsewhere (Colab,
    nbclient, a terminal)."""
    shell = shell or _shell()
    named = [os.environ.get("JPY_SESSION_NAME")]
    if shell is not None:
        named.append(shell.user_ns.get("__vsc_ipynb_file__"))
    for name in named:
        if not (isinstance(name, str) and name):
            continue
        # (Jupyter Server names it by its path under the server's root; the kernel runs in
        #  the notebook's folder)
        for path in (Path(name), Path.cwd() / Path(name).name):
            if path.is_file():
                return path
    return None


def test_calls(source: str) -> list[tuple[str, str, list[str]]] | None:
    """The checks a test cell calls, ``[(lesson module, check, [argument names])]``; None when
    ``source`` is not a test cell: a cell of imports of ``autograd_lab.checks.lessonNN`` and
    calls ``check.<name>(learner names, settings=literals)`` (alone or in a ``for`` loop) of
    checks that module has. A helper cell calling a check on a literal is not one."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    modules, calls = {}, []

    def call(stmt):
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            return False
        fn = stmt.value.func
        if not (isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name)
                and fn.value.id in modules):
            return False
        args = stmt.value.args
        if not args or not all(isinstance(a, ast.Name) for a in args):
            return False
        for keyword in stmt.value.keywords:
            try:
                ast.literal_eval(keyword.value)
            except ValueError:
                return False
        module = modules[fn.value.id]
        if not hasattr(getattr(_lesson(module), fn.attr, None), "probe"):
            return False            # (not one of the lesson's checks)
        calls.append((module, fn.attr, [a.id for a in args]))
        return True

    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "autograd_lab.checks":
            for alias in stmt.names:
                if not _LESSON.fullmatch(alias.name):
                    return None
                modules[alias.asname or alias.name] = alias.name
        elif isinstance(stmt, ast.Import) and [a.name for a in stmt.names] == ["autograd_lab"]:
            continue
        elif isinstance(stmt, ast.For):
            if not all(call(s) for s in stmt.body):
                return None
        elif not call(stmt):
            return None
    return calls or None


def _lesson(module):
    try:
        return importlib.import_module(f"autograd_lab.checks.{module}")
    except ImportError:
        return None


def _kernel_record(shell):
    """``[(index in In, source)]`` of every cell this kernel ran before the running one (whose
    input IPython stores as it starts)."""
    history = shell.history_manager.input_hist_raw
    return [(count, source) for count, source in enumerate(history[:-1])
            if count and isinstance(source, str)]


def _released_tests(path):
    """The test cells of the notebook file at ``path`` (nbgrader's grade cells), in order."""
    try:
        cells = json.loads(Path(path).read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError):
        return []
    found = []
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution"):
            source = cell.get("source", "")
            found.append("".join(source) if isinstance(source, list) else str(source))
    return found


def _key(source):
    return source.strip()


def _outcome(count, calls, shell, noted):
    """What the test cell that ran as cell ``count`` says: None when its checks passed, else
    the error to show."""
    said = noted.get(count)
    if said:
        failed = [error for _, error in said if error is not None]
        return failed[0] if failed else None
    missing = [name for _, _, names in calls for name in names if name not in shell.user_ns]
    if missing:
        return (f"NameError: name {missing[0]!r} is not defined\n"
                f"(the answer this test checks has not run yet: write it in the answer cell "
                f"above the test, run that cell, then the test cell)")
    return (f"The test cell stopped before its check when it last ran (cell [{count}]): run it "
            f"again, now that its answer is there.")


def failures(shell=None):
    """``(test cells run, [(source, error)])``: every test cell this kernel's record holds, at
    its last run, and those that failed; test cells of the notebook Jupyter names that never
    ran count as failing."""
    from . import NOTED
    shell = shell or _shell()
    last = {}
    for count, source in _kernel_record(shell):
        calls = test_calls(source)
        if calls is not None:
            last.pop(_key(source), None)        # (in the order of their last runs)
            last[_key(source)] = (count, calls)
    failed = []
    named = this_notebook(shell)
    released = [_key(s) for s in _released_tests(named)] if named is not None else []
    for source in released:
        if source not in last and test_calls(source) is not None:
            failed.append((source, "This test cell has not run in this kernel: run it (or the "
                                   "whole notebook) before validating."))
    for source, (count, calls) in last.items():
        error = _outcome(count, calls, shell, NOTED)
        if error is not None:
            failed.append((source, error))
    order = {source: i for i, source in enumerate(released)}
    failed.sort(key=lambda item: order.get(item[0], len(order)))
    return len(last), failed


def _indent(text):
    """As nbgrader's Validator shows code and errors: indented by 4, each line cut at its
    width."""
    lines = []
    for line in text.split("\n"):
        line = "    " + line
        lines.append(line if len(line) <= WIDTH - 3 else line[:WIDTH - 3] + "...")
    return "\n".join(lines)


def told(failed):
    """Validate's message for ``failed`` (``[(source, error)]``)."""
    if not failed:
        return SUCCESS
    parts = [textwrap.fill(FAILED.format(n=len(failed)), width=WIDTH)]
    for source, error in failed:
        parts.append(f"\n{'=' * WIDTH}\nThe following cell failed:\n\n{_indent(source)}\n\n"
                     f"The error was:\n\n{_indent(error)}\n")
    return "\n".join(parts)


def validate():
    """Check every answered exercise of the notebook this kernel runs, as Validate would:
    each test cell it has run, at its last run (see the module's docstring). Call it in the
    notebook's last cell, after Run All."""
    from . import VERDICTS_ENV
    if os.environ.get(VERDICTS_ENV) == "grader":
        print("(validate() checks nothing in a graded run: the grader does.)")
        return
    shell = _shell()
    if shell is None or not hasattr(shell, "history_manager"):
        print("validate() checks the notebook its kernel runs: call it in the notebook's last "
              "cell. For a notebook file: python -m autograd_lab.checks validate NOTEBOOK")
        return
    ran, failed = failures(shell)
    if not ran and not failed:
        print("No test cell has run in this kernel yet: run the notebook's cells (Run All), "
              "then this cell again.")
        return
    print(f"Checked the {ran} test cell(s) this kernel has run, as each last ran (hidden "
          "tests are for grading only).\n")
    print(told(failed))


# ---------------------------------------------------------------------------------------------
# a notebook file: nbgrader's Validator, as the Validate button runs it
# ---------------------------------------------------------------------------------------------
def validate_file(path) -> bool:
    """Validate the notebook file at ``path`` as JupyterLab's Validate button does, printing
    its messages; whether it passed."""
    from nbgrader.apps import NbGrader
    from nbgrader.validator import Validator

    class Kept(Validator):          # the results validate_and_print prints, kept
        results = {}

        def validate(self, filename):
            self.results = super().validate(filename)
            return self.results

    app = NbGrader()
    app.config_file_paths.insert(0, os.getcwd())    # as the button: the server's folder
    app.load_config_file()
    validator = Kept(config=app.config)
    validator.stream = sys.stdout
    validator.validate_and_print(str(path))
    return not any(validator.results.get(k) for k in ("failed", "changed", "type_changed"))


USAGE = """usage: python -m autograd_lab.checks validate NOTEBOOK [NOTEBOOK ...]

Runs each notebook's visible tests as JupyterLab's Validate button does (the nbgrader_config.py
of this folder configures it, as the button's server's does), prints the same messages, and
exits 1 when a test fails, 0 when every notebook passes."""


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) < 2 or argv[0] != "validate" or any(a.startswith("-") for a in argv[1:]):
        print(USAGE, file=sys.stderr if argv[:1] not in (["-h"], ["--help"]) else sys.stdout)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    try:
        import nbgrader  # noqa: F401
    except ImportError:
        print("python -m autograd_lab.checks validate runs nbgrader's Validator, which is not "
              "installed here: pip install 'autograd-lab[lab]' (in a notebook, validate() "
              "needs nothing more)", file=sys.stderr)
        return 2
    passed = True
    for name in argv[1:]:
        path = Path(name)
        if not path.is_file():
            print(f"{name}: no such notebook", file=sys.stderr)
            return 2
        if len(argv) > 2:
            print(f"{name}:")
        passed = validate_file(path) and passed
    return 0 if passed else 1
