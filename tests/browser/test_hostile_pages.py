"""A hostile learner's graded submission where the instructor reads it, in Debian's Chromium:
nbgrader's formgrader page of that submission, served as docs/instructors/hand-grading.md says
(`autograd-lab formgrader`: a real Jupyter server at the course root, nbgrader's formgrader
extension on), the autograded
notebook opened live in JupyterLab (the formgrader's "open live notebook" link), the report's
written-answer page and the learner's feedback page. The learner's notebook
(tests/support/hostile_notebook.py) carries a script in its written answer, in the answer
cell's outputs and in stored outputs of a lesson cell after the first hidden test, and in every
other place a notebook has; no page runs any of it (no dialog, no PWNED on the console, no mark
on the page, no request to the server's API, no terminal or kernel started on the server), and
the learner's words are on every page, as text."""
import json

import pytest

import hostile_notebook as hn
import lab_browser
import learner_env

STUDENT = "mallory"
BEFORE = "trudy"       # graded as mallory, then her notebook as an older grader wrote it


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The course with mallory's submission graded, the report and her feedback written."""
    from autograd_lab_grader.course import Course
    from autograd_lab_grader.steps import feedback, grade, written

    root = hn.make_course(tmp_path_factory.mktemp("formgrader") / "course")
    hn.submit(root, STUDENT)
    hn.submit(root, BEFORE)
    course = Course(root)
    rows = grade.grade(course, hn.LESSON, grade.Options(jobs=2))
    assert sorted((r.student, r.status) for r in rows) == [
        (STUDENT, "needs manual grading"), (BEFORE, "needs manual grading")]
    pages = feedback.feedback(course, hn.LESSON, partial=True, students=[STUDENT]).pages
    report = written.write_pages(course, hn.LESSON)
    # what an autograded notebook held before the grader made it inert: the learner's own
    # notebook, every output of the lesson cell after the hidden test on the answer cell too
    nb = hn.notebook(root)
    stored = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id")
                  == "demo")["outputs"]
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "answer_square":
            cell["outputs"] = stored
    (course.directory("autograded") / BEFORE / hn.LESSON / f"{hn.LESSON}.ipynb").write_text(
        json.dumps(nb))
    # and a name as an older grader's roster kept it, which the formgrader writes as markup
    with course.gradebook() as gb:
        gb.update_or_create_student(BEFORE, first_name="Trudy",
                                    last_name=f'<img src=x onerror="{hn.payload("name")}">')
    return course, pages[0], report[0]


@pytest.fixture(scope="module")
def formgrader(graded, tmp_path_factory):
    """The formgrader as hand-grading.md starts it: `autograd-lab formgrader`, JupyterLab of
    the grader's own environment (nbgrader's server extensions and the grader's on) at the
    course root."""
    import sys
    from pathlib import Path

    course, _, _ = graded
    home = tmp_path_factory.mktemp("instructor")
    environ = learner_env.jupyter_environ(Path(sys.prefix), home)
    lab_browser.ARTIFACTS.mkdir(exist_ok=True)
    command = [sys.executable, "-m", "autograd_lab_grader", "-C", str(course.root),
               "formgrader"]
    with lab_browser.jupyter_lab(sys.executable, environ, course.root,
                                 lab_browser.ARTIFACTS / "formgrader.log",
                                 command=command) as server:
        yield server


def _visit(chromium, url, name, wait=2500, act=None, first=None):
    """Open ``url`` (after ``first``, in the same tab), and do ``act`` there; what a learner's
    script would have left: (dialogs, PWNED console lines, the page's mark, requests naming
    pwned, the page's text, the response's headers)."""
    dialogs, console, requests = [], [], []
    context = chromium.new_context()
    tab = context.new_page()
    if first is not None:
        tab.goto(first)
    tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    tab.on("console", lambda m: console.append(m.text))
    tab.on("request", lambda r: requests.append(r.url))
    response = tab.goto(url)
    tab.wait_for_load_state("load")
    tab.wait_for_timeout(wait)        # for a late handler, a fetch or MathJax to show itself
    if act is not None:
        act(tab)
    mark = tab.evaluate("document.documentElement.getAttribute('data-pwned')")
    mark = mark or tab.evaluate("document.documentElement.dataset.pwned || null")
    text = tab.inner_text("body")
    tab.screenshot(path=str(lab_browser.ARTIFACTS / f"{name}.png"), full_page=True)
    headers = response.headers if response else {}
    context.close()
    return dict(dialogs=dialogs, console=[m for m in console if "PWNED" in m], mark=mark,
                violations=[m for m in console if "Content Security Policy" in m],
                requests=[r for r in requests if "pwned" in r], text=text, headers=headers)


def _nothing_ran(seen):
    assert seen["dialogs"] == [], seen["dialogs"]
    assert seen["console"] == [], seen["console"]
    assert seen["mark"] is None, seen["mark"]
    assert seen["requests"] == [], seen["requests"]


def _submission_id(course, student=STUDENT):
    with course.gradebook() as gb:
        return gb.find_submission_notebook(hn.LESSON, hn.LESSON, student).id


def _server_state(server):
    """The terminals and kernels the server runs (a learner's script would start one)."""
    return ([t["name"] for t in json.loads(server.get("api/terminals")[1])],
            sorted(k["id"] for k in json.loads(server.get("api/kernels")[1])))


def test_the_formgrader_runs_no_script_of_the_learners(graded, formgrader, chromium):
    course, _, _ = graded
    before = _server_state(formgrader)
    url = formgrader.url(f"formgrader/submissions/{_submission_id(course)}/")
    # (as the instructor goes: the formgrader first, which logs the browser in, then a
    #  submission)
    seen = _visit(chromium, url, "formgrader-hostile", act=_full_credit,
                  first=formgrader.url("formgrader"))
    _nothing_ran(seen)
    assert _server_state(formgrader) == before == ([], [])
    for marker in hn.MARKERS:                      # the learner's words, to read
        assert marker in seen["text"], marker
    assert "Student's answer" in seen["text"]      # and it is the formgrader's page, grading
    # the page's own scripts ran (its policy lets them): "Full credit" saved the hand grade
    with course.gradebook() as gb:
        grade = gb.find_grade("explain", hn.LESSON, hn.LESSON, STUDENT)
        assert grade.manual_score == 1, grade.manual_score
    policy = dict(d.strip().split(" ", 1) for d in seen["headers"]["content-security-policy"]
                  .split(";") if d.strip())
    assert policy["default-src"] == "'none'"
    assert "'unsafe-inline'" not in policy["script-src"]
    assert "'unsafe-eval'" not in policy["script-src"]
    assert policy["script-src"].split()[0].endswith("/formgrader/static/")


def _full_credit(tab):
    """The instructor gives the written answer full credit, and the formgrader saves it."""
    button = tab.locator(".nbgrader_cell", has=tab.locator("#explain")).locator(".full-credit")
    # (the page's policy refuses Playwright's own evaluated functions: its API asks instead)
    with tab.expect_response(lambda r: "/formgrader/api/grade/" in r.url
                             and r.request.method == "PUT", timeout=10_000) as saved:
        button.click()
    assert saved.value.ok, saved.value.status


def test_the_formgraders_policy_alone_runs_no_script_of_a_notebook_not_made_inert(
        graded, formgrader, chromium):
    """A notebook an older grader wrote (the learner's own, raw HTML and scripts kept), and a
    name that is markup: the page's content security policy runs none of it, where nbgrader
    alone runs them all."""
    course, _, _ = graded
    url = formgrader.url(f"formgrader/submissions/{_submission_id(course, BEFORE)}/")
    seen = _visit(chromium, url, "formgrader-not-inert", first=formgrader.url("formgrader"))
    _nothing_ran(seen)
    assert _server_state(formgrader)[0] == []
    assert "WRITTEN-ANSWER-TEXT" in seen["text"] and "Student's answer" in seen["text"]
    assert len(seen["violations"]) >= 3, seen["violations"]    # the policy refused them


def test_the_live_notebook_runs_no_script_of_the_learners(graded, formgrader, chromium):
    course, _, _ = graded
    path = f"autograded/{STUDENT}/{hn.LESSON}/{hn.LESSON}.ipynb"
    seen = _visit(chromium, formgrader.url(f"lab/tree/{path}"), "formgrader-live-notebook",
                  wait=8000)
    _nothing_ran(seen)
    assert _server_state(formgrader)[0] == []      # (JupyterLab starts the notebook's kernel)
    for marker in hn.MARKERS:
        assert marker in seen["text"], marker


@pytest.mark.parametrize("which", ["feedback", "report"])
def test_the_feedback_and_report_pages_run_no_script_of_the_learners(graded, chromium, which):
    _, page, report = graded
    seen = _visit(chromium, (page if which == "feedback" else report).as_uri(),
                  f"{which}-hostile", wait=1000)
    _nothing_ran(seen)
    markers = hn.MARKERS if which == "feedback" else hn.MARKERS[:1]    # (one question's page)
    for marker in markers:
        assert marker in seen["text"], marker
