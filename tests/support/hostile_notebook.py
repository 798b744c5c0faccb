"""A graded lesson and a learner's notebook that tries every way a notebook has to run a script
where the instructor looks (docs/instructors/guarantees.md, "What a learner's bytes reach"):
the course is gradingcourse's exercise with a lesson code cell after its hidden test and a
written answer; the notebook puts a script in the written answer's Markdown, in the answer
cell's outputs (HTML, SVG, JavaScript, a widget, Markdown, LaTeX, an isolated iframe) and in
stored outputs of that lesson cell (which the grader copies from the learner's own run), and
in a raw cell, an attachment, tags, a stream's name and the notebook's metadata (nbgrader fails
a notebook whose cell id, execution count or output type nbformat's schema refuses: those are
tested on the inert pass alone, tests/grader/test_inert.py). Each payload, wherever it runs, marks the page (``data-pwned`` on the
root element), logs ``PWNED``, opens a dialog and asks the server for a terminal (``POST
/api/terminals?pwned=...`` with the page's XSRF token)."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import gradingcourse as gc

LESSON = "fixture"
DEMO = "print('the slope of x ** 2 at 3 is', 2 * 3)"
# what the learner wrote, each to be found on every page as text
MARKERS = ("WRITTEN-ANSWER-TEXT", "HTML-OUTPUT-TEXT", "STORED-OUTPUT-TEXT", "RAW-CELL-TEXT")


def payload(where: str) -> str:
    """JavaScript (no double quote: it goes into attributes) that leaves every trace."""
    return ("(function(w){document.documentElement.setAttribute('data-pwned',w);"
            "console.log('PWNED '+w);"
            "var x=(document.cookie.match(/_xsrf=([^;]*)/)||[])[1]||'';"
            "fetch('/api/terminals?pwned='+w,{method:'POST',headers:{'X-XSRFToken':x}});"
            f"alert('PWNED '+w)}})('{where}')")


def _meta(grade_id, **kw):
    return gc._meta(grade_id, **kw)


def make_course(root: Path) -> Path:
    """The lesson: intro, setup, an exercise with a hidden test, a lesson cell after it, a
    written answer (graded by hand)."""
    from autograd_lab_grader.course import Course

    root.mkdir(parents=True)
    (root / "nbgrader_config.py").write_text(gc.CONFIG.format(timeout=10))
    source = root / "solutions" / LESSON
    source.mkdir(parents=True)
    (source / "fixturechecks.py").write_text(gc.CHECKS)
    cells = [
        new_markdown_cell("# A fixture lesson\n\nThe slope of $x^2$ is $2x$.",
                          metadata=_meta("intro", locked=True)),
        new_code_cell("import autograd_lab as torch", metadata=_meta("setup", locked=True)),
        new_code_cell(gc.SOLUTIONS["answer_square"], metadata=_meta("answer_square",
                                                                     solution=True)),
        new_code_cell(gc.TESTS["test_square"], metadata=_meta("test_square", grade=True,
                                                               locked=True, points=2)),
        new_code_cell(DEMO, metadata=_meta("demo", locked=True)),
        new_markdown_cell("### BEGIN SOLUTION\nThe slope at x.\n### END SOLUTION",
                          metadata=_meta("explain", grade=True, solution=True, points=1)),
    ]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, source / f"{LESSON}.ipynb")
    result = Course(root).api().generate_assignment(LESSON)
    assert result["success"], result.get("log")
    return root


def _img(where):
    return f'<img src=x onerror="{payload(where)}">'


def _svg(where):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9" '
            f'onload="{payload(where + "-onload")}"><script>{payload(where)}</script></svg>')


def _answer_code() -> str:
    """The answer cell: right, and showing every kind of output (run by the grader)."""
    html = f"<b>HTML-OUTPUT-TEXT</b>{_img('html-output')}<script>{payload('html-script')}</script>"
    widget = {"model_id": "0123", "version_major": 2, "version_minor": 0}
    lines = [
        "from IPython.display import display, HTML, Javascript, Markdown, SVG, Latex",
        f"display(HTML({html!r}))",
        f"display(HTML({_img('isolated')!r}), metadata={{'text/html': {{'isolated': True}}}})",
        f"display(Javascript({payload('javascript')!r}))",
        f"display(SVG({_svg('svg-output')!r}))",
        f"display(Markdown({_img('markdown-output')!r}))",
        "display(Latex(" + repr(r"$\href{javascript:alert(1)}{click}$") + "))",
        f"display({{'application/vnd.jupyter.widget-view+json': {widget!r}, "
        f"'text/plain': 'a widget'}}, raw=True)",
        "def square(x):",
        "    return x * x",
    ]
    return "\n".join(lines)


def _stored_outputs() -> list[dict]:
    """What the lesson cell after the hidden test showed in the learner's own run (as they
    handed it in: the grader shows it instead of its own run's)."""
    html = f"<i>STORED-OUTPUT-TEXT</i>{_img('stored-html')}"
    svg = _svg("stored-svg")
    return [
        {"output_type": "stream", "name": f'stdout"><img src=x onerror="{payload("stream-name")}">',
         "text": "STORED-OUTPUT-TEXT \x1b]0;retitled\x07 \x1b[31mred\x1b[0m\n"},
        {"output_type": "execute_result", "execution_count": 5,
         "data": {"text/html": html, "text/plain": "x"}, "metadata": {}},
        {"output_type": "display_data", "data": {"application/javascript": payload("stored-js")},
         "metadata": {}},
        {"output_type": "display_data", "data": {"image/svg+xml": svg}, "metadata": {}},
        {"output_type": "display_data", "data": {"text/html": _img("stored-isolated")},
         "metadata": {"text/html": {"isolated": True}}},
        {"output_type": "display_data", "data": {
            "application/vnd.jupyter.widget-view+json": {"model_id": "1", "version_major": 2,
                                                         "version_minor": 0}}, "metadata": {}},
        {"output_type": "display_data", "data": {"text/markdown": _img("stored-markdown")},
         "metadata": {}},
    ]


def written_answer() -> str:
    return "\n\n".join([
        "WRITTEN-ANSWER-TEXT: the slope at x is $2x$.",
        _img("written-img"),
        f"<script>{payload('written-script')}</script>",
        f"[a link](javascript:{payload('written-link')}) and "
        f"<a href=\"javascript:{payload('written-a')}\">another</a>",
        _svg("written-svg"),
        "![drawn](attachment:drawing.svg)",
        f'<span class="tex2jax_process">\\(\\href{{javascript:{payload("mathjax")}}}{{x}}\\)</span>',
        '<div id="answer_square" class="tabbable score">a score box of my own</div>',
    ])


def notebook(root: Path) -> dict:
    """The learner's notebook, as JSON (nbformat would refuse some of it)."""
    nb = json.loads((root / "notebooks" / LESSON / f"{LESSON}.ipynb").read_text())
    svg = base64.b64encode(_svg("attachment").encode()).decode()
    for cell in nb["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id == "answer_square":
            cell["source"] = _answer_code()
        elif grade_id == "demo":
            cell["outputs"] = _stored_outputs()
            cell["execution_count"] = 5
        elif grade_id == "explain":
            cell["source"] = written_answer()
            cell["attachments"] = {"drawing.svg": {"image/svg+xml": svg}}
            # (nbformat's schema allows no comma in a tag)
            cell["metadata"]["tags"] = ['x" onmouseover="document.documentElement.dataset.'
                                        'pwned=1"><img src=x onerror="alert(1)">', "prediction"]
    nb["cells"].append({"cell_type": "raw", "id": "raw-cell", "metadata": {},
                        "source": f"RAW-CELL-TEXT {_img('raw-cell')}<script>{payload('raw')}"
                                  "</script>"})
    nb["cells"].append({"cell_type": "markdown", "id": "learner-cell", "metadata": {},
                        "source": f"<iframe srcdoc=\"<script>{payload('iframe')}</script>\">"
                                  "</iframe>"})
    nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {
        "state": {}, "version_major": 2, "version_minor": 0}}
    nb["metadata"]["title"] = f"</title><script>{payload('title')}</script>"
    return nb


def submit(root: Path, student: str) -> Path:
    folder = root / "submitted" / student / LESSON
    folder.mkdir(parents=True)
    path = folder / f"{LESSON}.ipynb"
    path.write_text(json.dumps(notebook(root)))
    return path
