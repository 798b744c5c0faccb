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
from autograd_lab_grader.commands.course import Course

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
    rows = {r["student"]: r for r in grade.grade(
        Course(root), gc.LESSON, grade.Options(jobs=3, warm=warm_start))}
    return root, rows, time.monotonic() - started, warm_start


def test_every_attacker_is_graded_on_its_answers(hostile):
    root, rows, _, _ = hostile
    for student in ("deep-tree", "log-traps", "images", "sees", "capabilities"):
        assert (rows[student]["status"], rows[student]["score"]) == (status.GRADED, 3), \
            rows[student]


def test_the_honest_learners_graded_alongside_are_unaffected(hostile):
    root, rows, _, warm_start = hostile
    for n in range(4):
        row = rows[f"zz-honest-{n}"]
        assert (row["status"], row["score"], row["sandbox"]) == (status.GRADED, 5, ""), row


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
    assert rows["log-traps"]["seconds"] < 30, rows["log-traps"]
    assert _peak(root, "log-traps") < 400


def test_an_output_flood_is_dropped_as_it_arrives(hostile):
    """25 images of 24 MB: counted as they arrive, dropped past the limit, named; the
    autograded notebook and the grading process stay small."""
    root, rows, _, _ = hostile
    row = rows["images"]
    assert "output limit" in row["sandbox"], row
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
