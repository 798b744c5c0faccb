"""The autograded notebook the grader writes is inert (reading/inert.py), and what it and the
pages do with a learner's text is linear in its length (reading/page.py).

- The inert pass on a notebook that holds everything nbformat's schema refuses and nbgrader
  would never let through (an id that is markup, an execution count that is a string, an
  output of no kind), and everything it allows: the result is a valid notebook, of outputs
  nbformat knows with only the fields it allows, Markdown cells no renderer makes active,
  metadata by the allowlist; the pass is a function of the notebook (the same bytes twice,
  and again on its own result); what the grader reads from the notebook after it is still
  there (the report's misconceptions and predictions, the time limits, the sandbox's
  refusals, the tags).
- A stored Markdown cell passes through nbconvert's Markdown (the formgrader's) unchanged,
  with no math delimiter, no "[" and no line in it.
- A 1 MB pathological written answer of each kind (the math delimiters, `<img`, `[`, `*`,
  backticks, `<`, quotes, nested lists): the inert pass and a page's Markdown finish in
  seconds, and the 1 MB case costs at most 20 times the 100 kB case in the same run; so do
  `feedback` and `report` for a learner whose answer mixes them all, and a page's highlighting
  of a megabyte of pathological code in cells. CPU time is what is measured (a loaded
  machine's waits are not the code's).
- A hand grade given to a written answer in a notebook graded before the grader made its
  notebooks inert is kept when the same answer is graded again.
"""
import copy
import json
import random
import re
import time

import nbformat
import pytest

import lmsclass as lc
from autograd_lab_grader.course import Course
from autograd_lab_grader.reading import inert, page
from autograd_lab_grader.steps import feedback, grade, report, written

PAYLOAD = '<img src=x onerror="alert(1)">'
KINDS = {"display math": "\\[", "inline math": "\\(", "dollars": "$", "images": "<img",
         "links": "[", "emphasis": "*", "code": "`", "markup": "<", "quotes": "> ",
         "nested lists": "- ", "misnested tags": "<b><p></b></p>", "math soup": "$a+",
         "open lists": "<li><ul>"}


def _notebook():
    """A notebook as a learner's kernel and hands could make it, schema or not."""
    def md(source, **kw):
        return {"cell_type": "markdown", "metadata": {}, "source": source, **kw}

    return {
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": PAYLOAD},
                     "language_info": {"name": "python", "pygments_lexer": "x" * 1000,
                                       "codemirror_mode": {"name": "ipython", "version": 3}},
                     "widgets": {"application/vnd.jupyter.widget-state+json": {"state": {}}},
                     "title": PAYLOAD, "jupytext": {"x": 1}},
        "cells": [
            md(f"# Hi $x^2$ {PAYLOAD}", id='"><script>alert(1)</script>',
               attachments={"a.png": {"image/png": "AAAA"}},
               metadata={"tags": ["prediction", 'x" onclick="y', 7], "jupyter": {"x": 1}}),
            md("the same id", id="dup"),
            md("the same id again", id="dup"),
            {"cell_type": "code", "id": "code", "execution_count": f"{PAYLOAD}",
             "metadata": {"nbgrader": {"grade": True, "grade_id": "test_x", "points": 2,
                                       "solution": False, "locked": True, "schema_version": 3,
                                       "checksum": "<b>", "evil": PAYLOAD},
                          "collapsed": PAYLOAD, "editable": False},
             "source": "check.x(x)",
             "outputs": [
                 {"output_type": "stream", "name": PAYLOAD,
                  "text": "Prediction [wrong]\nMisconception [gradient-is-input]: no\n"
                          "\x1b]52;c;c2VjcmV0\x07 \x1b[31mred\x1b[0m\r\n"},
                 {"output_type": "error", "ename": "CheckFailed", "evalue":
                  "x\nMisconception [gradient-shape]: a made-up second id", "traceback":
                  ["\x1b[31mCheckFailed\x1b[0m", *[f"frame {i}" for i in range(500)]]},
                 {"output_type": "error", "ename": "CellTimeoutError", "evalue": "",
                  "traceback": []},
                 {"output_type": "stream", "name": "stderr",
                  "text": "OSError: [Errno 30] Read-only file system: '/x'\n"},
                 {"output_type": "execute_result", "execution_count": PAYLOAD, "metadata":
                  {"text/html": {"isolated": True}, "filenames": {"image/png": "/etc/x"}},
                  "data": {"text/html": PAYLOAD + "<b>kept</b>", "text/plain": "plain"},
                  "transient": {"display_id": "x"}},
                 {"output_type": "display_data", "metadata": {}, "data": {
                     "application/javascript": "alert(1)",
                     "application/vnd.jupyter.widget-view+json": {"model_id": "1"}}},
                 {"output_type": "<script>alert(1)</script>", "data": {"text/html": "x"}},
                 "not an output",
             ]},
            {"cell_type": "raw", "id": "raw", "metadata": {"raw_mimetype": "text/html"},
             "source": f"raw {PAYLOAD}"},
            {"cell_type": PAYLOAD, "id": "odd", "metadata": {}, "source": "odd cell"},
        ]}


def _active(markup):
    """The elements of ``markup`` that could run or fetch something (as a browser parses it)."""
    from html.parser import HTMLParser

    found = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag in ("script", "iframe", "object", "embed", "link", "style", "svg") or any(
                    a.startswith("on") or a in ("style", "srcdoc") or (
                        a in ("src", "href") and not (v or "").startswith(("data:image/",
                                                                             "https:", "#")))
                    for a, v in attrs):
                found.append((tag, attrs))

    Parser().feed(markup)
    return found


def _inert(nb):
    node = nbformat.from_dict(copy.deepcopy(nb))
    inert.notebook(node)
    return node


def test_the_inert_notebook_is_valid_inert_and_a_function_of_the_notebook():
    nb = _inert(_notebook())
    nbformat.validate(nb)                                   # (nbformat's own schema)
    assert set(nb.metadata) == {"kernelspec", "language_info"}
    assert nb.metadata.kernelspec == {"name": "python3", "display_name": "python3"}
    assert nb.metadata.language_info == {"name": "python",
                                         "codemirror_mode": {"name": "ipython", "version": 3}}
    ids = [c.id for c in nb.cells]
    assert len(set(ids)) == len(ids) and ids[1:3] == ["dup", "cell-2"]
    first, code = nb.cells[0], nb.cells[3]
    assert "attachments" not in first and first.metadata == {"tags": ["prediction"]}
    assert code.metadata == {"nbgrader": {"grade": True, "grade_id": "test_x", "points": 2,
                                          "solution": False, "locked": True,
                                          "schema_version": 3}, "editable": False}
    assert code.execution_count is None
    kinds = [(o.output_type, o.get("name")) for o in code.outputs]
    assert kinds == [("stream", "stdout"), ("error", None), ("error", None), ("stream", "stderr"),
                     ("execute_result", None), ("display_data", None)]
    for output in code.outputs:
        assert set(output.get("data", {})) <= {"text/plain", "text/html", "image/png",
                                                "image/jpeg"}
        assert set(output.get("metadata", {})) <= {"alt"}
    html = code.outputs[4].data["text/html"]
    assert "<b>kept</b>" in html
    assert code.outputs[4].execution_count is None and "transient" not in code.outputs[4]
    assert "application/javascript" in code.outputs[5].data["text/plain"]   # said, not kept
    assert len(code.outputs[1].traceback) == inert.MAX_TRACEBACK
    # every Markdown cell (a raw one, a cell of no kind) is a stored one, and shows its text
    for cell in nb.cells:
        if cell.cell_type != "code":
            assert cell.cell_type == "markdown" and cell.source.startswith(page.STORED)
            assert _active(cell.source) == [], cell.source
    assert _active(html) == []
    assert "raw &lt;img" in nb.cells[4].source and "odd cell" in nb.cells[5].source
    # a function of the notebook: the same bytes twice, and again on its own result
    assert nbformat.writes(_inert(_notebook())) == nbformat.writes(nb)
    assert nbformat.writes(_inert(json.loads(nbformat.writes(nb)))) == nbformat.writes(nb)


def test_what_the_grader_reads_after_the_inert_pass_is_still_there():
    from autograd_lab_grader.reading import outputs
    from autograd_lab_grader.sandbox import sandbox

    nb = _inert(_notebook())
    code = nb.cells[3]
    assert report.MISCONCEPTION.findall(report._errors(code)) == ["gradient-shape"]
    assert report.PREDICTION.search(report._printed(code))[1] == "wrong"
    assert report.MISCONCEPTION.findall(report._printed(code)) == ["gradient-is-input"]
    assert any(o.is_error("CellTimeoutError") for o in outputs.of_cell(code))
    assert "a read or write outside its folder was refused" in sandbox.refusals(outputs.of_notebook(nb))
    assert "prediction" in nb.cells[0].metadata.tags
    # a terminal's sequences are text now; a traceback's colours stay colours
    assert "\\x1b]52;c;c2VjcmV0\\x07" in code.outputs[0].text
    assert "\x1b[31mred\x1b[0m\r\n" in code.outputs[0].text
    assert code.outputs[1].traceback[0] == "\x1b[31mCheckFailed\x1b[0m"


def test_a_stored_cell_passes_through_every_markdown_renderer_as_it_is():
    from nbconvert.filters.markdown_mistune import markdown2html_mistune
    from nbconvert.filters.strings import strip_files_prefix

    source = (f"A $x^2$ \\(y\\) and \\[z\\] [a](files/x) ![b](files/y) `c`\n\n{PAYLOAD}\n\n"
              "```\ncode $d$\n\nmore\n```\n\n- a\n- [b]\n")
    stored = page.stored(source)
    assert not set(stored) & set("$\\[\n\r")
    assert markdown2html_mistune(stored).strip() == stored
    assert strip_files_prefix(stored) == stored
    assert page.stored(stored) == stored
    assert "MATHPLACEHOLDER" not in stored and stored.count("<math") == 4
    # what is shown as written stays so, cleaned again or stored again
    shown = page.as_text(PAYLOAD * 10_000, "long")
    assert page.clean(shown) == shown and page.stored(page.stored(PAYLOAD * 10_000)) == \
        page.stored(PAYLOAD * 10_000) and "learner-text" in page.stored(PAYLOAD * 10_000)
    # and a page shows it as the page would have shown the Markdown itself
    assert page.safe_markdown(stored).replace("\n", "") == \
        page.safe_markdown(source).replace("\n", "")


# the pattern the math delimiters were found with before, quadratic in "\[" repeated
_MATH = re.compile(r"\$\$(?P<d1>.+?)\$\$|\\\[(?P<d2>.+?)\\\]|\\\((?P<i2>.+?)\\\)|"
                   r"(?<![\\$\w])\$(?!\s)(?P<i1>[^$\n]+?)(?<!\s)\$(?!\w)", re.DOTALL)


def test_the_math_scan_finds_what_the_quadratic_pattern_found():
    rng = random.Random(43)
    pieces = ["$", "$$", "\\", "[", "]", "(", ")", "a", " ", "\n", "é", "_", "1"]
    for _ in range(30_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        before = [(m.start(), m.end(), next(g for g in m.group("d1", "d2", "i2", "i1") if g),
                   m["d1"] is not None or m["d2"] is not None) for m in _MATH.finditer(text)]
        assert list(page._math_spans(text)) == before, text


def _cpu(fn, *args):
    """CPU seconds this process spent in fn(*args)."""
    started = time.process_time()
    fn(*args)
    return time.process_time() - started


def _answer(kind: str, size: int) -> str:
    unit = KINDS[kind]
    return (unit * (size // len(unit) + 1))[:size]


def _mixed(size: int) -> str:
    part = size // len(KINDS)
    return "\n\n".join(_answer(kind, part) for kind in KINDS)


def _written_notebook(text):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    return json.loads(nbformat.writes(nb))


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_pathological_written_answer_costs_time_linear_in_its_length(kind):
    def once(size):
        nb = _written_notebook(_answer(kind, size))
        spent = _cpu(_inert, nb)
        stored = _inert(nb).cells[0].source
        page._safe_markdown.kept.clear()
        return spent + _cpu(page.safe_markdown, stored)    # (what feedback and report do)

    small, large = once(100_000), once(1_000_000)
    assert large < 10, (kind, large)
    assert large <= 20 * max(small, 0.005), (kind, small, large)


@pytest.mark.parametrize("unit", ["(", "`", "x=", "u'", "\\"])
def test_a_pathological_code_cell_costs_a_page_time_linear_in_its_length(unit):
    """Pygments (the highlighting of the formgrader's and the feedback pages) takes 20 to 60 µs
    a character of such code, and more than linear time for some: a page highlights a
    bounded part of a learner's code, and shows the rest as it is."""
    def once(size):
        code = (unit * (size // len(unit) + 1))[:size]
        highlight = feedback.Highlight(pygments_lexer="ipython3")
        return _cpu(lambda: [highlight(code[i:i + 5_000]) for i in range(0, size, 5_000)])

    small, large = once(100_000), once(1_000_000)
    assert large < 10, (unit, large)
    assert large <= 20 * max(small, 0.005), (unit, small, large)


def test_a_notebook_of_many_long_answers_is_rendered_within_its_budget():
    """Forty cells of 20,000 characters of the most costly kinds: what is past the notebook's
    budget is shown as written, and the whole costs seconds."""
    costly = ["emphasis", "misnested tags", "math soup", "markup", "nested lists"]
    cells = [_answer(costly[i % len(costly)], page.MAX_MARKDOWN) for i in range(40)]
    nb = json.loads(nbformat.writes(nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell(c) for c in cells])))
    started = time.process_time()
    done = _inert(nb)
    again = _inert(json.loads(nbformat.writes(done)))        # (the feedback page's pass)
    spent = time.process_time() - started
    assert spent < 10, spent
    assert nbformat.writes(again) == nbformat.writes(done)
    shown_as_written = sum("learner-text" in c.source for c in done.cells)
    assert 0 < shown_as_written < len(cells)


def _graded_course(root, students):
    """lmsclass's course, `students` ({id: written answer}) handed in and graded."""
    course = Course(lc.make_course(root))
    for student, text in students.items():
        folder = course.submission(lc.A, student)
        folder.mkdir(parents=True)
        (folder / f"{lc.A}.ipynb").write_bytes(lc.notebook(course.root, lc.A, written=text))
    rows = grade.grade(course, lc.A, grade.Options(jobs=2))
    assert {r.status for r in rows} == {"needs manual grading"}, rows
    return course


def test_feedback_and_report_of_a_1_mb_written_answer_take_seconds(tmp_path):
    costs = {}
    for size in (100_000, 1_000_000):
        course = _graded_course(tmp_path / str(size), {"mallory": _mixed(size)})
        page._safe_markdown.kept.clear()
        costs[size] = (_cpu(lambda c=course: feedback.feedback(c, lc.A, partial=True)),
                       _cpu(lambda c=course: (report.report(c, lc.A),
                                              written.write_pages(c, lc.A))))
        shown = (course.root / "reports" / f"{lc.A}-written" / "explain.html").read_text()
        assert "learner-text" in shown and "&lt;img&lt;img" in shown    # as written, escaped
        assert "&lt;img&lt;img" in (course.directory("feedback") / "mallory" / lc.A
                                    / f"{lc.A}.html").read_text()
    for step, small, large in zip(("feedback", "report"), costs[100_000], costs[1_000_000]):
        assert large < 10, (step, large)
        assert large <= 20 * max(small, 0.05), (step, small, large)


def test_a_hand_grade_of_a_notebook_graded_before_it_was_inert_is_kept(tmp_path):
    """Graded by an older grader (the written answer stored as the learner wrote it), hand
    graded, then graded again by this one: the answer is the same, so is the hand grade."""
    answer = "The slope at x is $2x$: *the derivative*."
    course = _graded_course(tmp_path / "course", {"ada": answer})
    path = course.directory("autograded") / "ada" / lc.A / f"{lc.A}.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.metadata["nbgrader"].get("grade_id") == "explain")
    assert cell.source.startswith(page.STORED)
    cell.source = answer                                    # (as an older grader wrote it)
    nbformat.write(nb, path)
    with course.gradebook() as gb:
        g = gb.find_grade("explain", lc.A, lc.A, "ada")
        g.manual_score, g.needs_manual_grade = 1.0, False
        gb.db.commit()
    rows = grade.grade(course, lc.A, grade.Options(jobs=1, force=True))
    assert [(r.status, r.reason) for r in rows] == [("graded", "")], rows
    with course.gradebook() as gb:
        g = gb.find_grade("explain", lc.A, lc.A, "ada")
        assert (g.manual_score, g.needs_manual_grade) == (1.0, False)
