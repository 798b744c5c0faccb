"""A feedback page a learner's notebook cannot turn into a program, and that needs no network.

Everything on the page but the course's own frame came from the learner: outputs (HTML,
Markdown, SVG, JavaScript, widgets), written answers in Markdown (raw HTML passes through
Markdown), even image data. So:
  - every output is reduced to text, sanitised HTML or an image from data the page holds
    (``SafeOutputs``); JavaScript and widget outputs are dropped with a note, SVG is shown
    through an ``<img>`` (an image runs no script and loads nothing);
  - Markdown (written answers, the lesson's text, Markdown outputs) goes through
    ``safe_markdown``: rendered, then cleaned by an allowlist (no script, no event handler,
    no style, no frame or form; images only from ``data:``);
  - math is rendered here, to MathML (latex2mathml), which Chromium and Firefox draw without a
    script: the page loads no MathJax from the internet;
  - the page's content security policy runs no script and fetches nothing
    (``default-src 'none'``; images from data: only; the page's own inline styles).
"""
from __future__ import annotations

import base64
import binascii
import functools
import html
import re

import bleach
from nbgrader.preprocessors import NbGraderPreprocessor

from . import outputs

CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; "
       "base-uri 'none'; form-action 'none'; frame-src 'none'; object-src 'none'")

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


def _attribute(tag, name, value):
    if name in ("class", "title", "colspan", "rowspan", "align", "alt", "open"):
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


@_per_text
def clean(markup: str) -> str:
    """HTML a learner wrote, as markup that runs nothing and fetches nothing."""
    # an image whose source was dropped (remote, or not an image) says so, in words
    return re.sub(r"<img(?![^>]*\ssrc=)[^>]*>", "[an image from outside this page, not shown]",
                  _CLEANER.clean(markup))


_MATH = re.compile(r"\$\$(?P<d1>.+?)\$\$|\\\[(?P<d2>.+?)\\\]|\\\((?P<i2>.+?)\\\)|"
                   r"(?<![\\$\w])\$(?!\s)(?P<i1>[^$\n]+?)(?<!\s)\$(?!\w)", re.DOTALL)


def mathml(latex: str, display: bool = False) -> str:
    """LaTeX as MathML, cleaned; as escaped code where it cannot be converted."""
    try:
        from latex2mathml.converter import convert

        return clean(convert(latex.strip(), display="block" if display else "inline"))
    except Exception:       # a learner's LaTeX can be anything: show it as it was written
        return f"<code>{html.escape(latex)}</code>"


def safe_markdown(source) -> str:
    """Markdown to HTML that runs nothing and fetches nothing, its math as MathML."""
    return _safe_markdown("".join(source) if isinstance(source, list) else str(source or ""))


@_per_text
def _safe_markdown(source: str) -> str:
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    found = []

    def hold(match):
        display = match["d1"] is not None or match["d2"] is not None
        latex = next(g for g in (match["d1"], match["d2"], match["i2"], match["i1"]) if g)
        found.append(mathml(latex, display))
        return f"MATHPLACEHOLDER{len(found) - 1}END"

    rendered = clean(markdown2html_mistune(_MATH.sub(hold, source)))
    return re.sub(r"MATHPLACEHOLDER(\d+)END", lambda m: found[int(m[1])], rendered)


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


def _alt(data: dict, otherwise: str) -> str:
    """An image's text alternative: the output's own text/plain (a drawing of the graph says
    its graph in words there), bounded; ``otherwise`` where there is none. Not escaped."""
    value = data.get("text/plain")
    text = ("".join(value) if isinstance(value, list) else str(value)).strip() if value else ""
    if not text:
        return otherwise
    return text if len(text) <= ALT_CHARS else text[:ALT_CHARS - 1] + "\u2026"


def safe_data(data: dict) -> dict:
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
        alt = html.escape(_alt(data, "a drawing"), quote=True)
        out["text/html"] = f'<img alt="{alt}" src="data:image/svg+xml;base64,{encoded}">'
    elif "text/html" in data:
        out["text/html"] = clean(text("text/html"))
    elif "text/markdown" in data:
        out["text/html"] = safe_markdown(text("text/markdown"))
    elif "text/latex" in data:
        latex = text("text/latex").strip().strip("$")
        out["text/html"] = mathml(latex, display=True)
    if not out and data:
        out["text/plain"] = f"[an output this page does not show: {', '.join(sorted(data))}]"
    return out


def _lexer_names(metadata, names):
    """The highlighting language names in ``metadata`` that a learner's notebook may set, kept
    only where they are short strings: nbconvert's highlighting fails on any other value, and
    the page's highlight memo keys on them."""
    for name in names:
        value = metadata.get(name)
        if value is not None and not (isinstance(value, str) and len(value) <= 64):
            del metadata[name]


class SafeOutputs(NbGraderPreprocessor):
    """Every output of every cell as safe_data; no widget state, no attachments, no language
    name for highlighting but a short string."""

    def preprocess(self, nb, resources):
        nb.metadata.pop("widgets", None)
        if not isinstance(nb.metadata.get("language_info", {}), dict):
            del nb.metadata["language_info"]
        _lexer_names(nb.metadata.get("language_info", {}), ("name", "pygments_lexer"))
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        cell.pop("attachments", None)
        _lexer_names(cell.metadata, ("magics_language",))
        for output in outputs.of_cell(cell):
            if "data" in output.node:
                output.node["data"] = safe_data(output.data)
                # (the page's images say what they are, in the output's own words where it
                #  has some; SVG drawings are `<img>`s already)
                image = {"image/png", "image/jpeg"} & set(output.node["data"])
                alt = _alt(output.data, "an image the notebook showed")
                output.node["metadata"] = {"alt": alt} if image else {}
        return cell, resources
