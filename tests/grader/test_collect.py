"""collect on hostile input: whatever a learner controls (file names, zip entries, file types,
sizes, folder depth) can neither read outside the download, nor plant a notebook as a
classmate's, nor grow without bound; each refusal is named, and the others are placed."""
import os
import stat
import struct
import zipfile

import pytest
from typer.testing import CliRunner

import gradingcourse as gc
from autograd_lab_grader.gradebook import status
from autograd_lab_grader.gradebook.outcome import outcomes
from autograd_lab_grader.steps import collect, export
from autograd_lab_grader.commands.cli import app
from autograd_lab_grader.course import Course

runner = CliRunner()
L = gc.LESSON


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    return gc.make_course(tmp_path_factory.mktemp("collect") / "course")


@pytest.fixture
def course(released, tmp_path):
    return Course(gc.copy_course(released, tmp_path / "course"))


def _nb(course):
    import nbformat
    return nbformat.writes(gc.released(course.root)).encode()


def _placed(course):
    folder = course.root / "submitted"
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) \
        if folder.is_dir() else []


def test_a_folder_gives_only_its_regular_files_and_follows_no_link(course, tmp_path):
    down = tmp_path / "download"
    for name in ("alice", "bob", "carol", "dave"):
        (down / name).mkdir(parents=True)
    (down / "alice" / f"{L}.ipynb").write_bytes(_nb(course))
    secret = tmp_path / "secret.txt"
    secret.write_text("the solutions")
    os.symlink(secret, down / "bob" / f"{L}.ipynb")                 # a link to a file
    os.symlink(course.root / "solutions", down / "carol" / "sub")    # a link to a folder
    os.symlink(course.root / "solutions" / L, down / "erin")         # a learner folder, linked
    os.mkfifo(down / "dave" / f"{L}.ipynb")                          # would block a reader
    result = collect.collect(course, down)
    assert result.placed == [("alice", L, f"{L}.ipynb")]
    assert dict(result.not_placed) == {
        f"bob/{L}.ipynb": "a symbolic link (not followed)",
        "carol/sub": "a symbolic link (not followed)",
        "erin": "a symbolic link (not followed)",
        f"dave/{L}.ipynb": "a FIFO"}
    assert _placed(course) == ["alice", f"alice/{L}", f"alice/{L}/{L}.ipynb"]


def _link_member(z, name, target):
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    z.writestr(info, target)


def test_a_zip_member_whose_mode_says_link_is_not_placed(course, tmp_path):
    archive = tmp_path / "links.zip"
    with zipfile.ZipFile(archive, "w") as z:
        _link_member(z, f"mallory/{L}.ipynb", "/etc/shadow")
        info = zipfile.ZipInfo(f"fifo/{L}.ipynb")
        info.create_system = 3
        info.external_attr = (stat.S_IFIFO | 0o644) << 16
        z.writestr(info, "")
        z.writestr(f"alice/{L}.ipynb", _nb(course))
    result = collect.collect(course, archive)
    assert result.placed == [("alice", L, f"{L}.ipynb")]
    assert dict(result.not_placed) == {f"mallory/{L}.ipynb": "a symbolic link (not followed)",
                                       f"fifo/{L}.ipynb": "a FIFO"}


def test_a_learner_id_is_read_only_at_the_layouts_own_level(course, tmp_path):
    """alice's folder holding bob's notebook, a Moodle folder holding another learner's folder:
    refused; bob's real notebook is his."""
    archive = tmp_path / "planted.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(f"alice/bob/{L}/{L}.ipynb", b"{}")              # nbgrader's layout, inside alice
        z.writestr(f"alice/bob/{L}.ipynb", b"{}")                  # a learner folder inside alice
        z.writestr(f"bob/{L}.ipynb", _nb(course))
    result = collect.collect(course, archive)
    assert result.placed == [("bob", L, f"{L}.ipynb")]
    assert course.submission(L, "bob").joinpath(f"{L}.ipynb").read_bytes() == _nb(course)
    for name in (f"alice/bob/{L}/{L}.ipynb", f"alice/bob/{L}.ipynb"):
        assert "deeper than the layout" in dict(result.not_placed)[name]

    moodle = tmp_path / "moodle.zip"
    ann, bob = "Ann Lee_11_assignsubmission_file_", "Bob Ray_22_assignsubmission_file_"
    with zipfile.ZipFile(moodle, "w") as z:
        z.writestr(f"{ann}/{L}.ipynb", _nb(course))
        z.writestr(f"{ann}/{bob}/{L}.ipynb", b"{}")                 # Ann plants Bob's
        z.writestr(f"{bob}/{L}.ipynb", _nb(course) + b"\n")
    result = collect.collect(course, moodle, lesson=L)
    assert result.lms == "moodle"
    assert sorted(p for p in result.placed if p[2] != "timestamp.txt") == [
        ("11", L, f"{L}.ipynb"), ("22", L, f"{L}.ipynb")]
    assert course.submission(L, "22").joinpath(f"{L}.ipynb").read_bytes() == _nb(course) + b"\n"
    assert "a folder inside the learner's folder" in dict(result.not_placed)[f"{ann}/{bob}/{L}.ipynb"]


def test_sizes_are_bounded_by_the_declared_and_by_the_read_size(course, tmp_path):
    limit = 1_000_000
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"bomb/{L}.ipynb", b"0" * 30_000_000)             # 30 MB in about 30 KB
        z.writestr(f"liar/{L}.ipynb", b"1" * 3_000_000)
        z.writestr(f"alice/{L}.ipynb", _nb(course))
    assert archive.stat().st_size < 200_000
    # the liar's declared size, in the central directory, says 100 bytes
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as z:
        liar = z.getinfo(f"liar/{L}.ipynb")
    central = [i for i in range(len(data)) if data[i:i + 4] == b"PK\x01\x02"]
    for i in central:
        name_len = struct.unpack("<H", data[i + 28:i + 30])[0]
        if data[i + 46:i + 46 + name_len].decode() == liar.filename:
            data[i + 24:i + 28] = struct.pack("<I", 100)
    archive.write_bytes(bytes(data))
    result = collect.collect(course, archive, max_bytes=limit)
    assert result.placed == [("alice", L, f"{L}.ipynb")]
    why = dict(result.not_placed)
    assert "declared 30,000,000 bytes unpacked: over the size limit" in why[f"bomb/{L}.ipynb"]
    assert "damaged zip member" in why[f"liar/{L}.ipynb"]
    # a file in a folder is read in pieces and dropped past the limit
    down = tmp_path / "big"
    (down / "carl").mkdir(parents=True)
    (down / "carl" / f"{L}.ipynb").write_bytes(b"2" * (limit + 1))
    big = collect.collect(course, down, max_bytes=limit)
    assert big.placed == [] and "over the size limit" in dict(big.not_placed)[f"carl/{L}.ipynb"]
    # those learners are failed, with the reason, not missing, in the export
    rows = {(o.student, o.lesson): o for o in outcomes(course, [L])}
    assert rows["bomb", L].status == status.FAILED and "size limit" in rows["bomb", L].reason
    assert rows["carl", L].status == status.FAILED
    assert rows["alice", L].status == status.UNGRADED


def test_one_file_is_placed_by_hand_and_nothing_is_overwritten_silently(course, tmp_path):
    untitled = tmp_path / "Untitled.ipynb"
    untitled.write_bytes(_nb(course))
    from autograd_lab_grader.commands import cli as command
    command.console.width = 250         # one line a message, so the output can be read back

    def cli(*a):
        return runner.invoke(app, ["-C", str(course.root), "collect", *map(str, a)])
    first = cli(untitled, "--student", "smithjohn-2", "--lesson", L)
    assert first.exit_code == 0 and "1 new, 0 replaced, 0 unchanged" in first.output, first.output
    assert course.submission(L, "smithjohn-2").joinpath(f"{L}.ipynb").read_bytes() == _nb(course)
    again = cli(untitled, "--student", "smithjohn-2", "--lesson", L)
    assert "0 new, 0 replaced, 1 unchanged" in again.output
    untitled.write_bytes(_nb(course) + b" ")
    changed = cli(untitled, "--student", "smithjohn-2", "--lesson", L)
    assert "0 new, 1 replaced, 0 unchanged" in changed.output
    assert "the old one is kept in submitted-history/smithjohn-2/" in changed.output
    kept = list((course.root / "submitted-history" / "smithjohn-2" / L).iterdir())
    assert (kept[0] / f"{L}.ipynb").read_bytes() == _nb(course)
    for bad in ("../x", ".hidden", "a/b"):
        refused = cli(untitled, "--student", bad, "--lesson", L)
        assert refused.exit_code == 1 and "cannot be a student id" in refused.output, bad
    assert cli(untitled, "--student", "x").exit_code == 1           # no lesson: refused
    assert not (course.root / "x").exists()
    os.symlink(untitled, tmp_path / "link.ipynb")
    link = cli(tmp_path / "link.ipynb", "--student", "y", "--lesson", L)
    assert link.exit_code == 1 and "symbolic link" in link.output


def test_a_deep_tree_is_named_not_walked(course, tmp_path):
    down = tmp_path / "deep"
    deep = down / "alice"
    for _ in range(50):
        deep = deep / "d"
    os.makedirs(deep)
    (deep / f"{L}.ipynb").write_bytes(b"{}")        # never reached
    (down / "bob").mkdir()
    (down / "bob" / f"{L}.ipynb").write_bytes(_nb(course))
    result = collect.collect(course, down)
    assert result.placed == [("bob", L, f"{L}.ipynb")]
    assert dict(result.not_placed) == {"alice/d/d/d": "a folder deeper than any layout (not read)"}


def test_names_keep_their_letters(course, tmp_path):
    down = tmp_path / "names"
    for name in ("Zoë Müller", "Zoe\u0308 Mu\u0308ller-2", "王小明"):     # the second in NFD
        (down / name).mkdir(parents=True)
        (down / name / f"{L}.ipynb").write_bytes(_nb(course))
    result = collect.collect(course, down)
    assert sorted(s for s, _, _ in result.placed) == ["zoë-müller", "zoë-müller-2", "王小明"]


def test_the_same_notebook_in_a_later_download_is_unchanged_whatever_its_zip_time(course, tmp_path):
    def download(path, when, data):
        with zipfile.ZipFile(path, "w") as z:
            z.writestr(zipfile.ZipInfo(f"Ann Lee_11_assignsubmission_file_{L}.ipynb",
                                       date_time=when), data)
        return path

    first = collect.collect(course, download(tmp_path / "1.zip", (2026, 11, 19, 10, 0, 0),
                                             _nb(course)))
    assert first.placed and first.lms == "moodle"
    stamp = course.submission(L, "11") / "timestamp.txt"
    assert stamp.read_text().strip() == "2026-11-19 10:00:00 UTC"
    again = collect.collect(course, download(tmp_path / "2.zip", (2026, 11, 30, 8, 0, 0),
                                             _nb(course)))
    assert again.unchanged == [("11", L)] and again.replaced == []
    assert stamp.read_text().strip() == "2026-11-19 10:00:00 UTC"
    changed = collect.collect(course, download(tmp_path / "3.zip", (2026, 11, 30, 9, 0, 0),
                                               _nb(course) + b" "))
    assert [r[:2] for r in changed.replaced] == [("11", L)]
    assert stamp.read_text().strip() == "2026-11-30 09:00:00 UTC"


# -- names an LMS hands over are the learners' to choose -----------------------------------

# Moodle: (name parts, participant id read, or the ids an ambiguous name could be read as)
MOODLE_NAMES = [
    (["Ann Lee_11_assignsubmission_file_lesson.ipynb"], "11"),
    (["Ann_Lee_11_assignsubmission_file_lesson.ipynb"], "11"),          # an _ in a name, once
    (["Ann Lee_11_assignsubmission_file_", "Bob_22_assignsubmission_file_x.ipynb"], "11"),
    # a full name chosen to read as participant 1002's (Eve is 1003)
    (["Eve_1002_assignsubmission_file_x_1003_assignsubmission_file_lesson.ipynb"],
     ("1002", "1003")),
    (["Eve_1002_assignsubmission_file_x_1003_assignsubmission_file_", "lesson.ipynb"],
     ("1002", "1003")),
    # ...its last `_` shared with Moodle's own part (a non-overlapping search sees one)
    (["Eve_1002_assignsubmission_file_1003_assignsubmission_file_lesson.ipynb"],
     ("1002", "1003")),
    (["Eve_1002_assignsubmission_file_1003_assignsubmission_file_", "lesson.ipynb"],
     ("1002", "1003")),
    (["Eve_1002_assignsubmission_onlinetext_x_1003_assignsubmission_file_lesson.ipynb"],
     ("1002", "1003")),
    # a learner's own file name that holds Moodle's form (flat: it cannot be told apart)
    (["Ann Lee_11_assignsubmission_file_Bob_22_assignsubmission_file_lesson.ipynb"],
     ("11", "22")),
    # another script's digits are no id: the name is Eve's, and so is the file
    (["Eve_\uff11\uff10\uff10\uff12_assignsubmission_file_x_1003_assignsubmission_file_l.ipynb"],
     "1003"),
    (["Eve_\u0661\u0660\u0660\u0662_assignsubmission_file_x_1003_assignsubmission_file_l.ipynb"],
     "1003"),
]

# Canvas: (name, user id read or None, late)
CANVAS_NAMES = [
    ("smithjohn_100_900_lesson.ipynb", "100", False),
    ("smithjohn_late_100_900_lesson.ipynb", "100", True),
    ("smithjohn_100_900_200_901_lesson.ipynb", "100", False),      # the learner's file name
    ("smithjohn_100_900_late_200_901_lesson.ipynb", "100", False),  # ...says late: it is not
    ("late_100_900_lesson.ipynb", "100", False),                   # a learner named Late
    ("_100_900_lesson.ipynb", "100", False),                       # a name with no letter
    ("_late_100_900_lesson.ipynb", "100", True),
    ("smithjohn_\uff11\uff10\uff10_900_lesson.ipynb", None, False),  # fullwidth digits
    ("smithjohn_late_late_100_900_lesson.ipynb", None, False),
]


def test_a_moodle_name_read_more_than_one_way_names_no_one():
    from autograd_lab_grader.lms import moodle

    for parts, expected in MOODLE_NAMES:
        found = moodle.identify(parts)
        if isinstance(expected, tuple):
            assert found.student == "" and found.ambiguous == expected, parts
        else:
            assert found.student == expected and found.ambiguous == (), parts


def test_a_canvas_user_id_is_the_one_after_the_letters():
    """Canvas's lastfirst is letters only: neither the learner's file name nor their name can
    move the user id or the late mark."""
    from autograd_lab_grader.lms import canvas

    for name, user, late in CANVAS_NAMES:
        found = canvas.identify([name])
        if user is None:
            assert found is None, name
        else:
            assert (found.student, found.late) == (user, late), name


def _moodle_download(path, members):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members:
            z.writestr(name, data)
    return path


def test_a_crafted_moodle_name_places_nothing_as_a_classmates(course, tmp_path):
    """Eve (participant 33) names herself so that her file reads as Bob's (22): refused and
    listed; Bob's own notebook is his (not "2 notebooks"), and the others are placed."""
    mine, eves = _nb(course), _nb(course) + b"\n\n"
    for folders in (False, True):
        sep = "/" if folders else ""
        download = _moodle_download(tmp_path / f"eve-{folders}.zip", [
            (f"Ann Lee_11_assignsubmission_file_{sep}{L}.ipynb", mine),
            (f"Bob Ray_22_assignsubmission_file_{sep}{L}.ipynb", mine),
            (f"Eve_22_assignsubmission_file_x_33_assignsubmission_file_{sep}{L}.ipynb", eves),
            (f"Eve_22_assignsubmission_file_33_assignsubmission_file_{sep}{L}.ipynb", eves)])
        target = Course(gc.copy_course(course.root, tmp_path / f"c-{folders}"))
        result = collect.collect(target, download, lesson=L)
        assert result.lms == "moodle"      # (one crafted name does not make it a plain folder)
        assert sorted(s for s, _, f in result.placed if f == f"{L}.ipynb") == ["11", "22"]
        assert target.submission(L, "22").joinpath(f"{L}.ipynb").read_bytes() == mine
        assert not target.submission(L, "33").exists()
        refused = {name: why for name, why in result.not_placed if name.startswith("Eve")}
        assert len(refused) == 2
        for why in refused.values():
            assert "more than one learner's (Moodle participant 22 or 33)" in why
            assert "placed as no one's" in why
        assert result.refused == {}
        assert result.names == {"11": "Ann Lee", "22": "Bob Ray"}


def test_a_moodle_name_that_is_not_the_rosters_is_refused(course, tmp_path):
    from autograd_lab_grader.steps.roster import add_learners

    add_learners(course, [("11", "Ann Lee", ""), ("22", "Bob Ray", ""),
                          ("44", "Siobhán O'Brien", ""), ("55", "Smith, John", ""),
                          ("66", "Ada_Lovelace", "")])
    nb = _nb(course)
    download = _moodle_download(tmp_path / "names.zip", [
        (f"Ann Lee_11_assignsubmission_file_{L}.ipynb", nb),
        (f"Mallory_22_assignsubmission_file_{L}.ipynb", nb),            # not Bob Ray
        # Moodle's download spells the roster's names its own way: still theirs
        (f"Siobhán OBrien_44_assignsubmission_file_{L}.ipynb", nb),
        (f"John Smith_55_assignsubmission_file_{L}.ipynb", nb),
        (f"Ada Lovelace_66_assignsubmission_file_{L}.ipynb", nb),
        (f"Newcomer_77_assignsubmission_file_{L}.ipynb", nb)])          # not on the roster
    result = collect.collect(course, download, lesson=L)
    assert sorted(s for s, _, f in result.placed if f == f"{L}.ipynb") == [
        "11", "44", "55", "66", "77"]
    why = dict(result.not_placed)[f"Mallory_22_assignsubmission_file_{L}.ipynb"]
    assert "its name says 'Mallory', but participant 22 is 'Bob Ray'" in why
    assert "placed as no one's" in why and "autograd-lab roster" in why
    assert not course.submission(L, "22").exists()
    from autograd_lab_grader.steps.roster import names
    assert names(course)["22"] == "Bob Ray"


HOSTILE_NAMES = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\t=1+1", "\r=1+1"]


def test_no_csv_written_holds_a_cell_a_spreadsheet_runs(course, tmp_path):
    import csv
    import io

    from autograd_lab_grader.reading.plain import printable
    from autograd_lab_grader.steps.roster import add_learners, names

    ids = [str(100 + i) for i in range(len(HOSTILE_NAMES))]
    add_learners(course, list(zip(ids, HOSTILE_NAMES, [""] * len(ids))))
    gradebook = tmp_path / "gradebook.csv"
    with gradebook.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                    f"{L} (7001)", "Quiz (7002)"])
        w.writerow(["    Points Possible", "", "", "", "", "5.00", "2.00"])
        for i, (student, name) in enumerate(zip(ids, HOSTILE_NAMES)):
            w.writerow([name, student, "", "", "@section", "", "-1.5" if i == 0 else "+2"])
    worksheet = tmp_path / "worksheet.csv"
    with worksheet.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["Identifier", "Full name", "Email address", "Status", "Grade",
                    "Maximum grade", "Grade can be changed", "Last modified (submission)",
                    "Last modified (grade)", "Feedback comments"])
        for student, name in zip(ids, HOSTILE_NAMES):
            w.writerow([f"Participant {student}", name, "-x@y", "", "", "10.00", "Yes", "",
                        "-", ""])
    out = tmp_path / "grades"
    written = export.export(course, out, [L])
    written.append(export.fill_canvas(course, gradebook, out / "canvas.csv", [L]).path)
    written.append(export.fill_moodle(course, worksheet, out / "moodle.csv", L).path)
    shown = names(course)       # (nbgrader splits a name at its comma: grades.csv's name)
    for path in written:
        text = path.read_bytes().decode("utf-8-sig")
        table = list(csv.reader(io.StringIO(text, newline="")))
        for row in table:
            for value in row:
                if value.startswith(("=", "+", "-", "@", "\t", "\r")):
                    assert value in ("-1.5", "+2"), (path.name, value)    # numbers stay numbers
        if path.name.startswith("questions"):          # (no names in it)
            continue
        cells = {value for row in table for value in row}
        for name in ([shown[s] for s in ids] if path.name.startswith("grades")
                     else HOSTILE_NAMES):
            # the name, as text (a control character in it as its escape: plain.printable)
            assert {name, "'" + name, printable(name)} & cells, (path.name, name)
        assert "'+1+1" in cells and "'@SUM(A1)" in cells
    canvas = list(csv.reader((out / "canvas.csv").open(encoding="utf-8", newline="")))
    assert [row[1] for row in canvas[2:]] == ids                      # ids as Canvas wrote them
    assert canvas[2][6] == "-1.5" and canvas[3][6] == "+2"
    moodle = list(csv.DictReader((out / "moodle.csv").open(encoding="utf-8")))
    assert [row["Identifier"] for row in moodle] == [f"Participant {s}" for s in ids]


def test_the_moodle_feedback_zip_keeps_every_member_at_its_top(course, tmp_path):
    from pathlib import PurePosixPath

    from autograd_lab_grader.lms import moodle
    from autograd_lab_grader.steps.roster import add_learners, names

    hostile = {"71": "../../../etc/cron.d/x", "72": "/abs/Eve_1002_x", "73": "..\\..\\win",
               "74": ".hidden\x00nul\x07bell\nline", "75": "..", "76": "Zoë Müller"}
    add_learners(course, [(s, n, "") for s, n in hostile.items()])
    pages = []
    for student in hostile:
        page = course.directory("feedback") / student / L / f"{L}.html"
        page.parent.mkdir(parents=True)
        page.write_text("<p>feedback</p>")
        pages.append(page)
    path = tmp_path / "feedback.zip"
    result = moodle.feedback_zip(pages, path, L, names(course))
    names = zipfile.ZipFile(path).namelist()
    assert len(names) == len(hostile) and result.not_in_zip == []
    for name in names:
        assert not name.startswith(("/", ".")) and ".." not in name and "\\" not in name
        assert len(PurePosixPath(name).parts) == 1, name
        assert not any(ord(c) < 32 for c in name), name
    # Moodle reads the participant id as the second `_`-separated field of a member's name
    assert sorted(name.split("_")[1] for name in names) == sorted(hostile)
    assert f"Zoë Müller_76_assignsubmission_file_{L}-feedback.html" in names
    assert f"absEve 1002 x_72_assignsubmission_file_{L}-feedback.html" in names


def test_export_writes_into_the_courses_grades_folder_from_anywhere(course, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = runner.invoke(app, ["-C", str(course.root), "export", "--lesson", L])
    assert result.exit_code == 0, result.output
    assert (course.root / "grades" / f"grades-{L}.csv").is_file()
    assert not (elsewhere / "grades").exists()


def test_a_roster_id_that_cannot_be_a_folder_is_refused(course, tmp_path):
    from autograd_lab_grader.steps import roster

    for bad in ("../x", ".hidden", "a/b"):
        path = tmp_path / "list.csv"
        path.write_text(f"id,name\nalice,Alice\n{bad},Eve\n")
        with pytest.raises(ValueError, match="cannot be a folder name"):
            roster.roster(course, path)


def test_a_learner_whose_file_collect_refuses_is_failed_with_its_name_not_missing(course, tmp_path):
    """Canvas's download: Ann handed in a zip holding her notebook, Bob a PDF, Cy a notebook
    and a PDF; Moodle's: Eve's crafted name claims participant 22. Ann and Bob are `failed`
    with their files' names and reasons (the zip's says what to do); Cy is as any learner
    with a notebook; no one's row is written against the id Eve's name claims."""
    import csv
    import io

    from autograd_lab_grader.steps.roster import add_learners

    add_learners(course, [("101", "Lee, Ann", ""), ("102", "Ray, Bob", ""),
                          ("103", "Yu, Cy", ""), ("22", "Dan Oh", "")])
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr(f"{L}.ipynb", _nb(course))
    download = _moodle_download(tmp_path / "canvas.zip", [
        (f"leeann_101_9001_{L}.zip", inner.getvalue()),
        (f"raybob_102_9002_{L}-answers.pdf", b"%PDF-1.4"),
        (f"yucy_103_9003_{L}.ipynb", _nb(course)),
        ("yucy_103_9003_notes.pdf", b"%PDF-1.4")])
    result = collect.collect(course, download, lesson=L)
    assert result.lms == "canvas"
    why = dict(result.not_placed)[f"leeann_101_9001_{L}.zip"]
    assert "a zip, not a notebook" in why and "unzip it" in why
    assert f"autograd-lab collect NOTEBOOK --student 101 --lesson {L}" in why
    assert set(result.refused) == {(L, "101"), (L, "102")}
    crafted = _moodle_download(tmp_path / "moodle.zip", [
        (f"Dan Oh_22_assignsubmission_file_{L}.ipynb", _nb(course)),
        (f"Eve_22_assignsubmission_file_x_33_assignsubmission_file_{L}.pdf", b"%PDF"),
        (f"Mallory_22_assignsubmission_file_{L}.zip", b"PK")])       # not participant 22's name
    result = collect.collect(course, crafted, lesson=L)
    assert result.refused == {}
    export.export(course, tmp_path / "out", [L])
    rows = {r["student"]: r for r in csv.DictReader(
        (tmp_path / "out" / f"grades-{L}.csv").open(encoding="utf-8"))}
    assert rows["101"]["status"] == status.FAILED
    assert f"leeann_101_9001_{L}.zip" in rows["101"]["reason"]
    assert "a zip, not a notebook" in rows["101"]["reason"]
    assert rows["102"]["status"] == status.FAILED and ".pdf" in rows["102"]["reason"]
    assert rows["103"]["status"] == status.UNGRADED
    assert rows["22"]["status"] == status.UNGRADED and "33" not in rows


def test_an_export_of_some_lessons_leaves_the_class_wide_file_alone(course, tmp_path):
    out = tmp_path / "grades"
    export.export(course, out)
    whole = (out / "grades.csv").read_bytes()
    result = runner.invoke(app, ["-C", str(course.root), "export", "--out", str(out),
                                 "--lesson", L])
    assert result.exit_code == 0, result.output
    assert (out / "grades.csv").read_bytes() == whole
    assert (out / f"grades-{L}.csv").is_file() and (out / f"questions-{L}.csv").is_file()


def test_a_notebook_placed_by_hand_gets_the_time_given_and_extensions_come_from_a_csv(
        course, tmp_path):
    """A lesson with a due date: placed by hand, a notebook needs --time (the LMS's), and its
    file's modification time (a learner's to set, in a zip of their own) is never read."""
    from datetime import datetime

    from autograd_lab_grader.gradebook import late

    late.set_due(course, L, datetime(2026, 11, 20, 23, 59))
    path = tmp_path / "mine.ipynb"
    path.write_bytes(_nb(course))
    os.utime(path, (1700000000, 1700000000))           # 2023: long before the due date
    cli = ["-C", str(course.root), "collect", str(path), "--student", "ann", "--lesson", L]
    refused = runner.invoke(app, cli)
    assert refused.exit_code == 1
    said = " ".join(refused.output.split())
    assert "has a due date: say when this notebook was handed in, with --time" in said
    assert "modification time is not read" in said
    assert not course.submission(L, "ann").exists()
    result = runner.invoke(app, cli + ["--time", "2026-11-18 13:00", "--timezone",
                                       "Europe/Berlin"])
    assert result.exit_code == 0, result.output
    stamp = "2026-11-18 12:00:00 UTC"
    assert course.submission(L, "ann").joinpath("timestamp.txt").read_text().strip() == stamp
    assert f"submission time {stamp}, as --time gives it" in " ".join(result.output.split())
    grants = tmp_path / "extensions.csv"
    grants.write_text(f"student,lesson,due\nann,{L},2\nbob,{L},2026-12-01 10:00\n")
    result = runner.invoke(app, ["-C", str(course.root), "extend", "--csv", str(grants),
                                 "--timezone", "Europe/Berlin"])
    assert result.exit_code == 0, result.output
    assert late.read_extensions(course) == {(L, "ann"): datetime(2026, 11, 22, 23, 59),
                                            (L, "bob"): datetime(2026, 12, 1, 9, 0)}
    export.export(course, tmp_path / "out")
    import csv
    rows = {r["student"]: r for r in csv.DictReader((tmp_path / "out" / "grades.csv").open())}
    assert rows["ann"]["submitted"] == stamp and rows["ann"]["due"] == "2026-11-22 23:59:00 UTC"
    assert rows["ann"]["late"] == "no"          # (handed in on the 18th)


# -- late work made to look on time: a submission's time is the LMS's or the instructor's ----

DUE = (2026, 11, 20, 23, 59, 0)               # the lesson's due date (UTC)
HANDED_IN = (2026, 11, 22, 9, 0, 0)           # the LMS's time of the hand-in: late
LMS_STAMP = "2026-11-22 09:00:00 UTC"
EARLY = b"2026-11-01 09:00:00"                # what the learner's own files say


def _due(course):
    from datetime import datetime

    from autograd_lab_grader.gradebook import late

    late.set_due(course, L, datetime(*DUE))


def _download(path, members, when=HANDED_IN):
    """A zip as the LMS writes it: every member stamped with the hand-in's time; a member
    whose data is ("link", target) has a link's mode."""
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members:
            if isinstance(data, tuple):
                _link_member(z, name, data[1])
            else:
                z.writestr(zipfile.ZipInfo(name, date_time=when), data)
    return path


def _unpacked(path, members, when=HANDED_IN):
    """The same download unpacked into a folder (its files keep the zip's times)."""
    import calendar

    stamp = calendar.timegm(when)
    for name, data in members:
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, tuple):
            os.symlink(data[1], target)
        else:
            target.write_bytes(data)
            os.utime(target, (stamp, stamp))
    return path


# a timestamp.txt of the learner's, by every name that reads as one
STAMPS = ["timestamp.txt", "TIMESTAMP.TXT", "Timestamp.txt", "timestamp\u200b.txt",
          "\uff54imestamp.txt", " timestamp.txt"]

# layout -> (its members for the learner's notebook and a file named `name`, the id, an LMS's)
LAYOUTS = {
    "canvas": (lambda name: [f"leeann_late_101_9001_{L}.ipynb", f"leeann_late_101_9001_{name}"],
               "101", True),
    "moodle-folders": (lambda name: [f"Ann Lee_11_assignsubmission_file_/{L}.ipynb",
                                     f"Ann Lee_11_assignsubmission_file_/{name}"], "11", True),
    "moodle-flat": (lambda name: [f"Ann Lee_11_assignsubmission_file_{L}.ipynb",
                                  f"Ann Lee_11_assignsubmission_file_{name}"], "11", True),
    "nbgrader": (lambda name: [f"ann/{L}/{L}.ipynb", f"ann/{L}/{name}"], "ann", False),
    "submitted": (lambda name: [f"submitted/ann/{L}/{L}.ipynb", f"submitted/ann/{L}/{name}"],
                  "ann", False),
    "learner-folder": (lambda name: [f"ann/{L}.ipynb", f"ann/{name}"], "ann", False),
}


@pytest.mark.parametrize("form", ["zip", "folder"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_timestamp_handed_in_is_refused_in_every_layout(course, tmp_path, layout, form):
    """A late learner hands in, beside their notebook, timestamp.txt saying they were early:
    under every name that reads as it, and as a link to a file that says so. It is refused and
    named, never placed; their time is the LMS's (an LMS's download), or none (a layout of no
    LMS); their notebook is placed, and they are not failed for it."""
    from autograd_lab_grader.gradebook import late

    _due(course)
    members_of, student, from_lms = LAYOUTS[layout]
    lie = tmp_path / "early.txt"
    lie.write_bytes(EARLY)
    members = [(members_of("x")[0], _nb(course))]
    members += [(members_of(name)[1], EARLY) for name in STAMPS]
    link = members_of("timestamp.txt")[1].replace("timestamp.txt", "timeStamp.txt")
    members.append((link, ("link", str(lie))))
    source = (_download(tmp_path / "download.zip", members) if form == "zip"
              else _unpacked(tmp_path / "download", members))
    result = collect.collect(course, source, lesson=L)
    assert result.lms == ({"canvas": "canvas"}.get(layout) or
                          ("moodle" if layout.startswith("moodle") else None))
    folder = course.submission(L, student)
    expected = {f"{L}.ipynb"} | ({"timestamp.txt"} if from_lms else set())
    assert {p.name for p in folder.iterdir()} == expected
    assert folder.joinpath(f"{L}.ipynb").read_bytes() == _nb(course)
    if from_lms:
        assert folder.joinpath("timestamp.txt").read_text().strip() == LMS_STAMP
    else:                                   # (and said)
        assert [n for _, n in result.notes if "no submission time for 1 learner(s)" in n]
    assert late.submitted_at(folder) == (
        __import__("datetime").datetime(*HANDED_IN) if from_lms else None)
    why = dict(result.not_placed)
    for name, _ in members[1:-1]:
        assert "a timestamp.txt handed in" in why[name], (name, why)
    assert why[link] in ("a symbolic link (not followed)",
                         "a timestamp.txt handed in: a submission's time is the LMS's (its "
                         "download) or yours (`collect NOTEBOOK --time`), never a file's")
    assert result.refused == {}


def test_canvas_s_late_mark_is_its_own_whatever_the_learners_file_is_called(course, tmp_path):
    """Only Canvas's part of a name says whose a file is and whether it is late: a learner's
    own file name that holds another learner's prefix, a `_late` or none cannot move either;
    the late mark moves the time across the due date whatever the zip's time says."""
    from autograd_lab_grader.gradebook import late

    _due(course)
    nb = _nb(course)
    on_time = (2026, 11, 19, 14, 30, 0)
    members = [
        (f"leeann_late_101_9001_raybob_102_9002_{L}.ipynb", nb, on_time),   # late, says Bob's
        (f"raybob_102_9002_leeann_late_101_9001_{L}.ipynb", nb, HANDED_IN),  # Canvas: on time
        (f"yucy_late_103_9003_yucy_103_9003_{L}.ipynb", nb, on_time),       # late, its own name
        (f"ohdan_104_9004_{L}_late.ipynb", nb, on_time),                    # "late": not Canvas's
    ]
    archive = tmp_path / "canvas.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for name, data, when in members:
            z.writestr(zipfile.ZipInfo(name, date_time=when), data)
    result = collect.collect(course, archive, lesson=L)
    assert result.lms == "canvas"
    assert sorted(s for s, _, f in result.placed if f == f"{L}.ipynb") == ["101", "102", "103",
                                                                          "104"]
    times = {s: late.submitted_at(course.submission(L, s)) for s in ("101", "102", "103", "104")}
    from datetime import datetime, timedelta
    due = datetime(*DUE)
    assert times == {"101": due + timedelta(seconds=1), "102": due,
                     "103": due + timedelta(seconds=1), "104": datetime(*on_time)}


def test_a_date_in_the_notebook_is_no_submission_time(course, tmp_path):
    """The notebook's metadata (the notebook's, nbgrader's, a cell's) says it was handed in
    early: collect, nbgrader's autograde and the export read the LMS's time all the same."""
    import nbformat

    from autograd_lab_grader.steps import grade

    _due(course)
    nb = gc.released(course.root)
    nb.metadata["timestamp"] = EARLY.decode()
    nb.metadata["submitted_at"] = EARLY.decode()
    nb.metadata["autograd_lab"] = {"submitted": EARLY.decode(), "late": False}
    nb.metadata["nbgrader"] = {"timestamp": EARLY.decode()}
    nb.cells[0].metadata["timestamp"] = EARLY.decode()
    archive = _download(tmp_path / "moodle.zip", [
        (f"Ann Lee_11_assignsubmission_file_{L}.ipynb", nbformat.writes(nb).encode())])
    collect.collect(course, archive, lesson=L)
    rows = grade.grade(course, L, grade.Options(jobs=1))
    assert rows[0].status != status.FAILED, rows
    with course.gradebook() as gb:
        submission = gb.find_submission(L, "11")
        assert submission.timestamp == __import__("datetime").datetime(*HANDED_IN)
        assert submission.total_seconds_late > 0
    out = tmp_path / "out"
    export.export(course, out, [L])
    import csv
    row = next(csv.DictReader((out / f"grades-{L}.csv").open(encoding="utf-8")))
    assert row["submitted"] == LMS_STAMP and row["late"] == "yes", row


@pytest.mark.parametrize("lms_kind", ["canvas", "moodle"])
def test_a_zip_handed_in_is_placed_by_hand_at_the_lms_s_time_not_its_files(course, tmp_path,
                                                                          lms_kind):
    """A late learner sets their notebook's time before the due date and hands in a zip of it.
    collect refuses the zip, and the command it gives places the notebook at the LMS's time:
    unpacked (`unzip` keeps the learner's time on the file), placed by hand, the file's time is
    not read; without --time the lesson's due date refuses it."""
    import calendar
    import re
    import shlex

    from autograd_lab_grader.gradebook import late

    _due(course)
    inner = tmp_path / "made-by-the-learner.zip"
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr(zipfile.ZipInfo(f"{L}.ipynb", date_time=(2026, 11, 1, 9, 0, 0)), _nb(course))
    name = {"canvas": f"leeann_late_101_9001_{L}.zip",
            "moodle": f"Ann Lee_11_assignsubmission_file_/{L}.zip"}[lms_kind]
    student = {"canvas": "101", "moodle": "11"}[lms_kind]
    result = collect.collect(course, _download(tmp_path / "download.zip",
                                               [(name, inner.read_bytes())]), lesson=L)
    why = dict(result.not_placed)[name]
    assert "a zip, not a notebook" in why
    command = re.search(r"`(autograd-lab collect [^`]+)`", why)[1]
    assert command == (f'autograd-lab collect NOTEBOOK --student {student} --lesson {L} '
                       f'--time "{LMS_STAMP}"'), command
    assert result.refused == {(L, student): f"collect refused {name}: {why}"}
    # the instructor unzips it, as `unzip` does: the file keeps the learner's time
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(inner) as z:
        z.extractall(unpacked)
        when = calendar.timegm(z.getinfo(f"{L}.ipynb").date_time + (0, 0, 0))
    notebook = unpacked / f"{L}.ipynb"
    os.utime(notebook, (when, when))
    args = shlex.split(command)[1:]
    args[args.index("NOTEBOOK")] = str(notebook)
    without_time = args[:args.index("--time")]
    refused = runner.invoke(app, ["-C", str(course.root), *without_time])
    assert refused.exit_code == 1 and "--time" in refused.output
    placed = runner.invoke(app, ["-C", str(course.root), *args])
    assert placed.exit_code == 0, placed.output
    folder = course.submission(L, student)
    assert folder.joinpath("timestamp.txt").read_text().strip() == LMS_STAMP
    assert late.submitted_at(folder) == __import__("datetime").datetime(*HANDED_IN)
