"""Which LMS a download comes from (``detect``), and who each of its entries names
(``identify``): Canvas's and Moodle's own forms (``canvas.identify``, ``moodle.identify``),
as the package's docstring describes them."""
from __future__ import annotations

from . import CANVAS, KINDS, MOODLE, Identity, canvas, moodle


def identify(kind: str, parts: list[str]) -> Identity | None:
    """The identity in a download entry of LMS `kind` (its module's ``identify``), or None."""
    return (canvas if kind == CANVAS else moodle).identify(parts)


def _looks(kind: str, parts: list[str]) -> bool:
    """Whether an entry is named the LMS's way at the level the LMS names: Canvas's flat name,
    or Moodle's learner folder (whatever is inside it) or flat name. Such an entry may still
    be refused when placed (a folder inside a Moodle learner's folder)."""
    if kind == MOODLE and len(parts) > 2:
        return identify(MOODLE, parts[:1] + ["-"]) is not None
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
