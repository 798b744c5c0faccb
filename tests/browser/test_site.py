"""The course's site (docs/, `./run docs`), checked like code: built once for the module, with
warnings as errors, every lesson of notebooks/ run as released; its links and anchors resolve,
each lesson's "next lesson" link included; every picture a lesson shows has its text
alternative (a drawing's names its nodes); headless Chromium shows a lesson's drawing and
typeset math, finds its Binder, Colab and download buttons, and asks no host but the local
server; axe-core finds nothing serious or critical on any page; no file of it holds a line of
a solution or a hidden test; and the learners' repository that `autograd-lab student-repo`
writes builds its own.

Sphinx runs in this process (sphinx.cmd.build), so the kernels that run the lessons talk over
Unix sockets as every kernel of the suite does (tests/conftest.py). Both builds share one
jupyter-cache: the learners' site runs no lesson the course's build has run.
"""
import base64
import functools
import html.parser
import http.server
import json
import os
import re
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import nbformat
import pytest
from typer.testing import CliRunner

import axe

from autograd_lab_grader.commands.cli import app

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LESSONS = sorted(p.name for p in (ROOT / "notebooks").iterdir()
                 if (p / f"{p.name}.ipynb").is_file())
# (sphinx-book-theme 1.4 uses an API Sphinx 11 drops: not this course's to fix)
pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning:sphinx_book_theme")
REPO = "learners/class-repo"           # the learners' repository the site is built for
LOCAL = {"127.0.0.1", "localhost"}
ARTIFACTS = ROOT / "test-artifacts"


def build(src, out, cache, environ):
    """sphinx-build -W into out (html/ and doctrees/ under it); (status, warnings, seconds)."""
    from sphinx.cmd.build import build_main
    saved = dict(os.environ)
    os.environ.update(environ)
    start = time.monotonic()
    try:
        status = build_main(["-W", "--keep-going", "-q", "-N", "-b", "html",
                             "-d", str(out / "doctrees"), "-w", str(out / "warnings.txt"),
                             "-D", f"nb_execution_cache_path={cache}",
                             str(src), str(out / "html")])
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return status, (out / "warnings.txt").read_text(), time.monotonic() - start


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("jupyter-cache") / "cache"


@pytest.fixture(scope="module")
def site(tmp_path_factory, cache):
    if not (DOCS / "node_modules" / "mathjax" / "es5" / "tex-mml-chtml.js").is_file():
        pytest.fail("no MathJax in docs/node_modules: scripts/setup.sh installs it (npm)")
    out = tmp_path_factory.mktemp("site")
    status, warnings, seconds = build(DOCS, out, cache, {"AUTOGRAD_LAB_REPO": REPO})
    print(f"course site built in {seconds:.1f} s")
    return {"status": status, "warnings": warnings, "html": out / "html"}


def page(lesson):
    return f"notebooks/{lesson}/{lesson}.html"


class Page(html.parser.HTMLParser):
    """What a page links to (tag, attribute, value), the ids it defines, and its text."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.links, self.ids, self.chunks = [], set(), []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("id", "name") if tag == "a" else ("id",):
            if attrs.get(name):
                self.ids.add(attrs[name])
        for name in ("href", "src"):
            if attrs.get(name) is not None:
                self.links.append((tag, name, attrs[name]))

    def handle_data(self, data):
        self.chunks.append(data)

    @property
    def text(self):
        return "".join(self.chunks)


@functools.cache
def parsed(path):
    return Page(Path(path).read_text(encoding="utf-8"))


def test_the_site_builds_with_warnings_as_errors(site):
    assert site["status"] == 0 and site["warnings"] == "", site["warnings"]
    for lesson in LESSONS:
        assert (site["html"] / page(lesson)).is_file(), lesson
    from bs4 import BeautifulSoup
    home = BeautifulSoup((site["html"] / "index.html").read_text(), "html.parser")
    listed = [a["href"] for a in home.select("main .toctree-wrapper a")]
    assert listed[:len(LESSONS)] == [page(lesson) for lesson in LESSONS]
    # the guides README links to, for each reader, are pages of the site (tests/tooling/test_readme.py)
    for guide in ("learners", "instructors", "maintainers", "measurements"):
        pages = sorted(p.relative_to(DOCS).with_suffix(".html").as_posix()
                       for p in (DOCS / guide).glob("*.md"))
        assert pages and set(pages) <= set(listed), guide


def lesson_cells(lesson):
    return nbformat.read(ROOT / "notebooks" / lesson / f"{lesson}.ipynb", as_version=4).cells


def test_answer_and_test_cells_show_no_output_and_no_traceback_but_the_lessons(site):
    """Released answers raise NotImplementedError and their checks fail, by design: those cells
    show their code and no output. The only tracebacks are of cells tagged raises-exception;
    a cell that failed for want of an answer above it says so instead."""
    from bs4 import BeautifulSoup
    for lesson in LESSONS:
        soup = BeautifulSoup((site["html"] / page(lesson)).read_text(), "html.parser")
        cells = soup.select("div.cell")
        graded = [c for c in lesson_cells(lesson) if c.cell_type == "code" and (
            c.metadata.get("nbgrader", {}).get("solution")
            or c.metadata.get("nbgrader", {}).get("grade"))]
        hidden = [c for c in cells if "tag_remove-output" in c["class"]]
        assert graded and len(hidden) == len(graded), lesson
        for cell in hidden:
            assert not cell.select(".cell_output"), (lesson, cell.get_text()[:300])
        for cell in cells:
            if "tag_raises-exception" in cell["class"]:
                continue
            shown = " ".join(o.get_text() for o in cell.select(".cell_output"))
            assert not cell.select(".traceback") and not re.search(
                r"Traceback|NotImplementedError|NameError", shown), (lesson, cell.get_text()[:300])
    lesson01 = parsed(site["html"] / page(LESSONS[1])).text
    assert "RuntimeError: element 0 of tensors does not require grad" in lesson01
    noted = sum(parsed(site["html"] / page(lesson)).text.count("This cell runs once the exercises")
                for lesson in LESSONS)
    assert noted >= 1


def data_url(src):
    """(MIME type, text) of a data: URL (base64 or not)."""
    head, _, data = src.partition(",")
    mime = head[len("data:"):].split(";")[0]
    return mime, (base64.b64decode(data).decode(errors="replace") if head.endswith(";base64")
                  else unquote(data))


OP = re.compile(r"\w+Backward\d*|AccumulateGrad")


def test_lessons_ran_and_drew_their_graphs_as_svg(site):
    """Each viz.draw cell shows graphviz's SVG (or, where it draws an answer still to be written,
    the note that says so)."""
    from bs4 import BeautifulSoup
    drawings = 0
    for lesson in LESSONS:
        soup = BeautifulSoup((site["html"] / page(lesson)).read_text(), "html.parser")
        for cell in soup.select("div.cell"):
            if cell.select_one(".cell_input").get_text().lstrip().startswith("viz.draw("):
                assert cell.select(".cell_output img[src^='data:image/svg+xml']") or \
                    cell.select(".needs-answer"), (lesson, cell.get_text()[:200])
        images = [data_url(img["src"]) for img in soup.select(".cell_output img")]
        svgs = [text for mime, text in images if mime == "image/svg+xml"]
        drawings += len(svgs)
        for text in svgs:
            assert "Generated by graphviz" in text, lesson
    assert drawings >= len(LESSONS)


def test_every_picture_of_a_lesson_says_what_it_shows(site):
    """The alt of every picture a lesson shows is its text alternative: a drawing's is the graph
    in words, naming every node the SVG draws (and the SVG titles and describes itself the same
    way); a plot's, a sentence of what it plots. No alt is a file's name."""
    from bs4 import BeautifulSoup
    drawings = plots = 0
    for lesson in LESSONS:
        soup = BeautifulSoup((site["html"] / page(lesson)).read_text(), "html.parser")
        for img in soup.select(".cell_output img"):
            mime, text = data_url(img["src"])
            alt = img.get("alt", "")
            assert alt and not re.search(r"\.(svg|png)$", alt), (lesson, alt)
            if mime == "image/svg+xml":
                svg = ET.fromstring(text)
                labels = {t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")}
                nodes = {label for label in labels if OP.fullmatch(label or "")}
                assert nodes and all(node in alt for node in nodes), (lesson, nodes, alt)
                assert alt.startswith("The backward graph of ")
                assert svg.find("{http://www.w3.org/2000/svg}desc").text == alt
                drawings += 1
            else:
                assert mime == "image/png" and alt.startswith("A plot "), (lesson, alt)
                plots += 1
    assert drawings >= len(LESSONS) and plots >= 1


def test_the_install_cell_is_not_on_the_site(site):
    """The lessons' first code cell installs the engine in Colab: the site, whose lessons run
    where it is installed, leaves it out."""
    for lesson in LESSONS:
        text = parsed(site["html"] / page(lesson)).text
        assert "find_spec" not in text and "autograd-class" not in text, lesson


def internal(path, value, html_root):
    """The file and fragment a relative link points at (None for another site's)."""
    parts = urlsplit(value)
    if parts.scheme or parts.netloc:
        return None
    target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
    if target.is_dir():
        target = target / "index.html"
    return target, parts.fragment


def test_every_internal_link_and_anchor_resolves_and_nothing_is_loaded_from_elsewhere(site):
    """Every href and src of every page names a file of the site (and an id there, for a
    fragment); another site's address appears only as a link to follow (an <a>), never as
    something a page loads (script, stylesheet, image, frame); no stylesheet or script loads
    a font or a file from another host."""
    root = site["html"].resolve()
    pages = sorted(p for p in root.rglob("*.html") if "_static" not in p.parts)
    assert len(pages) > len(LESSONS)
    broken, loaded_from_elsewhere, checked = [], [], 0
    for path in pages:
        for tag, _attr, value in parsed(path).links:
            if value.startswith(("mailto:", "javascript:", "data:")) or value in ("", "#"):
                continue                            # (a data: picture is in the page itself)
            found = internal(path, value, root)
            if found is None:
                if tag != "a":
                    loaded_from_elsewhere.append((path.relative_to(root), tag, value))
                continue
            target, fragment = found
            checked += 1
            if not target.is_file() or root not in target.parents:
                broken.append((path.relative_to(root), value))
            elif fragment and target.suffix == ".html" and fragment not in parsed(target).ids:
                broken.append((path.relative_to(root), value))
    assert checked > 500 and broken == [] and loaded_from_elsewhere == []
    for static in list(root.rglob("*.css")):
        assert not re.search(r"url\(\s*['\"]?(https?:)?//", static.read_text()), static


def test_each_lesson_links_to_the_next_one(site):
    """The notebooks' own "next lesson" links (../NN_name/NN_name.ipynb) are links between the
    lessons' pages."""
    for lesson in LESSONS:
        sources = "".join(c.source for c in lesson_cells(lesson) if c.cell_type == "markdown")
        named = re.findall(r"\]\(\.\./([0-9]{2}_[a-z0-9_]+)/\1\.ipynb\)", sources)
        assert named, f"{lesson} links to no lesson"
        hrefs = {v for t, a, v in parsed(site["html"] / page(lesson)).links if t == "a"}
        for other in named:
            assert f"../{other}/{other}.html" in hrefs, (lesson, other)


def test_every_lesson_has_a_binder_colab_and_download_button(site):
    """Binder and Colab open the lesson's notebook in the learners' repository, at the path
    `autograd-lab student-repo` gives it; the download is the released notebook itself."""
    for lesson in LESSONS:
        path = f"notebooks/{lesson}/{lesson}.ipynb"
        hrefs = [v for t, a, v in parsed(site["html"] / page(lesson)).links if t == "a"]
        assert f"https://mybinder.org/v2/gh/{REPO}/HEAD?urlpath=lab/tree/{path}" in hrefs
        assert f"https://colab.research.google.com/github/{REPO}/blob/HEAD/{path}" in hrefs
        assert f"../../_sources/{path}" in hrefs
        assert (site["html"] / "_sources" / path).read_bytes() == (ROOT / path).read_bytes()


# --- no solution, no hidden test --------------------------------------------------------

def plain(text):
    """Letters and digits alone, lower case: a line of code or prose compares the same as
    written, highlighted (HTML spans), in JSON and as rendered Markdown."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def secrets():
    """{plain line: where} for every line of a solution (the code between BEGIN and END
    SOLUTION, a model answer to an explanation) and of a hidden test, long enough to be telling
    and not what learners get anyway: a solution may repeat a line of a released lesson, or
    quote the engine (an error message its code raises, that a lesson's output shows)."""
    marker = re.compile(r"^\s*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$")
    handed_out = [c.source for lesson in LESSONS for c in lesson_cells(lesson)]
    handed_out += [p.read_text() for p in (ROOT / "autograd_lab").rglob("*.py")
                   if "grading" not in p.parts]
    released = plain("\n".join(handed_out))
    found = {}
    for lesson in LESSONS:
        solution = nbformat.read(ROOT / "solutions" / lesson / f"{lesson}.ipynb", as_version=4)
        for cell in solution.cells:
            meta = cell.metadata.get("nbgrader", {})
            lines, inside = [], cell.cell_type == "markdown" and meta.get("solution")
            for line in cell.source.splitlines():
                if marker.match(line):
                    inside = marker.match(line)[1] == "BEGIN"
                elif inside:
                    lines.append(line)
            for line in lines:
                key = plain(line)
                if len(key) >= 16 and key not in released:
                    found[key] = f"{lesson} {meta.get('grade_id')}: {line.strip()}"
    return found


def site_text(path):
    if path.suffix in (".html", ".htm"):
        return parsed(path).text
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text())
        return "\n".join("".join(c["source"]) + json.dumps(c.get("outputs", []))
                         for c in nb["cells"])
    return path.read_text(errors="ignore")


BINARY = {".png", ".jpg", ".gif", ".ico", ".woff", ".woff2", ".ttf", ".eot", ".inv", ".pickle"}


def test_no_file_of_the_site_holds_a_solution_or_a_hidden_test(site):
    hidden = secrets()
    assert len(hidden) > 50                        # the lessons' solutions and hidden tests
    # (what finds them: a solution line, highlighted as the site shows code, is found)
    import pygments
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer
    some = next(v.split(": ", 1)[1] for v in hidden.values() if "(" in v)
    shown = pygments.highlight(some, PythonLexer(), HtmlFormatter())
    assert plain(some) in plain(Page(shown).text) and "<span" in shown
    leaks = []
    for path in sorted(site["html"].rglob("*")):
        if not path.is_file() or path.suffix in BINARY or "mathjax" in path.parts:
            continue
        text = plain(site_text(path))
        leaks += [(str(path.relative_to(site["html"])), where)
                  for key, where in hidden.items() if key in text]
        assert not re.search(r"(BEGIN|END) (SOLUTION|HIDDEN TESTS)", site_text(path)), path
    assert leaks == []


def test_no_page_names_a_folder_of_the_machine_that_built_it(site):
    """The tracebacks and warnings the lessons show on purpose name the files they come from:
    no file of the site (its pages, their sources, the search index) names the checkout, its
    Python's folders, a kernel's temporary file of a cell or the home folder of the machine
    that built it; the engine's files are named as a learner's copy names them."""
    import sys
    import sysconfig
    home = os.path.expanduser("~").rstrip("/") + "/"
    folders = {str(ROOT) + "/", str(ROOT.resolve()) + "/", sys.prefix + "/",
               sysconfig.get_paths()["purelib"] + "/"} | ({home} - {"/"})
    kernel_file = re.compile(r"/ipykernel_\d+/\d+\.py")
    found, engine_files = [], 0
    for path in sorted(site["html"].rglob("*")):
        if not path.is_file() or path.suffix in BINARY or "mathjax" in path.parts:
            continue
        where = str(path.relative_to(site["html"]))
        for text in {site_text(path), path.read_text(errors="ignore")}:   # (and attributes)
            found += [(where, folder) for folder in folders if folder in text]
            found += [(where, m[0]) for m in kernel_file.finditer(text)]
        if path.suffix == ".html":
            engine_files += len(re.findall(r"File autograd_lab/_?\w+/\w+\.py:\d+",
                                           site_text(path)))
    assert found == []
    # (what the rewriting keeps: the lessons' tracebacks through the engine, named as in a
    #  learner's copy of the course)
    assert engine_files >= 5


def test_a_step_through_is_drawn_where_no_slider_moves(site):
    """A lesson that steps through a backward pass (viz.trace_backward) shows, on its page,
    the table of the steps once, and a drawing of the pass as its last step runs."""
    from bs4 import BeautifulSoup
    stepping = [lesson for lesson in LESSONS
                if any("trace_backward(" in c.source for c in lesson_cells(lesson))]
    assert stepping
    for lesson in stepping:
        soup = BeautifulSoup((site["html"] / page(lesson)).read_text(), "html.parser")
        tables = [t for t in soup.select(".cell_output table") if "grads out" in t.get_text()]
        assert len(tables) == 1, (lesson, len(tables))
        frames = [img["alt"] for img in soup.select(".cell_output img")
                  if re.match(r"The backward graph of \w+, at step (\d+) of backward "
                              r"\(steps 0 to \1\)", img.get("alt", ""))]
        assert frames, f"{lesson}: no drawing of the step-through"


# --- in a browser ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def served(site):
    """The built site over HTTP on loopback, as GitHub Pages serves it."""
    handler = functools.partial(Quiet, directory=str(site["html"]))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_a_browser_sees_the_drawing_and_typeset_math_and_asks_no_other_host(served, chromium):
    context = chromium.new_context(viewport={"width": 1280, "height": 1000})
    requests, elsewhere = [], []

    def route(r):
        requests.append(r.request.url)
        if urlsplit(r.request.url).hostname in LOCAL:
            r.continue_()
        else:                                       # recorded, and never let out
            elsewhere.append(r.request.url)
            r.abort()
    context.route("**/*", route)
    try:
        tab = context.new_page()
        tab.goto(served + "index.html")
        tab.wait_for_load_state("networkidle")
        lessons = tab.locator(".bd-sidenav a.reference.internal[href^='notebooks/']")
        assert lessons.count() == len(LESSONS)
        ARTIFACTS.mkdir(exist_ok=True)
        tab.screenshot(path=ARTIFACTS / "site-home.png")

        lesson = LESSONS[1]
        tab.goto(served + page(lesson))
        tab.wait_for_load_state("networkidle")
        tab.wait_for_selector("mjx-container", state="attached", timeout=20_000)
        assert tab.locator("mjx-container").count() > 0
        assert tab.locator("span.math, div.math").count() > 0
        svg = tab.locator(".cell_output img[src^='data:image/svg+xml']").first
        svg.scroll_into_view_if_needed()
        assert svg.evaluate("img => img.complete && img.naturalWidth > 0")
        svg.evaluate("img => img.closest('.cell').scrollIntoView()")
        tab.screenshot(path=ARTIFACTS / "site-lesson01-graph.png")

        path = f"notebooks/{lesson}/{lesson}.ipynb"
        binder = tab.locator(f"a[href='https://mybinder.org/v2/gh/{REPO}/HEAD"
                             f"?urlpath=lab/tree/{path}']")
        assert binder.count() == 1
        colab = tab.locator(f"a[href='https://colab.research.google.com/github/{REPO}/blob/"
                            f"HEAD/{path}']")
        assert colab.count() == 1
        download = tab.locator("a[href$='.ipynb']:not([href^='http'])")
        assert download.count() == 1
        got = tab.request.get(urljoin(tab.url, download.get_attribute("href")))
        assert got.ok
        assert nbformat.reads(got.text(), as_version=4) == nbformat.read(ROOT / path,
                                                                          as_version=4)
    finally:
        context.close()
    assert len(requests) > 10
    assert elsewhere == [], elsewhere
    assert {urlsplit(u).hostname for u in requests} <= LOCAL


def test_axe_finds_nothing_serious_on_any_page(site, served, chromium):
    """axe-core (WCAG 2.1 A and AA, best practices, the experimental rules) on every page of the
    site, the lessons and the guides, as a browser shows it: no serious or critical finding
    (the theme's search field once said "Search" where its text says "Search Ctrl+K")."""
    root = site["html"]
    pages = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html")
                   if not {"_static", "_sources"} & set(p.parts))
    assert len(pages) > len(LESSONS)
    context = chromium.new_context(viewport={"width": 1280, "height": 1000})
    found = {}
    try:
        tab = context.new_page()
        for name in pages:
            tab.goto(served + name)
            tab.wait_for_load_state("load")
            for violation in axe.serious(tab):
                found.setdefault(name, []).append(violation)
    finally:
        context.close()
    assert found == {}, "\n".join(f"{name}:\n{axe.report(v)}" for name, v in found.items())


# --- the learners' repository -------------------------------------------------------------------

def test_the_learners_repository_builds_its_own_site(site, cache, tmp_path):
    """student-repo writes docs/ and .github/workflows/pages.yml; with two lessons released the
    site has their two pages, Binder opens the learners' repository, and lesson 01's link to
    lesson 02 (not released) is text, not a broken link. (Run after the course's build: the
    lessons' runs come from the shared cache.)"""
    import yaml
    dest = tmp_path / "class-repo"
    result = CliRunner().invoke(app, ["-C", str(ROOT), "student-repo", str(dest),
                                      "--binder", "o/r", "--lessons", "00", "01"])
    assert result.exit_code == 0, result.output
    assert (dest / "docs" / "notebooks").resolve() == (dest / "notebooks").resolve()
    workflow = yaml.safe_load((dest / ".github" / "workflows" / "pages.yml").read_text())
    steps = workflow["jobs"]["build"]["steps"]
    runs = "\n".join(s.get("run", "") for s in steps)
    uses = [s.get("uses", "").split("@")[0] for s in steps]
    assert "actions/upload-pages-artifact" in uses and "npm ci --prefix docs" in runs
    assert "-W" in runs and "docs/_build/html" in runs and ".[lab,docs]" in runs
    assert workflow["jobs"]["deploy"]["steps"][0]["uses"].startswith("actions/deploy-pages@")
    assert workflow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}

    out = tmp_path / "out"
    status, warnings, seconds = build(dest / "docs", out, cache, {
        "AUTOGRAD_LAB_MATHJAX": str(DOCS / "node_modules" / "mathjax" / "es5")})
    print(f"learners' site built in {seconds:.1f} s")
    assert status == 0 and warnings == "", warnings
    built = sorted(p.name for p in (out / "html" / "notebooks").iterdir())
    assert built == LESSONS[:2]
    # the learners' guide, and none of the instructors', maintainers' or measurements' pages
    assert (out / "html" / "learners" / "start.html").is_file()
    for guide in ("instructors", "maintainers", "measurements"):
        assert not (out / "html" / guide).exists(), guide
    lesson01 = parsed(out / "html" / page(LESSONS[1]))
    hrefs = [v for t, a, v in lesson01.links if t == "a"]
    assert not [h for h in hrefs if LESSONS[2] in h and "mybinder" not in h]
    assert "(not released yet)" in lesson01.text
    assert (f"https://mybinder.org/v2/gh/o/r/HEAD?urlpath=lab/tree/notebooks/{LESSONS[1]}/"
            f"{LESSONS[1]}.ipynb") in hrefs
