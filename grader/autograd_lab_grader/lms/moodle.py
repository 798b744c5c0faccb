"""Moodle: its submissions download, its grading worksheet read as a roster and filled with a
lesson's grades, and the feedback zip its assignment takes back.

- "Download all submissions": ``<Full Name>_<participant id>_assignsubmission_file_``, either
  as a folder holding the learner's files or as a prefix of each file's name (``identify``).
  The full name is the learner's own choice on many Moodle sites: a name Moodle's part can be
  read from in more than one place names no one (``ambiguous``), and a name that is not the
  one the roster has for its participant id is not theirs (``same_name``).
- The grading worksheet: ``Identifier`` (``Participant <id>``), ``Full name``, ``Email
  address`` (``read_roster``); ``fill_worksheet`` fills its Grade and Feedback comments
  from one lesson's outcomes (``gradebook/outcome.py``), for export to write back.
- "Upload multiple feedback files in a zip": ``feedback_zip``, each page named with the
  learner's download prefix (``prefix``).
"""
from __future__ import annotations

import re
import zipfile
from pathlib import Path

from ..gradebook.outcome import Outcome, how_late, show_number, why_empty, yes
from . import MOODLE, Filled, Identity, Learner, Zipped, column, nfc, number, path_part, points

# Moodle's own part of a name: every place it can be read (overlapping ones too: in
# `Eve_1002_assignsubmission_file_1003_assignsubmission_file_` the `_` before 1003 ends one
# and starts the next)
_MOODLE_PART = r"_(?P<participant>[0-9]+)_assignsubmission_(?P<plugin>[a-z]+)_"
_MOODLE_MARK = re.compile(f"(?={_MOODLE_PART})")
_MOODLE_AT = re.compile(_MOODLE_PART)


def _marks(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, participant id, plugin) of every place Moodle's part can be read."""
    found = (_MOODLE_AT.match(text, mark.start()) for mark in _MOODLE_MARK.finditer(text))
    return [(m.start(), m.end(), m["participant"], m["plugin"]) for m in found]


def identify(parts: list[str]) -> Identity | None:
    """The identity in a Moodle download entry, folder form (two parts: the learner's folder
    and a file directly in it) or flat form (one part), or None. A name Moodle's part can be
    read from in more than one place gives an identity of no one (``ambiguous``)."""
    if len(parts) not in (1, 2):
        return None
    head = nfc(parts[0])
    marks = _marks(head)
    if not marks:
        return None
    if len(marks) > 1:
        ids = tuple(dict.fromkeys(participant for _, _, participant, _ in marks))
        file = nfc(parts[1]) if len(parts) == 2 else ""
        return Identity(MOODLE, "", "", file, plugin=marks[-1][3], ambiguous=ids)
    (start, end, participant, plugin), = marks
    rest = head[end:]
    if len(parts) == 2:
        if rest:                    # a folder's name ends at its plugin's `_`
            return None
        file = nfc(parts[1])
    else:
        if not rest:
            return None
        file = rest
    return Identity(MOODLE, participant, head[:start].strip(), file, plugin=plugin)


def _name_key(name: str) -> str:
    """A full name as Moodle's download and its worksheet both spell it: letters and digits
    only, case folded (Moodle's download turns `_` into a space and drops ' & : and the like)."""
    return "".join(c for c in nfc(name).casefold() if c.isalnum())


def same_name(said: str, known: str) -> bool:
    """Whether a download's name is the roster's: also when one of them is ``Last, First``."""
    def keys(name):
        last, comma, first = name.partition(",")
        return {_name_key(name)} | ({_name_key(first + last)} if comma else set())
    return bool(keys(said) & keys(known))


def read_roster(headers: list[str], rows: list[dict]
                ) -> tuple[list[Learner], list[Learner]] | None:
    """(learners, no one left out) of a grading worksheet's header and rows; None when it is
    not one."""
    if not (column(headers, "Identifier") and column(headers, "Full name")):
        return None
    learners = []
    for row in rows:
        match = re.fullmatch(r"\s*Participant\s+(\d+)\s*", row.get("Identifier", ""))
        if match:
            learners.append(Learner(match[1], nfc(row.get("Full name", "").strip()),
                                    row.get("Email address", "").strip()))
    return learners, []


def prefix(name: str, participant: str) -> str:
    """What Moodle's "upload multiple feedback files in a zip" matches a file to a learner by:
    Moodle reads the participant id as the second `_`-separated field, so the name's own `_`
    become spaces (as in Moodle's download), and it is a safe name (``path_part``)."""
    return f"{path_part(name.replace('_', ' '))}_{participant}_"


_COMMENT_CELL, _COMMENTS = 1000, 4000      # characters: a comment, all of a learner's


def _plain(text: str, most: int) -> str:
    """A grader's comment as one line of plain text (Moodle shows its comments as HTML: an
    angle bracket or an ampersand is shown, never read as markup), at most `most` characters."""
    import html

    text = html.escape(re.sub(r"\s+", " ", "".join(c if c.isprintable() else " " for c in text))
                       .strip(), quote=False)
    return text if len(text) <= most else text[:most - 1].rstrip() + "…"


def comment(out: Outcome) -> str:
    """What Moodle's Feedback comments gets of an outcome: the score, lateness, and the
    grader's comments."""
    text = (f"{show_number(out.score)} of {show_number(out.max_score)} points"
            + (f" ({how_late(out)})" if out.late else "") + ".")
    for cell_name, said in out.comments:
        text += f" {cell_name}: {_plain(said, _COMMENT_CELL)}"
    text = text if len(text) <= _COMMENTS else text[:_COMMENTS - 1].rstrip() + "…"
    return text + " Your feedback page shows what each check found."


def fill_worksheet(table: list[list[str]], outs: list[Outcome], lesson: str,
                   source: str = "worksheet") -> Filled:
    """Moodle's grading worksheet for one lesson's assignment (`table`: its rows, as
    ``read_csv`` reads them) with Grade (scaled to its Maximum grade) and Feedback comments
    filled from the lesson's outcomes among `outs`, in ``Filled.table``; `table` itself
    unchanged. Rows are matched by Identifier (``Participant <id>``), a row Moodle says cannot
    be changed is left alone; `source` names the file in an error (ValueError)."""
    table = [list(row) for row in table]
    headers = [h.strip() for h in table[0]]
    for needed in ("Identifier", "Grade"):
        if needed not in headers:
            raise ValueError(f"{source}: not Moodle's grading worksheet (no {needed} column)")
    if "Late" not in headers:       # (Moodle's upload reads Identifier, Grade, Feedback comments)
        headers.append("Late")
        table[0].append("Late")
    at = {h: headers.index(h) for h in headers}
    result = Filled(table, columns={lesson: "Grade"})
    by_student = {o.student: o for o in outs if o.lesson == lesson}
    seen = set()
    for row in table[1:]:
        match = re.fullmatch(r"\s*Participant\s+(\d+)\s*", row[at["Identifier"]] if row else "")
        if not match or match[1] not in by_student:
            continue
        out = by_student[match[1]]
        seen.add(out.student)
        while len(row) < len(headers):
            row.append("")
        row[at["Late"]] = yes(out.late)
        if "Grade can be changed" in at and row[at["Grade can be changed"]].strip().lower() == "no":
            result.left_empty.append((out.student, out.name, lesson,
                                      "Moodle says its grade cannot be changed"))
            continue
        said = ""
        if not out.has_score:
            row[at["Grade"]] = ""
            result.left_empty.append((out.student, out.name, lesson, why_empty(out)))
        else:
            most = number(row[at["Maximum grade"]]) if "Maximum grade" in at else None
            score = out.score
            if most and out.max_score and most != out.max_score:
                score = score * most / out.max_score
                result.scaled[lesson] = (out.max_score, most)
            row[at["Grade"]] = points(score)
            said = comment(out)
            result.filled += 1
            if out.late:
                result.late.append((out.student, out.name, lesson, how_late(out)))
        if "Feedback comments" in at and said:
            row[at["Feedback comments"]] = said
    result.not_in_file = sorted((s, lesson) for s in by_student if s not in seen)
    return result


def feedback_zip(pages: list[Path], path: Path, lesson: str, known: dict[str, str]) -> Zipped:
    """The pages as Moodle's "upload multiple feedback files in a zip" reads them: each named
    with the learner's download prefix, ``<Full Name>_<participant id>_``, then
    ``assignsubmission_file_<lesson>-feedback.html``. The name is the learner's own choice on
    many Moodle sites: it goes in as ``prefix`` makes it safe (no separator, no ``..``, no
    leading dot, its ``_`` spaces), so every member is one file at the zip's top. `known` is
    {participant id: full name} (``roster.names``)."""
    result = Zipped(Path(path))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for page_path in pages:
            student = page_path.parent.parent.name
            if not (student.isascii() and student.isdigit()):
                result.not_in_zip.append((student, "not a Moodle participant id"))
                continue
            if not known.get(student):
                result.not_in_zip.append((student, "no name (collect a Moodle download or "
                                                   "read its worksheet with `roster` first)"))
                continue
            name = f"{prefix(known[student], student)}assignsubmission_file_{lesson}-feedback.html"
            archive.write(page_path, name)
            result.pages.append(page_path)
    return result
