"""A lesson's cells sorted into the learner's code and the course's own, and the learner's code
run under real PyTorch.

Every code cell of a solution notebook is one of four kinds, and nothing is guessed:

- the **install cell**, tagged ``course-install`` (:data:`INSTALL_TAG`): the first code cell of
  every lesson, the same in each, which installs the engine where it is missing (Colab) and
  does nothing elsewhere; it is not the learner's code, and does not run under PyTorch;

- a **test cell**: nbgrader's metadata says so (``grade`` true, a code cell). It may only import
  the course's checks (and ``autograd_lab as torch``) and call ``check.<name>(...)``, alone or in
  a ``for`` loop;
- a **course helper**: a cell tagged ``course-helper`` (:data:`HELPER_TAG`), which draws with
  ``autograd_lab.viz`` or calls the course's checks. Its *helper statements* are those that
  import from ``autograd_lab``, or use ``viz``, ``check`` or a name an earlier helper statement
  bound (``trace = viz.trace_backward(...)``, then ``trace``). They may be preceded by learner
  statements that make what the helper draws (so that the cell can run again on its own), but
  never followed by one;
- **learner code**: every other code cell. It may not use ``viz``, ``check`` or those names,
  and may mention ``autograd_lab`` only as ``import autograd_lab as torch`` and ``from
  autograd_lab.autograd import ...``, which :func:`as_pytorch` turns into ``import torch`` and
  ``from torch.autograd import ...``.

Under PyTorch a learner cell runs whole, and a helper cell runs its learner statements (which
must show nothing there: a print belongs in a learner cell). :func:`check_kinds` enforces the
rules, so no statement of learner code is left out of the PyTorch run, and no learner cell
leans on the course's package.
"""
import ast
import functools
import re
import time
from dataclasses import dataclass

import nbformat

import course

HELPER_TAG = "course-helper"
INSTALL_TAG = "course-install"
HELPER_NAMES = {"viz", "check"}
_IMPORT_AS_TORCH = "import autograd_lab as torch"
_FROM_AUTOGRAD = "from autograd_lab.autograd import "
# What may differ between two runs of the same code and is no part of what it computes:
# a memory address (`<MulBackward0 object at 0x7f...>`); the kernel's process id in the file
# name a warning gives for a cell's code (`/tmp/ipykernel_1234/5678.py:3: UserWarning`); and the
# folder a PyTorch wheel was built in, which its warnings name (`(Triggered internally at
# /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)`: the file and line are
# kept, as tests/support/dual.py blanks the whole path for the parity cases).
_ADDRESS = re.compile(r"0x[0-9a-f]+")
_KERNEL_PID = re.compile(r"ipykernel_\d+/")
_BUILD_DIR = re.compile(r"\(Triggered internally at [^)]*/([^/)]+\.\w+:\d+\.)\)")


def kind(cell):
    """'test', 'helper', 'learner', or None for a text cell."""
    if cell.cell_type != "code":
        return None
    if cell.metadata.get("nbgrader", {}).get("grade"):
        return "test"
    if INSTALL_TAG in cell.metadata.get("tags", []):
        return "install"
    if HELPER_TAG in cell.metadata.get("tags", []):
        return "helper"
    return "learner"


def _names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _bound(node):
    return {t.id for n in ast.walk(node) if isinstance(n, (ast.Assign, ast.For))
            for t in ast.walk(n.targets[0] if isinstance(n, ast.Assign) else n.target)
            if isinstance(t, ast.Name)}


_HELPER_MODULES = ("autograd_lab.viz", "autograd_lab.checks")


def _imports_course(stmt):
    """An import of the course's own modules: autograd_lab.viz, autograd_lab.checks (and in a
    test cell, autograd_lab itself)."""
    if isinstance(stmt, ast.ImportFrom):
        module = stmt.module or ""
        if module == "autograd_lab":
            return all(f"autograd_lab.{a.name}" in _HELPER_MODULES for a in stmt.names)
        return module.startswith(_HELPER_MODULES)
    if isinstance(stmt, ast.Import):
        return all(a.name.startswith(_HELPER_MODULES) for a in stmt.names)
    return False


def _imports_engine(stmt):
    return (isinstance(stmt, ast.Import) and len(stmt.names) == 1
            and stmt.names[0].name == "autograd_lab" and stmt.names[0].asname == "torch")


def _is_check_call(stmt):
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute)
            and isinstance(stmt.value.func.value, ast.Name)
            and stmt.value.func.value.id == "check")


def _helper_split(tree, names):
    """(index of the first helper statement of a helper cell, helper names it binds)."""
    first = None
    names = set(names)
    for index, stmt in enumerate(tree.body):
        if _imports_course(stmt):
            names |= {a.asname or a.name.split(".")[0] for a in stmt.names}
        elif _names(stmt) & names:
            names |= _bound(stmt)
        else:
            continue
        first = index if first is None else first
    return first, names


def learner_part(cell):
    """The code of a cell that runs under PyTorch (as_pytorch not yet applied): a learner
    cell whole, a helper cell's statements before its first helper statement, a test cell
    nothing."""
    what = kind(cell)
    if what == "learner":
        return cell.source
    if what in ("test", "install"):
        return ""
    tree = ast.parse(cell.source)
    first, _ = _helper_split(tree, HELPER_NAMES)
    if not first:
        return ""
    return "\n".join(cell.source.splitlines()[:tree.body[first].lineno - 1]).rstrip() + "\n"


def check_kinds(nb):
    """The problems with how ``nb``'s code cells are marked (an empty list when there are none)."""
    problems, helper_names = [], set(HELPER_NAMES)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    installs = [cell for cell in code if kind(cell) == "install"]
    if not code or kind(code[0]) != "install" or len(installs) != 1:
        problems.append(f"the first code cell, and no other, is the install cell (tagged "
                        f"{INSTALL_TAG}): {len(installs)} found")
    for number, cell in enumerate(nb.cells):
        what = kind(cell)
        if what is None:
            continue
        where = f"cell {number} ({what}):\n{cell.source}\n"
        if what == "install":
            if cell.source != install_cell():
                problems.append(where + "  the install cell is not the course's (the first "
                                "lesson's): every lesson has the same")
            continue
        tree = ast.parse(cell.source)
        if what == "test":
            for stmt in tree.body:
                ok = (_imports_course(stmt) or _imports_engine(stmt) or _is_check_call(stmt)
                      or isinstance(stmt, ast.For) and all(map(_is_check_call, stmt.body)))
                if not ok:
                    problems.append(where + "  a test cell does more than import and call "
                                    f"checks: {ast.unparse(stmt)}")
        elif what == "helper":
            first, helper_names = _helper_split(tree, helper_names)
            if first is None:
                problems.append(where + "  a helper cell that uses no helper")
                continue
            for stmt in tree.body[first:]:
                if not (_imports_course(stmt) or _names(stmt) & helper_names):
                    problems.append(where + "  learner code after a helper statement: "
                                    f"{ast.unparse(stmt)}")
        else:
            used = _names(tree) & helper_names
            if used:
                problems.append(where + f"  learner code uses the course's {sorted(used)}: "
                                f"tag the cell {HELPER_TAG} (and put learner code first in it)")
        if "autograd_lab" in as_pytorch(learner_part(cell)):
            problems.append(where + "  learner code uses autograd_lab beyond "
                            f"`{_IMPORT_AS_TORCH}` and `{_FROM_AUTOGRAD}...`")
    return problems


def install_cell():
    """The install cell's code: the first lesson's, which every lesson has."""
    first = notebook(course.LESSONS[0])
    return next(c.source for c in first.cells if INSTALL_TAG in c.metadata.get("tags", []))


def as_pytorch(source):
    """A learner cell's code with real PyTorch in place of autograd_lab."""
    lines = []
    for line in source.splitlines():
        if line.strip() == _IMPORT_AS_TORCH:
            line = line.replace(_IMPORT_AS_TORCH, "import torch")
        elif line.lstrip().startswith(_FROM_AUTOGRAD):
            line = line.replace(_FROM_AUTOGRAD, "from torch.autograd import ")
        lines.append(line)
    return "\n".join(lines)


def texts(outputs):
    """What a cell showed, as text: its streams, results (their text/plain form) and errors."""
    parts, previous = [], None
    for out in outputs:
        if out.output_type == "stream":
            if previous is not None and previous.output_type == "stream" \
                    and previous.name == out.name:
                parts[-1] += out.text       # one print can arrive in pieces on a busy machine
            else:
                parts.append(f"{out.name}: {out.text}")
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}")
        elif "text/plain" in out.get("data", {}):
            parts.append(out.data["text/plain"])
        previous = out
    text = _KERNEL_PID.sub("ipykernel_…/", _ADDRESS.sub("0x…", "".join(parts)))
    return _BUILD_DIR.sub(r"(Triggered internally at …/\1)", text)


# seconds one cell may take: the slowest (lesson 10 trains a network) takes about 2 alone, a
# lesson's plotting cell imports matplotlib first (seconds more on a busy machine, and more
# where it builds its font list), and a cell that waits on a front end that is not there
# fails within it instead of hanging the run. (The suite runs a process per core and more,
# lessons at once: 20 s was once not enough for lesson 10's picture under PyTorch.)
CELL_TIMEOUT = 60


@dataclass
class Run:
    """A run of code cells in a fresh kernel, as nbclient (what nbconvert --execute, papermill
    and nbval use) runs them, outside nbgrader: each cell's outputs, and the whole run's time."""
    outputs: list
    seconds: float

    @property
    def texts(self):
        return [texts(outputs) for outputs in self.outputs]


def execute_run(cells, lesson) -> Run:
    """Run code ``cells`` (sources) in a fresh kernel, in the lesson's folder."""
    from nbclient import NotebookClient
    run = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3",
                                                            "display_name": "Python 3",
                                                            "language": "python"}})
    run.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    start = time.perf_counter()
    NotebookClient(run, timeout=CELL_TIMEOUT, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(course.solution_path(lesson).parent)}}
                   ).execute()
    return Run([cell.outputs for cell in run.cells], time.perf_counter() - start)


def execute(cells, lesson):
    """Run code ``cells`` (sources) in a fresh kernel, in the lesson's folder; their outputs."""
    return execute_run(cells, lesson).texts


# Each lesson is run once per test session for every test that needs that run.
@functools.lru_cache(maxsize=None)
def solution_run(lesson) -> Run:
    """The solution notebook, every code cell in order, under autograd_lab."""
    return execute_run([cell.source for _, cell in code_cells(lesson)], lesson)


@functools.lru_cache(maxsize=None)
def twice_run(lesson) -> Run:
    """The solution notebook with every code cell run twice in a row."""
    return execute_run([cell.source for _, cell in code_cells(lesson) for _ in (1, 2)], lesson)


@functools.lru_cache(maxsize=None)
def pytorch_run(lesson) -> Run:
    """The learner's code of every cell that has some, under real PyTorch."""
    return execute_run([as_pytorch(learner_part(cell)) for _, cell in code_cells(lesson)
                        if learner_part(cell)], lesson)


@functools.lru_cache(maxsize=None)
def notebook(lesson):
    return nbformat.read(course.solution_path(lesson), as_version=4)


def code_cells(lesson):
    return [(number, cell) for number, cell in enumerate(notebook(lesson).cells)
            if cell.cell_type == "code"]
