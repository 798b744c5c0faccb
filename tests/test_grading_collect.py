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
from autograd_lab.grading import collect, export, status
from autograd_lab.grading.cli import app
from autograd_lab.grading.course import Course

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
    rows = {(o.student, o.lesson): o for o in export.outcomes(course, [L])}
    assert rows["bomb", L].status == status.FAILED and "size limit" in rows["bomb", L].reason
    assert rows["carl", L].status == status.FAILED
    assert rows["alice", L].status == status.UNGRADED


def test_one_file_is_placed_by_hand_and_nothing_is_overwritten_silently(course, tmp_path):
    untitled = tmp_path / "Untitled.ipynb"
    untitled.write_bytes(_nb(course))
    from autograd_lab.grading import cli as command
    command.console.width = 250         # one line a message, so the output can be read back
    cli = lambda *a: runner.invoke(app, ["-C", str(course.root), "collect", *map(str, a)])
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
    for level in range(50):
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
    from datetime import datetime

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
