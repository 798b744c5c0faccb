"""Per-learner HTML feedback: nbgrader's feedback pages, without what must stay with the grader.

nbgrader's page shows every test cell whole (hidden tests included) and every traceback (a
failing hidden test's traceback prints its line). ``HideTests`` runs before nbgrader renders
the page: test cells lose their hidden block, and their errors keep only what a learner should
read: a check's message (``CheckFailed: ... Misconception [id]: ...``), or the kind of error
their own code raised, never a traceback, and a bare "a hidden test failed" for an ``assert``.
A learner's code can read a test cell while it runs (an IPython hook, the caller's frame) and
print it or put it in an error: every line of a hidden block is blanked out of every output.
The page itself runs no script and fetches nothing (page.py), and a written answer that waits
for a hand grade reads "not graded yet", never 0 (``NotGradedYet``).
"""
from __future__ import annotations

import functools
import html
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import BytecodeCache
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import GetGrades, NbGraderPreprocessor
from traitlets import Dict, List, Unicode

from .. import patches
from ..reading import outputs, page
from ..reading.inert import InertNotebook
from ..gradebook import late as lateness, status
from ..gradebook.outcome import Outcome, how_late, outcomes, took
from ..lms import Zipped, canvas, moodle
from ..course import Course

_HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[ \t]*\n?",
                     re.DOTALL | re.MULTILINE)


def _is_test(cell) -> bool:
    meta = cell.metadata.get("nbgrader", {})
    return meta.get("grade", False) and not meta.get("solution", False)


def _shown_as_text(mime: str) -> bool:
    """The MIME types of an output whose text a page shows (JSON included)."""
    return mime.startswith("text/") or mime.endswith(("+json", "/json"))


def _learner_view(output: outputs.Output) -> list[str]:
    if output.ename == "CellTimeoutError":
        return ["This cell was stopped: it ran longer than the time limit."]
    if output.ename == "KeyboardInterrupt":
        return []
    if output.ename == "AssertionError":        # a test's own assert: its text is the test's
        return ["A hidden test failed."]
    return [f"{output.ename}: {output.evalue}"]


def _hidden_lines(nb) -> list[str]:
    """The lines of every hidden block, longest first (a shorter one may be part of a longer)."""
    lines = {line.strip() for cell in nb.cells if cell.cell_type == "code" and _is_test(cell)
             for block in _HIDDEN.findall(cell.source) for line in block.splitlines()}
    lines = {line for line in lines if line and not line.startswith("### ")}
    return sorted(lines, key=len, reverse=True)


def machine_roots(*more) -> list[str]:
    """Folders of the grading machine a page must not show: the temporary folder (where every
    kernel and staging folder lives), Python's installation, the engine's and the grader's
    checkouts, home, and `more` (the course)."""
    import autograd_lab

    roots = {tempfile.gettempdir(), "/tmp", "/var/tmp", sys.prefix, sys.base_prefix,
             sys.exec_prefix, str(Path(autograd_lab.__file__).resolve().parents[1]),
             str(Path(__file__).resolve().parents[2]),
             os.path.expanduser("~"), "/home", "/root", "/proc", *map(str, more)}
    return sorted({r.rstrip("/") for r in roots if r and r.rstrip("/")}, key=len, reverse=True)


# the file IPython names a cell by, with the folders before it: a path starts where a run of
# path characters does (looked for from there only, so that a long run is read once, not
# once from each of its characters), or at the file's own name
_PATH_CHARS = r"[^\s\"'<>:,;()\[\]{}\x1b]"
_CELL_FILE = re.compile(rf"(?<!{_PATH_CHARS}){_PATH_CHARS}*/ipykernel_\d+/\d+\.py"
                        r"|ipykernel_\d+/\d+\.py")


def scrub_paths(text: str, roots: list[str]) -> str:
    """`text` without a path of the grading machine: the file IPython names a cell by becomes
    "[your cell]", a file of an installed package or of autograd_lab its name from the package
    on (``autograd_lab/_tensor.py``), any other path under `roots` "[a folder of the
    grader's]"."""
    text = _CELL_FILE.sub("[your cell]", text)
    if not roots:
        return text
    pattern = _under(tuple(roots))

    def short(match):
        path = match.group(0)
        for marker in ("/site-packages/", "/dist-packages/"):
            if marker in path:
                return path.split(marker, 1)[1]
        if "/autograd_lab/" in path:
            return "autograd_lab/" + path.split("/autograd_lab/", 1)[1]
        return "[a folder of the grader's]"
    return pattern.sub(short, text)


@functools.lru_cache(maxsize=16)
def _under(roots: tuple[str, ...]):
    return re.compile("(?:" + "|".join(re.escape(r) for r in roots) + r")(?![\w.-])"
                      + _PATH_CHARS + "*")


class HideTests(NbGraderPreprocessor):
    """Test cells without hidden tests, errors without tracebacks, outputs without a hidden
    test's text or a path of the grading machine."""

    machine_paths = List(Unicode(), help="Folders no page may show, besides machine_roots()'s "
                                         "(the course's).").tag(config=True)

    def preprocess(self, nb, resources):
        self._hidden = _hidden_lines(nb)
        self._roots = machine_roots(*self.machine_paths)
        # the page says from where the learner's cells show their own run's outputs (the
        # grader's run keeps what they printed once a hidden test had asked its questions)
        first = next((cell.metadata["nbgrader"].get("grade_id") for cell in nb.cells
                      if cell.cell_type == "code" and _is_test(cell)
                      and _HIDDEN.search(cell.source)), None)
        resources.setdefault("autograd_lab", {})["own_run_after"] = first
        return super().preprocess(nb, resources)

    def _scrub(self, text):
        if isinstance(text, list):
            text = "".join(text)
        for line in self._hidden:
            text = text.replace(line, "[a hidden test]")
        return scrub_paths(text, self._roots)

    def _scrub_outputs(self, cell):
        for output in outputs.of_cell(cell):
            output.rewrite(self._scrub, _shown_as_text, traceback=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code":
            self._scrub_outputs(cell)
        if cell.cell_type == "code" and _is_test(cell):
            cell.source = _HIDDEN.sub("", cell.source).rstrip()
            kept = []
            for output in outputs.of_cell(cell):
                if output.is_error():
                    lines = _learner_view(output)
                    if not lines:
                        continue
                    output.node["traceback"] = lines
                    output.node["evalue"] = "\n".join(lines)
                kept.append(output.node)
            cell.outputs = kept
        return cell, resources


class NotGradedYet(NbGraderPreprocessor):
    """Marks each graded cell that waits for a hand grade (no manual score, nbgrader asks for
    one), so the page says "not graded yet" there instead of nbgrader's 0, and the total says
    how many points wait; hands the page its content security policy; and gives it the grade
    export gives (``finals``: the score after the course's late policy, with the learner's own
    due date and every hand grade, from ``outcome.outcomes``), never nbgrader's own total and
    penalty, which autograde worked out before hand grades and extensions."""

    finals = Dict(help="student -> the grade export gives them: score, max_score, penalty, "
                       "late (how late, in words).").tag(config=True)

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            notebook = gb.find_submission_notebook(info["notebook"], info["assignment"],
                                                   info["student"])
            waiting = {g.name: g.max_score for g in notebook.grades
                       if g.manual_score is None and g.needs_manual_grade}
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade") and meta.get("grade_id") in waiting:
                meta["not_graded"] = True
        resources["autograd_lab"] = {"awaiting_points": sum(waiting.values()), "csp": page.CSP,
                                     "final": self.finals.get(info["student"])}
        return nb, resources


TEMPLATES = Path(__file__).resolve().parents[1] / "templates"


class _TemplateCode(BytecodeCache):
    """Compiled templates kept in memory. nbgrader makes a new exporter, so a new Jinja
    environment, for every page: without this each page compiled its nine templates again
    (a third of a second)."""

    def __init__(self):
        self._code = {}

    def load_bytecode(self, bucket):
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)       # (Jinja checks it against the source)

    def dump_bytecode(self, bucket):
        self._code[bucket.key] = bucket.bytecode_to_string()


_TEMPLATE_CODE = _TemplateCode()


@page._per_text
def _highlighted(source, language, magics):
    return Highlight2HTML(pygments_lexer=language)(
        source, language, {"magics_language": magics} if magics else None)


# Pygments takes 20 to 60 µs a character of a learner's code, more for some: a page highlights
# a cell of MAX_HIGHLIGHT characters at most, and MAX_PAGE_HIGHLIGHT in all (a lesson's code
# cells hold 4,891 characters at most); the rest is shown as it is, escaped
MAX_HIGHLIGHT = 10_000
MAX_PAGE_HIGHLIGHT = 50_000


class Highlight(Highlight2HTML):
    """nbconvert's code highlighting of one page, each cell's made once a process
    (page._per_text: the pages of a lesson show the same code cells, all but the learner's
    answers; a fifth of a page's time, before), bounded as MAX_HIGHLIGHT says. The feedback
    pages' and the formgrader's (formgrader.py)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.left = MAX_PAGE_HIGHLIGHT

    def __call__(self, source, language=None, metadata=None):
        if len(source) > min(MAX_HIGHLIGHT, self.left):
            self.left = 0               # (in order: what comes after is not highlighted either)
            return f'<div class="highlight"><pre>{html.escape(source)}</pre></div>'
        self.left -= len(source)
        if self.extra_formatter_options:        # (none configured here)
            return super().__call__(source, language, metadata)
        return _highlighted(source, language or self.pygments_lexer,
                            (metadata or {}).get("magics_language"))


class FeedbackExporter(patches.OnePassHTMLExporter):
    """nbconvert's HTML exporter, its templates compiled once a process, its code cells
    highlighted once a process, and without the pass over the finished page it makes last."""

    template_bytecode = _TEMPLATE_CODE

    def highlighter(self, lexer):
        return Highlight(pygments_lexer=lexer, parent=self)


@dataclass
class Written:
    pages: list[Path] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)      # students whose hand grades are due
    partial: list[str] = field(default_factory=list)      # written with answers not graded yet
    zip: Path | None = None
    not_in_zip: list[tuple[str, str]] = field(default_factory=list)   # student, why
    # every learner of the class given no page, and why (waiting, failed, missing, collected
    # again since grading); a page of theirs from before is removed (`removed`)
    not_written: list[tuple[str, str]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def final(out: Outcome, how_late) -> dict:
    """What a learner's page says of their grade: their outcome (``graded``: the score
    after the late policy; ``needs manual grading``: no score yet, and how late it was)."""
    return {"score": out.score, "max_score": out.max_score,
            "penalty": out.late_penalty or 0.0,
            "late": how_late(out, penalty=False) if out.late else "",
            "took": took(out) if out.late_penalty and out.score is not None else "",
            "due": lateness.show(out.when.due) if out.when and out.when.extended else ""}


def _page_only(folder: Path, lesson: str) -> Path:
    """The learner's page, and nothing else beside it: nbgrader's feedback copies every other
    file of the autograded folder there too (a file of the lesson's source folder that holds
    its hidden tests, say), and the folder is what is handed to learners."""
    page = folder / f"{lesson}.html"
    for other in list(folder.iterdir()):
        if other == page:
            continue
        if other.is_dir() and not other.is_symlink():
            shutil.rmtree(other)
        else:
            other.unlink()
    return page


def remove_page(course: Course, lesson: str, student: str) -> bool:
    """Take away a learner's feedback for a lesson (the folder nbgrader wrote it in): the work
    it describes is graded again, or replaced, or no longer graded. True if there was one."""
    folder = course.directory("feedback") / student / lesson
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
        return True
    if not folder.exists():
        return False
    shutil.rmtree(folder)
    return True


def _why_no_page(out) -> str:
    if out.status == status.MANUAL:
        return (f"waiting for hand grading ({', '.join(out.awaiting)}); --partial writes "
                f"the page")
    if out.status == status.FAILED:
        return f"failed: {out.reason}"
    if out.status == status.MISSING:
        return f"missing: {out.reason or 'no submission'}"
    if out.status == status.UNGRADED:
        return f"{status.UNGRADED}: {out.reason}; grade it first"
    return f"{out.status}: {out.reason}"


def feedback(course: Course, lesson: str, *, partial: bool = False,
             students: list[str] | None = None) -> Written:
    """Write feedback/<student>/<lesson>/<lesson>.html for every graded submission. One whose
    written answers wait for a hand grade waits too (listed), unless `partial`: its page then
    says "not graded yet" for them. Every other learner is listed with the reason they have no
    page, and a page left from before (an earlier submission, an earlier grading) is removed:
    the folder holds a page only for work as it is graded now."""
    everyone = outcomes(course, [lesson])
    finals = {out.student: final(out, how_late) for out in everyone
              if out.status in (status.GRADED, status.MANUAL)}
    api = course.api(
        NotGradedYet={"finals": finals},
        # (the notebook made inert first: nbgrader's grades and comments come after it)
        GenerateFeedback={"preprocessors": [InertNotebook, GetGrades, NotGradedYet, HideTests,
                                            CSSHTMLHeaderPreprocessor],
                          "exporter_class": FeedbackExporter},
        # (nbgrader's API names the template "feedback" whatever it is told: this package's
        # template of that name is found first, and nbgrader's own is off the search path)
        HTMLExporter={"extra_template_basedirs": [str(TEMPLATES)],
                      "filters": {"safe_markdown": page.safe_markdown,
                                  "clean_learner_html": page.clean}},
        HideTests={"machine_paths": [str(course.root), str(course.root.resolve())]})
    written = Written()
    seen = set()
    for out in everyone:
        seen.add(out.student)
        if students and out.student not in students:
            continue
        if out.status == status.MANUAL and partial:
            written.partial.append(out.student)
        elif out.status != status.GRADED:
            if out.status == status.MANUAL:
                written.waiting.append(out.student)
            written.not_written.append((out.student, _why_no_page(out)))
            if remove_page(course, lesson, out.student):
                written.removed.append(out.student)
            continue
        remove_page(course, lesson, out.student)    # (nothing of an older page stays beside it)
        result = api.generate_feedback(lesson, out.student, force=True)
        if not result["success"]:
            raise RuntimeError(f"feedback for {out.student} failed:\n{result.get('log', '')}")
        written.pages.append(_page_only(course.directory("feedback") / out.student / lesson,
                                        lesson))
    # a page of someone the course no longer has for this lesson (no submission, no record);
    # a learner taken out of the term keeps theirs (status.drop keeps their files)
    folder = course.directory("feedback")
    seen |= set(status.read_dropped(course))
    if not students and folder.is_dir():
        for other in sorted(p.name for p in folder.iterdir()):
            if other not in seen and remove_page(course, lesson, other):
                written.removed.append(other)
                written.not_written.append((other, "no submission or grade in the course"))
    return written


def lms_zip(course: Course, lesson: str, pages: list[Path], path: Path, kind: str) -> Zipped:
    """The pages as LMS `kind`'s feedback upload takes them back, zipped at `path`: Canvas's
    members named as each learner's file in the download collected last
    (``canvas.feedback_zip``), Moodle's with the learner's name and participant id from the
    roster (``moodle.feedback_zip``)."""
    if kind == canvas.CANVAS:
        return canvas.feedback_zip(pages, path, status.read_lms_files(course, lesson))
    from .roster import names

    return moodle.feedback_zip(pages, path, lesson, names(course))
