"""Bring submissions into submitted/<student>/<lesson>/ from a folder, an LMS zip or one file.

Every name, every member of a zip and every file in a folder is the learners' to choose, so
nothing here trusts them:
  - only regular files are read: a symbolic link (in a folder, or a zip member whose mode says
    link), a FIFO or a device is named and never followed or opened;
  - a zip is read member by member and never extracted (``zipfile`` and nbgrader's zip
    collection turn ``../x`` into ``x`` or drop it without a word): such a member is named;
  - a file is read in pieces and dropped past ``max_bytes`` (a zip member whose declared size
    is over it is not even opened: 1 MB of zip can unpack to a gigabyte);
  - the learner's id is read only at the level where the layout puts it, so a folder cannot
    plant a notebook as a classmate's (``alice/bob/<lesson>/<lesson>.ipynb`` is refused);
  - a Moodle name that can be read as more than one participant's (a learner may choose a
    full name such as ``Eve_1002_assignsubmission_file_x``), or whose full name is not the
    one the course's roster (nbgrader's Student table) has for its participant id, is
    refused: placed as no one's, and listed.

Layouts, one per download (``lms`` says which, or it is recognised from the names):
  - Canvas, Moodle (both of its forms): the LMS's id is the student id (lms/), and a
    Moodle learner's full name goes into nbgrader's Student table;
  - ``<student>/<lesson>/<file>`` (nbgrader's own, optionally under ``submitted/``), any file;
  - ``<student>/<name>.ipynb``, a folder per learner;
  - ``<student>_<anything>.ipynb``, flat: the learner is what ``student_pattern`` matches.
A hub's two places (``collect_homes``, ``collect_exchange``): a folder of home folders, one
learner a home, each read only at ``<home>/<repository>/notebooks/<lesson>/<lesson>.ipynb``;
and nbgrader's exchange, ``inbound/<student>+<lesson>+<time>+<random>/``, a folder not owned
by the user its name says refused. The learner's id is the home's or the exchange's user name,
or what a mapping file (``read_ids``) gives it.
The lesson is ``lesson`` when given (the assignment the download belongs to: a file whose
name names another lesson is placed under it all the same, and said so), else the lesson id
in the file's name. A notebook is saved as ``<lesson>.ipynb``.

Collecting a download again is safe: a submission whose files are the same is ``unchanged``
(and not graded again); a changed one replaces the old, which moves to
``submitted-history/<student>/<lesson>/<time>/``. Nothing is overwritten without a word, and
what could not be placed is listed with the reason, and can be placed by hand
(``collect FILE --student ID --lesson L``).

A submission's time (nbgrader's ``timestamp.txt``, which its late rules and export read) is
what the LMS or the instructor says, never what a learner handed in: a zip member's time in an
LMS's download (the LMS's, read in ``tz``), moved across the due date where Canvas's ``_late``
mark says otherwise, or the time given with a notebook placed by hand (``collect_file``'s
``when``; a lesson with a due date needs one). A ``timestamp.txt`` handed in (in any layout,
in any case, as a link) is refused and named; a notebook's metadata and a file's modification
time (a learner sets one before zipping their notebook themselves) are never read. A folder
or zip in no LMS's layout gives no time. A hub's file gets the time the grader's machine
recorded: its inode change time, which only the kernel moves, and only forward (never the
time in an exchange folder's name or its ``timestamp.txt``, the learner's process wrote
both); the same notebook again, its cells' sources unchanged, keeps its first time.
"""
from __future__ import annotations

import os
import re
import shutil
import stat
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

from .. import lms
from ..lms import canvas, download, moodle
from ..course import Course

STUDENT_PATTERN = r"^(?P<student>[^_]+)_"
MAX_BYTES = 20 * 1024**2        # a lesson notebook with its outputs is well under 1 MB
_CHUNK = 1 << 16
_DEPTH = 3                      # folders: submitted/<student>/<lesson>/ at most
HISTORY = "submitted-history"


class Refused(ValueError):
    """An entry that is not placed; its message says why."""


@dataclass
class Collected:
    placed: list[tuple[str, str, str]] = field(default_factory=list)   # student, lesson, file
    unchanged: list[tuple[str, str]] = field(default_factory=list)     # student, lesson
    replaced: list[tuple[str, str, str]] = field(default_factory=list)  # student, lesson, kept in
    not_placed: list[tuple[str, str]] = field(default_factory=list)    # entry, why
    notes: list[tuple[str, str]] = field(default_factory=list)         # entry, what to check
    lms: str | None = None
    names: dict[str, str] = field(default_factory=dict)                # student -> LMS name
    refused: dict[tuple[str, str], str] = field(default_factory=dict)  # (lesson, student) -> why
    # (lesson, student) -> (lms, the download's name of the file placed): Canvas's feedback
    # zip names each page so
    lms_files: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    lesson: str | None = None        # the lesson an LMS download was found to be for
    hint: str = ""                   # why a download that looks like an LMS's was not read so


@dataclass
class Entry:
    name: str                         # as the folder or zip names it
    parts: list[str]
    size: int                         # declared (zip) or seen (folder)
    time: datetime | None             # a zip member's date (the LMS's), else None
    read: callable                    # () -> bytes, at most max_bytes, or Refused
    problem: str = ""                 # why it cannot be read at all (a link, a FIFO)


def _kind(mode: int) -> str:
    for test, what in ((stat.S_ISLNK, "a symbolic link (not followed)"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return what
    return "not a regular file"


def _read_bounded(stream, limit: int, declared: int | None = None) -> bytes:
    chunks, total = [], 0
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > limit:
            extra = f" (declared {declared:,} bytes)" if declared is not None else ""
            raise Refused(f"more than {limit:,} bytes when read{extra}: over the size limit")
        chunks.append(chunk)


def _folder_entries(source: Path, limit: int):
    """Every entry of a folder, links and special files included (to be named), never
    following a link."""
    for top, dirs, files in os.walk(source, followlinks=False):
        for name in sorted(dirs):           # os.walk lists a link to a folder among dirs
            path = Path(top) / name
            if path.is_symlink():
                yield Entry(path.relative_to(source).as_posix(), [], 0, None, None,
                            problem="a symbolic link (not followed)")
            elif len(path.relative_to(source).parts) > _DEPTH:
                yield Entry(path.relative_to(source).as_posix(), [], 0, None, None,
                            problem="a folder deeper than any layout (not read)")
        # (no layout is deeper than submitted/<student>/<lesson>/: a learner's deep tree is
        # named once and not walked, so it costs nothing, however deep)
        dirs[:] = sorted(d for d in dirs if len((Path(top) / d).relative_to(source).parts)
                         <= _DEPTH)
        for name in sorted(files):
            path = Path(top) / name
            info = os.lstat(path)
            rel = path.relative_to(source).as_posix()
            if not stat.S_ISREG(info.st_mode):
                yield Entry(rel, [], 0, None, None, problem=_kind(info.st_mode))
                continue
            # (an unpacked LMS download keeps its zip's times as the files' times)
            yield Entry(rel, list(PurePosixPath(rel).parts), info.st_size,
                        datetime.fromtimestamp(info.st_mtime, timezone.utc),
                        lambda path=path: _read_file(path, limit))


def _read_file(path: Path, limit: int) -> bytes:
    # O_NOFOLLOW and O_NONBLOCK: a file swapped for a link or a FIFO since it was listed is
    # refused, not followed or waited on
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise Refused(_kind(mode))
        return _read_bounded(f, limit)


def _zip_entries(source: Path, limit: int):
    archive = zipfile.ZipFile(source)
    for info in archive.infolist():
        if info.is_dir():
            continue
        name = info.filename
        mode = info.external_attr >> 16 if info.create_system == 3 else 0
        if stat.S_IFMT(mode) not in (0, stat.S_IFREG):
            yield Entry(name, [], 0, None, None, problem=_kind(mode))
            continue
        try:
            time = datetime(*info.date_time)
        except ValueError:
            time = None

        def read(info=info):
            if info.file_size > limit:
                raise Refused(f"declared {info.file_size:,} bytes unpacked: over the size limit "
                              f"of {limit:,}")
            with archive.open(info) as member:
                try:
                    return _read_bounded(member, limit, info.file_size)
                except zipfile.BadZipFile as error:       # a size or CRC that lies
                    raise Refused(f"a damaged zip member ({error})") from None
        yield Entry(name, list(PurePosixPath(name.replace("\\", "/")).parts), info.file_size,
                    time, read)


def _unsafe(name: str) -> bool:
    path = PurePosixPath(name.replace("\\", "/"))
    return (path.is_absolute() or bool(re.match(r"^[A-Za-z]:", name)) or ".." in path.parts
            or any(ord(c) < 32 for c in name))


def _lesson_in(name: str, lessons: list[str]) -> str | None:
    found = [lesson for lesson in lessons if lesson in name]
    return max(found, key=len) if found else None


def _student(text: str) -> str:
    """A student id from a name in a folder or file name: NFC, lower case, letters of any
    script kept (``Zoë Müller`` is ``zoë-müller``); only what cannot be in one folder name or
    reads as a path (separators, spaces, a leading dot) becomes ``-``."""
    return re.sub(r"[^\w.@-]+", "-", lms.nfc(text).strip()).strip("-.").lower()


_AMBIGUOUS = ("its name can be read as more than one learner's (Moodle participant {ids}): "
              "placed as no one's; if you know whose it is, place it by hand with "
              "`{by_hand}`")
_NOT_THEIR_NAME = ("its name says {said!r}, but participant {student} is {known!r} in the course's "
                   "roster: placed as no one's (if they renamed themselves, read a new grading "
                   "worksheet with `autograd-lab roster` and collect again)")


_A_ZIP = ("a zip, not a notebook: collect opens no zip inside a download; unzip it, look at "
          "what is inside, and place the notebook by hand with `{by_hand}`")
_A_TIMESTAMP = ("a timestamp.txt handed in: a submission's time is the LMS's (its download) "
                "or yours (`collect NOTEBOOK --time`), never a file's")


def by_hand_command(student: str, lesson: str, when: str | None = None,
                    file: str = "NOTEBOOK") -> str:
    """The command that places one notebook by hand, with the time the LMS gave it."""
    return (f"autograd-lab collect {file} --student {student} --lesson {lesson}"
            + (f' --time "{when}"' if when else ""))


def _timestamp_named(name: str) -> bool:
    """Whether a file's name is nbgrader's timestamp.txt, in any case or spelling that reads
    as it (compatibility forms, invisible characters, spaces)."""
    import unicodedata

    plain = "".join(c for c in unicodedata.normalize("NFKC", name).casefold()
                    if not c.isspace() and unicodedata.category(c) != "Cf")
    return re.match(r"timestamp(\.|$)", plain) is not None


@dataclass
class Placement:
    student: str
    lesson: str
    file: str                   # the name it is saved under
    named: str | None = None    # the lesson its name names, when that is not `lesson`
    name: str = ""              # the LMS's display name
    late: bool = False          # Canvas's _late mark
    lms: str | None = None      # the LMS whose download it came from
    by_hand: bool = False       # placed by hand: its time is the instructor's (--time)
    # a hub's file (a home, nbgrader's exchange): its time is the one the grader's machine
    # recorded (the file's inode change time), and it is the same submission as long as its
    # cells' sources are (a notebook opened and saved again after the due date is not late)
    machine_time: bool = False


def place(name: str, lessons: list[str], student_pattern: str = STUDENT_PATTERN, *,
          kind: str | None = None, lesson: str | None = None,
          when: str | None = None) -> Placement:
    """Where an entry goes, or Refused saying why not (`when`: the time the LMS gives it, for
    the command a refusal suggests)."""
    if _unsafe(name):
        raise Refused("unsafe path (absolute or with ..)")
    parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", ".")]
    if kind is not None:
        found = download.identify(kind, parts)
        if found is None:
            raise Refused(f"not in the {kind.capitalize()} download's form"
                          + (" (a folder inside the learner's folder)"
                             if kind == lms.MOODLE and len(parts) > 2 else ""))
        if found.ambiguous:
            raise Refused(_AMBIGUOUS.format(ids=" or ".join(found.ambiguous),
                                            by_hand=by_hand_command("ID", lesson or "LESSON",
                                                                    when, "FILE")))
        if kind == lms.MOODLE and found.plugin != "file":
            raise Refused(f"Moodle {found.plugin} answer, not a notebook")
        return _notebook(found.student, found.file, lessons, lesson, name=found.name,
                         late=found.late, kind=kind, when=when)
    if parts and parts[0] == "submitted" and len(parts) == 4:
        parts = parts[1:]           # a copy of another course's submitted/ folder
    if len(parts) == 3 and parts[1] in lessons:
        if lesson and parts[1] != lesson:
            raise Refused(f"in {parts[1]}'s folder, not {lesson}'s (nbgrader's layout names "
                          "its lesson)")
        if _timestamp_named(parts[2]):
            raise Refused(_A_TIMESTAMP)
        if parts[2].endswith(".ipynb") and parts[2] != f"{parts[1]}.ipynb":
            return _notebook(_student(parts[0]), parts[2], lessons, parts[1])
        return Placement(_student(parts[0]), parts[1], parts[2])
    if len(parts) > 2:
        raise Refused("deeper than the layout: a learner's id is read only from the top "
                      "folder (<student>/<file>, <student>/<lesson>/<file>)")
    if len(parts) == 2:
        return _notebook(_student(parts[0]), parts[1], lessons, lesson)
    if not parts or not parts[-1].endswith(".ipynb"):
        raise Refused("not a notebook")
    match = re.match(student_pattern, parts[-1])
    if not match:
        raise Refused(f"no student id in its name (pattern {student_pattern})")
    return _notebook(_student(match["student"]), parts[-1], lessons, lesson)


def _notebook(student: str, file: str, lessons: list[str], lesson: str | None, *,
              name: str = "", late: bool = False, kind: str | None = None,
              when: str | None = None) -> Placement:
    if _timestamp_named(file):
        raise Refused(_A_TIMESTAMP)
    if not file.endswith(".ipynb"):
        if file.lower().endswith(".zip"):
            raise Refused(_A_ZIP.format(by_hand=by_hand_command(
                student or "ID", lesson or "LESSON", when)))
        raise Refused("not a notebook")
    if not student:
        raise Refused("no student id")
    named = _lesson_in(file[:-len(".ipynb")], lessons)
    if lesson is None:
        if named is None:
            raise Refused("no lesson id in its name (--lesson says which lesson a download is)")
        lesson = named
    return Placement(student, lesson, f"{lesson}.ipynb", named if named != lesson else None,
                     name=name, late=late, lms=kind)


def _download_lesson(entries: list[Entry], kind: str, lessons: list[str]) -> str:
    """The one lesson an LMS download is for (one download is one assignment), from the lesson
    ids its notebooks' names hold; ValueError when they name none or several: a learner who
    uploaded another lesson's notebook must not decide where the class's files go."""
    counts = {}
    for entry in entries:
        found = download.identify(kind, [p for p in entry.parts if p not in ("", ".")])
        if found and not found.ambiguous and found.file.endswith(".ipynb"):
            named = _lesson_in(found.file[:-len(".ipynb")], lessons)
            if named:
                counts[named] = counts.get(named, 0) + 1
    if len(counts) == 1:
        return next(iter(counts))
    if not counts:
        raise ValueError("no file of this download names a lesson: say which lesson it is "
                         "for with --lesson")
    named = ", ".join(f"{lesson} ({n} files)" for lesson, n in sorted(counts.items()))
    raise ValueError(f"this {kind.capitalize()} download is one assignment, but its files name "
                     f"{named}: say which lesson it is for with --lesson")


def _timestamp(dues: dict, kind: str | None, lesson: str | None, late: bool,
               time: datetime | None, tz: timezone) -> str | None:
    """nbgrader's timestamp for an LMS's submission: the zip member's time (the LMS's, read in
    `tz`), moved across the lesson's due date where Canvas's late mark says otherwise
    (``canvas.submitted_at``)."""
    if time is not None and time.tzinfo is None:      # a zip's time: the LMS's local time
        time = time.replace(tzinfo=tz)
    when = time.astimezone(timezone.utc).replace(tzinfo=None) if time else None
    if kind == lms.CANVAS:
        when = canvas.submitted_at(when, dues.get(lesson), late)
    return when.strftime("%Y-%m-%d %H:%M:%S UTC") if when else None


def _lms_time(entry: Entry, kind: str | None, lesson: str | None, dues: dict,
              tz: timezone) -> str | None:
    """The time an LMS's download gives an entry (for the command that places it by hand);
    None outside an LMS's download."""
    if kind is None or entry.time is None:
        return None
    found = download.identify(kind, [p for p in entry.parts if p not in ("", ".")][:2])
    return _timestamp(dues, kind, lesson, bool(found and found.late), entry.time, tz)


def _dues(course: Course) -> dict[str, datetime]:
    """Each lesson's due date in nbgrader's gradebook (naive UTC), where it has one."""
    with course.gradebook() as gb:
        return {a.name: a.duedate for a in gb.assignments if a.duedate is not None}


def _history(course: Course, student: str, lesson: str) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    return course.root / HISTORY / student / lesson / stamp


def _same(folder: Path, files: dict[str, bytes], ignore: set[str] = frozenset()) -> bool:
    if not folder.is_dir() or folder.is_symlink():
        return False
    present = {p.name for p in folder.iterdir()} - ignore
    if present != set(files) - ignore:
        return False
    for name, data in files.items():
        if name in ignore:
            continue
        path = folder / name
        if path.is_symlink() or not path.is_file() or path.stat().st_size != len(data) \
                or path.read_bytes() != data:
            return False
    return True


def _write(folder: Path, files: dict[str, bytes]) -> None:
    folder.mkdir(parents=True)
    for name, data in files.items():
        # O_EXCL|O_NOFOLLOW: a fresh folder, so nothing here can be a link planted earlier
        fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)


def _entries(source: Path, limit: int):
    if source.is_dir():
        return list(_folder_entries(source, limit))
    if zipfile.is_zipfile(source):
        return list(_zip_entries(source, limit))
    raise ValueError(f"{source} is neither a folder nor a zip (one notebook is placed with "
                     "--student and --lesson)")


def collect(course: Course, source: Path, *, lesson: str | None = None, kind: str | None = None,
            student_pattern: str = STUDENT_PATTERN, max_bytes: int = MAX_BYTES,
            tz: timezone = timezone.utc) -> Collected:
    """Place every submission of a folder or zip (see the module's docstring)."""
    source = Path(source)
    lessons = course.lessons()
    if lesson is not None and lesson not in lessons:
        raise ValueError(f"no lesson {lesson!r} in this course ({', '.join(lessons)})")
    entries = _entries(source, max_bytes)
    result = Collected()
    readable = [e for e in entries if not e.problem and not _unsafe(e.name)]
    if kind is None:
        kind, result.hint = download.detect([[p for p in e.parts if p not in ("", ".")]
                                        for e in readable])
    result.lms = kind
    if kind is not None and lesson is None:
        lesson = _download_lesson(readable, kind, lessons)
        result.lesson = lesson
    dues = _dues(course) if kind is not None else {}
    if kind == lms.MOODLE:
        from .roster import names
        known = names(course)
    wanted: dict[tuple[str, str], list[tuple[Entry, Placement]]] = {}
    turned_down: dict[tuple[str, str], list[tuple[str, str]]] = {}    # refused, but whose
    for entry in entries:
        if entry.problem:
            result.not_placed.append((entry.name, entry.problem))
            continue
        try:
            placement = place(entry.name, lessons, student_pattern, kind=kind, lesson=lesson,
                              when=_lms_time(entry, kind, lesson, dues, tz))
            if kind == lms.MOODLE and known.get(placement.student) and \
                    not moodle.same_name(placement.name, known[placement.student]):
                raise Refused(_NOT_THEIR_NAME.format(said=placement.name, student=placement.student,
                                                     known=known[placement.student]))
        except Refused as why:
            result.not_placed.append((entry.name, str(why)))
            owner = _owner(entry, kind, lesson, lessons, known if kind == lms.MOODLE else {})
            if owner is not None:
                turned_down.setdefault(owner, []).append((entry.name, str(why)))
            continue
        wanted.setdefault((placement.student, placement.lesson), []).append((entry, placement))
    # a learner whose download held only files collect refuses (a zip, a PDF, an online text)
    # handed something in: `failed`, with the file and the reason, never `missing`
    for (student, lesson_id), files in sorted(turned_down.items()):
        if (student, lesson_id) not in wanted:
            result.refused[(lesson_id, student)] = "; ".join(
                f"collect refused {name}: {why}" for name, why in files)
    for (student, lesson_id), found in sorted(wanted.items()):
        notebooks = [(e, p) for e, p in found if p.file == f"{lesson_id}.ipynb"]
        if len(notebooks) > 1:
            for entry, _ in notebooks:
                command = by_hand_command(
                    student, lesson_id, _lms_time(entry, kind, lesson_id, dues, tz), "FILE")
                result.not_placed.append((entry.name, (
                    f"{len(notebooks)} notebooks for {student}, {lesson_id}: choose one with "
                    f"`{command}`")))
            result.refused[(lesson_id, student)] = "several notebooks handed in"
            continue
        _store(course, result, student, lesson_id, found, tz, dues)
    if kind is not None:
        _record_names(course, {s: n for s, n in result.names.items() if n})
    else:
        timeless = sorted({s for s, lesson_id, _ in result.placed if lesson_id in _dues(course)})
        if timeless:
            result.notes.append((source.name, (
                f"no submission time for {len(timeless)} learner(s): a folder or zip in no "
                "LMS's layout gives none, so their lateness cannot be said (place a late one "
                "by hand, with --time)")))
    _record_refusals(course, result)
    return result


def _owner(entry: Entry, kind: str | None, lesson: str | None, lessons: list[str],
           known: dict[str, str]) -> tuple[str, str] | None:
    """(student, lesson) of a refused entry, where the layout names its learner beyond doubt:
    an LMS's own part of the name (never an ambiguous one, nor a Moodle name that is not the
    roster's: those belong to no one), or the top folder of ``<student>/<file>``. None when
    it names no one, or no lesson."""
    if _unsafe(entry.name):
        return None
    parts = [p for p in entry.parts if p not in ("", ".")]
    if kind is not None:
        if kind == lms.MOODLE and len(parts) > 2:
            parts = [parts[0], parts[-1]]       # a folder inside the learner's folder
        found = download.identify(kind, parts)
        if found is None or found.ambiguous or not found.student:
            return None
        if known.get(found.student) and not moodle.same_name(found.name, known[found.student]):
            return None
        student = found.student
    elif len(parts) == 2:
        student = _student(parts[0])
    else:
        return None
    lesson = lesson or _lesson_in(parts[-1], lessons)
    return (student, lesson) if student and lesson else None


# -- a hub: learners' home folders, nbgrader's exchange ------------------------------------

def read_ids(path: Path) -> dict[str, str]:
    """{hub user name: student id} from a CSV with ``user`` and ``id`` columns (the LMS's id
    for each hub account, so the hub's learners are the roster's)."""
    import csv

    with Path(path).open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        headers = {(h or "").strip().lower(): h for h in reader.fieldnames or []}
        if "user" not in headers or "id" not in headers:
            raise ValueError(f"{path}: no user and id columns (the hub's user name, and the "
                             "id the course knows the learner by)")
        found = {}
        for row in reader:
            user = (row[headers["user"]] or "").strip()
            student = lms.nfc((row[headers["id"]] or "").strip())
            if not user or not student:
                continue
            if _student(student) != student.lower() or student.startswith("."):
                raise ValueError(f"{path}: {student!r} cannot be a student id (a folder name)")
            found[user] = student
    return found


def _open_below(top: int, parts: list[str]) -> int:
    """A descriptor of the regular file `parts` below the folder open as `top`, no part
    followed as a link (a learner's home is theirs: any folder in it may be a link);
    Refused for a link or anything not a folder or regular file on the way, FileNotFoundError
    when it is not there."""
    fd = os.dup(top)
    try:
        for part in parts[:-1]:
            try:
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except NotADirectoryError:
                raise Refused(f"{part}: not a folder (a link is not followed)") from None
            except OSError as error:
                if error.errno == 40:               # ELOOP: a link
                    raise Refused(f"{part}: a symbolic link (not followed)") from None
                raise
            os.close(fd)
            fd = inner
        try:
            found = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
        except OSError as error:
            if error.errno == 40:
                raise Refused(f"{parts[-1]}: a symbolic link (not followed)") from None
            raise
        mode = os.fstat(found).st_mode
        if not stat.S_ISREG(mode):
            os.close(found)
            raise Refused(f"{parts[-1]}: {_kind(mode)}")
        return found
    finally:
        os.close(fd)


def _machine_entry(name: str, fd: int, limit: int, since: float = 0.0) -> Entry:
    """An Entry of an open file of a hub, read at once (at most `limit` bytes), its time the
    latest of the file's and `since`'s inode change times: what the grader's machine
    recorded when it was last written. A learner can set a file's modification time (touch
    -d), never its change time, which only the kernel moves, and only forward."""
    info = os.fstat(fd)
    with os.fdopen(fd, "rb") as f:
        try:
            data = _read_bounded(f, limit)
            problem = None
        except Refused as why:
            data, problem = None, why
    when = datetime.fromtimestamp(max(info.st_ctime, since), timezone.utc)

    def read():
        if problem is not None:
            raise problem
        return data
    return Entry(name, [name], info.st_size, when, read)


def _hub_store(course, result, student, lesson, entry, dues):
    placement = Placement(student, lesson, f"{lesson}.ipynb", machine_time=True)
    _store(course, result, student, lesson, [(entry, placement)], timezone.utc, dues)


HUB_TIME = ("submission times are the ones this machine recorded (each file's inode change "
            "time: when it was last written, which a learner cannot set back)")


def collect_homes(course: Course, source: Path, lesson: str, repository: str, *,
                  ids: dict[str, str] | None = None,
                  max_bytes: int = MAX_BYTES) -> Collected:
    """A hub's home folders (``/home`` of The Littlest JupyterHub, say): one learner a home,
    their id the home folder's name (or `ids`' for it), their notebook
    ``<home>/<repository>/notebooks/<lesson>/<lesson>.ipynb`` (where nbgitpuller or a clone
    put the learners' repository). Nothing else of a home is read, no link is followed, and a
    home names only its own learner."""
    lessons = course.lessons()
    if lesson not in lessons:
        raise ValueError(f"no lesson {lesson!r} in this course ({', '.join(lessons)})")
    inside = [p for p in PurePosixPath(repository).parts if p not in ("", ".")]
    if PurePosixPath(repository).is_absolute() or ".." in inside:
        raise ValueError(f"--homes {repository!r}: the learners' repository's folder inside "
                         "each home (relative, e.g. autograd-class)")
    parts = inside + ["notebooks", lesson, f"{lesson}.ipynb"]
    result = Collected()
    dues = _dues(course)
    without = []
    top = os.open(source, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in sorted(os.listdir(top)):
            info = os.lstat(name, dir_fd=top)
            if not stat.S_ISDIR(info.st_mode):
                result.not_placed.append((name, f"not a home folder: {_kind(info.st_mode)}"))
                continue
            if ids is not None and name not in ids:
                result.not_placed.append((name, "not in the id mapping (--ids): whose home "
                                                "it is is not known"))
                continue
            student = ids[name] if ids is not None else _student(name)
            home = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
            try:
                fd = _open_below(home, parts)
            except FileNotFoundError:
                without.append(name)
                continue
            except Refused as why:
                result.not_placed.append((f"{name}/{'/'.join(parts)}", str(why)))
                result.refused[(lesson, student)] = f"collect refused {'/'.join(parts)}: {why}"
                continue
            finally:
                os.close(home)
            entry = _machine_entry(f"{name}/{'/'.join(parts)}", fd, max_bytes)
            _hub_store(course, result, student, lesson, entry, dues)
    finally:
        os.close(top)
    if without:
        result.notes.append((str(source), f"{len(without)} home(s) without "
                                          f"{'/'.join(parts)}: {', '.join(without)}"))
    if result.placed:
        result.notes.append((str(source), HUB_TIME))
    _record_refusals(course, result)
    return result


def exchange_inbound(course: Course, source: Path) -> Path:
    """nbgrader's inbound folder of this course, from the exchange's root
    (``c.Exchange.root``), the course's folder in it, or the inbound folder itself."""
    from nbgrader.coursedir import CourseDirectory

    source = Path(source)
    course_id = CourseDirectory(config=course.config()).course_id
    for inbound in (source / course_id / "inbound", source / "inbound", source):
        if inbound.is_dir() and not inbound.is_symlink():
            return inbound
    raise ValueError(f"{source} holds no inbound folder of course {course_id!r}")


def collect_exchange(course: Course, source: Path, *, lesson: str | None = None,
                     ids: dict[str, str] | None = None,
                     max_bytes: int = MAX_BYTES) -> Collected:
    """nbgrader's exchange: ``inbound/<student>+<lesson>+<time>+<random>/``, as ``nbgrader
    submit`` writes it (a folder a submission, owned by the learner who submitted it). A
    folder not owned by the user its name says is refused (another learner put it there);
    of a learner's several submissions the newest is collected, by the time this machine
    recorded for its files, never by the time in its name or in its ``timestamp.txt``, which
    the learner's own process wrote (a time it claims earlier than that is said)."""
    import pwd

    from nbgrader.utils import parse_utc

    lessons = course.lessons()
    if lesson is not None and lesson not in lessons:
        raise ValueError(f"no lesson {lesson!r} in this course ({', '.join(lessons)})")
    inbound = exchange_inbound(course, source)
    result = Collected()
    dues = _dues(course)
    newest: dict[tuple[str, str], list] = {}
    top = os.open(inbound, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in sorted(os.listdir(top)):
            fields = name.rsplit("+", 3)
            if len(fields) != 4:
                result.not_placed.append((name, "not in nbgrader's form "
                                                "<student>+<assignment>+<time>+<random>"))
                continue
            user, assignment, claimed, _ = fields
            if assignment not in lessons:
                result.not_placed.append((name, f"not a lesson of this course: {assignment!r}"))
                continue
            if lesson is not None and assignment != lesson:
                continue            # (another lesson's submissions: collected for that one)
            info = os.lstat(name, dir_fd=top)
            if not stat.S_ISDIR(info.st_mode):
                result.not_placed.append((name, f"not a submission folder: "
                                                f"{_kind(info.st_mode)}"))
                continue
            if ids is not None and user not in ids:
                result.not_placed.append((name, "not in the id mapping (--ids): whose "
                                                "submission it is is not known"))
                continue
            try:
                owner = pwd.getpwuid(info.st_uid).pw_name
            except KeyError:
                owner = f"user id {info.st_uid}"
            if owner != user:
                result.not_placed.append((name, f"named as {user}'s, but owned by {owner} "
                                                "(nbgrader submit writes a learner's own "
                                                "folder as them): placed as no one's"))
                continue
            student = ids[user] if ids is not None else _student(user)
            folder = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
            try:
                try:
                    fd = _open_below(folder, [f"{assignment}.ipynb"])
                except FileNotFoundError:
                    result.not_placed.append((name, f"no {assignment}.ipynb in it"))
                    result.refused[(assignment, student)] = (
                        f"collect refused {name}: no {assignment}.ipynb in it")
                    continue
                except Refused as why:
                    result.not_placed.append((name, str(why)))
                    result.refused[(assignment, student)] = f"collect refused {name}: {why}"
                    continue
                entry = _machine_entry(name, fd, max_bytes, since=info.st_ctime)
                said = None
                try:
                    stamp = _open_below(folder, ["timestamp.txt"])
                    with os.fdopen(stamp, "rb") as f:
                        said = parse_utc(f.read(100).decode(errors="replace").strip())
                except (FileNotFoundError, Refused, ValueError, OverflowError):
                    said = None
            finally:
                os.close(folder)
            newest.setdefault((assignment, student), []).append((entry, name, said, claimed))
    finally:
        os.close(top)
    for (assignment, student), found in sorted(newest.items()):
        found.sort(key=lambda item: item[0].time)
        entry, name, said, claimed = found[-1]
        if len(found) > 1:
            result.notes.append((name, f"the newest of {student}'s {len(found)} submissions "
                                       f"of {assignment}; the others stay in the exchange"))
        recorded = entry.time.replace(tzinfo=None)
        if said is not None and (recorded - said.replace(tzinfo=None)).total_seconds() > 60:
            result.notes.append((name, f"its timestamp.txt says {said:%Y-%m-%d %H:%M:%S}, "
                                       f"its files were written at {recorded:%Y-%m-%d %H:%M:%S} "
                                       "UTC: the time of its files is the one used"))
        _hub_store(course, result, student, assignment, entry, dues)
    if result.placed:
        result.notes.append((str(inbound), HUB_TIME))
    _record_refusals(course, result)
    return result


def collect_file(course: Course, source: Path, student: str, lesson: str, *,
                 when: datetime | None = None, max_bytes: int = MAX_BYTES) -> Collected:
    """Place one notebook by hand as `student`'s submission of `lesson`, handed in at `when`
    (naive UTC: the time the LMS shows for it). A lesson with a due date needs `when`: the
    file's own modification time is the learner's to set (a notebook from a zip they made
    keeps the time they gave it)."""
    lessons = course.lessons()
    if lesson not in lessons:
        raise ValueError(f"no lesson {lesson!r} in this course ({', '.join(lessons)})")
    if when is None and lesson in _dues(course):
        raise ValueError(f"{lesson} has a due date: say when this notebook was handed in, "
                         f"with --time (the time the LMS shows for it; collect's message for a "
                         f"file it refused gives it). Its file's modification time is not "
                         f"read: a learner sets it before zipping their notebook.")
    student = lms.nfc(student).strip()
    if not student or _student(student) != student.lower() or student.startswith("."):
        raise ValueError(f"{student!r} cannot be a student id (a folder name: letters, digits, "
                         ". @ - and _)")
    source = Path(source)
    info = os.lstat(source)
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{source}: {_kind(info.st_mode)}")
    entry = Entry(source.name, [source.name], info.st_size, None,
                  lambda: _read_file(source, max_bytes))
    named = _lesson_in(source.stem, lessons)
    placement = Placement(student, lesson, f"{lesson}.ipynb", named if named != lesson else None,
                          by_hand=True)
    entry.time = when.replace(tzinfo=timezone.utc) if when is not None else None
    result = Collected()
    _store(course, result, student, lesson, [(entry, placement)], timezone.utc, {})
    if when is None:
        result.notes.append((source.name, "no submission time (the lesson has no due date; "
                                          "give one with --time if it gets one)"))
    _record_refusals(course, result)
    return result


def _store(course, result, student, lesson, found, tz, dues):
    files, generated = {}, set()
    for entry, placement in found:
        try:
            files[placement.file] = entry.read()
        except (Refused, OSError) as why:
            result.not_placed.append((entry.name, str(why)))
            result.refused[(lesson, student)] = f"collect refused {entry.name}: {why}"
            return
        if placement.named:
            result.notes.append((entry.name, f"its name says {placement.named}, but it was handed "
                                             f"in as {lesson}: placed as {student}'s {lesson}; "
                                             f"{placement.named} is untouched"))
        if placement.name:
            result.names[student] = placement.name
        if placement.lms and placement.file.endswith(".ipynb"):
            result.lms_files[(lesson, student)] = (placement.lms, entry.name)
        if (placement.lms or placement.by_hand or placement.machine_time) and \
                placement.file.endswith(".ipynb"):
            # (the LMS's time, or the instructor's: nothing of the learner's is placed as
            # timestamp.txt, place() refuses it)
            stamp = _timestamp(dues, placement.lms, placement.lesson, placement.late,
                               entry.time, tz)
            if stamp:
                files["timestamp.txt"] = (stamp + "\n").encode()
                generated.add("timestamp.txt")
                if placement.by_hand:
                    result.notes.append((entry.name, f"submission time {stamp}, as --time "
                                                     "gives it (timestamp.txt)"))
    folder = course.submission(lesson, student)
    # the same notebook again is unchanged even if the zip's time for it moved (an LMS may
    # stamp a download's members with the time of the download): the first time stays
    machine = any(p.machine_time for _, p in found)
    if _same(folder, files, generated) or machine and _same_sources(folder, files, lesson):
        result.unchanged.append((student, lesson))
        return
    if folder.exists() or folder.is_symlink():
        kept = _history(course, student, lesson)
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(folder, kept)
        result.replaced.append((student, lesson, str(kept.relative_to(course.root))))
        stale = _unset_hand_grades(course, student, lesson, kept, files.get(f"{lesson}.ipynb"))
        if stale:
            result.notes.append((f"{student}/{lesson}", (
                f"hand grades of changed answers ({', '.join(stale)}) are kept in "
                f"{kept.relative_to(course.root)}/hand-grades.json: grade them again")))
    _write(folder, files)
    result.placed.extend((student, lesson, name) for name in files)


def _sources(data: bytes | None):
    import nbformat

    try:
        nb = nbformat.reads(data.decode(), as_version=4)
    except Exception:           # not a notebook: never the same as another
        return None
    return [(c.cell_type, c.source) for c in nb.cells]


def _same_sources(folder: Path, files: dict[str, bytes], lesson: str) -> bool:
    """Whether the notebook collected before in `folder` has the same cells' sources as the
    new one (outputs, counts and metadata aside), and nothing else changed."""
    old = folder / f"{lesson}.ipynb"
    if not folder.is_dir() or folder.is_symlink() or old.is_symlink() or not old.is_file():
        return False
    if {p.name for p in folder.iterdir()} - {"timestamp.txt"} != set(files) - {"timestamp.txt"}:
        return False
    before = _sources(old.read_bytes())
    return before is not None and before == _sources(files.get(f"{lesson}.ipynb"))


def _answers(data: bytes | None) -> dict[str, str]:
    import nbformat

    try:
        nb = nbformat.reads(data.decode(), as_version=4)
    except Exception:           # not a notebook: every hand-graded answer counts as changed
        return {}
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade_id")}


def _unset_hand_grades(course: Course, student: str, lesson: str, kept: Path,
                       new: bytes | None) -> list[str]:
    """A hand grade was given to the old file's answer: where the new file's answer differs,
    it no longer applies. Such grades are written beside the old file (hand-grades.json) and
    unset in nbgrader's gradebook, so the answer waits for a human again; returns their cells."""
    import json

    from nbgrader.api import MissingEntry

    old_file = kept / f"{lesson}.ipynb"
    old = _answers(old_file.read_bytes() if old_file.is_file() else None)
    fresh = _answers(new)
    stale = {}
    with course.gradebook() as gb:
        try:
            submission = gb.find_submission(lesson, student)
        except MissingEntry:
            return []
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                if grade.manual_score is None:
                    continue
                if grade.name in old and old.get(grade.name) == fresh.get(grade.name):
                    continue
                stale[grade.name] = grade.manual_score
                grade.manual_score = None
                grade.needs_manual_grade = True
        if stale:
            (kept / "hand-grades.json").write_text(json.dumps(stale, indent=1))
            gb.db.commit()
    return sorted(stale)


def _record_names(course: Course, names: dict[str, str]) -> None:
    """A learner's LMS name into nbgrader's Student table, where it has none yet."""
    if not names:
        return
    from .roster import add_learners

    add_learners(course, [(student, name, "") for student, name in names.items()],
                 overwrite=False)


def _record_refusals(course: Course, result: Collected) -> None:
    from ..gradebook import status

    status.record_lms_files(course, result.lms_files)
    status.record_refusals(course, result.refused,
                           done=[(lesson, s) for s, lesson, _ in result.placed]
                           + [(lesson, s) for s, lesson in result.unchanged])
