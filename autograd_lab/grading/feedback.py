"""Per-learner HTML feedback: nbgrader's feedback pages, without what must stay with the grader.

nbgrader's page shows every test cell whole (hidden tests included) and every traceback (a
failing hidden test's traceback prints its line). ``HideTests`` runs before nbgrader renders
the page: test cells lose their hidden block, and their errors keep only what a learner should
read: a check's message (``CheckFailed: ... Misconception [id]: ...``), or the kind of error
their own code raised, never a traceback, and a bare "a hidden test failed" for an ``assert``.
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


class HideTests(NbGraderPreprocessor):
    """Test cells without hidden tests, errors without tracebacks."""

    def preprocess_cell(self, cell, resources, index):
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
