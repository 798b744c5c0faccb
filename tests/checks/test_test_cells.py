"""What validate() reads in a kernel's record (autograd_lab/checks/notebook.py): every test cell
of every released lesson is recognised as one, with the checks it calls; no other cell of a
lesson is (a course helper calling a check on a literal, a drawing, a learner's code); and its
report is laid out as nbgrader's Validator lays out its own."""
import io

import nbformat
import pytest

import course
from autograd_lab.checks import notebook


def cells(lesson):
    return nbformat.read(course.release_path(lesson), as_version=4).cells


def is_test(cell):
    meta = cell.metadata.get("nbgrader", {})
    return cell.cell_type == "code" and meta.get("grade") and not meta.get("solution")


@pytest.mark.parametrize("lesson", course.LESSONS)
def test_every_test_cell_and_nothing_else_is_a_test_cell(lesson):
    module = f"lesson{lesson[:2]}"
    found = 0
    for cell in cells(lesson):
        if cell.cell_type != "code":
            continue
        calls = notebook.test_calls(cell.source)
        if is_test(cell):
            assert calls, cell.source
            assert {m for m, _, _ in calls} == {module}
            found += 1
        else:
            assert calls is None, cell.source
    assert found


def test_a_cell_that_does_more_or_calls_no_check_is_not_a_test_cell():
    importing = "from autograd_lab.checks import lesson00 as check\n"
    for source in [importing + "check.first_tensor([2.0, -1.0, 3.0])",     # a literal
                   importing + "check.first_tensor(w)\nprint(w)",           # more than checks
                   importing + "check.MISCONCEPTIONS(w)",                   # not a check
                   importing + "check.first_tensor(w, points=x)",           # a setting not literal
                   "from autograd_lab.checks import written as check\ncheck.reveal(w)",
                   "check.first_tensor(w)", "w = 1", "%time check.first_tensor(w)", ""]:
        assert notebook.test_calls(source) is None, source
    assert notebook.test_calls(importing + "check.first_tensor(w, case='x')") == [
        ("lesson00", "first_tensor", ["w"])]


def test_the_report_is_laid_out_as_nbgraders_validator_lays_it_out():
    from nbgrader.validator import Validator
    source = "from autograd_lab.checks import lesson00 as check\n\ncheck.first_tensor(w)"
    error = "CheckFailed: `w` should be a Tensor.\n  found:    " + "x" * 120
    ours = notebook.told([(source, error), (source, error)])
    validator = Validator()
    validator.stream = io.StringIO()
    validator._print_num_failed(2)
    validator._print_error(source, error)
    validator._print_error(source, error)
    theirs = validator.stream.getvalue()
    assert ours.split() == theirs.split()           # (the same words, lines and cuts)
    assert ours.splitlines()[0] == theirs.splitlines()[0]
    assert notebook.told([]) == "Success! Your notebook passes all the tests."


def test_a_test_cell_whose_answer_never_ran_says_so():
    """A test cell that stopped before its check (a NameError: its answer cell raised
    NotImplementedError, or never ran) is reported so, with how to fix it."""
    class Shell:
        user_ns = {}
    calls = [("lesson00", "first_tensor", ["w"])]
    said = notebook._outcome(7, calls, Shell(), {})
    assert said.startswith("NameError: name 'w' is not defined") and "answer cell" in said
    Shell.user_ns = {"w": 1}
    assert "run it again" in notebook._outcome(7, calls, Shell(), {})
    assert notebook._outcome(7, calls, Shell(), {7: [("first_tensor", None)]}) is None
    assert notebook._outcome(7, calls, Shell(), {7: [("first_tensor", "CheckFailed: no")]}) \
        == "CheckFailed: no"


def test_the_notebook_the_front_end_names_is_found(tmp_path, monkeypatch):
    """JupyterLab names the notebook by its path under the server's root and starts the
    kernel in the notebook's folder; VS Code names it in the kernel's namespace."""
    (tmp_path / "lesson.ipynb").write_text("{}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(notebook, "_shell", lambda: None)
    monkeypatch.setenv("JPY_SESSION_NAME", "notebooks/00_start_here/lesson.ipynb")
    assert notebook.this_notebook() == tmp_path / "lesson.ipynb"
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "lesson.ipynb"))
    assert notebook.this_notebook() == tmp_path / "lesson.ipynb"
    monkeypatch.delenv("JPY_SESSION_NAME")
    assert notebook.this_notebook() is None                 # Colab, nbclient: none

    class Shell:
        user_ns = {"__vsc_ipynb_file__": str(tmp_path / "lesson.ipynb")}
    assert notebook.this_notebook(Shell()) == tmp_path / "lesson.ipynb"
