"""A feedback page made from a hostile learner's notebook, opened in real headless Chromium
(Debian's, through Playwright): the learner's <script>, onerror handlers, JavaScript output,
SVG with a script, Markdown output and written answer holding HTML all run nothing, and the
page fetches nothing, neither from the internet nor from a server of ours on loopback that
every reference in the notebook points at. A real lesson's feedback page, with a wrong answer's
traceback and the lesson's drawings: axe-core finds nothing serious or critical on it, and
every drawing's alt text is the graph in words, naming its nodes."""
import base64
import http.server
import importlib
import re
import threading
import xml.etree.ElementTree as ET

import pytest

import lmsclass as lc
from autograd_lab_grader.steps import feedback, grade
from autograd_lab_grader.course import Course

import axe
import course as lessons
import lab_browser


class _Hits(http.server.BaseHTTPRequestHandler):
    hits: list = []

    def do_GET(self):
        _Hits.hits.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Hits)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()


PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
       "rkJggg==")


def _hostile(base):
    """(the answer cell's code, the written answer, the outputs that code shows): every way to
    put a script or a fetch on the page, each setting the title to RAN-<where> if it ever
    runs."""
    ran = "document.title='RAN-{}'".format
    html = (f"<script>{ran('html-script')}; fetch('{base}/fetch')</script>"
            f"<img src=x onerror=\"{ran('html-onerror')}\">"
            f"<img src='{base}/remote.png'><iframe src='{base}/frame'></iframe>"
            f"<link rel=stylesheet href='{base}/style.css'>"
            f"<div style=\"background:url({base}/bg.png)\">styled</div><b>bold from html</b>")
    markdown = f"<img src=y onerror=\"{ran('markdown')}\"> **marked** $y^3$"
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" '
           f'onload="{ran("svg-onload")}"><script>{ran("svg-script")}</script>'
           f'<image href="{base}/svg.png"/></svg>')
    answer = "\n".join([
        "from IPython.display import display, HTML, Javascript, Markdown, SVG, Latex",
        f"display(HTML({html!r}))",
        f"display(Javascript({ran('javascript')!r}))",
        f"display(Markdown({markdown!r}))",
        f"display(SVG({svg!r}))",
        "display(Latex(" + repr("$\\frac{a}{b}$") + "))",
        # (a drawing whose words try to leave their alt attribute, and go on and on)
        "display({'image/svg+xml': '<svg xmlns=\"http://www.w3.org/2000/svg\"/>', 'text/plain': "
        f"{chr(34) + ran('alt') + chr(34)!r} + ' onerror=' + {ran('alt-onerror')!r} + '>' "
        "+ 'y' * 100000}, raw=True)",
        # (a PNG, 1 x 1: an image the page shows, with alt text as every image has)
        "import base64; from IPython.display import Image",
        f"display(Image(data=base64.b64decode({PNG!r})))",
        f"print({'<script>' + ran('printed') + '</script>'!r})",
        "def square(x):",
        "    return x * x"])
    written = (f"<script>{ran('written')}</script>"
               f"<img src=z onerror=\"{ran('written-onerror')}\">"
               f"<iframe src='{base}/written-frame'></iframe>"
               f"<img src='{base}/written.png'> The slope is $2x$.")
    shown = [{"text/html": html}, {"application/javascript": ran("javascript")},
             {"text/markdown": markdown}, {"image/svg+xml": svg},
             {"text/latex": "$\\frac{a}{b}$"}, {"image/png": PNG}]
    outputs = [{"output_type": "display_data", "metadata": {},
                "data": {"text/plain": "<IPython.core.display object>", **data}}
               for data in shown]
    outputs.append({"output_type": "display_data", "metadata": {}, "data": {
        "image/svg+xml": '<svg xmlns="http://www.w3.org/2000/svg"/>',
        "text/plain": f'"{ran("alt")}" onerror={ran("alt-onerror")}>' + "y" * 100000}})
    outputs.append({"output_type": "stream", "name": "stdout",
                    "text": f"<script>{ran('printed')}</script>\n"})
    return answer, written, outputs


def _tags(html):
    from html.parser import HTMLParser

    found = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, attrs))

    Parser().feed(html)
    return found


@pytest.mark.parametrize("graded_by", ["this grader", "an older grader"])
def test_a_feedback_page_runs_no_learner_code_and_fetches_nothing(tmp_path, server, chromium,
                                                                  monkeypatch, graded_by):
    """Graded by this grader, the autograded notebook is inert already (reading/inert.py); one
    an older grader wrote holds the learner's outputs and Markdown as they were: the page is
    made safe from either."""
    import nbformat

    course = Course(lc.make_course(tmp_path / "course"))
    answer, written, shown = _hostile(server)
    nb = nbformat.reads(lc.notebook(course.root, lc.A, written=written).decode(), as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "answer_square":
            cell.source = answer
    folder = course.submission(lc.A, "mallory")
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{lc.A}.ipynb")
    rows = grade.grade(course, lc.A, grade.Options(jobs=1))
    assert [(r.student, r.status) for r in rows] == [("mallory", "needs manual grading")]
    graded = course.directory("autograded") / "mallory" / lc.A / f"{lc.A}.ipynb"
    if graded_by == "an older grader":
        nb = nbformat.read(graded, as_version=4)
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id == "answer_square":
                cell.outputs = [nbformat.from_dict(o) for o in shown]
            elif grade_id == "explain":
                cell.source = written
        nbformat.write(nb, graded)

    written_pages = feedback.feedback(course, lc.A, partial=True)
    page = written_pages.pages[0]
    html = page.read_text()
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    tags = _tags(html)     # (the learner's code is on the page too, as escaped text)
    assert not [t for t, _ in tags if t in ("script", "iframe", "link", "object", "embed")]
    assert not [(t, a) for t, attrs in tags for a, _ in attrs
                if a.startswith("on") or a in ("style", "srcdoc")]
    assert not [v for _, attrs in tags for a, v in attrs
                if a in ("src", "href") and v and v.startswith(("http", "//"))
                and not (a == "href" and v.startswith("http"))]
    assert "mathjax" not in html.lower()
    images = [dict(attrs) for t, attrs in tags if t == "img"]
    assert f"data:image/png;base64,{PNG}" in [i.get("src") for i in images]
    assert all(i.get("alt") for i in images), images        # every image says what it is
    from autograd_lab_grader.reading.page import ALT_CHARS
    assert max(len(i["alt"]) for i in images) <= ALT_CHARS     # in words a page can hold
    assert any(i["alt"].startswith('"document.title') for i in images)     # as text
    # the page is what nbconvert's own HTMLExporter makes of it, but for its last pass (a parse
    # and print with BeautifulSoup, which changes nothing here: every image has alt text)
    from bs4 import BeautifulSoup
    from nbconvert.exporters import HTMLExporter
    monkeypatch.setattr(feedback.FeedbackExporter, "from_notebook_node",
                        HTMLExporter.from_notebook_node)
    assert feedback.feedback(course, lc.A, partial=True).pages == [page]
    assert page.read_text() == str(BeautifulSoup(html, features="html.parser"))
    page.write_text(html)

    requests, console = [], []
    context = chromium.new_context()
    tab = context.new_page()
    tab.on("request", lambda r: requests.append(r.url))
    tab.on("console", lambda m: console.append(m.text))
    tab.goto(page.as_uri())
    tab.wait_for_load_state("load")
    tab.wait_for_timeout(1000)          # time for a late handler or fetch to show itself
    title = tab.title()
    lab_browser.ARTIFACTS.mkdir(exist_ok=True)
    tab.screenshot(path=str(lab_browser.ARTIFACTS / "feedback-hostile.png"), full_page=True)
    shown = tab.inner_text("body")
    maths = tab.locator("math").count()
    context.close()

    assert title == lc.A, title                      # no script set it
    assert not _Hits.hits, _Hits.hits                # nothing reached our loopback server
    fetched = [url for url in requests if not url.startswith(("data:", page.as_uri()))]
    assert fetched == [], fetched                    # nor tried anything else
    assert "RAN-" not in "\n".join(console) or all("Refused" in m for m in console)
    # what a learner should see is still there: text, the bold, the math, the answers
    assert "bold from html" in shown and "marked" in shown and "The slope is" in shown
    assert maths >= 3                                # $y^3$, \frac{a}{b}, $2x$ (and the lesson's)
    assert "not graded yet" in shown


def test_what_the_pages_keep_of_learners_texts_is_bounded():
    """Cleaned texts are kept for the next page (page.py), but never more than the bound,
    whatever learners write: a long text is not kept, and 1,024 texts at most."""
    from autograd_lab_grader.reading import page

    for kept_fn in (page._clean, page._safe_markdown):
        kept_fn.kept.clear()
        huge = "<p>" + "x" * 40_000 + "</p>"
        assert kept_fn(huge) == kept_fn.__wrapped__(huge)
        assert huge not in kept_fn.kept
        for i in range(1_100):
            kept_fn(f"<b>learner {i}</b> <script>alert({i})</script>")
        assert len(kept_fn.kept) == 1_024
        assert "<b>learner 1099</b> <script>alert(1099)</script>" in kept_fn.kept
        assert "<b>learner 0</b> <script>alert(0)</script>" not in kept_fn.kept
        again = "<b>learner 1099</b> <script>alert(1099)</script>"
        assert kept_fn(again) == kept_fn.__wrapped__(again) and "script" not in page.clean(again)


def test_highlighted_code_is_nbconverts_and_kept_as_learners_texts_are():
    import html

    from nbconvert.filters.highlight import Highlight2HTML

    plain = Highlight2HTML(pygments_lexer="ipython3")
    kept = feedback.Highlight(pygments_lexer="ipython3")
    code = "x = torch.tensor(2.0, requires_grad=True)\n(x ** 2).backward()"
    assert kept(code) == plain(code)
    assert kept(code) is kept(code)                             # made once
    assert kept(code, "python") == plain(code, "python") != kept(code)
    magics = {"magics_language": "bash"}
    assert kept(code, metadata=magics) == plain(code, metadata=magics) != kept(code)
    long = "y = 1\n" * 1500                                     # a learner's long cell
    assert kept(long) == plain(long) and kept(long) is not kept(long)
    # past the bound, a cell is shown as it is (escaped), and past a page's, every cell after
    longer = "<y> = 1\n" * (feedback.MAX_HIGHLIGHT // 8 + 1)
    assert kept(longer) == f'<div class="highlight"><pre>{html.escape(longer)}</pre></div>'
    page = feedback.Highlight(pygments_lexer="ipython3")
    shown = [page(long) for _ in range(feedback.MAX_PAGE_HIGHLIGHT // len(long) + 2)]
    assert shown[0] == plain(long) and shown[-1] != plain(long) and "<pre>y = 1" in shown[-1]
    # (bounded as the pages' other texts are: test_what_the_pages_keep_of_learners_texts_...)
    assert (code, "ipython3", None) in feedback._highlighted.kept
    assert not any(key[0] == long for key in feedback._highlighted.kept)


def test_a_learners_language_names_are_kept_short_and_never_break_a_page():
    """A notebook's and a cell's highlighting language are the learner's to set: the page keeps
    short strings only, so nbconvert's highlighting cannot fail on them and the memo that keys on
    them stays bounded (what nbconvert alone does with them: it raises)."""
    import nbformat
    from nbconvert.exporters import HTMLExporter

    from autograd_lab_grader.reading import inert

    odd = [["bash"], {"a": 1}, "y" * 100_000, 7]
    for value in odd:
        nb = nbformat.v4.new_notebook(cells=[
            nbformat.v4.new_code_cell("print(1)", metadata={"magics_language": value}),
            nbformat.v4.new_code_cell("%%bash\necho", metadata={"magics_language": "bash"})])
        # (nbformat's schema makes the notebook's lexer a string, of any length; a cell's
        #  metadata is free)
        lexer = value if isinstance(value, str) else "ipython3"
        nb.metadata["language_info"] = {"name": "python", "pygments_lexer": lexer}
        if not isinstance(value, str):
            with pytest.raises((AttributeError, TypeError)):
                HTMLExporter(template_name="classic").from_notebook_node(nb)
        nb, _ = inert.InertNotebook().preprocess(nb, {})
        assert "magics_language" not in nb.cells[0].metadata
        assert nb.cells[1].metadata["magics_language"] == "bash"
        assert nb.metadata["language_info"] == (
            {"name": "python"} if lexer == value else {"name": "python", "pygments_lexer": lexer})
        html, _ = feedback.FeedbackExporter(template_name="classic").from_notebook_node(nb)
        assert "print" in html
    assert all(sum(len(part) for part in key if part) <= 32768
               for key in feedback._highlighted.kept)


def test_a_lessons_feedback_page_is_accessible_and_says_its_drawings_in_words(tmp_path, chromium):
    """Lesson 00 graded for a learner who answered nothing (IPython's coloured tracebacks of
    NotImplementedError) and one whose answer is wrong (the check's failure): each page shows
    its tracebacks and the lesson's two drawings. axe-core (WCAG 2.1 A and AA, best practices)
    finds nothing serious or critical; each drawing's alt names every node it draws."""
    import nbformat
    from bs4 import BeautifulSoup
    lesson = "00_start_here"
    wrong = next(w for w in importlib.import_module(f"submissions.{lesson}").WRONG
                 if not w.predicted)
    lessons.grade_class(lesson, {
        "blank": nbformat.read(lessons.release_path(lesson), as_version=4),
        "wrong": lessons.submission(lesson, wrong.answers)}, tmp_path)
    context = chromium.new_context(viewport={"width": 1280, "height": 1000})
    tab = context.new_page()
    try:
        for learner in ("blank", "wrong"):
            page = tmp_path / "feedback" / learner / lesson / f"{lesson}.html"
            soup = BeautifulSoup(page.read_text(), "html.parser")
            drawings = 0
            for img in soup.select("img"):
                head, _, data = img["src"].partition(",")
                if head != "data:image/svg+xml;base64":
                    continue
                svg = ET.fromstring(base64.b64decode(data))
                labels = {t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")}
                nodes = {label for label in labels
                         if re.fullmatch(r"\w+Backward\d*|AccumulateGrad", label or "")}
                assert nodes, labels
                assert img["alt"].startswith("The backward graph of ")
                for node in nodes:
                    assert node in img["alt"], (node, img["alt"])
                drawings += 1
            assert drawings == 2, learner
            assert soup.select(".output_error"), f"{learner}: no traceback on the page"
            tab.goto(page.as_uri())
            tab.wait_for_load_state("load")
            found = axe.serious(tab)
            assert found == [], f"{learner}:\n{axe.report(found)}"
    finally:
        context.close()
