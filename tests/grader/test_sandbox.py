"""`autograd-lab grade` on a class of learners who attack the grader, with real nbgrader and real
bubblewrap: every attempt is refused or stopped by a limit, the course directory is unchanged but
for what the grader itself writes, the honest learners of the same run get the scores they get
when graded alone, no process is left, and the instructor is told what each one tried.

Every attacking submission also answers `square` wrongly (2 * x) and `slope` rightly, so that
its score, 3 of 5, shows it was graded on what it did inside the sandbox.
"""
import hashlib
import os
import socket
import threading
from pathlib import Path

import nbformat
import pytest
from typer.testing import CliRunner

import autograd_lab.checks
import gradingcourse as gc
from autograd_lab_grader.gradebook import status
from autograd_lab_grader.sandbox import sandbox, warm
from autograd_lab_grader.steps import grade
from autograd_lab_grader.commands.cli import app
from autograd_lab_grader.commands.course import Course

WRONG_SQUARE = "\ndef square(x):\n    return 2 * x\n"
MARKER = "4711.0815"     # `sleep MARKER`: the command line of every process the attacks start
PACKAGE_FILE = autograd_lab.checks.__file__

# student id -> (the attack, placed before the wrong square; what the sandbox note must name)
ATTACKS = {
    "reads-solutions": ("""
import glob, os
found = []
for pattern in ['{root}/solutions/**/*', '../../../solutions/**/*', '*.ipynb', '../**/*.ipynb',
                '/tmp/**/*.ipynb', '{root}/../**/*.ipynb']:
    found += glob.glob(pattern, recursive=True)
for path in found:
    try:
        print(path, open(path).read())
    except Exception as error:
        print(path, error)
open('{root}/solutions/fixture/fixture.ipynb').read()
""", "a path outside its folder was not there"),
    "sets-own-score": ("""
import sqlite3
db = sqlite3.connect('{root}/gradebook.db')
db.execute("UPDATE grade SET manual_score = 100")
db.commit()
""", "a path outside its folder was not there"),
    "overwrites-another": ("""
import os
for path in ['{root}/submitted/zz-right/fixture/fixture.ipynb',
             '{root}/autograded/zz-right/fixture/fixture.ipynb']:
    try:
        open(path, 'w').write('{{}}')
    except OSError as error:
        print(error)
# a course under /tmp: the folders can be made again, in the kernel's own /tmp, thrown away
os.makedirs('{root}/autograded/zz-right/fixture', exist_ok=True)
open('{root}/autograded/zz-right/fixture/fixture.ipynb', 'w').write('{{}}')
""", "a path outside its folder was not there"),
    "writes-outside": ("""
targets = ['{root}/planted.txt', '{package}', '/usr/planted', '/etc/planted', '/root/planted',
           '{home}/planted']
for target in targets:
    try:
        open(target, 'a').write('# planted')
    except OSError as error:
        print(error)
open('{package}', 'a').write('# planted')
""", "a read or write outside its folder was refused"),
    "leaves-a-process": ("""
import os, subprocess, time
subprocess.Popen(['sleep', '{marker}'], start_new_session=True)
if os.fork() == 0:              # a daemon: fork, new session, fork again
    os.setsid()
    if os.fork() == 0:
        os.execvp('sleep', ['sleep', '{marker}'])
    os._exit(0)
time.sleep(0.5)
""", ""),
    "connects-to-ports": ("""
import socket
for port in {ports}:
    try:
        socket.create_connection(('127.0.0.1', port), timeout=2).sendall(b'{marker}')
    except OSError as error:
        print(port, error)
socket.create_connection(('127.0.0.1', {ports}[0]), timeout=2)
""", "a network connection was refused"),
    "changes-config": ("""
open('{root}/nbgrader_config.py', 'a').write('\\nc.Execute.timeout = 1\\n')
""", "a path outside its folder was not there"),
    "memory-hog": ("""
hoard = bytearray(16 * 1024**3)
""", "the memory limit stopped an allocation"),
    "process-bomb": ("""
import subprocess
children = []
for _ in range(200):            # bounded, so that a broken limit cannot harm the machine
    children.append(subprocess.Popen(['sleep', '{marker}']))
""", "the process limit stopped a new process or thread"),
    "prints-its-tests": ("""
import inspect, linecache
seen = []
def spy(info):                  # IPython runs this before every cell: the test cells too
    seen.append(info.raw_cell)
    print(info.raw_cell)
get_ipython().events.register('pre_run_cell', spy)
def square(x):                  # and the test's own source, from the caller's frame
    caller = inspect.stack()[1]
    raise ValueError(''.join(linecache.getlines(caller.filename)) + repr(seen))
""", ""),
    "floods-output": ("""
for _ in range(300):
    print('x' * 1_000_000)
""", "printed output cut"),
}
CONTROLS = {"zz-right": 5, "zz-wrong": 3}
RESULTS = ("autograded", "grading-logs", "gradebook.db", "feedback")   # the grader's own


def _fingerprint(root: Path) -> dict:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).parts[0] not in RESULTS}


def _processes_with(marker: str) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline and "pytest" not in cmdline:
            found.append(f"{pid}: {cmdline}")
    return found


class Listener:
    """A TCP server on loopback, standing for the grader's and Jupyter's ports."""

    def __init__(self):
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.socket.settimeout(0.2)
        self.accepted = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.socket.accept()
            except OSError:
                continue
            self.accepted.append(conn.recv(100))
            conn.close()

    def close(self):
        self.stop.set()
        self.thread.join()
        self.socket.close()


def _attack_class(root: Path, ports: list[int]):
    for student, (attack, _) in ATTACKS.items():
        code = attack.format(root=root, package=PACKAGE_FILE, home=Path.home(), marker=MARKER,
                             ports=ports)
        gc.submit(root, student, {"answer_square": code.strip() + "\n" + WRONG_SQUARE})
    gc.submit(root, "zz-right")
    gc.submit(root, "zz-wrong", {"answer_square": WRONG_SQUARE})


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    root = gc.make_course(tmp_path_factory.mktemp("attacked") / "course", timeout=6)
    listener = Listener()
    _attack_class(root, [listener.port])
    package_before = Path(PACKAGE_FILE).read_bytes()
    before = _fingerprint(root)
    try:
        rows = grade.grade(Course(root), gc.LESSON, grade.Options(jobs=2))
    finally:
        listener.close()
    return dict(root=root, rows={r["student"]: r for r in rows}, before=before,
                listener=listener, package_before=package_before,
                left=_processes_with(MARKER))


@pytest.mark.parametrize("student", list(ATTACKS))
def test_an_attack_is_graded_on_what_it_did_and_reported(attacked, student):
    row = attacked["rows"][student]
    assert (row["status"], row["score"]) == (status.GRADED, 3), row
    assert ATTACKS[student][1] in row["sandbox"], row
    stored = status.read(Course(attacked["root"]), gc.LESSON)[(gc.LESSON, student)]
    assert stored["sandbox"] == row["sandbox"]


def test_the_honest_learners_get_the_scores_they_get_alone(attacked):
    for student, score in CONTROLS.items():
        row = attacked["rows"][student]
        assert (row["status"], row["score"], row["sandbox"]) == (status.GRADED, score, ""), row


def test_the_course_directory_is_unchanged_but_for_the_results(attacked):
    assert _fingerprint(attacked["root"]) == attacked["before"]
    assert Path(PACKAGE_FILE).read_bytes() == attacked["package_before"]
    assert not (Path.home() / "planted").exists()


def test_no_hidden_test_reaches_an_output(attacked):
    nb = nbformat.read(attacked["root"] / "autograded" / "reads-solutions" / gc.LESSON
                       / f"{gc.LESSON}.ipynb", as_version=4)
    # what the attack printed (the test cells' own tracebacks quote their source, for the grader)
    printed = str(gc.cell(nb, "answer_square").outputs)
    assert "HIDDEN-SQUARE" not in printed and "BEGIN HIDDEN" not in printed
    assert "No such file or directory" in printed       # it did try


def test_no_connection_reached_the_grader(attacked):
    assert attacked["listener"].accepted == []


def test_no_process_is_left(attacked):
    assert attacked["left"] == []


def test_the_gradebook_holds_the_graders_scores_only(attacked):
    course = Course(attacked["root"])
    with course.gradebook() as gb:
        submission = gb.find_submission(gc.LESSON, "sets-own-score")
        assert submission.score == 3
        assert all(g.manual_score is None for g in submission.notebooks[0].grades)


def test_feedback_shows_no_hidden_test_whatever_the_code_printed(attacked):
    result = CliRunner().invoke(app, ["--course", str(attacked["root"]), "feedback",
                                      gc.LESSON])
    assert result.exit_code == 0, result.output
    # A test cell's outputs on the page are the grader's verdict: what the kernel printed in
    # its own run of the cell (the spy's copy of it) stays in the grading log. The spy saw only
    # what its own copy holds: hidden tests never enter a kernel (the grader runs them), so
    # neither the log nor the autograded notebook nor the page has them.
    log = (attacked["root"] / "grading-logs" / gc.LESSON / "prints-its-tests.log").read_text()
    claimed = log[log.index("[kernel's own run of test_square]"):]
    assert "check.square(square)" in claimed
    graded = nbformat.read(attacked["root"] / "autograded" / "prints-its-tests" / gc.LESSON
                           / f"{gc.LESSON}.ipynb", as_version=4)
    outputs = str([c.get("outputs") for c in graded.cells])
    for text in (log, outputs):
        assert "HIDDEN-SQUARE" not in text and "HIDDEN-SLOPE" not in text
    for student in ATTACKS:
        page = (attacked["root"] / "feedback" / student / gc.LESSON
                / f"{gc.LESSON}.html").read_text()
        assert "HIDDEN-SQUARE" not in page and "HIDDEN-SLOPE" not in page, student


def test_export_shows_what_the_sandbox_stopped(attacked, tmp_path):
    from autograd_lab_grader.steps.export import rows
    grades, _ = rows(Course(attacked["root"]))
    by_student = {g["student"]: g for g in grades}
    assert "memory limit" in by_student["memory-hog"]["sandbox"]
    assert by_student["zz-right"]["sandbox"] == ""


def test_grade_refuses_without_bwrap_and_says_how_to_go_on(tmp_path, monkeypatch):
    root = gc.make_course(tmp_path / "course")
    gc.submit(root, "alice")
    empty = tmp_path / "no-bwrap"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = CliRunner().invoke(app, ["--course", str(root), "grade", gc.LESSON])
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "needs bwrap, which is not installed" in text and "--no-sandbox" in text
    assert status.read(Course(root), gc.LESSON) == {}            # nothing was graded


def test_no_sandbox_grades_with_a_loud_warning_kept_in_the_export(tmp_path):
    root = gc.make_course(tmp_path / "course")
    gc.submit(root, "alice")
    runner = CliRunner()
    result = runner.invoke(app, ["--course", str(root), "grade", gc.LESSON, "--no-sandbox"])
    assert result.exit_code == 0, result.output
    assert " ".join(result.output.split()).count("WITHOUT the sandbox") == 2   # before, after
    result = runner.invoke(app, ["--course", str(root), "export", "--out", str(tmp_path / "g")])
    assert result.exit_code == 0, result.output
    assert sandbox.OFF in (tmp_path / "g" / "grades.csv").read_text()


def test_a_python_under_tmp_stays_visible(tmp_path, monkeypatch):
    """The kernel's /tmp is a tmpfs of its own: an environment or package that lives under the
    grader's /tmp (a checkout cloned there) is bound after it, not hidden by it."""
    venv = tmp_path / "checkout" / ".venv"
    monkeypatch.setattr(sandbox, "_python_paths", lambda: [(venv, venv)])
    private = sandbox.Private(None, None)
    try:
        argv = sandbox.command(["python"], private, {})
    finally:
        private.remove()
    tmpfs = argv.index("/tmp", argv.index("--tmpfs"))
    assert argv.index(str(venv)) > tmpfs
    assert argv.index(str(private.root)) > tmpfs


# -- warm kernels (warm.py, zygote.py): forked from one server per run, isolated all the same --

PROBE = """
import os, sys, tempfile
print('WARM' if 'matplotlib.pyplot' in sys.modules else 'COLD')
print('TMP', sorted(os.listdir('/tmp')), sorted(os.listdir(tempfile.gettempdir())))
print('PROCESSES', [open(f'/proc/{pid}/cmdline', 'rb').read().replace(b'\\0', b' ').decode()
                    for pid in os.listdir('/proc') if pid.isdigit()])
"""
LEAVES = """
import os, subprocess, tempfile
try:
    open('/tmp/left-by-a', 'w').write('x')
except PermissionError:
    print('/tmp REFUSED')
open(os.path.join(tempfile.gettempdir(), 'left-by-a'), 'w').write('x')
os.makedirs(os.path.join(tempfile.gettempdir(), 'a-folder', 'inside'), exist_ok=True)
subprocess.Popen(['sleep', '{marker}'], start_new_session=True)
"""
RIGHT_SQUARE = "\ndef square(x):\n    return x * x\n"
# (needs_root: tests/conftest.py skips the test where the tests do not run as root)
root_only = pytest.mark.needs_root(reason="warm kernels need a root grader")


def _probed(root, student):
    nb = nbformat.read(root / "autograded" / student / gc.LESSON / f"{gc.LESSON}.ipynb",
                       as_version=4)
    return "".join(o.get("text", "") for o in gc.cell(nb, "answer_square").outputs)


@root_only
def test_the_next_learner_finds_nothing_the_last_one_left(tmp_path):
    """Kernels forked by one server share its sandbox, but no /tmp: the sandbox's own is not
    writable, and each kernel's temporary folder is in its private folder; what a learner
    leaves there or running is gone before the next learner's kernel starts."""
    root = gc.make_course(tmp_path / "course")
    gc.submit(root, "a-leaves", {"answer_square": LEAVES.format(marker=MARKER) + RIGHT_SQUARE})
    gc.submit(root, "b-looks", {"answer_square": PROBE + RIGHT_SQUARE})
    rows = {r["student"]: r for r in grade.grade(Course(root), gc.LESSON, grade.Options(jobs=1))}
    assert [rows[s]["score"] for s in ("a-leaves", "b-looks")] == [5, 5], rows
    assert "/tmp REFUSED" in _probed(root, "a-leaves")
    seen = _probed(root, "b-looks")
    assert "WARM" in seen, seen
    assert "left-by-a" not in seen and "a-folder" not in seen, seen
    assert MARKER not in seen, seen
    assert _processes_with(MARKER) == []


@root_only
def test_kernels_start_cold_when_asked_or_when_the_server_is_not_there(tmp_path, monkeypatch,
                                                                        capfd):
    root = gc.make_course(tmp_path / "course")
    gc.submit(root, "alice", {"answer_square": PROBE + RIGHT_SQUARE})
    course = Course(root)
    grade.grade(course, gc.LESSON, grade.Options(jobs=1, warm=False))
    assert "COLD" in _probed(root, "alice")

    def broken(self):
        raise warm.Unavailable("no server today")
    monkeypatch.setattr(warm.Server, "_start", broken)
    rows = grade.grade(course, gc.LESSON, grade.Options(jobs=1, force=True))
    assert (rows[0]["status"], rows[0]["score"]) == (status.GRADED, 5), rows
    assert "COLD" in _probed(root, "alice")
    assert "kernels start cold: no server today" in capfd.readouterr().err
    monkeypatch.undo()

    # a server that is gone by the time a kernel is asked for
    monkeypatch.setattr(warm.Server, "ready", lambda self: str(self.spool / "gone.sock"))
    rows = grade.grade(course, gc.LESSON, grade.Options(jobs=1, force=True))
    assert (rows[0]["status"], rows[0]["score"]) == (status.GRADED, 5), rows
    assert "COLD" in _probed(root, "alice")
    log = (root / "grading-logs" / gc.LESSON / "alice.log").read_text()
    assert "the warm-kernel server is not there" in log and "starts cold" in log


@pytest.mark.parametrize("warm_start", [True, False], ids=["warm", "cold"])
def test_a_kernel_that_runs_out_of_cpu_time_is_reported(tmp_path, warm_start):
    """RLIMIT_CPU ends a kernel that spins past its CPU seconds (long before the cell's wall-clock
    limit when that limit is set low): the submission fails, and the sandbox note says why."""
    root = gc.make_course(tmp_path / "course", timeout=30)
    with open(root / "nbgrader_config.py", "a") as config:
        config.write("c.GradingExecute.cpu_limit = 2\n")
    gc.submit(root, "spinner", {"answer_square": "while True:\n    pass"})
    rows = grade.grade(Course(root), gc.LESSON, grade.Options(jobs=1, warm=warm_start))
    assert (rows[0]["status"], rows[0]["score"]) == (status.FAILED, None), rows
    assert "the kernel died" in rows[0]["reason"], rows
    assert "the CPU-time limit (2 s) ended the kernel" in rows[0]["sandbox"], rows


@pytest.mark.parametrize("warm_start", [True, False], ids=["warm", "cold"])
def test_what_a_kernel_writes_to_its_own_stderr_reaches_the_grading_log(tmp_path, warm_start):
    """Below the notebook's outputs: a crashing extension, a C library's message. (A warm
    kernel's log lies in its private folder, in the spool, which clearing the kernel's user's
    files from the shared /tmp must leave to the grader.)"""
    root = gc.make_course(tmp_path / "course")
    gc.submit(root, "alice", {"answer_square": "import os\nos.write(2, b'KERNEL-STDERR-4711')\n"
                                               + RIGHT_SQUARE})
    rows = grade.grade(Course(root), gc.LESSON, grade.Options(jobs=1, warm=warm_start))
    assert (rows[0]["status"], rows[0]["score"]) == (status.GRADED, 5), rows
    log = (root / "grading-logs" / gc.LESSON / "alice.log").read_text()
    assert "KERNEL-STDERR-4711" in log
