"""The course's site: every lesson of notebooks/ executed as the learner gets it (Sphinx, myst-nb,
sphinx-book-theme). `./run docs` builds it into docs/_build/html; the learners' repository that
`autograd-lab student-repo` writes carries the same sources and a GitHub Pages workflow.

- docs/notebooks is a link to ../notebooks: the pages sit where the notebooks sit in the
  repository (notebooks/01_x/01_x.html), so Binder's path and the site's agree.
- Every picture a lesson shows carries its text alternative: a drawing of the graph (viz) or a
  plot comes as an <img> whose alt is the drawing in words, which myst-nb puts on the page as
  it is (text/html comes before the bare image). The theme's search field gets the accessible
  name its text shows (_templates/search-button-field.html). Each lesson has a Colab button
  beside Binder's.
- Answer and test cells are shown as released, their outputs removed (a released answer raises
  NotImplementedError and its check fails, by design); a cell that fails only because an answer
  above it is missing shows a note instead of its traceback. Cells tagged raises-exception keep
  theirs: the error is the lesson.
- Math is typeset by a MathJax the site ships (npm's mathjax, docs/package.json, installed into
  docs/node_modules by scripts/setup.sh): the site asks no other host for anything.
- The Binder button opens the lesson in the learners' repository: AUTOGRAD_LAB_REPO=OWNER/REPO,
  else the one named in docs/learners-repo.txt (written by `student-repo --binder`), else
  DEFAULT_REPO.
- The guides: learners/ in every build; instructors/, maintainers/ and measurements/ only in
  the course's own repository (solutions/ beside docs/). The learners' repository, which
  student-repo gives these sources, builds the lessons and the learners' guide alone: index.md's
  block between the "course repository only" markers is left out there.
"""
import json
import os
import re
import shutil
from pathlib import Path

from docutils import nodes

HERE = Path(__file__).resolve().parent
DEFAULT_REPO = "ourschool/autograd-class"


def _learners_repo():
    named = os.environ.get("AUTOGRAD_LAB_REPO", "").strip()
    if not named and (HERE / "learners-repo.txt").is_file():
        named = (HERE / "learners-repo.txt").read_text().strip()
    named = named or DEFAULT_REPO
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", named):
        raise ValueError(f"the learners' repository is OWNER/REPO, not {named!r}")
    return named


REPO = _learners_repo()
MATHJAX = Path(os.environ.get("AUTOGRAD_LAB_MATHJAX") or HERE / "node_modules" / "mathjax" / "es5")

project = "autograd-lab"
author = "the autograd-lab course"
copyright = "the autograd-lab course"
html_title = "autograd-lab: how PyTorch's autograd works"

extensions = ["myst_nb"]
exclude_patterns = ["_build", "_templates", "node_modules", "**/.ipynb_checkpoints", "README.md",
                    "*.png", "package.json", "package-lock.json", "learners-repo.txt"]
# the guides for the course's instructors and maintainers, and its measurements: not built in
# the learners' repository (no solutions/ there)
COURSE_REPOSITORY = (HERE.parent / "solutions").is_dir()
COURSE_GUIDES = ["instructors", "maintainers", "measurements"]
if not COURSE_REPOSITORY:
    exclude_patterns += [f"{guide}/*" for guide in COURSE_GUIDES]
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

# every lesson run top to bottom at build time; errors are expected (unanswered exercises)
nb_execution_mode = "cache"
nb_execution_cache_path = str(HERE / "_build" / ".jupyter_cache")
nb_execution_allow_errors = True
nb_execution_raise_on_error = False
nb_execution_timeout = 300
nb_execution_in_temp = True          # nothing a lesson writes lands in notebooks/
nb_execution_show_tb = True
nb_ipywidgets_js = {}                # no widget code from a CDN (a build shows no slider anyway)
nb_merge_streams = True

html_theme = "sphinx_book_theme"
html_static_path = []
# (_templates/: the theme's search field, with the accessible name its text shows)
templates_path = ["_templates"]
html_theme_options = {
    "repository_url": f"https://github.com/{REPO}",
    "repository_branch": "HEAD",          # as autograd-lab student-repo's Binder links
    "path_to_docs": "",                   # a page's path is its notebook's path in the repository
    "use_repository_button": True,
    "use_download_button": True,
    "launch_buttons": {"binderhub_url": "https://mybinder.org",
                       "colab_url": "https://colab.research.google.com",
                       "notebook_interface": "jupyterlab"},
    "show_toc_level": 2,
}
html_last_updated_fmt = None
html_copy_source = True              # the download button's .ipynb
html_show_sourcelink = False

# MathJax 3 from docs/node_modules, copied into _static/mathjax (see _copy_mathjax)
mathjax_path = "mathjax/tex-mml-chtml.js"

# what of MathJax's es5/ the site needs: the combined TeX/MathML + CommonHTML component, the
# fonts and the TeX extensions it loads on demand, its menu and accessibility parts
_MATHJAX_PARTS = ["tex-mml-chtml.js", "input", "output/chtml", "ui", "a11y", "sre", "adaptors"]


def _copy_mathjax(app, exception):
    if exception or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / "mathjax"
    for part in _MATHJAX_PARTS:
        source = MATHJAX / part
        if source.is_dir():
            shutil.copytree(source, target / part, dirs_exist_ok=True)
        elif source.is_file():
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / part)


def _check_mathjax(app):
    if app.builder.format == "html" and not (MATHJAX / "tex-mml-chtml.js").is_file():
        from sphinx.errors import ConfigError
        raise ConfigError(f"MathJax is not at {MATHJAX}: run scripts/setup.sh (it installs "
                          "npm's mathjax into docs/node_modules), or `npm ci --prefix docs`")


# --- the lessons as the learner gets them ------------------------------------------------

_LESSON_LINK = re.compile(r"\[([^\]]+)\]\((\.\./([0-9]{2}_[a-z0-9_]+)/\3\.ipynb)\)")


_COURSE_ONLY = re.compile(r"<!-- course repository only -->.*?<!-- end of course repository "
                          r"only -->\n?", re.S)


def _course_only(app, docname, source):
    """index.md without its toctrees of the course's own guides, in the learners' repository."""
    if docname == "index" and not COURSE_REPOSITORY:
        source[0] = _COURSE_ONLY.sub("", source[0])


def _as_released(app, docname, source):
    """A lesson's notebook before myst-nb reads it: answer and test cells lose their outputs
    (tag remove-output), the install cell is left out (remove-cell); a link to another lesson becomes a reference to its page, or, for a
    lesson this site does not have (not released yet, in the learners' repository), plain
    text."""
    path = Path(app.env.doc2path(docname))
    if path.suffix != ".ipynb":
        return
    nb = json.loads(source[0])
    for cell in nb["cells"]:
        meta = cell.get("metadata", {})
        nbgrader = meta.get("nbgrader", {})
        if "course-install" in meta.get("tags", []):
            meta["tags"].append("remove-cell")    # installs the engine in Colab: not the lesson
        if cell["cell_type"] == "code" and (nbgrader.get("solution") or nbgrader.get("grade")):
            tags = meta.setdefault("tags", [])
            if "remove-output" not in tags:
                tags.append("remove-output")
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]

            def keep(m):
                # (as a {doc} reference: MyST would resolve the path through docs/notebooks,
                #  a link, and not find the document)
                if (path.parent / m[2]).exists():
                    return f"{{doc}}`{m[1]} <../{m[3]}/{m[3]}>`"
                return f"{m[1]} (not released yet)"
            cell["source"] = _LESSON_LINK.sub(keep, text)
    source[0] = json.dumps(nb)


NEEDS_ANSWER = ("This cell runs once the exercises above it are answered: its output here "
                "would only be the error of a missing answer.")


def _missing_answers_noted(app, doctree, docname):
    """A cell whose traceback is not the lesson (it is not tagged raises-exception) failed
    because an unanswered exercise above it left a name undefined or raised: its traceback is
    replaced by a note."""
    for cell in list(doctree.findall(nodes.container)):
        if "cell" not in cell["classes"] or "tag_raises-exception" in cell["classes"]:
            continue
        tracebacks = [n for n in cell.findall(nodes.literal_block)
                      if "traceback" in n["classes"]]
        for tb in tracebacks:
            note = nodes.paragraph(text=NEEDS_ANSWER)
            tb.replace_self(note)
            note["classes"] = ["needs-answer"]         # (not the traceback's, replace_self's)


def _build_machine_paths():
    """(pattern, replacement) for the folders of the machine that builds the site, as its
    tracebacks and warnings name them: the checkout (the engine's files become the paths a
    learner's copy has, autograd_lab/...), Python's own folders (site-packages/...), the
    kernel's temporary file of a cell (a warning's "<cell>:3:"), and the home folder."""
    import sys
    import sysconfig
    import tempfile
    folders = {str(HERE.parent): "", str(HERE.parent.resolve()): ""}
    for name in ("purelib", "platlib", "stdlib", "platstdlib"):
        path = sysconfig.get_paths().get(name)
        if path:
            folders[path] = Path(path).name + "/"
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix} - {"/", "/usr", "/usr/local"}:
        folders[prefix] = Path(prefix).name + "/"
    home = os.path.expanduser("~")
    if home not in ("", "/"):
        folders[home] = "~/"
    cell = rf"(?:{re.escape(tempfile.gettempdir())}|/tmp)/ipykernel_\d+/\d+\.py"
    return [(re.compile(cell), "<cell>")] + [
        (re.compile(re.escape(folder.rstrip("/")) + "/"), short)
        for folder, short in sorted(folders.items(), key=lambda f: -len(f[0]))]


BUILD_MACHINE = _build_machine_paths()


def _no_build_machine_paths(app, doctree, docname):
    """A lesson's tracebacks and warnings, shown on purpose, name the files they come from;
    its page names them without the folders of the machine that built it."""
    def local(text):
        for pattern, short in BUILD_MACHINE:
            text = pattern.sub(short, text)
        return text

    for text in list(doctree.findall(nodes.Text)):
        if local(str(text)) != str(text):
            text.parent.replace(text, nodes.Text(local(str(text))))
    # (a literal block is highlighted only while its text is its rawsource)
    for node in doctree.findall(lambda n: isinstance(n, (nodes.literal_block, nodes.raw))):
        node.rawsource = local(node.rawsource)


def setup(app):
    app.connect("builder-inited", _check_mathjax)
    app.connect("source-read", _course_only)
    app.connect("source-read", _as_released)
    app.connect("doctree-resolved", _missing_answers_noted)
    app.connect("doctree-resolved", _no_build_machine_paths)
    app.connect("build-finished", _copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
