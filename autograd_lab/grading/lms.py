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
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

CANVAS, MOODLE = "canvas", "moodle"
KINDS = (CANVAS, MOODLE)

_CANVAS = re.compile(r"^(?P<sortable>[^\W\d_]+)(?P<late>_late)?_(?P<user>\d+)_(?P<submission>\d+)_"
                     r"(?P<file>.+)$")
# the learner's name comes first and may hold anything, underscores included: the first
# `_<digits>_assignsubmission_<plugin>_` ends it (what follows is the learner's file name)
_MOODLE = re.compile(r"^(?P<name>.+?)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z]+)_"
                     r"(?P<file>.*)$")


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@dataclass(frozen=True)
class Identity:
    """A learner as the LMS names them in a download, and the file they handed in."""
    lms: str
    student: str            # the LMS's id: Canvas user id, Moodle participant id
    name: str               # Moodle's full name; "" for Canvas (its file names lose the name)
    file: str               # the learner's own file name
    late: bool = False      # Canvas's _late mark
    plugin: str = "file"    # Moodle's submission plugin (file, onlinetext)


def canvas(parts: list[str]) -> Identity | None:
    """The identity in a Canvas download entry (flat: one part), or None."""
    if len(parts) != 1:
        return None
    match = _CANVAS.match(nfc(parts[0]))
    if not match:
        return None
    return Identity(CANVAS, match["user"], "", match["file"], late=bool(match["late"]))


def moodle(parts: list[str]) -> Identity | None:
    """The identity in a Moodle download entry, folder form (two parts: the learner's folder
    and a file directly in it) or flat form (one part), or None."""
    if len(parts) == 2:
        match = _MOODLE.match(nfc(parts[0]))
        if not match or match["file"]:         # a folder's name ends at its plugin's `_`
            return None
        file = nfc(parts[1])
    elif len(parts) == 1:
        match = _MOODLE.match(nfc(parts[0]))
        if not match or not match["file"]:
            return None
        file = match["file"]
    else:
        return None
    return Identity(MOODLE, match["participant"], match["name"].strip(), file,
                    plugin=match["plugin"])


def identify(kind: str, parts: list[str]) -> Identity | None:
    return (canvas if kind == CANVAS else moodle)(parts)


def _looks(kind: str, parts: list[str]) -> bool:
    """Whether an entry is named the LMS's way at the level the LMS names: Canvas's flat name,
    or Moodle's learner folder (whatever is inside it) or flat name. Such an entry may still
    be refused when placed (a folder inside a Moodle learner's folder)."""
    if kind == MOODLE and len(parts) > 2:
        match = _MOODLE.match(nfc(parts[0]))
        return bool(match) and not match["file"]
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


def moodle_prefix(name: str, participant: str) -> str:
    """What Moodle's "upload multiple feedback files in a zip" matches a file to a learner by."""
    return f"{nfc(name)}_{participant}_"
