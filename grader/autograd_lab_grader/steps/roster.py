"""Who is in the class: read from the LMS's own file, kept in nbgrader's Student table.

A learner on the roster who hands nothing in is ``missing`` in every export, instead of not
being there at all. Three files are read, recognised by their headers (a real export may
carry more columns, so columns are found by name, never by position):
  - Canvas's gradebook export (``lms/canvas.py``), without Canvas's Test Student;
  - Moodle's grading worksheet (``lms/moodle.py``);
  - a plain CSV with ``id`` and ``name`` (``email`` optional), for anything else.
The LMS's id is the student id (the folder under submitted/), and nbgrader's ``lms_user_id``
too; names are kept as written (NFC), never turned into ids, but for ``<`` and ``>``, kept as
``‹`` and ``›``: nbgrader's formgrader writes a learner's name into its page as markup, and
a learner chooses their own name on many LMSs.
"""
from __future__ import annotations

import csv
from pathlib import Path

from ..course import Course
from ..gradebook.outcome import display_name
from ..lms import Learner, column, nfc, path_part, split_name
from ..lms import canvas, moodle


def _read_csv(path: Path) -> tuple[list[str], list[dict]]:
    with Path(path).open(newline="", encoding="utf-8-sig") as f:   # Canvas writes a BOM
        reader = csv.DictReader(f)
        return [h.strip() for h in reader.fieldnames or []], list(reader)


def read(path: Path) -> tuple[str, list[Learner], list[Learner]]:
    """(which file it is, its learners, who was left out: Canvas's Test Student); ValueError
    when it is none of the three."""
    headers, rows = _read_csv(path)
    rows = [{(k or "").strip(): (v or "") for k, v in row.items()} for row in rows]
    for kind, lms_module in (("canvas gradebook", canvas), ("moodle grading worksheet", moodle)):
        found = lms_module.read_roster(headers, rows)
        if found is not None:
            return (kind, *found)
    learners = []
    id_column, name_column = column(headers, "id"), column(headers, "name")
    if id_column and name_column:
        email_column = column(headers, "email")
        for row in rows:
            student = nfc(row.get(id_column, "").strip())
            if student and path_part(student) != student:
                # (the id becomes a folder name: submitted/<id>/, feedback/<id>/)
                raise ValueError(f"{path}: the id {student!r} cannot be a folder name (no / \\ "
                                 ": * ? \" < > | & ' `, control character or leading dot)")
            if student:
                learners.append(Learner(student, nfc(row.get(name_column, "").strip()),
                                        row.get(email_column, "").strip() if email_column else ""))
        return "id,name list", learners, []
    raise ValueError(f"{path}: not a Canvas gradebook export (Student, ID), a Moodle grading "
                     "worksheet (Identifier, Full name) or a CSV with id and name columns; "
                     f"its columns: {', '.join(headers)}")


def add_learners(course: Course, learners, *, overwrite: bool = True) -> tuple[int, int]:
    """Create or update nbgrader students from (id, name, email); returns (added, updated).
    overwrite=False only fills in a name where there is none (collect's names never replace
    the roster's)."""
    from nbgrader.api import MissingEntry

    added = updated = 0
    with course.gradebook() as gb:
        for student, name, email in learners:
            first, last = split_name(name.replace("<", "\u2039").replace(">", "\u203a"))
            try:
                row = gb.find_student(student)
            except MissingEntry:
                gb.add_student(student, first_name=first, last_name=last, email=email or None,
                               lms_user_id=student)
                added += 1
                continue
            if not overwrite and (row.first_name or row.last_name):
                continue
            changes = dict(first_name=first, last_name=last, lms_user_id=student)
            if email:
                changes["email"] = email
            if any(getattr(row, k) != v for k, v in changes.items()):
                gb.update_or_create_student(student, **changes)
                updated += 1
    return added, updated


def roster(course: Course, path: Path) -> tuple[str, list[Learner], int, int, list[Learner]]:
    """Read the roster file and put its learners into nbgrader's Student table; returns (kind,
    learners, added, updated, left out). A learner left out whom an earlier roster put in the
    Student table, with nothing handed in, is taken out of it."""
    kind, learners, left_out = read(path)
    seen = {}
    for learner in learners:
        if learner.student in seen and seen[learner.student] != learner:
            raise ValueError(f"{path}: id {learner.student} is on two rows "
                             f"({seen[learner.student].name!r}, {learner.name!r})")
        seen[learner.student] = learner
    added, updated = add_learners(course, [(l.student, l.name, l.email) for l in learners])
    if left_out:
        from nbgrader.api import MissingEntry

        with course.gradebook() as gb:
            for learner in left_out:
                try:
                    if not gb.find_student(learner.student).submissions:
                        gb.remove_student(learner.student)
                except MissingEntry:
                    pass
    return kind, learners, added, updated, left_out


def names(course: Course) -> dict[str, str]:
    """{student id: display name} of every learner nbgrader knows."""
    with course.gradebook() as gb:
        return {s.id: display_name(s) for s in gb.students}
