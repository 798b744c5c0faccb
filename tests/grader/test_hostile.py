"""A grader that trusts nothing a kernel hands it: `autograd-lab grade` on learners who attack the
grading machinery itself (the warm-kernel server, the grading log, the output limits, the paths
and ids a kernel can see), with real nbgrader and real bubblewrap. Every attack fails, the
attacker gets a named status, the learners graded at the same time are unaffected, and the
grading processes stay small.

Each attacking answer also answers `square` wrongly and `slope` rightly: 3 of 5 points.
"""
import os
import re
import time
from pathlib import Path

import pytest

import autograd_lab
import gradingcourse as gc
from autograd_lab_grader.gradebook import status
from autograd_lab_grader.sandbox import sandbox, warm
from autograd_lab_grader.steps import grade
from autograd_lab_grader.course import Course

WRONG_SQUARE = "\ndef square(x):\n    return 2 * x\n"
RIGHT_SQUARE = "\ndef square(x):\n    return x * x\n"
# (needs_root: tests/conftest.py skips the test where the tests do not run as root)
root_only = pytest.mark.needs_root(reason="warm kernels need a root grader")

# a folder tree deeper than any recursion over it can go, where the kernel may write
DEEP_TREE = """
import os, tempfile
for where in ('/tmp', tempfile.gettempdir()):
    try:
        os.chdir(where)
        for _ in range(5000):
            os.mkdir('d')
            os.chdir('d')
        print('DEEP', where)
    except OSError as error:
        print('REFUSED', where, type(error).__name__)
os.chdir(os.path.expanduser('~'))
"""
# what it would take for the grader to read, as root, a file of the kernel's choosing
LOG_TRAPS = """
import glob, os
for folder in glob.glob('../run') + glob.glob('../*/'):
    for name, make in (('kernel.log', lambda p: os.symlink('/etc/shadow', p)),
                       ('zero.log', lambda p: os.symlink('/dev/zero', p)),
                       ('fifo.log', os.mkfifo)):
        path = os.path.join(folder, name)
        try:
            if os.path.lexists(path):
                os.remove(path)
            make(path)
        except OSError as error:
            print('TRAP', name, error)
"""
IMAGES = """
from IPython.display import display
for _ in range(25):
    display({'image/png': 'A' * 24_000_000}, raw=True)
"""
SEES = """
import os, sys
print('SEES', os.getcwd(), sys.executable, sys.path, dict(os.environ),
      __import__('autograd_lab').__file__)
print('IMPORTS-CWD', '' in sys.path or os.getcwd() in sys.path or '.' in sys.path)
import importlib.util
def found(name):
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False
print('GRADER', [m for m in ('autograd_lab_grader.commands.cli', 'autograd_lab_grader.steps.grade',
                             'autograd_lab_grader.gradebook.status', 'autograd_lab_grader.sandbox.sandbox',
                             'autograd_lab_grader.sandbox.inside.streams') if found(m)])
"""
CAPABILITIES = """
import os
for pid in filter(str.isdigit, os.listdir('/proc')):
    try:
        status = dict(line.split(':', 1) for line in open(f'/proc/{pid}/status').read().splitlines())
        cmd = open(f'/proc/{pid}/cmdline', 'rb').read().replace(b'\\0', b' ').decode()
    except OSError:
        continue
    name = status['Name'].strip()
    print('CAPS', pid, status['Uid'].split()[0],
          'zygote' if 'zygote.py' in cmd and name.startswith('python') else name,
          *(status[k].strip() for k in ('CapEff', 'CapPrm', 'CapBnd')))
"""


def _probed(root, student):
    import nbformat
    nb = nbformat.read(root / "autograded" / student / gc.LESSON / f"{gc.LESSON}.ipynb",
                       as_version=4)
    return "".join(o.get("text", "") for o in gc.cell(nb, "answer_square").outputs)


def _peak(root, student) -> int:
    log = (root / "grading-logs" / gc.LESSON / f"{student}.log").read_text(errors="replace")
    return int(re.findall(r"peak memory of the grading process: (\d+) MB", log)[-1])


@pytest.fixture(scope="module", params=[pytest.param("warm", marks=root_only), "cold"])
def hostile(request, tmp_path_factory):
    """One class, graded three at a time: the attackers, and honest learners graded with them."""
    warm_start = request.param == "warm"
    root = gc.make_course(tmp_path_factory.mktemp(request.param) / "course", timeout=10)
    answers = {"deep-tree": DEEP_TREE, "log-traps": LOG_TRAPS, "images": IMAGES,
               "sees": SEES, "capabilities": CAPABILITIES}
    for student, code in answers.items():
        gc.submit(root, student, {"answer_square": code + WRONG_SQUARE})
    for n in range(4):
        gc.submit(root, f"zz-honest-{n}", {"answer_square": RIGHT_SQUARE})
    started = time.monotonic()
    rows = {r.student: r for r in grade.grade(
        Course(root), gc.LESSON, grade.Options(jobs=3, warm=warm_start))}
    return root, rows, time.monotonic() - started, warm_start


def test_every_attacker_is_graded_on_its_answers(hostile):
    root, rows, _, _ = hostile
    for student in ("deep-tree", "log-traps", "images", "sees", "capabilities"):
        assert (rows[student].status, rows[student].score) == (status.GRADED, 3), \
            rows[student]


def test_the_honest_learners_graded_alongside_are_unaffected(hostile):
    root, rows, _, warm_start = hostile
    for n in range(4):
        row = rows[f"zz-honest-{n}"]
        assert (row.status, row.score, row.sandbox) == (status.GRADED, 5, ""), row


def test_a_deep_folder_tree_costs_no_one_anything(hostile):
    """The warm server never walks a learner's files (the sandbox's /tmp is not writable; each
    kernel's temporary folder is removed by its grader with rm, which does not recurse)."""
    root, rows, _, _ = hostile
    seen = _probed(root, "deep-tree")
    deep = re.search(r"DEEP (/\S+)/tmp\b", seen)
    assert "REFUSED /tmp" in seen and deep, seen
    # the kernel's own folder, where it wrote the tree, is gone (other kernels of other tests may
    # be writing theirs in /tmp as this runs: only this one's is asked after)
    kernel = Path(deep.group(1))
    assert kernel.name.startswith("autograd-lab-kernel-"), seen
    assert not kernel.exists(), f"{kernel} is left behind"


def test_the_grader_never_reads_a_file_the_kernel_chose(hostile):
    """The kernel's output reaches the grading log through a descriptor the grader passed it,
    opened for appending; nothing is read back from the kernel's folder: no link to a secret,
    no /dev/zero, no FIFO holds the grader."""
    root, rows, seconds, _ = hostile
    log_file = root / "grading-logs" / gc.LESSON / "log-traps.log"
    log = log_file.read_text(errors="replace")
    shadow = Path("/etc/shadow").read_text(errors="replace")
    root_line = next((line for line in shadow.splitlines() if line.startswith("root:")), None)
    assert root_line is None or root_line not in log
    assert log_file.stat().st_mode & 0o077 == 0, "a grading log is the instructor's alone"
    assert rows["log-traps"].seconds < 30, rows["log-traps"]
    assert _peak(root, "log-traps") < 400


def test_an_output_flood_is_dropped_as_it_arrives(hostile):
    """25 images of 24 MB: counted as they arrive, dropped past the limit, named; the
    autograded notebook and the grading process stay small."""
    root, rows, _, _ = hostile
    row = rows["images"]
    assert "output limit" in row.sandbox, row
    notebook = root / "autograded" / "images" / gc.LESSON / f"{gc.LESSON}.ipynb"
    assert notebook.stat().st_size < 3 * 1024**2
    assert _peak(root, "images") < 400
    assert max(_peak(root, s) for s in rows) < 400


def test_the_kernel_sees_no_course_path_and_imports_nothing_from_its_folder(hostile):
    root, _, _, _ = hostile
    seen = _probed(root, "sees")
    assert "SEES" in seen, seen
    checkout = Path(autograd_lab.__file__).resolve().parent.parent
    for path in (str(root), str(root.resolve()), str(checkout)):
        assert path not in seen, (path, seen)
    assert "/opt/autograd-lab/autograd_lab/__init__.py" in seen
    assert "IMPORTS-CWD False" in seen, seen
    # of the grader, only what runs inside the sandbox (its sandbox/inside/) is there
    assert "GRADER ['autograd_lab_grader.sandbox.inside.streams']" in seen, seen


def test_the_warm_server_holds_three_capabilities_and_the_kernel_none(hostile):
    root, _, _, warm_start = hostile
    seen = _probed(root, "capabilities")
    # CAPS pid uid name CapEff CapPrm CapBnd
    caps = [line.split() for line in seen.splitlines() if line.startswith("CAPS")]
    kernels = [c for c in caps if c[2] != "0"]
    assert kernels, seen
    assert all(c[4:6] == ["0000000000000000"] * 2 for c in kernels), caps
    if warm_start:
        servers = [c for c in caps if c[2] == "0" and c[3] == "zygote"]
        # CAP_KILL (5), CAP_SETGID (6), CAP_SETUID (7): effective, permitted and bounding
        assert servers and all(c[4:7] == ["00000000000000e0"] * 3 for c in servers), caps
        # and nothing else of the sandbox holds more (bwrap's own init holds nothing)
        assert all(int(c[4], 16) & ~0xE0 == 0 for c in caps), caps


@root_only
def test_kernel_users_are_never_shared_by_two_live_kernels(tmp_path):
    """A kernel's user is 200000 + its grading process's id, which no two live processes share;
    and the warm server refuses a user that a live kernel has."""
    assert sandbox._uid() == 200_000 + os.getpid()
    with warm.Server() as server:
        socket_path = server.ready()
        from jupyter_client.connect import write_connection_file
        private = sandbox.Private(None, 4_000_000, parent=Path(socket_path).parent.parent)
        try:
            connection, _ = write_connection_file(str(private.run / "connection.json"),
                                                  transport="ipc", ip=str(private.run / "k"))
            private.give(connection)
            request = dict(uid=4_000_000, cwd=str(private.work),
                           env=sandbox.kernel_env(private.home, {}, private.tmp), limits=[],
                           argv=["ipykernel_launcher", "-f", connection])
            first = warm.Forked(socket_path, request)
            try:
                with pytest.raises(OSError, match="another live kernel"):
                    warm.Forked(socket_path, request)
            finally:
                first.kill()
                first.wait(10)
                first.close()
        finally:
            private.remove()


# -- one learner's run against the warm server that forks the next learner's kernel ---------

MARKER = "4711.0816"     # in the command line of every process the fork-parent attack leaves
# Learner A, who has read zygote.py: everything a kernel can try against the server it was
# forked from and the kernels it forks next. Each attempt prints TRIED, its name, and DONE or
# REFUSED; what needs no refusal (an IPC object, a process left running) is cleared after it.
FORK_PARENT = r'''
import builtins, ctypes, os, signal, socket, subprocess, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
parent = os.getppid()
def tried(name, attempt):
    try:
        print('TRIED', name, 'DONE', repr(attempt())[:60])
    except OSError as error:
        print('TRIED', name, 'REFUSED', error)
def checked(code):
    if code < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return code
# the server itself: signals, its memory, its descriptors, tracing it, its socket
for signum in (signal.SIGKILL, signal.SIGTERM, signal.SIGSTOP, signal.SIGINT, signal.SIGUSR1):
    tried(f'signal-parent-{signum}', lambda: os.kill(parent, signum))
# (its process group: getpgid says 0, a group outside this PID namespace, which killpg
# reads as the caller's own)
tried('signal-parent-group', lambda: os.killpg(parent, signal.SIGKILL))
tried('signal-init', lambda: os.kill(1, signal.SIGKILL))
tried('parent-memory', lambda: open(f'/proc/{parent}/mem', 'r+b'))
tried('parent-descriptors', lambda: os.listdir(f'/proc/{parent}/fd'))
tried('parent-descriptor', lambda: open(f'/proc/{parent}/fd/0', 'wb'))
tried('parent-trace', lambda: checked(libc.ptrace(16, parent, 0, 0)))         # PTRACE_ATTACH
pidfd = os.pidfd_open(parent)
tried('parent-pidfd-getfd', lambda: checked(libc.syscall(438, pidfd, 3, 0)))   # pidfd_getfd
tried('parent-pidfd-signal', lambda: signal.pidfd_send_signal(pidfd, signal.SIGKILL))
tried('server-socket', lambda: socket.socket(socket.AF_UNIX).connect(
    '../../control/zygote.sock'))
tried('spool', lambda: os.listdir('../..'))
# the files the server or the next kernel imports or reads
import autograd_lab.checks, numpy
version = f'python{sys.version_info[0]}.{sys.version_info[1]}'
for target in (autograd_lab.checks.__file__, numpy.__file__, os.__file__,
               os.path.join(os.path.dirname(numpy.__file__), '__pycache__', 'x.pyc'),
               os.path.join(sys.prefix, 'lib', version, 'site-packages', 'sitecustomize.py'),
               '../../server-home/.matplotlib/matplotlibrc',
               '../../server-home/.ipython/profile_default/startup/00-left.py',
               '/tmp/sitecustomize.py', '/dev/shm/left-by-a', '/etc/left-by-a'):
    tried('write ' + target, lambda: open(target, 'a').write('\nraise SystemExit\n'))
# what a fork would inherit, were the server this process
sys.modules['left_by_a'] = sys
builtins.LEFT_BY_A = autograd_lab.checks.LEFT_BY_A = numpy.LEFT_BY_A = True
os.environ['LEFT_BY_A'] = '1'
# IPC that outlives its maker
tried('ipc-shared-memory', lambda: checked(libc.shmget(0x4711, 1 << 20, 0o1666)))
tried('ipc-semaphores', lambda: checked(libc.semget(0x4712, 4, 0o1666)))
tried('ipc-message-queue', lambda: checked(libc.msgget(0x4713, 0o1666)))
tried('posix-message-queue', lambda: checked(ctypes.CDLL('librt.so.1', use_errno=True).mq_open(
    b'/left-by-a', os.O_CREAT | os.O_RDWR, 0o666, None)))
# processes left behind: a daemon listening on sockets, one that hops to a new process id in
# a loop (a listing of /proc and a kill each would miss it), one that stops every process of
# its user once the kernel is gone (the one that would clear them among them)
LEFT = """
import os, signal, socket, sys, time
kernel, kind = int(sys.argv[1]), sys.argv[2]
if kind == 'listens':
    listening = socket.socket(socket.AF_UNIX)
    listening.bind('\\0left-by-a')
    listening.listen()
    served = socket.create_server(('127.0.0.1', 47112))
    time.sleep(600)
elif kind == 'hops':
    while True:
        try:
            if os.fork():
                os._exit(0)
        except OSError:
            pass
else:
    while os.path.exists(f'/proc/{kernel}/cmdline') and open(f'/proc/{kernel}/cmdline').read():
        time.sleep(0.001)
    while True:
        try:
            os.kill(-1, signal.SIGSTOP)
        except OSError:
            pass
"""
for kind in ('listens', 'hops', 'stops'):
    tried('leave-' + kind, lambda: subprocess.Popen(
        [sys.executable, '-c', LEFT, str(os.getpid()), kind, 'MARKER'],
        start_new_session=True).pid)
threading.Thread(target=time.sleep, args=(600,), daemon=False).start()
time.sleep(1)
'''.replace("MARKER", MARKER)
# Learner C, graded after A by the same server: what of A's can a kernel forked next find?
LOOKS = r'''
import builtins, os, socket, sys
mine = os.getuid()
others = []
for pid in filter(str.isdigit, os.listdir('/proc')):
    try:
        owner = os.stat(f'/proc/{pid}').st_uid
        command = open(f'/proc/{pid}/cmdline', 'rb').read().replace(b'\0', b' ').decode()
    except OSError:
        continue
    if owner not in (0, mine):
        others.append((pid, owner, command))
print('OTHERS', others)
print('IPC', [line for kind in ('shm', 'sem', 'msg')
              for line in open(f'/proc/sysvipc/{kind}').read().splitlines()[1:]])
for name, family, address in (('abstract', socket.AF_UNIX, '\0left-by-a'),
                              ('tcp', socket.AF_INET, ('127.0.0.1', 47112))):
    try:
        socket.socket(family).connect(address)
        print('CONNECTED', name)
    except OSError as error:
        print('NOT-THERE', name, error)
import autograd_lab.checks, numpy
print('STATE', 'left_by_a' in sys.modules, hasattr(builtins, 'LEFT_BY_A'),
      hasattr(autograd_lab.checks, 'LEFT_BY_A'), hasattr(numpy, 'LEFT_BY_A'),
      'LEFT_BY_A' in os.environ)
print('FILES', os.listdir('/tmp'), os.listdir('/dev/shm'), os.listdir('..'))
'''
# what A must have been refused (the rest it may do: it is cleared after it)
MUST_BE_REFUSED = ("signal-parent", "signal-init", "parent-", "server-socket", "spool",
                   "write ", "posix-message-queue")
# B, honest, whose kernel also starts a process and a thread of its own (as a learner may)
HONEST = ("import subprocess, threading\nsubprocess.run(['true'], check=True)\n"
          "worker = threading.Thread(target=sum, args=([1, 2],))\nworker.start()\n"
          "worker.join()\nprint('a process and a thread')\n" + RIGHT_SQUARE)


def _graded_alone(root):
    import nbformat
    nb = nbformat.read(root / "autograded" / "b-honest" / gc.LESSON / f"{gc.LESSON}.ipynb",
                       as_version=4)
    with Course(root).gradebook() as gb:
        grades = {g.name: (g.score, g.max_score) for g in
                  gb.find_submission(gc.LESSON, "b-honest").notebooks[0].grades}
    return [c.get("outputs") for c in nb.cells], grades


@pytest.fixture(scope="module")
def fork_parent(tmp_path_factory):
    """A, then B (honest) and C (who looks), graded one after another by one run's warm
    server; and B graded alone, by a run of its own."""
    if os.geteuid() != 0:
        pytest.skip("warm kernels need a root grader")
    top = tmp_path_factory.mktemp("fork-parent")
    alone = gc.make_course(top / "alone", timeout=10)
    gc.submit(alone, "b-honest", {"answer_square": HONEST})
    root = gc.copy_course(alone, top / "course")
    gc.submit(root, "a-attacks", {"answer_square": FORK_PARENT + WRONG_SQUARE})
    gc.submit(root, "c-looks", {"answer_square": LOOKS + RIGHT_SQUARE})
    rows = {r.student: r for r in grade.grade(Course(root), gc.LESSON,
                                                 grade.Options(jobs=1, warm=True))}
    left = gc.processes_with(MARKER)
    by_itself = {r.student: r for r in grade.grade(Course(alone), gc.LESSON,
                                                      grade.Options(jobs=1, warm=True))}
    return dict(root=root, alone=alone, rows=rows, by_itself=by_itself, left=left)


@root_only
def test_the_server_refuses_what_a_kernel_tries_against_it(fork_parent):
    seen = _probed(fork_parent["root"], "a-attacks")
    tried = [line.split(" ", 3) for line in seen.splitlines() if line.startswith("TRIED ")]
    assert len(tried) >= 25, seen
    for _, name, outcome, said in tried:
        if name.startswith(MUST_BE_REFUSED):
            assert outcome == "REFUSED", (name, said)
    # it could make what outlives it, and start processes: cleared below
    assert {n for _, n, o, _ in tried if o == "DONE"} >= {"ipc-shared-memory", "leave-hops"}


@root_only
def test_the_next_learner_gets_the_grade_they_get_alone(fork_parent):
    """B, graded right after A by the same server, gets what B gets graded by itself: the same
    row, the same points a cell, the same outputs."""
    row, alone = fork_parent["rows"]["b-honest"], fork_parent["by_itself"]["b-honest"]
    keys = ("status", "score", "max_score", "reason", "sandbox", "forgery", "forgery_reason")
    assert {k: getattr(row, k) for k in keys} == {k: getattr(alone, k) for k in keys}
    assert (row.status, row.score) == (status.GRADED, 5), row
    assert _graded_alone(fork_parent["root"]) == _graded_alone(fork_parent["alone"])


@root_only
def test_a_kernel_forked_next_finds_nothing_of_the_last_ones(fork_parent):
    seen = _probed(fork_parent["root"], "c-looks")
    assert "OTHERS []" in seen, seen               # no process of another user is left
    assert "IPC []" in seen, seen                  # no shared memory, semaphore or queue
    assert "NOT-THERE abstract" in seen and "NOT-THERE tcp" in seen, seen
    assert "STATE False False False False False" in seen, seen
    assert "left-by-a" not in seen and "CONNECTED" not in seen, seen
    assert fork_parent["rows"]["c-looks"].score == 5
    assert fork_parent["left"] == []               # and nothing at the end of the run


@root_only
def test_what_the_attacker_left_is_reported_where_the_grader_sees_it(fork_parent):
    row = fork_parent["rows"]["a-attacks"]
    assert (row.status, row.score) == (status.GRADED, 3), row
    note = row.sandbox
    assert "killed and removed before the next kernel" in note, note
    left = re.search(r"the kernel left (.+?) behind", note)[1]
    assert "process(es)" in left and "shared memory segment(s)" in left, note
    assert "semaphore set(s)" in left and "message queue(s)" in left, note
    assert "a read or write outside its folder was refused" in note, note
    stored = status.read(Course(fork_parent["root"]), gc.LESSON)[(gc.LESSON, "a-attacks")]
    assert stored.sandbox == note
