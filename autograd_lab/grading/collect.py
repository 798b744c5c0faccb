"""Bring submissions into submitted/<student>/<lesson>/ from a folder or an LMS zip download.

Where a file goes is read from its path, in this order:
  - ``.../<student>/<lesson>/<file>``   nbgrader's own layout (any file, kept as it is);
  - ``.../<student>/<name>.ipynb``       a folder per learner, the lesson id in the file name;
  - ``<student>_<anything><lesson><anything>.ipynb``  an LMS's flat download (Canvas, Moodle):
    the learner is what comes before the first underscore (``--student-pattern`` to change it).
A notebook identified by a lesson id in its name is saved as ``<lesson>.ipynb``.

Every file that is not placed is named with the reason. A zip is read member by member and
never extracted: ``zipfile`` and nbgrader's zip collection would turn ``../x`` into ``x`` or
drop it without a word; here such a member is refused and named.
"""
from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .course import Course

STUDENT_PATTERN = r"^(?P<student>[^_]+)_"
_ID = re.compile(r"[^A-Za-z0-9_.@-]+")


@dataclass
class Collected:
    placed: list[tuple[str, str, str]] = field(default_factory=list)   # student, lesson, file
    not_placed: list[tuple[str, str]] = field(default_factory=list)    # entry, why


def _entries(source: Path):
    """(name, read) for every file of a folder or a zip."""
    if source.is_dir():
        for path in sorted(p for p in source.rglob("*") if p.is_file()):
            yield path.relative_to(source).as_posix(), path.read_bytes
    else:
        archive = zipfile.ZipFile(source)
        for info in archive.infolist():
            if not info.is_dir():
                yield info.filename, (lambda info=info: archive.read(info))


def _lesson_in(name: str, lessons: list[str]) -> str | None:
    found = [lesson for lesson in lessons if lesson in name]
    return max(found, key=len) if found else None


def place(name: str, lessons: list[str], student_pattern: str = STUDENT_PATTERN):
    """(student, lesson, file name) for an entry, or raise ValueError saying why not."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or re.match(r"^[A-Za-z]:", name) or ".." in path.parts:
        raise ValueError("unsafe path (absolute or with ..)")
    parts = [p for p in path.parts if p not in ("", ".")]
    if len(parts) >= 3 and parts[-2] in lessons:
        return _student(parts[-3]), parts[-2], parts[-1]
    if path.suffix != ".ipynb":
        raise ValueError("not a notebook")
    lesson = _lesson_in(path.stem, lessons)
    if lesson is None:
        raise ValueError("no lesson id in its name")
    if len(parts) >= 2:
        return _student(parts[-2]), lesson, f"{lesson}.ipynb"
    match = re.match(student_pattern, path.name)
    if not match:
        raise ValueError(f"no student id in its name (pattern {student_pattern})")
    return _student(match["student"]), lesson, f"{lesson}.ipynb"


def _student(text: str) -> str:
    return _ID.sub("-", text.strip()).strip("-").lower()


def collect(course: Course, source: Path, *, force: bool = False,
            student_pattern: str = STUDENT_PATTERN) -> Collected:
    lessons = course.lessons()
    result = Collected()
    targets = {}
    replaced = set()
    for name, read in _entries(Path(source)):
        try:
            student, lesson, filename = place(name, lessons, student_pattern)
        except ValueError as why:
            result.not_placed.append((name, str(why)))
            continue
        if not student:
            result.not_placed.append((name, "no student id"))
            continue
        folder = course.submission(lesson, student)
        target = folder / filename
        if target in targets:
            result.not_placed.append((name, f"{targets[target]} goes to the same place"))
            continue
        if folder.exists() and folder not in replaced:
            if not force:
                result.not_placed.append((name, f"{folder.relative_to(course.root)} exists "
                                                "(--force replaces it)"))
                continue
            for old in sorted(folder.rglob("*"), reverse=True):
                old.unlink() if old.is_file() else old.rmdir()
        replaced.add(folder)
        folder.mkdir(parents=True, exist_ok=True)
        target.write_bytes(read())
        targets[target] = name
        result.placed.append((student, lesson, filename))
    return result
