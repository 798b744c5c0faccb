"""`autograd-lab grade` on a class of learners who attack the grader, with real nbgrader and real
bubblewrap: every attempt is refused or stopped by a limit, the course directory is unchanged but
for what the grader itself writes, the honest learners of the same run get the scores they get
when graded alone, no process is left, and the instructor is told what each one tried.

Every attacking submission also answers `square` wrongly (2 * x) and `slope` rightly, so that
its score, 3 of 5, shows it was graded on what it did inside the sandbox.
"""
import hashlib
import shutil
import os
import socket
import subprocess
import sys
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
from autograd_lab_grader.course import Course

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
    return dict(root=root, rows={r.student: r for r in rows}, before=before,
                listener=listener, package_before=package_before,
                left=gc.processes_with(MARKER))


@pytest.mark.parametrize("student", list(ATTACKS))
def test_an_attack_is_graded_on_what_it_did_and_reported(attacked, student):
    row = attacked["rows"][student]
    assert (row.status, row.score) == (status.GRADED, 3), row
    assert ATTACKS[student][1] in row.sandbox, row
    stored = status.read(Course(attacked["root"]), gc.LESSON)[(gc.LESSON, student)]
    assert stored.sandbox == row.sandbox


def test_the_honest_learners_get_the_scores_they_get_alone(attacked):
    for student, score in CONTROLS.items():
        row = attacked["rows"][student]
        assert (row.status, row.score, row.sandbox) == (status.GRADED, score, ""), row


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
    rows = {r.student: r for r in grade.grade(Course(root), gc.LESSON, grade.Options(jobs=1))}
    assert [rows[s].score for s in ("a-leaves", "b-looks")] == [5, 5], rows
    assert "/tmp REFUSED" in _probed(root, "a-leaves")
    seen = _probed(root, "b-looks")
    assert "WARM" in seen, seen
    assert "left-by-a" not in seen and "a-folder" not in seen, seen
    assert MARKER not in seen, seen
    assert gc.processes_with(MARKER) == []


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
    assert (rows[0].status, rows[0].score) == (status.GRADED, 5), rows
    assert "COLD" in _probed(root, "alice")
    assert "kernels start cold: no server today" in capfd.readouterr().err
    monkeypatch.undo()

    # a server that is gone by the time a kernel is asked for
    monkeypatch.setattr(warm.Server, "ready", lambda self: str(self.spool / "gone.sock"))
    rows = grade.grade(course, gc.LESSON, grade.Options(jobs=1, force=True))
    assert (rows[0].status, rows[0].score) == (status.GRADED, 5), rows
    assert "COLD" in _probed(root, "alice")
    log = (root / "grading-logs" / gc.LESSON / "alice.log").read_text()
    assert "the warm-kernel server is not there" in log and "starts cold" in log


@root_only
def test_the_command_forks_kernels_warm_from_three_submissions_on(tmp_path):
    """A regrade of one or two learners starts its kernels cold (the warm server's start
    costs more than it saves there: benchmarks/grading_cpu.py); three or more, warm; --warm
    and --cold choose either way."""
    root = gc.make_course(tmp_path / "course")
    gc.submit(root, "alice", {"answer_square": PROBE + RIGHT_SQUARE})
    runner = CliRunner()

    def graded(*args):
        result = runner.invoke(app, ["--course", str(root), "grade", gc.LESSON, "--force",
                                     *args])
        assert result.exit_code == 0, result.output
        return _probed(root, "alice")

    assert "COLD" in graded()
    assert "WARM" in graded("--warm")
    gc.submit(root, "ben", {"answer_square": RIGHT_SQUARE})
    gc.submit(root, "cat", {"answer_square": RIGHT_SQUARE})
    assert "WARM" in graded()
    assert "COLD" in graded("--cold")
    assert grade.WARM_FROM == 3


@root_only
def test_a_root_without_users_to_spare_grades_cold_and_says_why(tmp_path):
    """Root in a user namespace that maps one user (``unshare -r``; a container's root) has no
    user to give a kernel: its kernels start cold, sandboxed as a user's are, and the run says
    why."""
    root = gc.make_course(tmp_path / "course")
    gc.submit(root, "alice", {"answer_square": PROBE + RIGHT_SQUARE})
    gc.submit(root, "ben", {"answer_square": "def square(x):\n    return 2 * x\n"})
    result = subprocess.run(
        ["unshare", "--user", "--map-root-user", sys.executable, "-m", "autograd_lab_grader",
         "-C", str(root), "grade", gc.LESSON, "--warm"],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, COLUMNS="200"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "kernels start cold: the grader is root without users to spare" in result.stderr
    scores = {s: r.score for (_, s), r in status.read(Course(root), gc.LESSON).items()}
    assert scores == {"alice": 5, "ben": 3}
    assert "COLD" in _probed(root, "alice")


@pytest.mark.parametrize("warm_start", [True, False], ids=["warm", "cold"])
def test_a_kernel_that_runs_out_of_cpu_time_is_reported(tmp_path, warm_start):
    """RLIMIT_CPU ends a kernel that spins past its CPU seconds (long before the cell's wall-clock
    limit when that limit is set low): the submission fails, and the sandbox note says why."""
    root = gc.make_course(tmp_path / "course", timeout=30)
    with open(root / "nbgrader_config.py", "a") as config:
        config.write("c.GradingExecute.cpu_limit = 2\n")
    gc.submit(root, "spinner", {"answer_square": "while True:\n    pass"})
    rows = grade.grade(Course(root), gc.LESSON, grade.Options(jobs=1, warm=warm_start))
    assert (rows[0].status, rows[0].score) == (status.FAILED, None), rows
    assert "the kernel died" in rows[0].reason, rows
    assert "the CPU-time limit (2 s) ended the kernel" in rows[0].sandbox, rows


@pytest.mark.parametrize("warm_start", [True, False], ids=["warm", "cold"])
def test_what_a_kernel_writes_to_its_own_stderr_reaches_the_grading_log(tmp_path, warm_start):
    """Below the notebook's outputs: a crashing extension, a C library's message. (A warm
    kernel's log lies in its private folder, in the spool, which clearing the kernel's user's
    files from the shared /tmp must leave to the grader.)"""
    root = gc.make_course(tmp_path / "course")
    gc.submit(root, "alice", {"answer_square": "import os\nos.write(2, b'KERNEL-STDERR-4711')\n"
                                               + RIGHT_SQUARE})
    rows = grade.grade(Course(root), gc.LESSON, grade.Options(jobs=1, warm=warm_start))
    assert (rows[0].status, rows[0].score) == (status.GRADED, 5), rows
    log = (root / "grading-logs" / gc.LESSON / "alice.log").read_text()
    assert "KERNEL-STDERR-4711" in log


# -- the sandbox reading the course: a learner per class of what the instructor keeps --------

SECRET = "COURSE-SECRET-4711"       # in the configuration, the home, the environment, a notebook
# what no file, variable or process a kernel can read may hold: the secret, a hidden test,
# a gradebook (SQLite's header), another learner's answer
MARKS = [SECRET, "HIDDEN-SQUARE", "SQLite format 3", "OTHER-LEARNER-0815"]
# every reader reads with this: REFUSED, NOT-A-FILE, or READ and whether a mark is in it
LOOK = r'''
import glob, os, stat
MARKS = [m.encode() for m in MARKS_]
def look(what, path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                print('NOT-A-FILE', what, path)
                return
            data = os.read(fd, 16 << 20)
        finally:
            os.close(fd)
    except OSError as error:
        print('REFUSED', what, path, type(error).__name__)
        return
    print('READ', what, path, 'FOUND' if any(m in data for m in MARKS) else 'nothing')
def tree(what, top):
    for path in glob.glob(os.path.join(top, '**', '*'), recursive=True):
        look(what, path)
'''
# class -> what its learner reads (ROOT_: the course, HOME_: the instructor's home); every
# path is also tried through the kernel's working folder and its parents, and /proc
READERS = {
    "hidden-tests": r'''
for path in ['ROOT_/solutions/fixture/fixture.ipynb', 'ROOT_/solutions/fixture/fixture.md',
             'ROOT_/release/fixture/fixture.ipynb', '/proc/1/cwd/solutions/fixture/fixture.ipynb',
             '../../../solutions/fixture/fixture.ipynb']:
    look('hidden-tests', path)
tree('hidden-tests', 'ROOT_/solutions')
tree('hidden-tests', '.')                 # the kernel's own folder: the lesson's files
tree('hidden-tests', '..')
''',
    "gradebook": r'''
import sqlite3
look('gradebook', 'ROOT_/gradebook.db')
look('gradebook', '../../gradebook.db')
for url in ('file:ROOT_/gradebook.db?mode=ro', 'file:gradebook.db?mode=ro'):
    try:
        rows = sqlite3.connect(url, uri=True).execute('SELECT source FROM source_cell').fetchall()
        print('READ gradebook', url, 'FOUND' if 'HIDDEN-SQUARE' in str(rows) else 'nothing')
    except sqlite3.Error as error:
        print('REFUSED gradebook', url, type(error).__name__)
''',
    "other-learners": r'''
for folder in ('submitted', 'autograded', 'feedback', 'submitted-history', 'grading-logs'):
    look('other-learners', 'ROOT_/' + folder)
    tree('other-learners', 'ROOT_/' + folder)
for path in ['ROOT_/submitted/zz-first/fixture/fixture.ipynb',
             'ROOT_/autograded/zz-first/fixture/fixture.ipynb',
             'ROOT_/feedback/zz-first/fixture/fixture.html']:
    look('other-learners', path)
''',
    "configuration": r'''
for path in ['ROOT_/nbgrader_config.py', 'nbgrader_config.py', '../nbgrader_config.py',
             '../../nbgrader_config.py', '/proc/1/cwd/nbgrader_config.py',
             os.path.expanduser('~/.jupyter/nbgrader_config.py'), '/etc/jupyter/nbgrader_config.py']:
    look('configuration', path)
''',
    "logs": r'''
tree('logs', 'ROOT_/grading-logs')
look('logs', 'ROOT_/grading-logs/fixture/zz-first.log')
look('logs', 'ROOT_/grading-logs/fixture/reads-logs.log')
for name in sorted(os.listdir('/proc/self/fd'), key=int):      # what the kernel holds open
    try:
        print('FD', name, os.readlink(f'/proc/self/fd/{name}'))
    except OSError:
        continue
    look('logs', f'/proc/self/fd/{name}')
''',
    "home": r'''
for path in ['HOME_/SECRET_FILE_', 'HOME_/.bash_history', 'HOME_/.ssh/id_rsa', 'HOME_/.pgpass',
             'HOME_/.netrc', '/root/SECRET_FILE_']:
    look('home', path)
try:                # (as root, the Python the grader runs may live in it: bound there alone)
    for name in os.listdir('HOME_'):
        look('home', os.path.join('HOME_', name))
except OSError as error:
    print('REFUSED home HOME_', type(error).__name__)
''',
    "environment": r'''
print('ENV', 'FOUND' if any(m.decode() in v for v in os.environ.values() for m in MARKS)
      else 'nothing')
for pid in filter(str.isdigit, os.listdir('/proc')):
    for name in ('environ', 'cmdline'):
        look('environment', f'/proc/{pid}/{name}')
''',
}
# the kernel's view of the machine: everything readable but the system's and Python's own
# installations (read-only, the same on every machine), /proc's and /dev's special files
EVERYTHING = r'''
import sys
skip = {'/proc', '/sys', '/dev', '/usr', os.path.realpath(sys.base_prefix), sys.prefix}
count = 0
for top, folders, files in os.walk('/'):
    if top in skip:
        folders[:] = []
        continue
    for name in files:
        path = os.path.join(top, name)
        try:
            if stat.S_ISREG(os.lstat(path).st_mode):
                count += 1
                with open(path, 'rb') as f:
                    if any(m in f.read(16 << 20) for m in MARKS):
                        print('READ everything', path, 'FOUND')
        except OSError:
            pass
print('LOOKED AT', count)
'''
# what would name the course's folder or the checkout (the environment lives there)
NAMES = r'''
links = []
for pid in filter(str.isdigit, os.listdir('/proc')):
    for name in ('cwd', 'root', 'exe'):
        try:
            links.append(os.readlink(f'/proc/{pid}/{name}'))
        except OSError:
            pass
    try:
        links += [os.readlink(f'/proc/{pid}/fd/{fd}') for fd in os.listdir(f'/proc/{pid}/fd')]
    except OSError:
        pass
    for name in ('cmdline', 'environ'):
        try:
            links.append(open(f'/proc/{pid}/{name}', 'rb').read().decode(errors='replace'))
        except OSError:
            pass
print('NAMES', [l for l in links if 'ROOT_' in l or 'CHECKOUT_' in l])
print('SEES', os.getcwd(), sorted(os.environ.values()))
'''


def _reader(code, root, secret_file):
    checkout = Path(autograd_lab.__file__).resolve().parent.parent
    return (LOOK + code).replace("MARKS_", repr(MARKS)).replace("ROOT_", str(root)).replace(
        "HOME_", str(Path.home())).replace("SECRET_FILE_", secret_file).replace(
        "CHECKOUT_", str(checkout))


@pytest.fixture(scope="module", params=[pytest.param("warm", marks=root_only), "cold"])
def course_read(request, tmp_path_factory):
    """A course with everything an instructor keeps: hidden tests (in the solutions, in a text
    twin of the lesson that the course's ignore list forgot, in the gradebook), a learner
    graded (submitted, resubmitted, autograded, a feedback page, a grading log), a secret in
    the configuration, the instructor's home and the grader's environment; then a learner per
    class who tries to read it, and one who reads everything the kernel can."""
    import uuid

    from autograd_lab_grader.steps import collect

    root = gc.make_course(tmp_path_factory.mktemp(f"read-{request.param}") / "course",
                          timeout=60)
    (root / "solutions" / gc.LESSON / f"{gc.LESSON}.md").write_text(
        "# the lesson as text\n" + gc.TESTS["test_square"] + "\n")
    with open(root / "nbgrader_config.py", "a") as config:
        config.write(f"# {SECRET}\n")
    secret_file = f".autograd-lab-test-{uuid.uuid4().hex}"
    (Path.home() / secret_file).write_text(SECRET)
    os.environ["AUTOGRAD_LAB_TEST_SECRET"] = SECRET
    try:
        first = tmp_path_factory.mktemp("first") / "first.ipynb"
        for version in ("# OTHER-LEARNER-0815, first", "# OTHER-LEARNER-0815, again"):
            nb = gc.released(root)
            gc.cell(nb, "answer_square").source = version + RIGHT_SQUARE
            nbformat.write(nb, first)
            collect.collect_file(Course(root), first, "zz-first", gc.LESSON)
        warm_start = request.param == "warm"
        grade.grade(Course(root), gc.LESSON, grade.Options(jobs=1, warm=warm_start))
        assert CliRunner().invoke(app, ["--course", str(root), "feedback",
                                        gc.LESSON]).exit_code == 0
        assert (root / "submitted-history" / "zz-first").is_dir()
        for name, code in [*READERS.items(), ("everything", EVERYTHING), ("names", NAMES)]:
            gc.submit(root, f"reads-{name}", {"answer_square": _reader(code, root, secret_file)
                                              + WRONG_SQUARE})
        rows = {r.student: r for r in grade.grade(Course(root), gc.LESSON,
                                                     grade.Options(jobs=2, warm=warm_start))}
    finally:
        os.environ.pop("AUTOGRAD_LAB_TEST_SECRET", None)
        (Path.home() / secret_file).unlink()
    return root, rows


def _said(course_read, name):
    root, rows = course_read
    assert (rows[f"reads-{name}"].status, rows[f"reads-{name}"].score) == (
        status.GRADED, 3), rows[f"reads-{name}"]
    lines = _probed(root, f"reads-{name}").splitlines()
    assert lines, name
    assert not [line for line in lines if line.endswith(" FOUND")], lines
    return lines


def _refused_under(lines, root):
    """Every path under the course's folder that the reader named was refused."""
    named = [line for line in lines if str(root) in line]
    assert named
    assert all(line.startswith("REFUSED ") for line in named), named
    return named


@pytest.mark.parametrize("name", ["hidden-tests", "gradebook", "other-learners",
                                  "configuration"])
def test_no_file_of_the_course_can_be_read(course_read, name):
    """The hidden tests (solutions/, a text twin of the lesson beside it), the gradebook (its
    file, its source_cell rows), the other learners' files (submitted/, autograded/,
    feedback/, submitted-history/, grading-logs/) and nbgrader_config.py: no path reaches
    them, and nothing the kernel's own folder holds is one of them."""
    lines = _said(course_read, name)
    _refused_under(lines, course_read[0])


def test_a_lesson_file_holding_a_hidden_test_never_reaches_the_kernel(course_read):
    lines = _said(course_read, "hidden-tests")
    own = [line for line in lines if line.startswith("READ hidden-tests ./")]
    assert "READ hidden-tests ./fixturechecks.py nothing" in own        # the lesson's checks
    assert not [line for line in own if "fixture.md" in line], own
    log = (course_read[0] / "grading-logs" / gc.LESSON / "reads-hidden-tests.log").read_text()
    assert "fixture.md is not copied to the kernel's folder" in log


def test_no_grading_log_can_be_read_nor_is_held_open(course_read):
    """Not the other learners' logs, nor the kernel's own, nor through a descriptor: its
    output reaches its log through a pipe the grader copies, never the log file (which,
    were the kernel the grader's own user, /proc/self/fd would open again)."""
    root = course_read[0]
    lines = _said(course_read, "logs")
    _refused_under([line for line in lines if not line.startswith("FD ")], root)
    held = [line.split(" ", 2)[2] for line in lines if line.startswith("FD ")]
    assert held and not [fd for fd in held if fd.startswith("/") and "autograd-lab-" not in fd
                         and not fd.startswith("/dev/")], held
    assert not [line for line in lines if line.startswith("READ logs /proc/self/fd")], lines


def test_the_instructors_home_cannot_be_read(course_read):
    lines = _said(course_read, "home")
    secret = [line for line in lines if ".autograd-lab-test-" in line]
    assert secret and all(line.startswith("REFUSED ") for line in secret), secret
    assert not [line for line in lines if line.startswith("READ home") and ".ssh" in line]


def test_the_graders_environment_cannot_be_read(course_read):
    """The kernel's environment is its own, and no process it can see holds the grader's."""
    lines = _said(course_read, "environment")
    assert "ENV nothing" in lines, lines
    assert [line for line in lines if line.startswith("READ environment")]   # it did look


def test_nothing_the_kernel_can_read_holds_the_course(course_read):
    lines = _said(course_read, "everything")
    looked = int(next(line for line in lines if line.startswith("LOOKED AT")).split()[-1])
    assert looked > 100, lines


def test_no_path_the_kernel_can_see_names_the_course_or_its_checkout(course_read):
    """Not its folder, its descriptors, or any process's command line or environment (bwrap's
    own names the folders it binds: it reads them from a descriptor instead)."""
    lines = _said(course_read, "names")
    assert "NAMES []" in lines, lines
    assert str(course_read[0]) not in "\n".join(lines)


def test_the_postgresql_gradebook_cannot_be_reached(postgresql, tmp_path):
    """A gradebook on PostgreSQL: its port on loopback, its socket, its URL (with the
    password an instructor would put in it) lead nowhere from a kernel."""
    url = postgresql.create("sandboxed")
    root = gc.make_course(tmp_path / "course", timeout=30, db_url=url)
    code = LOOK + r'''
import socket
for address in [('127.0.0.1', PORT_)]:
    try:
        socket.create_connection(address, timeout=2)
        print('READ postgresql', address, 'FOUND')
    except OSError as error:
        print('REFUSED postgresql', address, error)
for path in glob.glob('DATA_/.s.PGSQL.*') + ['DATA_/.s.PGSQL.PORT_']:
    try:
        socket.socket(socket.AF_UNIX).connect(path)
        print('READ postgresql', path, 'FOUND')
    except OSError as error:
        print('REFUSED postgresql', path, error)
try:
    import psycopg
    rows = psycopg.connect('URL_', connect_timeout=2).execute(
        'SELECT source FROM source_cell').fetchall()
    print('READ postgresql URL_', 'FOUND' if 'HIDDEN-SQUARE' in str(rows) else 'nothing')
except Exception as error:
    print('REFUSED postgresql URL_', type(error).__name__)
'''
    code = code.replace("MARKS_", repr(MARKS)).replace("PORT_", str(postgresql.port)).replace(
        "DATA_", str(postgresql.data)).replace("URL_", url)
    gc.submit(root, "reads-postgresql", {"answer_square": code + WRONG_SQUARE})
    rows = grade.grade(Course(root, url), gc.LESSON, grade.Options(jobs=1))
    assert (rows[0].status, rows[0].score) == (status.GRADED, 3), rows
    lines = _probed(root, "reads-postgresql").splitlines()
    tried = [line for line in lines if " postgresql " in line]
    assert len(tried) >= 3 and all(line.startswith("REFUSED ") for line in tried), lines
    assert "a network connection was refused" in rows[0].sandbox, rows


def test_a_regrade_forks_its_grading_processes_from_the_command(tmp_path):
    """A run whose grading processes all start at once forks them from the command itself, which has imported what they need, instead of from a forkserver
    that imports it all again (a third over nbgrader's CPU for one learner:
    docs/measurements/grading.md); a run of more rounds forks from its forkserver. Both grade
    alike."""
    root = gc.make_course(tmp_path / "course")
    gc.submit(root, "alice", {"answer_square": RIGHT_SQUARE})
    gc.submit(root, "ben", {"answer_square": "def square(x):\n    return 2 * x\n"})

    def graded(*args):
        result = subprocess.run(
            [sys.executable, "-m", "autograd_lab_grader", "-C", str(root), "grade", gc.LESSON,
             "--force", "--cold", *args],
            capture_output=True, text=True, timeout=300, env=dict(os.environ, COLUMNS="200"))
        assert result.returncode == 0, result.stdout + result.stderr
        scores = {s: r.score for (_, s), r in status.read(Course(root), gc.LESSON).items()}
        assert scores == {"alice": 5, "ben": 3}
        return [(root / "grading-logs" / gc.LESSON / f"{s}.log").read_text()
                for s in ("alice", "ben")]

    assert all("forked from the command" in log for log in graded("--jobs", "2"))
    assert all("forked from the run's forkserver" in log for log in graded("--jobs", "1"))
    assert "forked from the command" in graded("--jobs", "1", "--student", "ben")[1]


def test_a_run_forks_from_the_command_only_when_no_thread_could_hold_a_lock(monkeypatch):
    """(grade._context) A fork copies every lock as it is and only the thread that forks:
    with another thread alive, the child could wait for ever on a lock that thread held."""
    with monkeypatch.context() as alone:     # (a test runner may have threads of its own)
        alone.setattr(grade.threading, "active_count", lambda: 1)
        assert grade._context(3, 3).get_start_method() == "fork"
        assert grade._context(4, 3).get_start_method() == "forkserver"
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert grade._context(1, 3).get_start_method() == "forkserver"
    finally:
        stop.set()
        thread.join()


HOG = """
import subprocess, time
held = [subprocess.Popen(['sleep', '30']) for _ in range(40)]
time.sleep(8)
"""
# (a learner graded beside the hog forks once that one holds its processes)
FORKS_LATER = """
import subprocess, time
time.sleep(4)
subprocess.run(['true'], check=True)
"""


@root_only
def test_one_learners_processes_count_against_its_own_kernel_alone(tmp_path):
    """(sandbox.command) A grader that is not root runs every kernel as its own user. A
    kernel's process limit is set inside its sandbox, so that it counts that kernel's
    processes alone: one learner holding forty processes leaves the learners graded beside it
    free to start theirs. (Set before bwrap made its user namespace, the limit counted every
    process of the grader's user: their forks failed.)"""
    import tempfile

    from unprivileged import as_user

    top = Path(tempfile.mkdtemp(prefix="autograd-lab-processes-"))   # (nobody must enter it)
    top.chmod(0o755)
    try:
        root = gc.make_course(top / "course", timeout=30)
        gc.submit(root, "a-hog", {"answer_square": HOG + RIGHT_SQUARE})
        for student in ("b-forks", "c-forks"):
            gc.submit(root, student, {"answer_square": FORKS_LATER + RIGHT_SQUARE})
        home = top / "home"
        home.mkdir()
        result = subprocess.run(
            as_user([sys.executable, "-m", "autograd_lab_grader", "-C", str(root), "grade",
                     gc.LESSON, "--cold", "--jobs", "3"], root, home),
            capture_output=True, text=True, timeout=300,
            env=dict(os.environ, HOME=str(home), COLUMNS="200"))
        assert result.returncode == 0, result.stdout + result.stderr
        scores = {s: r.score for (_, s), r in status.read(Course(root), gc.LESSON).items()}
        assert scores == {"a-hog": 5, "b-forks": 5, "c-forks": 5}, result.stdout
    finally:
        shutil.rmtree(top, ignore_errors=True)
