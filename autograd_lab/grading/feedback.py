"""Per-learner HTML feedback: nbgrader's feedback pages, without what must stay with the grader.

nbgrader's page shows every test cell whole (hidden tests included) and every traceback (a
failing hidden test's traceback prints its line). ``HideTests`` runs before nbgrader renders
the page: test cells lose their hidden block, and their errors keep only what a learner should
read: a check's message (``CheckFailed: ... Misconception [id]: ...``), or the kind of error
their own code raised, never a traceback, and a bare "a hidden test failed" for an ``assert``.
A learner's code can read a test cell while it runs (an IPython hook, the caller's frame) and
print it or put it in an error: every line of a hidden block is blanked out of every output.
"""
from __future__ import annotations

import re

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import GetGrades, NbGraderPreprocessor

from . import status
from .course import Course

_HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[ \t]*\n?",
                     re.DOTALL | re.MULTILINE)


def _is_test(cell) -> bool:
    meta = cell.metadata.get("nbgrader", {})
    return meta.get("grade", False) and not meta.get("solution", False)


def _learner_view(output) -> list[str]:
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


class HideTests(NbGraderPreprocessor):
    """Test cells without hidden tests, errors without tracebacks, outputs without a hidden
    test's text."""

    def preprocess(self, nb, resources):
        self._hidden = _hidden_lines(nb)
        return super().preprocess(nb, resources)

    def _scrub(self, text):
        if isinstance(text, list):
            text = "".join(text)
        for line in self._hidden:
            text = text.replace(line, "[a hidden test]")
        return text

    def _scrub_outputs(self, cell):
        for output in cell.get("outputs", []):
            if "text" in output:
                output.text = self._scrub(output.text)
            for mime, value in output.get("data", {}).items():
                if mime.startswith("text/") or mime.endswith(("+json", "/json")):
                    if isinstance(value, (str, list)):
                        output.data[mime] = self._scrub(value)
            if "evalue" in output:
                output.evalue = self._scrub(output.evalue)
                output.traceback = [self._scrub(line) for line in output.traceback]

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code":
            self._scrub_outputs(cell)
        if cell.cell_type == "code" and _is_test(cell):
            cell.source = _HIDDEN.sub("", cell.source).rstrip()
            outputs = []
            for output in cell.outputs:
                if output.output_type == "error":
                    lines = _learner_view(output)
                    if not lines:
                        continue
                    output.traceback = lines
                    output.evalue = "\n".join(lines)
                outputs.append(output)
            cell.outputs = outputs
        return cell, resources


def feedback(course: Course, lesson: str) -> list:
    """Write feedback/<student>/<lesson>/<lesson>.html for every graded submission."""
    api = course.api(GenerateFeedback={"preprocessors": [GetGrades, HideTests,
                                                         CSSHTMLHeaderPreprocessor]})
    pages = []
    for (_, student), row in sorted(status.read(course, lesson).items()):
        if row["status"] not in (status.GRADED, status.MANUAL):
            continue
        result = api.generate_feedback(lesson, student, force=True)
        if not result["success"]:
            raise RuntimeError(f"feedback for {student} failed:\n{result.get('log', '')}")
        pages.append(course.directory("feedback") / student / lesson / f"{lesson}.html")
    return pages
