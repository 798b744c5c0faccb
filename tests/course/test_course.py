"""The course: every lesson released from its solution, graded by real nbgrader, and printing
PyTorch's numbers.

- the committed notebooks/ is exactly what `scripts/release.py` makes from solutions/, and
  holds no solution and no hidden test; each solution's jupytext twin is in sync;
- real nbgrader gives the solution full marks, the blank release zero, an answer that rebinds
  the names tests use zero, and each wrong answer of tests/support/submissions/ less than full marks,
  with feedback that names the misconception;
- a prediction is graded for commitment: a well-formed wrong one keeps its points and its
  feedback names the misconception; a blank one, or one of the wrong kind, scores zero, and the
  feedback of a learner who has not predicted does not give the answer away;
- `autograd-lab report` on such a class (the lesson whose wrong answers show the most
  misconceptions) counts each misconception where it was shown, a wrong prediction's apart.
(What every solution notebook prints, under autograd_lab and under PyTorch 2.13, and that it
runs top to bottom, is tests/course/test_learner_code.py's.)
"""
import filecmp
import html
import importlib
import importlib.util
import shutil

import jupytext
import nbformat
import pytest

import course
from autograd_lab_grader.steps import report
from autograd_lab_grader.course import Course
from course import LESSONS, ROOT

pytestmark = pytest.mark.skipif(not LESSONS, reason="no lessons yet")


@pytest.mark.parametrize("lesson", LESSONS)
def test_solution_notebook_is_its_jupytext_twin(lesson):
    folder = ROOT / "solutions" / lesson
    text = jupytext.read(folder / f"{lesson}.py")
    stored = nbformat.read(folder / f"{lesson}.ipynb", as_version=4)
    assert [(c.cell_type, c.source, c.metadata) for c in text.cells] == \
           [(c.cell_type, c.source, c.metadata) for c in stored.cells], \
        f"solutions/{lesson}: the .py and .ipynb differ: run scripts/release.py"
    assert all(not c.get("outputs") for c in stored.cells), "solution notebooks are kept clean"


def test_release_is_what_solutions_make(tmp_path):
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    shutil.copytree(ROOT / "solutions", tmp_path / "solutions")
    spec = importlib.util.spec_from_file_location("release", ROOT / "scripts" / "release.py")
    release = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(release)
    release.release(root=tmp_path)
    made = sorted(p.relative_to(tmp_path / "notebooks") for p in (tmp_path / "notebooks").rglob("*")
                  if p.is_file())
    committed = sorted(p.relative_to(ROOT / "notebooks") for p in (ROOT / "notebooks").rglob("*")
                       if p.is_file() and ".ipynb_checkpoints" not in p.parts)
    assert made == committed
    for path in made:
        assert filecmp.cmp(tmp_path / "notebooks" / path, ROOT / "notebooks" / path,
                           shallow=False), f"notebooks/{path} is not what solutions/ makes"


@pytest.mark.parametrize("lesson", LESSONS)
def test_release_holds_no_solution(lesson):
    nb = nbformat.read(course.release_path(lesson), as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in text
    for gid, code in course.solution_answers(lesson).items():
        released = next(c for c in nb.cells if course.grade_id(c) == gid)
        assert "raise NotImplementedError()" in released.source
        assert code.strip() not in released.source
    assert not list((ROOT / "notebooks" / lesson).glob("*.py")), "a solution twin was released"


def _submissions(lesson):
    module = importlib.import_module(f"submissions.{lesson}")
    return module.WRONG


def _predictions(lesson):
    return importlib.import_module(f"submissions.{lesson}").PREDICTIONS


_graded = {}
_roots = {}         # lesson -> the course folder its class was graded in


@pytest.fixture(scope="module")
def graded(lesson, tmp_path_factory):
    """The whole test class of one lesson, graded once by real nbgrader. Module-scoped, so
    that a test using it takes ``lesson`` as a module-scoped parameter
    (``parametrize(..., scope="module")``): tests/conftest.py then keeps each lesson's tests
    in one process (group ``test_course-<lesson>``), where the class is graded once."""
    if lesson not in _graded:
        notebooks = {"solution": course.submission(lesson),
                     "blank": nbformat.read(course.release_path(lesson), as_version=4),
                     "rebinding": course.submission(lesson, course.rebinding_answers(lesson))}
        for wrong in _submissions(lesson):
            notebooks[wrong.name] = course.submission(lesson, wrong.answers)
        for predicted in _predictions(lesson):
            notebooks[f"malformed-{predicted.cell}"] = course.submission(
                lesson, {predicted.cell: predicted.malformed})
        notebooks["recorder"] = _recorder(lesson)
        _roots[lesson] = tmp_path_factory.mktemp(lesson)
        _graded[lesson] = course.grade_class(lesson, notebooks, _roots[lesson])
    return _graded[lesson]


# What a learner who wants the hidden tests writes, with no trick on the grader: every call
# of a function of theirs notes its arguments (the source of any function it is given too),
# and a cell at the end prints what was noted. In their own run it printed OWN_RUN.
RECORDER = """
import inspect as _inspect, sys as _sys
_NOTED = []
def _note(frame, event, arg):
    if event == "call" and "ipykernel" in frame.f_code.co_filename and len(_NOTED) < 500:
        for _value in list(frame.f_locals.values()):
            try:
                _NOTED.append(_inspect.getsource(_value) if callable(_value) else repr(_value))
            except Exception:
                _NOTED.append(repr(_value))
_sys.setprofile(_note)
"""
OWN_RUN = "nothing was noted in my own run"


def _recorder(lesson):
    answers = course.solution_answers(lesson)
    first = next(iter(answers))
    nb = course.submission(lesson, {first: RECORDER + answers[first]})
    cell = nbformat.v4.new_code_cell("print('HANDED' + '-BACK', len(_NOTED), _NOTED)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=OWN_RUN + "\n")]
    nb.cells.append(cell)
    return nb


@pytest.mark.parametrize("lesson", LESSONS, scope="module")
def test_hidden_inputs_never_reach_the_feedback_page(lesson, graded):
    """The recorder's last cell runs after the hidden tests asked their questions: the page
    shows what it printed in the learner's own run, and says so, never what it noted."""
    results = graded
    page = results["recorder"].feedback
    assert results["recorder"].score == results["solution"].score
    if "BEGIN HIDDEN TESTS" in course.solution_path(lesson).read_text():
        assert "HANDED-BACK" not in page
        assert OWN_RUN in page
        assert "what the hidden tests asked stays with the grader" in " ".join(page.split())
    else:       # nothing hidden was asked: the grading run's output is shown, as it was
        assert "HANDED-BACK" in page and OWN_RUN not in page


@pytest.mark.parametrize("lesson", LESSONS, scope="module")
def test_solution_full_marks_blank_zero(lesson, graded):
    results = graded
    full = results["solution"].max_score
    assert full > 0
    assert results["solution"].score == full, results["solution"].feedback
    assert results["blank"].score == 0
    assert results["rebinding"].score == 0, "an answer cell that rebinds names scored"


@pytest.mark.parametrize("lesson", LESSONS, scope="module")
def test_wrong_answers_lose_marks_and_name_the_mistake(lesson, graded):
    wrongs = _submissions(lesson)
    assert len(wrongs) >= 4, "every lesson has at least four realistic wrong answers"
    results = graded
    for wrong in wrongs:
        got = results[wrong.name]
        if wrong.predicted:     # committed: its points are kept (and the feedback names it)
            assert got.score == got.max_score, f"{wrong.name}: a wrong prediction lost marks"
        else:
            assert got.score < got.max_score, f"{wrong.name} scored full marks"
        if wrong.misconception:
            assert wrong.misconception in got.misconceptions, \
                f"{wrong.name}: feedback names {got.misconceptions or 'no misconception'}"
        if wrong.says:      # (wherever the message's lines happen to break)
            assert wrong.says in " ".join(got.feedback.split()), \
                f"{wrong.name}: feedback lacks {wrong.says!r}"


#: the shortcuts of the exercises about a method (use backward, call the nodes, walk the graph
#: yourself, one backward per row, micro-batches): numbers written in, the engine under
#: another name, one loss backwarded n times. Each scores what a blank notebook scores.
SHORTCUTS = {
    "02_scalar_backward": ["typed-the-numbers"],
    "04_jacobian_rows": ["typed-jacobians", "jacobian-renamed"],
    "05_accumulation": ["whole-batch-n-times"],
    "07_inside_backward": ["typed-the-numbers", "by-the-engine"],
    "08_backward_by_hand": ["engine-renamed", "calls-backward"],
}


@pytest.mark.parametrize("lesson", LESSONS, scope="module")
def test_a_methods_shortcut_scores_what_a_blank_notebook_scores(lesson, graded):
    wrongs = {w.name: w for w in _submissions(lesson)}
    for name in SHORTCUTS.get(lesson, []):
        (answer,) = wrongs[name].answers
        cell = course.test_cell_of(lesson, answer)
        got, blank = graded[name].cells[cell], graded["blank"].cells[cell]
        assert got.score == blank.score == 0, (name, cell, got.shown)


def _values(hidden):
    """The values a hidden test's full findings name (expected, found): what no page shows."""
    values = []
    for line in hidden.splitlines():
        for label in ("expected:", "found:"):
            if line.strip().startswith(label):
                value = line.strip()[len(label):].strip()
                if len(value) >= 4 and not value.isalpha():
                    values.append(value)
    return values


@pytest.mark.parametrize("lesson", LESSONS, scope="module")
def test_a_wrong_answer_of_hidden_cases_gets_a_page_without_them(lesson, graded):
    """A learner right on every visible case and wrong on hidden ones loses the exercise's
    points; the page says which hidden check failed (and its misconception), and holds none of
    the hidden test's inputs, expected or found values, which the instructor's report has."""
    hidden_only = [w for w in _submissions(lesson) if w.hidden_only]
    if "BEGIN HIDDEN TESTS" not in course.solution_path(lesson).read_text():
        assert not hidden_only
        return
    assert hidden_only, f"{lesson}: no wrong answer that fails hidden cases only"
    for wrong in hidden_only:
        got = graded[wrong.name]
        (answer,) = wrong.answers
        cell = course.test_cell_of(lesson, answer)
        assert got.cells[cell].score == 0, (wrong.name, got.cells[cell].shown)
        shown = got.cells[cell].shown
        assert "A hidden test failed" in shown, (wrong.name, shown)
        assert "expected:" not in shown and "found:" not in shown, (wrong.name, shown)
        page = " ".join(got.feedback.split())
        assert "A hidden test failed" in page
        assert got.hidden.strip(), f"{wrong.name}: the instructor's report has nothing"
        # (a value the lesson shows anyway, as a blank notebook's page does, or that the
        # learner wrote into their answer, is not the hidden test's to leak)
        shown_anyway = " ".join((graded["blank"].feedback + " ".join(wrong.answers.values())).split())
        for value in _values(got.hidden):
            value = " ".join(value.split())
            assert value in shown_anyway or value not in page, (wrong.name, value)
    # the instructor's page of what the hidden tests found has it all, as text
    from autograd_lab_grader.course import Course
    from autograd_lab_grader.steps.written import write_hidden_page
    report = write_hidden_page(Course(_roots[lesson]), lesson).read_text()
    assert 'content="default-src \'none\'' in report
    for wrong in hidden_only:
        assert f'id="learner-{wrong.name}"' in report
        assert html.escape(graded[wrong.name].hidden.splitlines()[0]) in report


def _validate(nb, tmp_path):
    """What the Validate button does: nbgrader's validator run by Jupyter Server, in its own
    process, configured from the server's root (the course's). {} for a notebook that passes,
    else {"failed": [{"source": ..., "raw_error": ...}, ...]} (or "changed" cells)."""
    from nbgrader.apps import NbGrader
    from nbgrader.validator import Validator

    path = tmp_path / "answered.ipynb"
    nbformat.write(nb, path)
    app = NbGrader()
    app.config_file_paths.insert(0, str(ROOT))
    app.load_config_file()
    assert app.config.CourseDirectory.root, "the course's nbgrader_config.py was not read"
    return Validator(config=app.config).validate(str(path))


@pytest.mark.parametrize("lesson", LESSONS)
def test_validate_passes_the_solution_and_explains_a_wrong_answer(lesson, tmp_path):
    """Validate on the solution with one exercise answered wrongly: that exercise's test cell
    fails, naming the misconception, and every other visible test passes -- so Validate
    passes the solution (whose answer to that exercise the graded class shows passing). One
    run of the lesson, not two."""
    wrong = next((w for w in _submissions(lesson) if w.misconception and not w.predicted), None)
    if wrong is None:
        assert _validate(course.submission(lesson), tmp_path) == {}
        return
    (answer,) = wrong.answers
    nb = course.submission(lesson, wrong.answers)
    at = next(i for i, c in enumerate(nb.cells) if course.grade_id(c) == answer)
    test = next(c for c in nb.cells[at + 1:] if c.metadata.get("nbgrader", {}).get("grade"))
    said = _validate(nb, tmp_path)
    assert set(said) == {"failed"}, said
    (failed,) = said["failed"]
    assert failed["source"].strip() == test.source.strip(), failed["source"]
    assert f"Misconception [{wrong.misconception}]" in failed["raw_error"], said
    # `nbgrader validate` prints the error indented, each line cut past its width: the
    # message (from the exception's name on) is shown whole
    from nbconvert.filters import strip_ansi
    from nbgrader.validator import Validator
    lines = strip_ansi(failed["raw_error"]).splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith("CheckFailed: "))
    # the test cell's line, then the message: no line of the checks' own code (the frame
    # that raised, its `raise`), which IPython would show though it hides the rest
    frames = [line for line in lines if line.startswith(("Cell In", "File "))]
    assert len(frames) == 1 and frames[0].startswith("Cell In"), failed["raw_error"]
    assert not any("autograd_lab" in line for line in lines[:start]
                   if not line.lstrip(" ->0123456789").startswith("from autograd_lab.checks"))
    validator = Validator()
    cut = [line for line in lines[start:]
           if len(validator.indent + line) > validator.width - 3]
    assert not cut, f"nbgrader validate cuts these lines of the message: {cut}"


def _prediction_cells(lesson):
    """{answer cell: its test cell} of every prediction of a lesson, in the solution notebook."""
    nb = nbformat.read(course.solution_path(lesson), as_version=4)
    found = {}
    for i, cell in enumerate(nb.cells):
        if course.is_answer(cell) and "prediction" in cell.metadata.get("tags", []):
            found[course.grade_id(cell)] = nb.cells[i + 1]
    return found


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_prediction_is_judged_before_its_answer_is_shown(lesson):
    """The test cell of a prediction comes right after it, before the cell that runs the
    code: committed before the reveal."""
    cells = _prediction_cells(lesson)
    assert cells, f"{lesson} has no prediction"
    nb = nbformat.read(course.solution_path(lesson), as_version=4)
    for answer, test in cells.items():
        assert test.metadata.get("nbgrader", {}).get("grade"), \
            f"{answer}: the cell after a prediction is its test cell"
        after = nb.cells[nb.cells.index(test) + 1:]
        shown = next(c for c in after if c.cell_type == "code")
        assert not course.is_answer(shown) and not shown.metadata.get("nbgrader", {}).get("grade")


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_prediction_has_a_wrong_and_a_malformed_answer(lesson):
    cells = set(_prediction_cells(lesson))
    assert {p.cell for p in _predictions(lesson)} == cells
    named = {cell for w in _submissions(lesson) if w.predicted and w.misconception
             for cell in w.answers}
    assert named == cells, f"predictions without a wrong answer naming a misconception: " \
                           f"{cells - named}"
    assert all(set(w.answers) <= cells for w in _submissions(lesson) if w.predicted)


@pytest.mark.parametrize("lesson", LESSONS, scope="module")
def test_a_prediction_earns_its_points_for_commitment(lesson, graded):
    results = graded
    tests = {answer: course.grade_id(test) for answer, test in _prediction_cells(lesson).items()}
    # a well-formed wrong prediction: its points, and its misconception named in its cell
    for wrong in _submissions(lesson):
        if not wrong.predicted:
            continue
        (answer,) = wrong.answers
        cell = results[wrong.name].cells[tests[answer]]
        assert cell.score == cell.max_score > 0, f"{wrong.name}: {cell}"
        assert "Prediction [wrong]" in cell.shown, f"{wrong.name}: {cell.shown}"
        if wrong.misconception:
            assert f"Misconception [{wrong.misconception}]" in cell.shown, cell.shown
    # the solution's: right, and said so
    for test in tests.values():
        cell = results["solution"].cells[test]
        assert cell.score == cell.max_score and "Prediction [right]" in cell.shown, cell
    # none (the blank release) or one of the wrong kind: zero, and the answer not given away
    for predicted in _predictions(lesson):
        test = tests[predicted.cell]
        for student in ("blank", f"malformed-{predicted.cell}"):
            cell = results[student].cells[test]
            assert cell.score == 0, f"{student} scored {cell.score} in {test}"
            assert "expected:" not in cell.shown, f"{student}: {cell.shown}"
            for text in predicted.answer:
                assert text not in cell.shown, f"{student} was shown {text!r}: {cell.shown}"
            assert "Prediction [" not in cell.shown


# the lesson whose wrong answers show the most misconceptions (a parameter, so that the test
# runs where that lesson's class is graded: tests/conftest.py groups test_course by lesson)
REPORTED = max(LESSONS, key=lambda l: len({w.misconception for w in _submissions(l)}),
               default=None)


@pytest.mark.parametrize("lesson", [REPORTED] if REPORTED else [], scope="module")
def test_report_counts_each_misconception_of_a_class(lesson, graded):
    wrongs = _submissions(lesson)
    assert any(w.predicted and w.misconception for w in wrongs), lesson
    results = graded
    result = report.report(Course(_roots[lesson]), lesson)
    assert result.learners == len(results)
    shown, predicted = {}, {}
    for exercise in result.exercises:
        for misconception, students in exercise.learners.items():
            for student in students:
                shown.setdefault(student, set()).add(misconception)
        for misconception, students in exercise.predicted.items():
            assert exercise.prediction
            for student in students:
                predicted.setdefault(student, set()).add(misconception)
    # each learner shows the misconception of their answer, and no other: a wrong prediction's
    # as a prediction, an exercise's as an exercise; the solution, the blank release, the
    # answer that rebinds names and the malformed predictions show none
    assert shown == {w.name: {w.misconception} for w in wrongs
                     if w.misconception and not w.predicted}
    assert predicted == {w.name: {w.misconception} for w in wrongs
                         if w.misconception and w.predicted}
    # next to each other, per misconception: learners who showed it in an exercise, and in a
    # wrong prediction
    both = result.by_misconception()
    for misconception in {w.misconception for w in wrongs if w.misconception}:
        assert both[misconception] == (
            sum(misconception in ids for ids in shown.values()),
            sum(misconception in ids for ids in predicted.values())), misconception
    # a prediction's bar: who predicted right, who predicted wrong showing what
    rows = {exercise.name: dict(parts) for exercise, parts in report.segments(result)}
    for wrong in wrongs:
        if wrong.predicted and wrong.misconception:
            (cell,) = wrong.answers
            parts = rows[f"{cell}_test"]
            assert parts["predicted right"] >= 1
            assert parts[report.PREDICTED_WRONG + report.human_name(wrong.misconception)] >= 1
    # every test cell: who passed it is everyone but those who failed it
    for exercise in result.exercises:
        assert exercise.passed + exercise.failed == len(results)
    assert all(e.passed >= 1 for e in result.exercises)    # the solution passes them all
    png = report.write_figure(result, _roots[lesson] / "report.png")
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("lesson", LESSONS, scope="module")
def test_a_lessons_tests_share_one_process(lesson, request):
    """Spread over processes (`./run test`: pytest-xdist, --dist loadgroup), a lesson's tests
    read one grading of its class only if they are scheduled together: xdist then names their
    group in the node id. tests/conftest.py derives the group from the module-scoped
    ``graded`` fixture and ``lesson`` parameter."""
    group = f"test_course-{lesson}"
    grading = [item for item in request.session.items if item.path == request.node.path
               and "graded" in item.fixturenames and item.callspec.params["lesson"] == lesson]
    assert grading, "no test reads the graded class"
    for item in grading + [request.node]:
        assert [m.args[0] for m in item.iter_markers("xdist_group")] == [group], item.nodeid
    if getattr(request.config.option, "loadgroup", False):
        assert request.node.nodeid.endswith(f"@{group}"), request.node.nodeid
