"""Grade a lesson again after its tests changed: a hidden test fixed in solutions/, points
moved, a check's message reworded.

nbgrader grades a test cell as the gradebook keeps it (autograde puts every test cell back
from there, hidden tests included), and the gradebook has it from the lesson's last release:
an edit in solutions/ counts once the lesson is released again (``release``: nbgrader's
generate_assignment, which also writes the learners' notebook, unchanged where only a hidden
test changed). Then every submission is graded again, by force: a written answer keeps its
hand grade (nbgrader keeps ``manual_score`` through autograde; an answer collected since with
other text was asked for again by collect), and the feedback pages that there were are
written again with the new scores (a page of work no longer graded as it was is removed).
"""
from __future__ import annotations


from ..course import Course


def pages_of(course: Course, lesson: str) -> set[str]:
    """The learners who have a feedback page for `lesson`."""
    folder = course.directory("feedback")
    if not folder.is_dir():
        return set()
    return {p.parent.parent.name for p in folder.glob(f"*/{lesson}/{lesson}.html")}


def release_again(course: Course, lesson: str) -> bool:
    """Release `lesson` again from solutions/, so the gradebook holds its tests as they are
    now; True when the learners' notebook changed with it (a visible test or the text: the
    learners' repository is then behind, ``student-repo`` writes it again). ValueError with
    nbgrader's log when it cannot be released."""
    from .release import release

    notebook = course.directory("release") / lesson / f"{lesson}.ipynb"
    before = notebook.read_bytes() if notebook.is_file() else None
    for _, ok, log, _ in release(course, [lesson]):
        if not ok:
            raise ValueError(f"{lesson} could not be released again:\n{log}")
    return notebook.read_bytes() != before


def refresh_pages(course: Course, lesson: str, had: set[str]):
    """Write again the pages of `had` (the learners who had one before grading again): a
    graded learner's with the new score, one whose written answers wait again says "not
    graded yet" as a --partial page does; any other page is removed (feedback's rules)."""
    from .feedback import feedback

    if not had:
        return None
    return feedback(course, lesson, partial=True, students=sorted(had))
