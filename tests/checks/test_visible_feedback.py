"""Feedback for a learner on their own: every misconception a lesson's text warns about is named
by a *visible* test (what Validate and running the notebook show; hidden tests only ever run
in grading).

Per lesson, each misconception the lesson's text names, with a realistic wrong answer for it
(one of tests/support/submissions/, by name). The released notebook, answered with the solution but for
that wrong answer, runs top to bottom with its visible tests only, as Validate runs it, and the
test cell of the wrong answer shows that misconception's message: in its error, for an
exercise (Validate lists it); in what it printed, for a prediction, which passes (it was
committed) and says which misconception it shows.
"""
import importlib

import nbformat
import pytest

import course

#: lesson -> {misconception the lesson's text names (and every one its wrong answers in
#: tests/support/submissions/ show): the wrong answer that shows it}
NAMED = {
    "00_start_here": {
        "elementwise-product": "squared-the-sum",          # `*` is element by element
        "not-a-leaf": "scaled-after-requires-grad",         # (lesson 01's; the exercise's check)
    },
    "01_tensors_that_remember": {
        "not-a-leaf": "scaled-leaf",                        # b = ... * 0.1, the leaf rule
        "nonleaf-grad": "no-retain-grad",                   # the warning on z.grad; retain_grad
        "copy-in-graph": "frozen-still-attached",           # numbers without their history
        "requires-grad-on-loss": "loss-requires-grad",      # "only silences the error"
        "forgot-zero-grad": "backward-twice",
        "data-not-detach": "frozen-by-data",                # .detach() is the safe one
    },
    "02_scalar_backward": {
        "forgot-zero-grad": "backward-twice",               # "It does not reset .grad"
        "nonleaf-grad": "grad-of-the-result",               # "It does not fill .grad on results"
        "chain-rule-inner": "outer-derivative-only",        # the chain rule, node by node
        "forward-difference": "forward-difference",         # the one-sided difference
        "finite-difference-step": "divides-by-h",           # a step h to each side
        "gradient-scales": "seed-ignored",                  # the starting value of the pass
        "grad-is-value": "cube-value",
        "backward-returns-none": "backward-returned",       # "It does not return the derivative"
    },
    "03_vector_backward": {
        "gradient-is-input": "v-is-x",                      # y.backward(x)
        "gradient-shape": "v-shaped-like-x",                # weights shaped like x are refused
        "implicit-scalar-only": "mean-as-ones",             # ones_like(y): n times too large
    },
    "04_jacobian_rows": {
        "vjp-is-jacobian": "one-backward-with-ones",        # x.grad is one vector, not J
        "jacobian-transposed": "columns-not-rows",          # e_i gives row i
        "forgot-zero-grad": "never-zeroes",                 # reset .grad between such calls
    },
    "05_accumulation": {
        "forgot-zero-grad": "loop-never-zeroes",            # the loop that forgets to zero
        "inplace-leaf-update": "loop-rebinds-w",            # `-=` keeps w the same leaf
        "microbatch-unscaled": "micro-unscaled",            # the sum of their means times 1/k
        "zeroed-too-often": "micro-zero-each-batch",        # one update at the end
        "retain-graph-instead-of-zero": "retain-graph-resets",  # retain_graph does not reset
        "nonleaf-grad": "y-has-grad",                       # y.grad is None
    },
    "06_retain_graph": {
        "retain-graph-missing": "two-losses-no-retain",     # the first pass frees the shared part
        "retain-graph-instead-of-zero": "two-losses-no-reset",  # the passes add up
        "saved-tensor-modified": "inplace-kept",            # modified by an inplace operation
        "forgot-zero-grad": "two-losses-stale-grad",        # x may arrive with an old .grad
    },
    "07_inside_backward": {
        "one-accumulator": "accumulator-per-use",           # one AccumulateGrad per leaf
        "fan-out-sum": "one-use-only",                      # two parts to one node: their sum
    },
    "08_backward_by_hand": {
        "recursive-backward": "every-path-separately",      # a path-by-path recursive walk
    },
    "09_custom_function": {
        "backward-ignores-grad-output": "softplus-derivative-alone",   # CubeForgetful
        "chain-rule-inner": "softplus-no-inner-derivative",  # work out d/dx log(1 + e^x)
    },
    "10_training_loop": {
        "inplace-leaf-update": "rebinds-parameter",         # w = w - lr * w.grad
        "forgot-zero-grad": "never-zeroed",
        "not-a-leaf": "scaled-after-requires-grad",         # mind when requires_grad is set
        "requires-grad-on-loss": "b-as-no-grad",            # loop B
        "data-not-detach": "update-through-data",           # not through .data
    },
    "11_grad_modes": {
        "static-graph": "loop-same-graph",                  # one function, two graphs
        "no-grad-freezes": "no-grad-freezes",               # a grad mode is not a freeze
        "eval-freezes": "eval-freezes",                     # model.eval() is not a grad mode
        "detach-freezes": "freeze-detach-rebinds",          # a name bound to a copy
    },
    "12_hooks_and_higher_order": {
        "hook-result-ignored": "clip-not-returned",         # what a hook returns replaces
        "hook-returns-nothing": "hook-rebinds-g",           # `look` returns None
        "kink-gradient": "kink-first-max",                  # PyTorch's value at a kink
        "create-graph-forgotten": "hvp-no-create-graph",    # a gradient without a grad_fn
    },
}

#: more wrong answers the text warns about, with the misconception each must show as well
ALSO = {
    "01_tensors_that_remember": [("nonleaf-grad", "retain-grad-too-late"),
                                 ("copy-in-graph", "frozen-is-w")],
    "05_accumulation": [("inplace-leaf-update", "loop-rebinds-w-no-grad"),
                        ("forgot-zero-grad", "micro-stale-grad")],
    "08_backward_by_hand": [("recursive-backward", "depth-first-walk"),
                           ("recursive-backward", "recursive-walk"),
                           ("recursive-backward", "ready-at-once")],
    "10_training_loop": [("inplace-leaf-update", "in-place-outside-no-grad")],
    "11_grad_modes": [("static-graph", "loop-not-recorded"),
                      ("no-grad-freezes", "no-grad-lasts"),
                      ("no-grad-freezes", "freeze-grad-mode-off"),
                      ("eval-freezes", "eval-stops-short"),
                      ("detach-freezes", "freeze-detach-discarded")],
    "12_hooks_and_higher_order": [("hook-result-ignored", "hook-result-dropped"),
                                  ("kink-gradient", "kink-nan"),
                                  ("create-graph-forgotten", "plain-grad-differentiable")],
}


def _wrongs(lesson):
    return {w.name: w for w in importlib.import_module(f"submissions.{lesson}").WRONG}


def _cases():
    for lesson, named in NAMED.items():
        for misconception, name in [*named.items(), *ALSO.get(lesson, [])]:
            yield pytest.param(lesson, misconception, name, id=f"{lesson}-{name}")


def test_every_lesson_is_listed_with_the_misconceptions_its_wrong_answers_show():
    assert sorted(NAMED) == course.LESSONS
    for lesson, named in NAMED.items():
        shown = {w.misconception for w in _wrongs(lesson).values() if w.misconception}
        assert shown <= set(named), f"{lesson}: not listed here: {shown - set(named)}"


def _test_cell_outputs(lesson, answers):
    """The released notebook answered (the solution's answers but ``answers``), run from the
    top with its visible tests, as Validate runs it, as far as the test cell of the last answer
    given (nothing after it changes what that cell shows): {answer cell: what its test cell
    showed (error or printed text), and whether it raised}."""
    from nbclient import NotebookClient
    nb = course.submission(lesson, answers)
    cells = nb.cells
    last = max(i for i, c in enumerate(cells)
               if course.is_answer(c) and course.grade_id(c) in answers)
    end = next(i for i in range(last + 1, len(cells)) if cells[i].cell_type == "code"
               and cells[i].metadata.get("nbgrader", {}).get("grade"))
    nb.cells = nb.cells[:end + 1]
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(course.release_path(lesson).parent)}}
                   ).execute()
    found, last_answer = {}, None
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if course.is_answer(cell):
            last_answer = course.grade_id(cell)
        elif cell.cell_type == "code" and meta.get("grade") and last_answer:
            raised = any(o.output_type == "error" for o in cell.outputs)
            found[last_answer] = (course.shown(cell.outputs), raised)
    return found


@pytest.mark.parametrize("lesson, misconception, name", list(_cases()))
def test_a_misconception_the_text_names_is_named_by_a_visible_test(lesson, misconception, name):
    wrong = _wrongs(lesson)[name]
    assert wrong.misconception == misconception, f"{name} is listed for {wrong.misconception}"
    released = nbformat.read(course.release_path(lesson), as_version=4)
    assert "BEGIN HIDDEN TESTS" not in "".join(c.source for c in released.cells)
    outputs = _test_cell_outputs(lesson, wrong.answers)
    (cell,) = wrong.answers
    shown, raised = outputs[cell]
    assert f"Misconception [{misconception}]" in shown, f"{name}: the visible test showed\n{shown}"
    if wrong.predicted:
        assert not raised and "Prediction [wrong]" in shown
    else:
        assert raised, f"{name} passed the visible test"
        # the message, from the exception's name on, as `nbgrader validate` prints it
        # (indented by 4, every line past 87 characters cut): whole
        from nbgrader.validator import Validator
        validator = Validator()
        message = shown[shown.index("CheckFailed: "):].splitlines()
        cut = [line for line in message if len(validator.indent + line) > validator.width - 3]
        assert not cut, f"{name}: nbgrader validate cuts {cut}"


def test_a_failing_check_shows_the_cell_and_the_message_and_the_learners_error_its_traceback():
    """In the notebook (what JupyterLab renders: the error's traceback lines, as the kernel sent
    them) a failing check shows the test cell's line and the course's message, no line of the
    checks' code; an error of the learner's own code keeps its whole traceback."""
    from nbclient import NotebookClient
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell(source) for source in (
        "import autograd_lab as torch",
        "def dy_dx(x):\n    return 3 * (x ** 2 + 1) ** 2 / (x - x)",
        "dy_dx(1.5)",
        "from autograd_lab.checks import lesson02 as check\n\n"
        "check.chain_rule_formula(lambda x: 3 * (x ** 2 + 1) ** 2, points=[1.5])")])
    NotebookClient(nb, kernel_name="python3", allow_errors=True, timeout=60).execute()
    own, failed = ("\n".join(strip(line) for line in next(
        o for o in cell.outputs if o.output_type == "error").traceback) for cell in nb.cells[2:])
    # the learner's error: their cell, then their function's line that raised
    assert "----> 1 dy_dx(1.5)" in own and "return 3 * (x ** 2 + 1) ** 2 / (x - x)" in own, own
    assert own.rstrip().endswith("ZeroDivisionError: float division by zero"), own
    # the check's failure: the test cell's line and the message; nothing of autograd_lab/checks
    assert "----> 3 check.chain_rule_formula(" in failed, failed
    assert "CheckFailed: dy_dx(1.5) is only the outer derivative" in failed, failed
    assert "Misconception [chain-rule-inner]" in failed
    frames = [line for line in failed.splitlines() if line.startswith(("Cell In", "File "))]
    assert len(frames) == 1 and frames[0].startswith("Cell In"), failed
    assert "autograd_lab" not in failed.replace("from autograd_lab.checks import", ""), failed
    assert "raise" not in failed and "hidden" not in failed, failed


def strip(line):
    import re
    return re.sub(r"\x1b\[[0-9;]*m", "", line)
