"""Who handed a file in, read from the names an LMS gives its downloads (../shared/lms-formats.md).

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
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

CANVAS, MOODLE = "canvas", "moodle"
KINDS = (CANVAS, MOODLE)

# (ids are ASCII digits: `\d` would take any script's digits, `١٠٠٢` or `１００２`)
_CANVAS = re.compile(r"^(?P<sortable>[^\W\d_]*)(?P<late>_late)?_(?P<user>[0-9]+)_"
                     r"(?P<submission>[0-9]+)_(?P<file>.+)$")
# Moodle's own part of a name: every place it can be read (overlapping ones too: in
# `Eve_1002_assignsubmission_file_1003_assignsubmission_file_` the `_` before 1003 ends one
# and starts the next)
_MOODLE_PART = r"_(?P<participant>[0-9]+)_assignsubmission_(?P<plugin>[a-z]+)_"
_MOODLE_MARK = re.compile(f"(?={_MOODLE_PART})")
_MOODLE_AT = re.compile(_MOODLE_PART)


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


def canvas(parts: list[str]) -> Identity | None:
    """The identity in a Canvas download entry (flat: one part), or None."""
    if len(parts) != 1:
        return None
    match = _CANVAS.match(nfc(parts[0]))
    if not match:
        return None
    return Identity(CANVAS, match["user"], "", match["file"], late=bool(match["late"]))


def _moodle_marks(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, participant id, plugin) of every place Moodle's part can be read."""
    found = (_MOODLE_AT.match(text, mark.start()) for mark in _MOODLE_MARK.finditer(text))
    return [(m.start(), m.end(), m["participant"], m["plugin"]) for m in found]


def moodle(parts: list[str]) -> Identity | None:
    """The identity in a Moodle download entry, folder form (two parts: the learner's folder
    and a file directly in it) or flat form (one part), or None. A name Moodle's part can be
    read from in more than one place gives an identity of no one (``ambiguous``)."""
    if len(parts) not in (1, 2):
        return None
    head = nfc(parts[0])
    marks = _moodle_marks(head)
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


def identify(kind: str, parts: list[str]) -> Identity | None:
    return (canvas if kind == CANVAS else moodle)(parts)


def _looks(kind: str, parts: list[str]) -> bool:
    """Whether an entry is named the LMS's way at the level the LMS names: Canvas's flat name,
    or Moodle's learner folder (whatever is inside it) or flat name. Such an entry may still
    be refused when placed (a folder inside a Moodle learner's folder)."""
    if kind == MOODLE and len(parts) > 2:
        found = moodle(parts[:1] + ["-"])
        return found is not None
    return identify(kind, parts) is not None


def detect(names: list[list[str]]) -> tuple[str | None, str]:
    """(the LMS a download comes from, or None; a hint when it is not recognised). A download
    is recognised when every file in it has one LMS's form: one stray name in another form
    makes it a plain folder (the instructor says --lms to read it as the LMS's anyway)."""
    counts = {kind: sum(_looks(kind, parts) for parts in names) for kind in KINDS}
    for kind, n in counts.items():
        if names and n == len(names):
            return kind, ""
    partly = [f"{n} of {len(names)} names in {kind.capitalize()}'s form"
              for kind, n in counts.items() if n]
    return None, ("; ".join(partly) + ": read as a plain folder (--lms says otherwise)"
                  if partly else "")


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


def moodle_prefix(name: str, participant: str) -> str:
    """What Moodle's "upload multiple feedback files in a zip" matches a file to a learner by:
    Moodle reads the participant id as the second `_`-separated field, so the name's own `_`
    become spaces (as in Moodle's download), and it is a safe name (``path_part``)."""
    return f"{path_part(name.replace('_', ' '))}_{participant}_"
