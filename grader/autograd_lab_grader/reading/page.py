"""The one allowlist for a learner's content, wherever a browser opens what the grader wrote:
the feedback pages, the report's written-answer pages and the autograded notebooks that
nbgrader's formgrader shows the instructor (``inert.py``).

Everything there but the course's own frame came from the learner: outputs (HTML, Markdown,
SVG, JavaScript, widgets), written answers in Markdown (raw HTML passes through Markdown),
even image data. So:
  - every output is reduced to text, sanitised HTML or an image from data the page holds
    (``safe_data``); JavaScript and widget outputs are dropped with a note, SVG is shown
    through an ``<img>`` (an image runs no script and loads nothing);
  - Markdown (written answers, the lesson's text, Markdown outputs) goes through
    ``safe_markdown``: rendered, then cleaned by an allowlist (no script, no event handler,
    no style, no frame or form, no id, classes only of the renderer's own kinds; images only
    from ``data:``);
  - math is rendered here, to MathML (latex2mathml), which Chromium and Firefox draw without a
    script: the page loads no MathJax from the internet;
  - the page's content security policy runs no script and fetches nothing
    (``default-src 'none'``; images from data: only; the page's own inline styles).

Linear in what the learner wrote: a learner's text is rendered only up to a bound, and shown as
written (escaped, preformatted, with a note) beyond it: a Markdown text over ``MAX_MARKDOWN``
characters, HTML over ``MAX_HTML`` characters or nested deeper than ``MAX_DEPTH`` elements
(html5lib, under bleach, takes time quadratic in the depth), a formula over ``MAX_FORMULA``
characters, and whatever a notebook holds past ``NOTEBOOK_HTML`` characters of HTML in all
(``Budget``). Every pattern applied to the text itself runs in linear time (the math
delimiters are found by a scan, ``_math_spans``, not by a pattern that looks ahead).
"""
from __future__ import annotations

import base64
import binascii
import functools
import html
import re

import bleach

CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; "
       "base-uri 'none'; form-action 'none'; frame-src 'none'; object-src 'none'")

MAX_MARKDOWN = 20_000      # characters of one Markdown text rendered (a lesson's longest: 2,202)
MAX_HTML = 100_000         # characters of HTML cleaned at once (Markdown rendered, an output)
MAX_DEPTH = 64             # elements open at once in HTML cleaned
MAX_FORMULA = 2_000        # characters of one formula made MathML
NOTEBOOK_HTML = 250_000    # characters of HTML one notebook has cleaned in all (Budget)

_TAGS = {"a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del",
         "details", "div", "dl", "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img",
         "ins", "kbd", "li", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong", "sub",
         "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var"}
_MATHML = {"math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msup", "msub",
           "msubsup", "mfrac", "msqrt", "mroot", "mover", "munder", "munderover", "mtable",
           "mtr", "mtd", "mstyle", "mpadded", "mphantom", "menclose", "semantics",
           "annotation"}
_MATHML_ATTRS = ["xmlns", "display", "mathvariant", "stretchy", "fence", "separator", "lspace",
                 "rspace", "accent", "accentunder", "columnalign", "rowalign", "linethickness",
                 "width", "height", "depth", "minsize", "maxsize", "symmetric", "movablelimits",
                 "scriptlevel", "displaystyle", "notation", "encoding", "form"]
_IMAGE = re.compile(r"^data:image/(png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/=\s]*$")
# the classes a rendering here makes (Pygments' token classes are one to three letters and a
# digit): a class is what a page's scripts look for (nbgrader's formgrader finds its score
# boxes by class, MathJax the text it typesets), so no other class of a learner's is kept
_CLASS = re.compile(r"[a-z]{1,3}[0-9]?|highlight|anchor-link|task-list-item(?:-checkbox)?"
                    r"|learner-text|autograd-lab|tex2jax_ignore|mathjax_ignore")


def _attribute(tag, name, value):
    if name == "class":
        return all(_CLASS.fullmatch(c) for c in value.split())
    if name in ("title", "colspan", "rowspan", "align", "alt", "open"):
        return True
    if tag == "a" and name == "href":           # a link fetches nothing until it is clicked
        return value.startswith(("https://", "http://", "mailto:", "#"))
    if tag == "img" and name == "src":   # never a remote image (it would be fetched); an
        # SVG shown as an image runs no script and loads nothing
        return bool(_IMAGE.match(value))
    if tag in ("th", "td") and name in ("scope",):
        return True
    if tag in _MATHML:
        return name in _MATHML_ATTRS
    return False


_CLEANER = bleach.Cleaner(tags=_TAGS | _MATHML, attributes=_attribute,
                          protocols=["http", "https", "mailto", "data"], strip=True,
                          strip_comments=True)


class Budget:
    """What one notebook may still have cleaned, in characters of HTML: its Markdown cells and
    HTML outputs, in order, take from ``html``; what is left once it is spent is shown as
    written. A cell an inert notebook stored already (``stored``) is cleaned again from
    ``again``, which holds what ``html`` let through twice over. (Deterministic: the same
    notebook always renders the same.)"""

    def __init__(self, html: int = NOTEBOOK_HTML):
        self.html, self.again = html, 2 * html

    def take(self, size: int, again: bool = False) -> bool:
        left = self.again if again else self.html
        # (once it is spent, what comes after is shown as written too: in order)
        left, ok = (0, False) if size > left else (left - size, True)
        if again:
            self.again = left
        else:
            self.html = left
        return ok


def _per_text(fn):
    """``fn`` of a text (and of a few short settings after it), kept for the texts a class's
    pages share: every page holds the lesson's own Markdown, code and most of its outputs, the
    same for each learner. Kept only where the text and what it became are 32,768 characters or
    fewer together, and 1,024 of them at most (the oldest goes first): 32 million characters at
    worst, whatever learners wrote."""
    kept = {}

    @functools.wraps(fn)
    def call(text, *settings):
        key = (text, *settings) if settings else text
        out = kept.get(key)
        if out is None:
            out = fn(text, *settings)
            if len(text) + sum(len(s) for s in settings if s) + len(out) <= 32768:
                if len(kept) >= 1024:
                    del kept[next(iter(kept))]
                kept[key] = out
        return out
    call.kept = kept
    return call


def as_text(text: str, why: str = "") -> str:
    """A learner's text shown as written: escaped, preformatted, after a note saying why (the
    form ``safe_markdown`` and ``inert.py`` recognise, and pass on unchanged)."""
    note = f"<p><em>{html.escape(why)}</em></p>" if why else ""
    return f'<div class="learner-text">{note}<pre>{html.escape(text)}</pre></div>'


# (a <pre> holding no "<" holds no element: what matches is text, whoever wrote it)
_AS_TEXT = re.compile(r'<div class="learner-text">(?:<p><em>[^<]*</em></p>)?<pre>[^<]*</pre>'
                      r"</div>")

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta",
         "param", "source", "track", "wbr"}
_TAG_START = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:-]*)")


def _depth(markup: str, most: int) -> int:
    """About how many elements are open at once in ``markup`` (stopping past ``most``): every
    start tag not void or closed by ``/>`` opens one, every end tag closes one. A bound on the
    work of an HTML parser, found in one pass (each tag's ``>`` is looked for once)."""
    depth = deepest = 0
    close = -1                          # the ">" after the last tag start (-1: none after it)
    for match in _TAG_START.finditer(markup):
        end, name = match[1], match[2].lower()
        if end:
            depth = max(depth - 1, 0)
            continue
        if close < match.end():
            close = markup.find(">", match.end())
            if close < 0:
                break                   # (no tag is complete after here)
        if name in _VOID or markup[close - 1] == "/":
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > most:
                break
    return deepest


def _too_much(markup: str, budget: Budget | None, again: bool = False) -> str:
    """Why ``markup`` is not cleaned but shown as written ("" if it is cleaned); ``again``:
    markup an inert notebook stored, cleaned once already."""
    most = 2 * MAX_HTML if again else MAX_HTML
    if len(markup) > most:
        return f"HTML of more than {most:,} characters: shown as written"
    if _depth(markup, MAX_DEPTH) > MAX_DEPTH:
        return f"HTML nested more than {MAX_DEPTH} elements deep: shown as written"
    if budget is not None and not budget.take(len(markup), again):
        return (f"past the {NOTEBOOK_HTML:,} characters of HTML a notebook may have rendered: "
                "shown as written")
    return ""


def clean(markup: str, budget: Budget | None = None, again: bool = False) -> str:
    """HTML a learner wrote, as markup that runs nothing and fetches nothing; shown as written
    past the bounds (the module's docstring), and as it is if it is shown as written already."""
    if _AS_TEXT.fullmatch(markup):
        return markup
    why = _too_much(markup, budget, again)
    return as_text(markup, why) if why else _clean(markup)


@_per_text
def _clean(markup: str) -> str:
    # an image whose source was dropped (remote, or not an image) says so, in words; (linear:
    # bleach's markup has every "<" of text escaped, so each "<img" scans its own tag only)
    return re.sub(r"<img(?![^>]*\ssrc=)[^>]*>", "[an image from outside this page, not shown]",
                  _CLEANER.clean(markup))


_WORD = re.compile(r"\w")
_SPACE = re.compile(r"\s")
_MATH_START = re.compile(r"[$\\]")
_DOLLAR_OR_LINE = re.compile(r"[$\n]")
# display $$...$$ and \[...\], inline \(...\), as (opening, closing, display)
_DELIMITED = (("$$", "$$", True), ("\\[", "\\]", True), ("\\(", "\\)", False))


def _math_spans(text: str):
    """(start, end, latex, display) of each formula in ``text``, left to right: ``$$...$$`` and
    ``\\[...\\]`` (display), ``\\(...\\)``, and ``$...$`` (``_inline_dollar``). In one pass: a
    closing delimiter not found from one place is not looked for again after it (the pattern
    this replaces looked for one from every opening delimiter, to the end of the text: time
    quadratic in ``\\[`` repeated). ``test_inert.py`` holds the pattern, and checks that both
    find the same formulas."""
    missing = {}                    # closing delimiter -> from where it is known to be absent
    at = 0
    while (match := _MATH_START.search(text, at)) is not None:
        p = match.start()
        found = None
        for opening, closing, display in _DELIMITED:
            if not text.startswith(opening, p):
                continue
            start = p + len(opening) + 1                # (at least one character between)
            q = -1 if missing.get(closing, len(text) + 1) <= start else text.find(closing, start)
            if q < 0:
                missing[closing] = min(missing.get(closing, start), start)
                continue
            found = (p, q + len(closing), text[p + len(opening):q], display)
            break
        if found is None and text[p] == "$":
            found = _inline_dollar(text, p)
        if found is None:
            at = p + 1
            continue
        yield found
        at = found[1]


def _inline_dollar(text: str, p: int):
    """The formula ``$...$`` opening at ``p``, if there is one: not after a backslash, a
    dollar or a letter, no space inside either end, closed by the next dollar of its line,
    which no letter follows."""
    before = text[p - 1] if p else ""
    if before and (before in "\\$" or _WORD.match(before)):
        return None
    close = _DOLLAR_OR_LINE.search(text, p + 1)
    if close is None or text[close.start()] != "$":
        return None
    q = close.start()
    if q < p + 2 or _SPACE.match(text[p + 1]) or _SPACE.match(text[q - 1]):
        return None
    if q + 1 < len(text) and _WORD.match(text[q + 1]):
        return None
    return p, q + 1, text[p + 1:q], False


def _mathml(latex: str, display: bool) -> str:
    """LaTeX as MathML (not yet cleaned); as escaped code where it cannot be converted."""
    latex = latex.strip()
    if len(latex) > MAX_FORMULA:
        return f"<code>{html.escape(latex)}</code>"
    try:
        from latex2mathml.converter import convert

        return convert(latex, display="block" if display else "inline")
    except Exception:       # a learner's LaTeX can be anything: show it as it was written
        return f"<code>{html.escape(latex)}</code>"


def mathml(latex: str, display: bool = False) -> str:
    """LaTeX as MathML, cleaned; as escaped code where it cannot be converted."""
    return clean(_mathml(latex, display))


def safe_markdown(source) -> str:
    """Markdown to HTML that runs nothing and fetches nothing, its math as MathML; a cell the
    grader already made inert (``stored``) is cleaned again, not rendered again."""
    return _safe_markdown("".join(source) if isinstance(source, list) else str(source or ""))


@_per_text
def _safe_markdown(source: str) -> str:
    inner = _stored(source)
    if inner is None:
        return render_markdown(source)
    return inner if _AS_TEXT.fullmatch(inner) else clean(inner, again=True)


class _TooLarge(Exception):
    pass


def _markdown(source: str) -> str:
    """nbconvert's Markdown (mistune, raw HTML kept), its images never embedded: nbconvert
    puts an attachment in as a ``data:`` URL, and fails the whole notebook on a missing one
    (``![](attachment:x)`` in a written answer); a notebook here has no attachment."""
    return _markdown_parser().render(source)


@functools.cache
def _markdown_parser():
    """One parser a process: each builds and compiles its rules' patterns (a fifth of a
    grading process's time outside its kernel when made for every cell); a parse keeps its
    state apart."""
    from nbconvert.filters.markdown_mistune import MarkdownWithMath

    return MarkdownWithMath(renderer=_renderer()(escape=False))


@functools.cache
def _renderer():
    from mistune import HTMLRenderer
    from nbconvert.filters.markdown_mistune import IPythonRenderer

    class Renderer(IPythonRenderer):
        def image(self, text, url, title=None):
            return HTMLRenderer.image(self, text, url, title)

    return Renderer


def render_markdown(source: str, budget: Budget | None = None) -> str:
    """A learner's Markdown as clean HTML, or shown as written past the bounds."""
    if len(source) > MAX_MARKDOWN:
        return as_text(source, f"longer than {MAX_MARKDOWN:,} characters: shown as written")
    if budget is not None and len(source) > budget.html:
        budget.html = 0                 # (in order: what comes after is shown as written too)
        return as_text(source, f"past the {NOTEBOOK_HTML:,} characters of HTML a notebook may "
                               "have rendered: shown as written")
    try:
        rendered = _rendered(source)
    except _TooLarge:
        return as_text(source, f"its math is more than {MAX_HTML:,} characters of MathML: "
                               "shown as written")
    why = _too_much(rendered, budget)
    return as_text(source, why) if why else _clean(rendered)


@_per_text
def _rendered(source: str) -> str:
    """Markdown made HTML, its math MathML, not cleaned yet (the notebook's budget is taken
    after: what is kept here is the same whatever the notebook around it)."""
    found, parts, at, size = [], [], 0, 0
    for start, end, latex, display in _math_spans(source):
        found.append(_mathml(latex, display))
        size += len(found[-1])
        if size > MAX_HTML:
            raise _TooLarge
        parts += [source[at:start], f"MATHPLACEHOLDER{len(found) - 1}END"]
        at = end
    parts.append(source[at:])
    rendered = _markdown("".join(parts))
    # (the formulas go in before the cleaning: bleach sees them where they landed, an
    #  attribute's value included)
    return re.sub(r"MATHPLACEHOLDER(\d{1,9})END",
                  lambda m: found[int(m[1])] if int(m[1]) < len(found) else m[0], rendered)


# A Markdown cell of an inert notebook: one HTML block (CommonMark's kind 6, which runs to a
# blank line: it has no line at all), so that every Markdown renderer (nbconvert's mistune in
# the formgrader, JupyterLab's marked) passes it on as it is, whose math every MathJax skips
# (its class) and no renderer's own pattern finds: no dollar, backslash or "[" (JupyterLab
# takes math out of a cell's text before rendering it, nbconvert's strip_files_prefix looks
# for Markdown links in what mistune made).
STORED = '<div class="autograd-lab tex2jax_ignore mathjax_ignore">'
_ONE_LINE = {"\n": "&#10;", "\r": "&#13;", "$": "&#36;", "\\": "&#92;", "[": "&#91;"}
_ONE_LINE_TABLE = str.maketrans(_ONE_LINE)


def stored(source: str, budget: Budget | None = None) -> str:
    """A Markdown cell's source (a learner's Markdown, or a cell stored before) as an inert
    notebook stores it: rendered and cleaned (or shown as written), in one line."""
    inner = _stored(source)
    if inner is None:
        shown = render_markdown(source, budget)
    elif _AS_TEXT.fullmatch(inner):
        shown = inner
    else:
        shown = clean(inner, budget, again=True)
    return STORED + shown.translate(_ONE_LINE_TABLE) + "</div>"


_ONE_LINE_BACK = {v: k for k, v in _ONE_LINE.items()}
_ENTITY = re.compile("|".join(re.escape(v) for v in _ONE_LINE_BACK))


def stored_as_text(text: str, why: str) -> str:
    """``text`` shown as written (``as_text``), as an inert notebook stores a Markdown cell."""
    return STORED + as_text(text, why).translate(_ONE_LINE_TABLE) + "</div>"


def _stored(source: str) -> str | None:
    """What a stored Markdown cell shows, its characters as they were before ``stored`` made
    them one line (None if ``source`` is not a stored cell: it is then Markdown)."""
    if source.startswith(STORED) and source.endswith("</div>") and "\n" not in source:
        return _ENTITY.sub(lambda m: _ONE_LINE_BACK[m[0]], source[len(STORED):-len("</div>")])
    return None


def _base64(value) -> str | None:
    value = "".join(value) if isinstance(value, list) else str(value)
    try:
        base64.b64decode(value, validate=False)
    except (binascii.Error, ValueError):
        return None
    return value if re.fullmatch(r"[A-Za-z0-9+/=\s]*", value) else None


#: how much of an output's text/plain an image's alt text keeps (the course's drawings say
#: their graph in a few hundred characters; a learner's text can be anything)
ALT_CHARS = 2000


def alt_text(data: dict, otherwise: str) -> str:
    """An image's text alternative: the output's own text/plain (a drawing of the graph says
    its graph in words there), bounded; ``otherwise`` where there is none. Not escaped."""
    value = data.get("text/plain")
    text = ("".join(value) if isinstance(value, list) else str(value)).strip() if value else ""
    if not text:
        return otherwise
    return text if len(text) <= ALT_CHARS else text[:ALT_CHARS - 1] + "\u2026"


def safe_data(data: dict, budget: Budget | None = None) -> dict:
    """An output's MIME bundle reduced to what the page can show safely: text/plain,
    sanitised text/html (HTML, Markdown, LaTeX and SVG become that) and base64 images."""
    def text(key):
        value = data[key]
        return "".join(value) if isinstance(value, list) else str(value)

    out = {}
    if "text/plain" in data:
        out["text/plain"] = text("text/plain")
    for mime in ("image/png", "image/jpeg"):
        if mime in data and _base64(data[mime]) is not None:
            out[mime] = _base64(data[mime])
            return out
    if "image/svg+xml" in data:
        encoded = base64.b64encode(text("image/svg+xml").encode()).decode()
        alt = html.escape(alt_text(data, "a drawing"), quote=True)
        out["text/html"] = f'<img alt="{alt}" src="data:image/svg+xml;base64,{encoded}">'
    elif "text/html" in data:
        out["text/html"] = clean(text("text/html"), budget)
    elif "text/markdown" in data:
        out["text/html"] = render_markdown(text("text/markdown"), budget)
    elif "text/latex" in data:
        latex = text("text/latex").strip().strip("$")
        out["text/html"] = clean(_mathml(latex, display=True), budget)
    if not out and data:
        out["text/plain"] = f"[an output this page does not show: {', '.join(sorted(data))}]"
    return out
