"""The LMSs a class comes from, Canvas (``canvas.py``) and Moodle (``moodle.py``): each one's
formats, read and written, in its own module; here what they share.

Their downloads (docs/maintainers/lms-formats.md, with their CSV files and what nbgrader keeps):
- Canvas ("Download Submissions"): one flat zip of
  ``<lastfirst>[_late]_<user id>_<submission id>_<original file name>``. ``lastfirst`` is the
  sortable name lower-cased without its non-letters, so two John Smiths are both ``smithjohn``:
  the user id is the only identity, and it is the id Canvas's gradebook export has in ``ID``.
- Moodle ("Download all submissions"): ``<Full Name>_<participant id>_assignsubmission_file_``
  either as a folder holding the learner's files or as a prefix of each file's name; the
  participant id is the same in both forms, and is what the grading worksheet's ``Identifier``
  (``Participant <id>``) holds.

Only the LMS's own part of a name is trusted: the learner chose the original file name, so it
is read for a lesson id and nothing else. Names are NFC-normalised (a zip made on macOS
spells ``ë`` as ``e`` and a combining diaeresis) and otherwise kept as they are.

Many Moodle sites let a learner choose their own full name, and Moodle's own download spells
an ``_`` of it as a space; a name whose ``_<digits>_assignsubmission_<plugin>_`` can be read in
more than one place (``Eve_1002_assignsubmission_file_x_1003_assignsubmission_file_...``) is
``ambiguous``: it names no one, and collect refuses it. Canvas's ``lastfirst`` is letters only,
so its user id is always the first run of digits after it. A name that becomes a path or a
zip member goes through ``path_part`` first.

Their own files (a roster: Canvas's gradebook export, Moodle's grading worksheet; the same
files filled with grades by ``export``) are CSV, read here as the LMS wrote them (``read_csv``:
its byte order mark and line ends are kept for the file written back).
"""
from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

CANVAS, MOODLE = "canvas", "moodle"
KINDS = (CANVAS, MOODLE)


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@dataclass(frozen=True)
class Identity:
    """A learner as the LMS names them in a download, and the file they handed in."""
    lms: str
    student: str            # the LMS's id: Canvas user id, Moodle participant id ("" if ambiguous)
    name: str               # Moodle's full name; "" for Canvas (its file names lose the name)
    file: str               # the learner's own file name
    late: bool = False      # Canvas's _late mark
    plugin: str = "file"    # Moodle's submission plugin (file, onlinetext)
    ambiguous: tuple[str, ...] = ()     # Moodle: the ids a name can be read as, when several


# what never goes into a path or a zip member's name: control characters (NUL, tab, newline
# included), path separators, what Windows refuses in a name, what Moodle's clean_filename
# drops (& ' `), and the marks that reverse how text reads (they disguise an extension)
_NOT_IN_A_PATH = re.compile("[\x00-\x1f\x7f-\x9f/\\\\:*?\"<>|&'`\u202a-\u202e\u2066-\u2069]")


def path_part(text: str) -> str:
    """`text` (a learner's or an LMS's name) as one safe path component or zip member name
    part: NFC, without separators, control characters or a leading dot, and no `..` in it
    (a run of dots is one); may be ""."""
    text = _NOT_IN_A_PATH.sub("", nfc(text))
    text = re.sub(r"\.{2,}", ".", re.sub(r"\s+", " ", text))
    return text.strip(" .")


# -- a roster's learners and their names --------------------------------------------------

@dataclass(frozen=True)
class Learner:
    student: str
    name: str
    email: str = ""


def column(headers: list[str], *names: str) -> str | None:
    """The header among `headers` that is one of `names` (case and spaces aside), or None."""
    lowered = {h.strip().lower(): h for h in headers}
    for name in names:
        if name.lower() in lowered:
            return lowered[name.lower()]
    return None


def split_name(name: str) -> tuple[str | None, str | None]:
    """nbgrader's (first, last) for a display name: Canvas's sortable ``Last, First`` is split
    at its comma; any other name is kept whole as the last name (splitting a full name into
    parts is a guess that is wrong for many names, and the whole name sorts as written)."""
    if "," in name:
        last, _, first = name.partition(",")
        return first.strip() or None, last.strip() or None
    return None, name or None


# -- an LMS's own CSV files, filled with grades ---------------------------------------------

@dataclass
class Filled:
    """An LMS's file filled with grades (``canvas.fill_gradebook``, ``moodle.fill_worksheet``):
    its rows (``table``), and what was filled, left empty and why, late, or scaled."""
    table: list[list[str]] = field(default_factory=list)    # the file's rows, filled
    path: Path | None = None                                 # where it was written
    filled: int = 0
    left_empty: list[tuple[str, str, str, str]] = field(default_factory=list)  # student, name, lesson, why
    not_in_file: list[tuple[str, str]] = field(default_factory=list)          # student, lesson
    columns: dict[str, str] = field(default_factory=dict)                      # lesson -> column
    late: list[tuple[str, str, str, str]] = field(default_factory=list)       # student, name, lesson, how
    scaled: dict[str, tuple[float, float]] = field(default_factory=dict)       # lesson -> (ours, theirs)


@dataclass
class Zipped:
    """A zip of feedback pages an LMS takes back (``canvas.feedback_zip``,
    ``moodle.feedback_zip``): the pages in it, and who is not, and why."""
    zip: Path
    pages: list[Path] = field(default_factory=list)
    not_in_zip: list[tuple[str, str]] = field(default_factory=list)   # student, why


def read_csv(path: Path):
    """(rows of cells, whether it has a byte order mark, its line end) of an LMS's CSV file."""
    raw = Path(path).read_bytes()
    bom = raw.startswith(b"\xef\xbb\xbf")
    text = raw.decode("utf-8-sig")
    newline = "\r\n" if "\r\n" in text else "\n"
    table = list(csv.reader(io.StringIO(text, newline="")))
    if not table:
        raise ValueError(f"{path} is empty")
    return table, bom, newline


def points(value: float) -> str:
    return f"{value:.2f}"


def number(text: str) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None
