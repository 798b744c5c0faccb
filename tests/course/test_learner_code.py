"""The learner's code of every solution notebook, run as a learner runs it.

- Under real PyTorch: all the learner's code (every code cell but the test cells, the install
  cell, and the cells tagged course-helper but for the statements that make what they draw;
  tests/support/learner_code.py says exactly which) runs in a fresh kernel with ``import torch`` in
  place of ``import autograd_lab as torch``. Each learner cell shows what it shows in the
  solution notebook run whole under autograd_lab, helpers and tests included; a helper's
  learner statements show nothing. Only memory addresses and the kernel's process id in a
  warning's file name are normalised.
- Again: every code cell, run twice in a row, shows the same thing the second time (a learner
  who runs a cell again sees what they saw, not an error taught three lessons later).
"""
import pytest

import course
import learner_code as lc

pytestmark = pytest.mark.skipif(not course.LESSONS, reason="no lessons yet")


@pytest.mark.parametrize("lesson", course.LESSONS)
def test_code_cells_are_marked(lesson):
    problems = lc.check_kinds(lc.notebook(lesson))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lesson", course.LESSONS)
def test_the_solution_runs_top_to_bottom(lesson, lesson_runs):
    """Every code cell of the solution runs without an error (but those tagged
    raises-exception, which show one on purpose)."""
    cells = [cell for _, cell in lc.code_cells(lesson)]
    for cell, outputs in zip(cells, lesson_runs.solution_run(lesson).outputs):
        if "raises-exception" in cell.metadata.get("tags", []):
            continue
        errors = [f"{o.ename}: {o.evalue}" for o in outputs if o.output_type == "error"]
        assert not errors, f"this cell raised:\n{cell.source}\n{errors}"


@pytest.mark.parametrize("lesson", course.LESSONS)
def test_learner_code_prints_the_same_under_pytorch(lesson, torch, lesson_runs):
    cells = [cell for _, cell in lc.code_cells(lesson)]
    assert not lc.check_kinds(lc.notebook(lesson))
    ours = lesson_runs.solution_run(lesson).texts
    runs = [(i, cell) for i, cell in enumerate(cells) if lc.learner_part(cell)]
    theirs = lesson_runs.pytorch_run(lesson).texts
    assert any(lc.kind(cell) == "learner" for _, cell in runs)
    for (i, cell), real in zip(runs, theirs):
        if lc.kind(cell) == "learner":
            assert ours[i] == real, (f"this cell shows something else under PyTorch:\n"
                                     f"{cell.source}\n--- autograd_lab:\n{ours[i]}\n"
                                     f"--- PyTorch:\n{real}")
        else:
            assert real == "", (f"the learner code of a helper cell shows something under "
                                f"PyTorch (it belongs in a cell of its own):\n{cell.source}"
                                f"\n--- PyTorch:\n{real}")


@pytest.mark.parametrize("lesson", course.LESSONS)
def test_every_cell_can_run_again(lesson, lesson_runs):
    cells = [cell.source for _, cell in lc.code_cells(lesson)]
    shown = lesson_runs.twice_run(lesson).texts
    for source, first, again in zip(cells, shown[::2], shown[1::2]):
        assert first == again, (f"this cell shows something else when run again:\n{source}"
                                f"\n--- first:\n{first}\n--- again:\n{again}")


def _nb(*cells):
    import nbformat
    return nbformat.v4.new_notebook(cells=list(cells))


def _code(source, tags=(), test=False):
    import nbformat
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = list(tags)
    if test:
        cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True,
                                     "grade_id": "t", "points": 1, "schema_version": 3}
    return cell


def test_no_learner_code_hides_from_pytorch():
    helper = "course-helper"
    install = _code(lc.install_cell(), [lc.INSTALL_TAG])
    ok = _nb(install,
             _code("import autograd_lab as torch\nfrom autograd_lab import viz", [helper]),
             _code("x = torch.ones(2, requires_grad=True)\ny = x * 2\n"
                   "trace = viz.trace_backward(y.sum())\nprint(trace.table())\ntrace", [helper]),
             _code("from autograd_lab.checks import lesson00 as check\n"
                   "check.first_tensor(x)\nfor c in 'ab':\n    check.first_tensor(x)", test=True),
             _code("from autograd_lab.autograd import Variable\nprint(Variable(x))"))
    assert lc.check_kinds(ok) == []
    assert lc.learner_part(ok.cells[0]) == ""                   # never run under PyTorch
    assert lc.learner_part(ok.cells[1]) == "import autograd_lab as torch\n"
    assert lc.learner_part(ok.cells[2]) == "x = torch.ones(2, requires_grad=True)\ny = x * 2\n"
    assert lc.learner_part(ok.cells[3]) == ""
    assert lc.as_pytorch(ok.cells[4].source).startswith("from torch.autograd import Variable")
    wrong = [
        _code("viz.draw(x)\nprint(x.grad)", [helper]),          # learner code after a helper
        _code("print(x)", [helper]),                             # a helper that draws nothing
        _code("viz.draw(x)"),                                    # a helper not tagged
        _code("import autograd_lab\nprint(autograd_lab.tensor(1.0))"),  # the engine by name
        _code("check.first_tensor(x)\nx.grad = None", test=True),  # a test cell that does more
        install,                                                 # a second install cell
    ]
    for cell in wrong:
        assert lc.check_kinds(_nb(install, ok.cells[1], cell)), cell.source
    assert lc.check_kinds(_nb(ok.cells[1]))                      # no install cell
    assert lc.check_kinds(_nb(ok.cells[1], install))             # not the first code cell
    edited = _code(install.source.replace("pip", "pip3"), [lc.INSTALL_TAG])
    assert lc.check_kinds(_nb(edited, ok.cells[1]))              # not the course's
