"""nbgrader's formgrader, as the instructor's Jupyter server serves it, with a content security
policy on the page of a submission.

The formgrader shows a learner's autograded notebook in a page of the instructor's own Jupyter
server, where a script would act with the instructor's session (kernels and terminals on the
instructor's machine). The grader writes that notebook inert (``reading/inert.py``); this policy
is the second wall, for whatever is not (a notebook an older grader wrote, a name in the
gradebook): the page's own scripts run, nothing else. nbgrader's page runs inline scripts of
its own (the submission's ids, the name toggle, two ``onclick`` handlers) and its static
files: the policy allows exactly those, by their SHA-256 hashes, found by rendering the same
page without any cell and without the learner's name; scripts come only from the formgrader's
static folder, requests only go to the formgrader's API, and no frame, object, form or base
is allowed. MathJax, which the page would load from a CDN, is not: every Markdown cell of an
inert notebook is marked for MathJax to skip, and its math is MathML already.

A Jupyter server extension (``jupyter-config/autograd_lab_grader.json``, installed with the
grader, enables it): it serves nbgrader's submission route with ``PolicedSubmission``. It
loads before nbgrader's formgrader (Jupyter loads extensions in the order of their names), so
its route is the one that matches.
"""
from __future__ import annotations

import base64
import hashlib
import html
import re

from jupyter_server.utils import url_path_join
from nbgrader.server_extensions.formgrader.handlers import SubmissionHandler

ROUTE = r"/formgrader/submissions/([^/]+)/?"
# (trusted markup: the page nbgrader's template makes of a notebook with no cell)
_INLINE_SCRIPT = re.compile(r"<script(?![^>]*\ssrc=)[^>]*>(.*?)</script>", re.DOTALL)
_HANDLER = re.compile(r"\son[a-z]+=\"([^\"]*)\"")


def _jupyter_server_extension_points():
    return [{"module": "autograd_lab_grader.formgrader"}]


def _load_jupyter_server_extension(serverapp):
    web_app = serverapp.web_app
    route = url_path_join(web_app.settings["base_url"], ROUTE)
    web_app.add_handlers(".*$", [(route, PolicedSubmission)])
    serverapp.log.info("autograd-lab: nbgrader's formgrader submission pages get a content "
                       "security policy")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def policy(page: str, origin: str, base_url: str) -> str:
    """The policy of a formgrader page whose own scripts are those of ``page`` (the page as
    nbgrader's template renders it with no cell and no name)."""
    scripts = sorted({_hash(s) for s in _INLINE_SCRIPT.findall(page)})
    handlers = sorted({_hash(html.unescape(h)) for h in _HANDLER.findall(page)})
    static = origin + url_path_join(base_url, "formgrader/static/")
    api = origin + url_path_join(base_url, "formgrader/api/")
    return "; ".join([
        "default-src 'none'",
        " ".join(["script-src", static, *scripts, *(["'unsafe-hashes'", *handlers]
                                                     if handlers else [])]),
        "style-src 'self' 'unsafe-inline'", "img-src 'self' data:", "font-src 'self' data:",
        f"connect-src {api}", "frame-src 'none'", "object-src 'none'", "base-uri 'none'",
        "form-action 'none'", "frame-ancestors 'self'",
        "report-uri " + url_path_join(base_url, "api/security/csp-report")])


class PolicedSubmission(SubmissionHandler):
    """nbgrader's page of a submission, sent with ``policy``."""

    @property
    def exporter(self):
        return _PolicingExporter(self.settings["nbgrader_exporter"], self)


class _PolicingExporter:
    """The formgrader's exporter, setting its handler's policy as it renders the page."""

    def __init__(self, exporter, handler):
        self.exporter, self.handler = exporter, handler

    def from_filename(self, filename, resources=None, **kw):
        import nbformat

        from .steps.feedback import Highlight

        empty = nbformat.read(filename, as_version=4)
        empty.cells = []
        # (the code highlighted as a feedback page's is: a page's worth, the rest as it is;
        #  nbconvert's exporter takes a configured highlight_code filter for its own)
        info = empty.metadata.get("language_info", {})
        self.exporter.filters["highlight_code"] = Highlight(
            pygments_lexer=info.get("pygments_lexer", info.get("name")), parent=self.exporter)
        page, out = self.exporter.from_filename(filename, resources=dict(resources or {}), **kw)
        nameless = dict(resources or {}, first_name="", last_name="", student="")
        own, _ = self.exporter.from_notebook_node(empty, resources=nameless)
        request = self.handler.request
        self.handler.set_header("Content-Security-Policy", policy(
            own, f"{request.protocol}://{request.host}", self.handler.settings["base_url"]))
        return page, out
