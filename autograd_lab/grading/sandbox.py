"""A grading kernel inside bubblewrap: what a learner's notebook can see, reach and use.

nbgrader runs a submission as the instructor, in the instructor's course directory, where
`solutions/`, the gradebook and every other learner's work lie. Here the kernel runs under
Debian's `bwrap` instead, and sees

- the system (`/usr`, `/etc`, ...), Python and the installed packages, and the `autograd_lab`
  package folder (never the checkout around it), all read-only;
- a private folder, writable, thrown away afterwards: a copy of the folder nbgrader runs the
  notebook in, less the notebooks (`work/`), its home (`home/`) and the kernel's sockets
  (`run/`); and a `/tmp` of its own;
- no network (the grader talks to it over ZeroMQ's `ipc` transport, sockets in `run/`), its own
  PID namespace (whatever it starts dies with it), and limits on memory, processes, CPU time and
  the size of a file it writes (set by `kernel.py` on the bwrap process, and inherited).

Run as root (a CI machine, a container), the kernel also runs as a user of its own, so that the
process limit holds and no root-owned file is readable. `check()` says whether bwrap works here.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import autograd_lab

# what the system offers a Python kernel, read-only (those missing here are skipped)
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/var/cache/fontconfig")
_TMP_SIZE = 256 * 1024**2        # bytes of the kernel's own /tmp (it is memory)

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


def refusals(nb) -> list[str]:
    """What the sandbox refused, as the executed notebook shows it (an error, or a message the
    learner's code printed). A refusal that the code caught and kept quiet about is not seen."""
    texts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            texts.append(f"{output.get('ename', '')}: {output.get('evalue', '')}")
            text = output.get("text", "")
            texts.append("".join(text) if isinstance(text, list) else text)
    found = []
    for pattern, what in _REFUSALS:
        if what not in found and any(re.search(pattern, t) for t in texts):
            found.append(what)
    return found


class Unavailable(RuntimeError):
    """bwrap cannot run here; the message says why and what to do."""


def _uid() -> int | None:
    """The user a kernel runs as when the grader is root: one of its own, per grading process
    (kernels never share a process count), far above the ids of real accounts."""
    return 200_000 + os.getpid() % 100_000 if os.geteuid() == 0 else None


def _python_paths() -> list[Path]:
    """Folders the kernel's Python needs: the interpreter's installation, the environment's,
    the user's site-packages, and this package's own folder (an editable install lives in a
    project checkout, which also holds solutions/: the folder alone is bound)."""
    import site

    paths = {Path(p).resolve() for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)}
    paths.add(Path(sys.executable).resolve().parent.parent)
    user_site = Path(site.getusersitepackages())
    if user_site.is_dir() and str(user_site) in sys.path:
        paths.add(user_site.resolve())
    package = Path(autograd_lab.__file__).resolve().parent
    if not any(package.is_relative_to(p) for p in paths):
        paths.add(package)
    # a folder inside another is bound with it
    return sorted(p for p in paths if not any(p != q and p.is_relative_to(q) for q in paths))


class Private:
    """A kernel's private folder: work/ (its working directory), home/ and run/ (sockets)."""

    def __init__(self, workdir: str | os.PathLike | None, uid: int | None,
                 parent: Path | None = None):
        # (under `parent`: the spool folder of a warm-kernel server, which sees only that)
        self.root = Path(tempfile.mkdtemp(prefix="autograd-lab-kernel-", dir=parent))
        self.work, self.home, self.run = (self.root / n for n in ("work", "home", "run"))
        if workdir:
            # not the notebooks: nbgrader has already put the test cells back into the one it
            # grades, hidden tests included, and a learner's code could read it from here
            shutil.copytree(workdir, self.work, symlinks=True,
                            ignore=shutil.ignore_patterns("*.ipynb"))
        else:
            self.work.mkdir()
        self.home.mkdir()
        self.run.mkdir()
        self.uid = uid
        if uid is not None:
            for path in [self.root, *self.root.rglob("*")]:
                os.lchown(path, uid, uid)

    def give(self, path: str | os.PathLike) -> None:
        """Hand a file the grader wrote here (the connection file) to the kernel's user."""
        if self.uid is not None:
            os.chown(path, self.uid, self.uid)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


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
    # its .venv in /tmp, the private folder)
    args += ["--proc", "/proc", "--dev", "/dev",
             "--perms", "1777", "--size", str(_TMP_SIZE), "--tmpfs", "/tmp"]
    made.add(Path("/tmp"))
    for path in _python_paths():
        args += _mount_point_dirs([path], made) + ["--ro-bind", str(path), str(path)]
    return args, made


def _writable(args: list[str], made: set[Path], folder: Path, env: dict[str, str]) -> list[str]:
    """The folder the sandboxed command may write, its working directory, and its environment."""
    args = args + _mount_point_dirs([folder], made)
    args += ["--bind", str(folder), str(folder), "--chdir", str(folder)]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args


def command(kernel_cmd: list[str], private: Private, env: dict[str, str]) -> list[str]:
    """The bwrap command line that runs kernel_cmd in private's sandbox."""
    args, made = _jail(unprivileged=private.uid is None)
    args = _writable(args, made, private.root, env)
    args[args.index("--chdir") + 1] = str(private.work)
    args.append("--")
    if private.uid is not None:
        args += ["setpriv", f"--reuid={private.uid}", f"--regid={private.uid}",
                 "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]
        # (bwrap drops every capability of a root process; these two let setpriv change user)
        args[1:1] = ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return args + list(kernel_cmd)


def zygote_command(spool: Path, socket: Path, env: dict[str, str]) -> list[str]:
    """The bwrap command line of the warm-kernel server (zygote.py) over the folder `spool`,
    where the kernels' private folders are made. It stays root in the sandbox, with the
    capabilities to make each kernel a user of its own and to signal it, and no other."""
    args, made = _jail(unprivileged=False)
    args = _writable(args, made, spool, env)
    args[1:1] = ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_KILL"]
    zygote = Path(__file__).resolve().with_name("zygote.py")
    return args + ["--", sys.executable, str(zygote), str(socket), str(spool)]


def kernel_env(home: Path, grader_env: dict[str, str]) -> dict[str, str]:
    """The kernel's whole environment: nothing of the grader's but what a kernel needs."""
    venv_bin = str(Path(sys.executable).parent)
    env = dict(PATH=f"{venv_bin}:/usr/local/bin:/usr/bin:/bin", HOME=str(home),
               TMPDIR="/tmp", LANG="C.UTF-8", MPLBACKEND="Agg",
               MPLCONFIGDIR=str(home / ".matplotlib"), IPYTHONDIR=str(home / ".ipython"), PYTHONDONTWRITEBYTECODE="1",
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               # the package the grader imported, however it found it (only it is bound there)
               PYTHONPATH=str(Path(autograd_lab.__file__).resolve().parent.parent))
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
    private = Private(None, _uid())
    try:
        argv = command([sys.executable, "-c", "import autograd_lab"], private,
                       kernel_env(private.home, {}))
        result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise Unavailable(f"bwrap could not start a sandbox here ({error}). " + how)
    finally:
        private.remove()
    if result.returncode != 0:
        said = (result.stderr.strip().splitlines() or ["no message"])[-1]
        raise Unavailable(f"bwrap could not start a sandbox here ({said}). " + how)
