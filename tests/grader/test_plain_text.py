"""A learner's bytes reach the instructor's terminal as text: the grading log, the command's own
output and the CSVs hold no control character of theirs but newline and tab (each is written
as its escape, ``\\x1b``), and no rich markup of theirs is read as markup (a ``[/]`` in a name
stopped every command that printed it).

The learner: named ``Eve<ESC>]0;pwned<BEL> [/] [link=...]`` (with an ``<img onerror>``) on the
roster; her kernel writes a terminal's sequences to its own standard output and error, and bytes
that are not UTF-8; her kernel's check raises an error whose message holds them, which the
grading log quotes from the kernel's own run of the test cell; she hands in a file whose name
holds them beside her notebook."""
import csv
import re

import pytest
from typer.testing import CliRunner

import gradingcourse as gc
from autograd_lab_grader.commands.cli import app
from autograd_lab_grader.course import Course
from autograd_lab_grader.steps import grade

SEQUENCES = "\x1b]0;pwned\x07\x1b]52;c;c2VjcmV0\x07\x1b[2J\r\x08\x9b31m"
NAME = f"Eve{SEQUENCES} [/] [link=https://example.org]x[/link] <img src=x onerror=alert(1)>"
ANSWER = f"""
import os, sys, types
os.write(1, {SEQUENCES.encode()!r} + b' FROM-FD-1\\n')
os.write(2, {SEQUENCES.encode()!r} + b' FROM-FD-2\\n' + b'\\xff\\xfe not UTF-8\\n')
# the test cell's check, as the kernel's own run of the cell will import it
checks = types.ModuleType('fixturechecks')
def _raise(fn):
    raise ValueError({SEQUENCES!r} + ' FROM-AN-ERROR')
checks.square = checks.slope = _raise
sys.modules['fixturechecks'] = checks
def square(x):
    return 2 * x
"""
# a byte a terminal obeys: C0 but newline and tab, DEL, C1 (as UTF-8 or as itself)
CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    root = gc.make_course(tmp_path_factory.mktemp("plain") / "course", timeout=10)
    path = gc.submit(root, "eve", {"answer_square": ANSWER})
    (path.parent / f"notes{SEQUENCES}.txt").write_text("beside the notebook")
    roster = root / "roster.csv"
    with roster.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["id", "name"], ["eve", NAME]])
    runner = CliRunner()
    said = {}
    for step in (["roster", roster], ["grade", gc.LESSON], ["export"]):
        result = runner.invoke(app, ["-C", str(root), *map(str, step)])
        # (rich read a "[/]" in a name as markup, and stopped the command: MarkupError)
        assert result.exit_code == 0, (step, result.output, result.exception)
        said[step[0]] = result.output
    return root, said


def test_the_grading_log_holds_the_kernels_bytes_as_text(term):
    root, _ = term
    log = (root / "grading-logs" / gc.LESSON / "eve.log").read_bytes()
    assert not CONTROL.findall(log), CONTROL.findall(log)[:5]
    text = log.decode()
    assert "\\x1b]0;pwned\\x07" in text and "FROM-FD-1" in text and "FROM-FD-2" in text
    assert "\\xff\\xfe not UTF-8" in text
    # the kernel's own run of the test cell, quoted by the grader: as text too
    assert "[kernel's own run of test_square]" in text and "FROM-AN-ERROR" in text
    assert "peak memory of the grading process" in text


def test_a_log_keeps_its_limit_and_says_so(tmp_path):
    """What a kernel run without the sandbox writes reaches the log's pipe unbounded: the log
    keeps its limit of it (here 1,000 bytes), as text, and says how much more there was."""
    import multiprocessing
    import os

    read_end, write_end = multiprocessing.Pipe(duplex=False)     # (a pipe, as grade.py's)
    log = grade.Log(tmp_path / "logs" / "eve.log")
    log.read(read_end, 1000)
    for _ in range(100):
        os.write(write_end.fileno(), b"\x1b]0;x\x07" + b"y" * 990)
    write_end.close()
    log.done()
    kept = log.path.read_bytes()
    assert kept.startswith(b"\\x1b]0;x\\x07yyy") and not CONTROL.findall(kept)
    assert len(kept) < 1100
    assert re.search(rb"\n\[\d+ more bytes of output not kept\]\n$", kept), kept[-200:]


def test_the_commands_print_a_learners_name_as_text(term):
    _, said = term
    for step, output in said.items():
        assert not CONTROL.findall(output.encode()), (step, output)
    grade_said = said["grade"]
    assert "Eve\\x1b]0;pwned" in grade_said              # her name, in the summary
    assert "notes\\x1b]0;pwned" in grade_said      # the file handed in beside the notebook


def test_the_csvs_and_the_formgraders_names_hold_no_markup_or_control(term):
    root, _ = term
    grades = (root / "grades" / "grades.csv").read_bytes()
    assert not CONTROL.findall(grades.replace(b"\r\n", b"\n"))     # (CSV's own line ends)
    assert b"\\x1b]0;pwned" in grades
    assert b"<img" not in grades and "\u2039img src=x".encode() in grades
    with Course(root).gradebook() as gb:
        student = gb.find_student("eve")
        assert "<" not in f"{student.first_name} {student.last_name}"
