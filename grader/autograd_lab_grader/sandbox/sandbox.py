"""A grading kernel inside bubblewrap: what a learner's notebook can see, reach and use.

nbgrader runs a submission as the instructor, in the instructor's course directory, where
`solutions/`, the gradebook and every other learner's work lie. Here the kernel runs under
Debian's `bwrap` instead, and sees

- the system (`/usr`, `/etc`, ...), Python and the installed packages, the `autograd_lab`
  package folder (never the checkout around it) and, of the grader, only what runs in the
  sandbox (`sandbox/inside/`: the warm-kernel server and the kernel's output stream), all
  read-only; the environment and those folders are bound under `/opt/autograd-lab`, so that no
  path the kernel can read names the course's folder;
- a private folder, writable, thrown away afterwards: a copy of the folder nbgrader runs the
  notebook in, less the notebooks and anything the learner handed in beside them (`work/`),
  its home (`home/`), its temporary folder (`tmp/`, TMPDIR) and the kernel's sockets (`run/`);
  `/tmp` itself is not writable;
- no network (the grader talks to it over ZeroMQ's `ipc` transport, sockets in `run/`), its own
  PID namespace (whatever it starts dies with it), and limits on memory, processes, CPU time and
  the size of a file it writes (set by `kernel/start.py` on the bwrap process, and inherited).

Run as root (a CI machine, a container) with users to spare, the kernel also runs as a user of
its own, so that no root-owned file is readable; otherwise as the grader's user, in a user
namespace of its own (where the process limit counts its processes alone). `check()` says whether bwrap works here.
The working directory is on no kernel's import path (PYTHONSAFEPATH).
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


# what the system offers a Python kernel, read-only (those missing here are skipped)
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/var/cache/fontconfig")
_TMP_SIZE = 1024**2              # bytes of the sandbox's own /tmp, which kernels cannot write
# where the sandbox sees the environment and the package: no path of the course's
INSIDE = Path("/opt/autograd-lab")
VENV_INSIDE = INSIDE / "venv"
# what of the grader runs in the sandbox: this folder's inside/, bound where its module names
# (autograd_lab_grader.sandbox.inside.*) find it on the kernel's import path, alone
GRADER_INSIDE = Path(__file__).resolve().parent / "inside"
GRADER_INSIDE_AT = INSIDE / "autograd_lab_grader" / "sandbox" / "inside"

OFF = "OFF: graded without the sandbox (--no-sandbox)"

# what a refusal or a limit looks like in a notebook's outputs -> what to tell the instructor
_REFUSALS = [
    (r"MemoryError|Unable to allocate|Cannot allocate memory",
     "the memory limit stopped an allocation"),
    (r"Resource temporarily unavailable|can't start new thread",
     "the process limit stopped a new process or thread"),
    (r"Read-only file system|Permission denied|Operation not permitted",
     "a read or write outside its folder was refused"),
    (r"No such file or directory: '(/|\.\./)|unable to open database file",
     "a path outside its folder was not there (the sandbox hides the course)"),
    (r"Network is unreachable|Connection refused|Temporary failure in name resolution"
     r"|Name or service not known", "a network connection was refused"),
    (r"File too large", "the file-size limit stopped a write"),
    (r"No space left on device", "its private /tmp ran full"),
]


def refusals(shown) -> list[str]:
    """What the sandbox refused, as the executed notebook shows it (an error, or a message the
    learner's code printed): `shown` is its outputs (``reading.outputs.of_notebook``). A
    refusal that the code caught and kept quiet about is not seen."""
    texts = []
    for output in shown:
        texts += [f"{output.ename}: {output.evalue}", output.text]
    found = []
    for pattern, what in _REFUSALS:
        if what not in found and any(re.search(pattern, t) for t in texts):
            found.append(what)
    return found


class Unavailable(RuntimeError):
    """bwrap cannot run here; the message says why and what to do."""


def _uid() -> int | None:
    """The user a kernel runs as when the grader is root with users to spare: one of its own
    per grading process, from the process id, which no two live processes share (Linux's
    pid_max is at most 2**22, so the ids stay below 4.4 million, far above the ids of real
    accounts). None otherwise: the kernel runs as the grader's user (in a user namespace)."""
    uid = 200_000 + os.getpid()
    return uid if os.geteuid() == 0 and _mapped(uid) else None


def _mapped(uid: int) -> bool:
    """Whether this process's user namespace has the user `uid`: root in a container whose
    namespace maps only some users (a pod with ``hostUsers: false``, ``unshare -r``) is root
    without users to spare."""
    try:
        with open("/proc/self/uid_map") as f:
            ranges = [tuple(map(int, line.split())) for line in f if line.strip()]
    except OSError:
        return True
    return any(inside <= uid < inside + count for inside, _, count in ranges)


def _in_venv() -> bool:
    return Path(sys.prefix).resolve() != Path(sys.base_prefix).resolve()


def _python_paths() -> list[tuple[Path, Path]]:
    """(folder, where the sandbox sees it) for what the kernel's Python needs: the
    interpreter's installation, the user's site-packages, the environment (at VENV_INSIDE),
    the engine's package folder (at INSIDE: an editable install lives in the course's
    checkout, beside solutions/; only the package folder is bound, under another name), and
    the grader's inside/ folder (nothing else of the grader)."""
    import site

    paths = {Path(p).resolve() for p in (sys.base_prefix, sys.base_exec_prefix)}
    if not _in_venv():
        paths.add(Path(sys.executable).resolve().parent.parent)
    user_site = Path(site.getusersitepackages())
    if user_site.is_dir() and str(user_site) in sys.path:
        paths.add(user_site.resolve())
    # a folder inside another is bound with it
    binds = [(p, p) for p in sorted(paths)
             if not any(p != q and p.is_relative_to(q) for q in paths)]
    if _in_venv():
        binds.append((Path(sys.prefix).resolve(), VENV_INSIDE))
    # (the engine's folder found, not imported: the command line loads no engine to start)
    engine = Path(importlib.util.find_spec("autograd_lab").origin).resolve().parent
    binds.append((engine, INSIDE / "autograd_lab"))
    binds.append((GRADER_INSIDE, GRADER_INSIDE_AT))
    return binds


def python_inside() -> str:
    """This Python, as the sandbox sees it."""
    if _in_venv():
        return str(VENV_INSIDE / "bin" / Path(sys.executable).name)
    return sys.executable


def _inside(argv: list[str]) -> list[str]:
    """A command line whose program is this Python, with that Python as the sandbox sees it."""
    if argv and Path(argv[0]).resolve() == Path(sys.executable).resolve() \
            or argv and argv[0] == sys.executable:
        return [python_inside(), *argv[1:]]
    return list(argv)


class Private:
    """A kernel's private folder: work/ (its working directory), home/ and run/ (sockets)."""

    def __init__(self, workdir: str | os.PathLike | None, uid: int | None,
                 parent: Path | None = None):
        # (under `parent`: the spool folder of a warm-kernel server, which sees only that)
        self.root = Path(tempfile.mkdtemp(prefix="autograd-lab-kernel-", dir=parent))
        self.work, self.home, self.run, self.tmp = (
            self.root / n for n in ("work", "home", "run", "tmp"))
        if workdir:
            # not the notebooks: nbgrader has already put the test cells back into the one it
            # grades, hidden tests included, and a learner's code could read it from here;
            # not nbgrader's timestamp.txt either (the rest is the instructor's lesson files,
            # less any that holds a solution or a hidden test: a lesson's text twin that the
            # course's nbgrader ignore list does not name)
            shutil.copytree(workdir, self.work, symlinks=True, ignore=_not_for_the_kernel)
        else:
            self.work.mkdir()
        self.home.mkdir()
        self.run.mkdir()
        self.tmp.mkdir()
        self.uid = uid
        if uid is not None:
            for path in [self.root, *self.root.rglob("*")]:
                os.lchown(path, uid, uid)

    def give(self, path: str | os.PathLike) -> None:
        """Hand a file the grader wrote here (the connection file) to the kernel's user."""
        if self.uid is not None:
            os.chown(path, self.uid, self.uid)

    def remove(self) -> None:
        remove_tree(self.root)


# what marks a solution or a hidden test in a lesson's source (nbgrader's delimiters)
_SECRET = re.compile(rb"(BEGIN|END) (HIDDEN TESTS|SOLUTION)")


def _holds_a_secret(path: Path) -> bool:
    """Whether a file holds a solution's or a hidden test's marker, read in pieces (a marker
    across two pieces is seen: each piece is read with the end of the one before)."""
    tail = b""
    try:
        with open(path, "rb") as f:
            while piece := f.read(1 << 20):
                if _SECRET.search(tail + piece):
                    return True
                tail = piece[-32:]
    except OSError:
        return False
    return False


def _not_for_the_kernel(folder: str, names: list[str]) -> list[str]:
    """copytree's ignore: the notebooks, nbgrader's timestamp.txt, and every file that holds a
    solution's or a hidden test's marker."""
    left_out = []
    for name in names:
        path = Path(folder) / name
        if name.endswith(".ipynb") or name == "timestamp.txt":
            left_out.append(name)
        elif path.is_file() and not path.is_symlink() and _holds_a_secret(path):
            print(f"[WARNING] {name} is not copied to the kernel's folder: it holds a solution "
                  "or a hidden test (add it to c.CourseDirectory.ignore)", file=sys.stderr)
            left_out.append(name)
    return left_out


def hide_options(argv: list[str]) -> tuple[list[str], int | None]:
    """A bwrap command line with its options passed through a file descriptor (``bwrap --args
    FD``), and that descriptor (None when `argv` is no bwrap command): /proc/<pid>/cmdline is
    readable by every process in the sandbox, and bwrap's would name the folders it binds,
    among them the environment in the course's checkout. The caller passes the descriptor to
    the new process (pass_fds) and closes it after."""
    if not argv or Path(argv[0]).name != "bwrap" or "--" not in argv:
        return argv, None
    end = argv.index("--")
    fd = os.memfd_create("bwrap-options")
    os.write(fd, b"".join(os.fsencode(a) + b"\0" for a in argv[1:end]))
    os.lseek(fd, 0, os.SEEK_SET)
    return [argv[0], "--args", str(fd), *argv[end:]], fd


def remove_tree(path: Path) -> None:
    """Remove a folder a kernel could write, whatever it left there: coreutils' rm walks a tree
    of any depth without recursion and never follows a link (Python 3.11's rmtree recurses,
    and a deep enough tree ends it in RecursionError). Unprivileged, what the kernel made
    unreadable to its own user is made readable first."""
    if not os.path.lexists(path):
        return
    if os.geteuid() != 0:
        subprocess.run(["chmod", "-R", "u+rwx", "--", str(path)], capture_output=True)
    subprocess.run(["rm", "-rf", "--one-file-system", "--", str(path)], capture_output=True)


def _mount_point_dirs(targets: list[Path], made: set[Path]) -> list[str]:
    """`--dir` for every folder above the targets that bwrap would otherwise create unreadable."""
    args = []
    for target in targets:
        for parent in reversed(target.parents):
            if parent != Path("/") and parent not in made:
                made.add(parent)
                args += ["--perms", "0755", "--dir", str(parent)]
        made.add(target)
    return args


def _jail(unprivileged: bool) -> tuple[list[str], set[Path]]:
    """bwrap's options for what every sandbox sees: namespaces, the system and Python read-only,
    /proc, /dev and a /tmp of its own; and the folders made so far (for _mount_point_dirs)."""
    args = ["bwrap", "--die-with-parent", "--unshare-pid", "--unshare-net", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try", "--hostname", "grading", "--clearenv"]
    if unprivileged:
        args.append("--unshare-user")          # bwrap needs a user namespace
    made: set[Path] = set()
    for name in _SYSTEM:
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            args += _mount_point_dirs([path], made) + ["--ro-bind", name, name]
    # the tmpfs first: it would hide whatever was bound under /tmp before it (a checkout with
    # its .venv in /tmp, the private folder); no kernel may write it: a kernel's temporary
    # files go to its private folder (TMPDIR), so that no two kernels share a /tmp
    args += ["--proc", "/proc", "--dev", "/dev",
             "--perms", "0755", "--size", str(_TMP_SIZE), "--tmpfs", "/tmp"]
    made.add(Path("/tmp"))
    for path, inside in _python_paths():
        args += _mount_point_dirs([inside], made) + ["--ro-bind", str(path), str(inside)]
    return args, made


def _writable(args: list[str], made: set[Path], folder: Path, env: dict[str, str]) -> list[str]:
    """The folder the sandboxed command may write, its working directory, and its environment."""
    args = args + _mount_point_dirs([folder], made)
    args += ["--bind", str(folder), str(folder), "--chdir", str(folder)]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args


def command(kernel_cmd: list[str], private: Private, env: dict[str, str],
            processes: int | None = None) -> list[str]:
    """The bwrap command line that runs kernel_cmd in private's sandbox, with at most
    `processes` processes and threads of its own (None: no such limit).

    The process limit is set in the sandbox, once bwrap has made its user namespace: Linux
    counts a namespace's processes against the limit its maker had as well, for all of the
    maker's user's processes (the grader's, every other kernel's). Set before bwrap, a grader
    that is not root could start no kernel once its user ran that many, and one learner's
    processes stopped every other learner's kernel from starting."""
    args, made = _jail(unprivileged=private.uid is None)
    args = _writable(args, made, private.root, env)
    args[args.index("--chdir") + 1] = str(private.work)
    args.append("--")
    if processes is not None:
        args += ["prlimit", f"--nproc={processes}:{processes}", "--"]
    if private.uid is not None:
        # (bwrap keeps a root process's capabilities: setpriv drops them all as it changes
        # to the kernel's user)
        args += ["setpriv", f"--reuid={private.uid}", f"--regid={private.uid}",
                 "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]
    return args + _inside(kernel_cmd)


#: what the warm-kernel server may do as root: make each kernel a user of its own, signal it
ZYGOTE_CAPABILITIES = ("setuid", "setgid", "kill")


def zygote_command(spool: Path, socket: Path, env: dict[str, str]) -> list[str]:
    """The bwrap command line of the warm-kernel server (zygote.py) over the folder `spool`,
    where the kernels' private folders are made. A root grader with users to spare
    (``_uid()``): the server stays root in the sandbox, with the capabilities to make each
    kernel a user of its own and to signal it, and no other: bwrap keeps a root process's
    capabilities, and setpriv bounds them to those three before the server starts (its
    effective, permitted and bounding sets). A grader that is not root: the server runs as the
    grader's user without a capability, and gives each kernel namespaces of its own."""
    zygote = GRADER_INSIDE_AT / "zygote.py"
    if _uid() is None:
        args, made = _jail(unprivileged=True)
        args = _writable(args, made, spool, env)
        return args + ["--", python_inside(), str(zygote), str(socket), "namespaces"]
    args, made = _jail(unprivileged=False)
    args = _writable(args, made, spool, env)
    keep = ",".join(["-all", *(f"+{c}" for c in ZYGOTE_CAPABILITIES)])
    return args + ["--", "setpriv", f"--bounding-set={keep}", "--inh-caps=-all", "--",
                   python_inside(), str(zygote), str(socket), "users"]


def kernel_env(home: Path, grader_env: dict[str, str], tmp: Path | None = None) -> dict[str, str]:
    """The kernel's whole environment: nothing of the grader's but what a kernel needs, and no
    path of the course's."""
    from autograd_lab.checks import VERDICTS_ENV

    python_bin = str(Path(python_inside()).parent)
    env = dict(PATH=f"{python_bin}:/usr/local/bin:/usr/bin:/bin", HOME=str(home),
               TMPDIR=str(tmp or "/tmp"), LANG="C.UTF-8", MPLBACKEND="Agg",
               MPLCONFIGDIR=str(home / ".matplotlib"), IPYTHONDIR=str(home / ".ipython"),
               PYTHONDONTWRITEBYTECODE="1",
               # the working directory on no import path: nothing beside the notebook is code
               PYTHONSAFEPATH="1",
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               # the engine the grader imported, however it found it, and the grader's inside/
               # (only they are bound there)
               PYTHONPATH=str(INSIDE))
    env[VERDICTS_ENV] = "grader"        # a check in the kernel only says the grader decides
    for key in ("NBGRADER_EXECUTION", "TZ"):
        if key in grader_env:
            env[key] = grader_env[key]
    return env


def copy_font_cache(home: Path, uid: int | None) -> None:
    """matplotlib's font list, so that the first plot does not rebuild it (seconds, and a
    message on stderr) in every sandbox."""
    sources = [os.environ.get("MPLCONFIGDIR"), Path.home() / ".cache" / "matplotlib",
               Path.home() / ".matplotlib"]
    for source in filter(None, sources):
        found = sorted(Path(source).glob("fontlist-v*.json")) if Path(source).is_dir() else []
        if found:
            target = home / ".matplotlib"
            target.mkdir(exist_ok=True)
            for path in found:
                shutil.copy(path, target / path.name)
            if uid is not None:
                for path in [target, *target.iterdir()]:
                    os.chown(path, uid, uid)
            return


# what check() runs in a sandbox: a kernel's Python, the engine on its path (found, not
# imported: importing it is numpy's import, a fifth of a second a run)
PROBE = ("import importlib.util, sys\n"
         "sys.exit(None if importlib.util.find_spec('autograd_lab') else "
         "'no module named autograd_lab in the sandbox')")


def check() -> None:
    """Raise Unavailable, saying why and how to proceed, unless a sandboxed Python runs here."""
    how = ("Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) on a Linux machine "
           "whose kernel allows user namespaces, or grade with --no-sandbox (the learners' code "
           "then runs as you, and can read and change the course directory).")
    if sys.platform != "linux":
        raise Unavailable(f"The grading sandbox needs Linux (bubblewrap); this is {sys.platform}. "
                          + how)
    if not shutil.which("bwrap"):
        raise Unavailable("The grading sandbox needs bwrap, which is not installed. " + how)
    if _uid() is not None and not shutil.which("setpriv"):
        raise Unavailable("The grading sandbox needs setpriv (util-linux) when run as root. "
                          + how)
    if not shutil.which("prlimit"):
        raise Unavailable("The grading sandbox needs prlimit (util-linux). " + how)
    private = Private(None, _uid())
    fd = None
    try:
        argv, fd = hide_options(command([sys.executable, "-c", PROBE], private,
                                        kernel_env(private.home, {}, private.tmp)))
        result = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                                pass_fds=() if fd is None else (fd,))
    except (OSError, subprocess.TimeoutExpired) as error:
        raise Unavailable(f"bwrap could not start a sandbox here ({error}). " + how) from None
    finally:
        if fd is not None:
            os.close(fd)
        private.remove()
    if result.returncode != 0:
        said = (result.stderr.strip().splitlines() or ["no message"])[-1]
        raise Unavailable(f"bwrap could not start a sandbox here ({said}). " + how)
