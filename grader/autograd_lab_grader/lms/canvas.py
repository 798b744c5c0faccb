"""Canvas: its submissions download, its gradebook export read as a roster, and that export
filled with the lessons' grades for Grades > Import.

- "Download Submissions": one flat zip of
  ``<lastfirst>[_late]_<user id>_<submission id>_<original file name>`` (``identify``); the
  ``_late`` mark is Canvas's word on lateness, for each learner's own due date
  (``submitted_at``).
- The gradebook export (Grades > Export): ``Student`` (``Last, First``) and ``ID`` (the Canvas
  user id, the number in its submission file names); its ``Points Possible`` row and any row
  without an id (the read-only marker row) are not learners, nor is Canvas's Test Student
  (``Student, Test``: the student view's learner every course has), which is left out
  (``read_roster``). ``fill_gradebook`` fills the lessons' columns of its rows from their
  outcomes (``gradebook/outcome.py``), for export to write back.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

from ..gradebook.outcome import Outcome, how_late, why_empty
from . import CANVAS, Filled, Identity, Learner, Zipped, column, nfc, number, points

# (ids are ASCII digits: `\d` would take any script's digits, `١٠٠٢` or `１００２`)
_CANVAS = re.compile(r"^(?P<sortable>[^\W\d_]*)(?P<late>_late)?_(?P<user>[0-9]+)_"
                     r"(?P<submission>[0-9]+)_(?P<file>.+)$")


def identify(parts: list[str]) -> Identity | None:
    """The identity in a Canvas download entry (flat: one part), or None."""
    if len(parts) != 1:
        return None
    match = _CANVAS.match(nfc(parts[0]))
    if not match:
        return None
    return Identity(CANVAS, match["user"], "", match["file"], late=bool(match["late"]))


def submitted_at(when: datetime | None, due: datetime | None, late: bool) -> datetime | None:
    """A submission's time (naive UTC), moved across the lesson's due date where Canvas's late
    mark says otherwise (Canvas knows each learner's own due date, extensions included;
    nbgrader knows one)."""
    if due is not None and late and (when is None or when <= due):
        return due + timedelta(seconds=1)
    if due is not None and not late and when is not None and when > due:
        return due
    return when


# what Canvas calls the learner of its student view, in the gradebook (sortable) and elsewhere
TEST_STUDENT = ("Student, Test", "Test Student")


def read_roster(headers: list[str], rows: list[dict]
                ) -> tuple[list[Learner], list[Learner]] | None:
    """(learners, who was left out: the Test Student) of a gradebook export's header and rows;
    None when it is not one."""
    if not (column(headers, "Student") and column(headers, "ID")):
        return None
    learners, left_out = [], []
    for row in rows:
        student, name = row.get("ID", "").strip(), row.get("Student", "").strip()
        if not student.isdigit() or name.startswith("Points Possible"):
            continue
        if name in TEST_STUDENT:
            left_out.append(Learner(student, name))
            continue
        learners.append(Learner(student, nfc(name), row.get("SIS Login ID", "").strip()
                                if "@" in row.get("SIS Login ID", "") else ""))
    return learners, left_out


_FIXED = {"Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Integration ID",
          "Root Account"}


def lesson_column(headers: list[str], lesson: str) -> str:
    """The gradebook column of a lesson's assignment: its title (``<name> (<id>)``) holds the
    lesson id, or the lesson's number and a word of its name (``Lesson 02: scalar backward``);
    ValueError unless exactly one does."""
    assignments = [h for h in headers if re.search(r"\(\d+\)\s*$", h) and h not in _FIXED]
    lesson_number = int(lesson.split("_")[0]) if lesson.split("_")[0].isdigit() else None
    words = [w for w in lesson.lower().split("_")[1:] if len(w) >= 4]

    def matches(title):
        name = re.sub(r"\s*\(\d+\)\s*$", "", title)
        if lesson.lower() in name.lower():
            return True
        numbers = [int(n) for n in re.findall(r"\d+", name)]
        return lesson_number in numbers and any(w in name.lower() for w in words)

    found = [h for h in assignments if matches(h)]
    if len(found) != 1:
        raise ValueError(f"{'no' if not found else 'several'} assignment column of the gradebook "
                         f"for {lesson} ({'; '.join(found or assignments)}): name it with "
                         f"--column '{lesson}=<column title>'")
    return found[0]


def fill_gradebook(table: list[list[str]], outs: list[Outcome], lessons: list[str],
                   columns: dict[str, str] | None = None, source: str = "gradebook") -> Filled:
    """Canvas's gradebook export (`table`: its rows, as ``read_csv`` reads them) with the
    columns of `lessons` filled from `outs` (points scaled to the column's Points Possible),
    in ``Filled.table``; everything else as it was, `table` itself unchanged. Rows are
    matched by ``ID``; `columns` names a lesson's column where its title does not say, and
    `source` names the file in an error (ValueError)."""
    table = [list(row) for row in table]
    headers = [h.strip() for h in table[0]]
    if "ID" not in headers or "Student" not in headers:
        raise ValueError(f"{source}: not Canvas's gradebook export (no Student and ID columns)")
    id_at = headers.index("ID")
    result = Filled(table)
    for lesson in lessons:
        title = (columns or {}).get(lesson) or lesson_column(headers, lesson)
        if title not in headers:
            raise ValueError(f"{source} has no column {title!r}")
        result.columns[lesson] = title
    possible = next((row for row in table[1:] if row and row[0].strip() == "Points Possible"), None)
    by_key = {(o.lesson, o.student): o for o in outs if o.lesson in result.columns}
    seen = set()
    for row in table[1:]:
        if len(row) <= id_at or not row[id_at].strip().isdigit() or row is possible:
            continue
        student = row[id_at].strip()
        for lesson, title in result.columns.items():
            out = by_key.get((lesson, student))
            if out is None:
                continue
            seen.add((lesson, student))
            at = headers.index(title)
            while len(row) <= at:
                row.append("")
            if not out.has_score:
                row[at] = ""
                result.left_empty.append((student, out.name, lesson, why_empty(out)))
                continue
            score = out.score
            theirs = number(possible[at]) if possible and len(possible) > at else None
            if theirs and out.max_score and theirs != out.max_score:
                score = score * theirs / out.max_score
                result.scaled[lesson] = (out.max_score, theirs)
            row[at] = points(score)
            result.filled += 1
            if out.late:
                result.late.append((student, out.name, lesson, how_late(out)))
    result.not_in_file = sorted((o.student, o.lesson) for o in by_key.values()
                                if (o.lesson, o.student) not in seen)
    return result


def feedback_zip(pages: list[Path], path: Path, named: dict[str, tuple[str, str]]) -> Zipped:
    """The pages as Canvas's "Re-upload Submissions" (the assignment's page, beside "Download
    Submissions") takes them back: one zip, a member per learner named as that learner's file
    in the download collected last (``<lastfirst>[_late]_<user id>_<submission id>_<file>``,
    which Canvas matches to the learner and their submission by its two ids), holding their
    page; Canvas attaches each as a comment file on that submission. `named` is {student: (the
    LMS, the download's file name)} (``status.read_lms_files``); a learner whose submission
    came from no Canvas download is listed, not zipped."""
    import zipfile

    from . import path_part

    result = Zipped(Path(path))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    used = set()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for page_path in pages:
            student = page_path.parent.parent.name
            kind, name = named.get(student, (None, ""))
            # (the download's name, as Canvas wrote it: its own part is letters and digits,
            # the learner's file name after it is made a safe member name all the same)
            found = identify([name]) if kind == CANVAS else None
            if found is None or found.student != student:
                result.not_in_zip.append((student, "not collected from a Canvas download "
                                                   "(Canvas matches a file by its name there)"))
                continue
            member = path_part(name)
            if member in used:
                result.not_in_zip.append((student, f"a second page named {member!r}"))
                continue
            used.add(member)
            archive.write(page_path, member)
            result.pages.append(page_path)
    return result
