#!/usr/bin/env python3
"""What grading costs in CPU: every process a grading starts, read from a cgroup, per notebook.

    python benchmarks/grading_cpu.py [--count 12] [--lessons 02_scalar_backward,05_accumulation]

For every lesson a scratch copy of the course gets `count` submissions (the solution and the blank
release, alternately), graded by force by: plain `nbgrader autograde`; `autograd-lab grade`
with kernels forked warm (``--warm``, as root: a user a kernel); with every kernel started cold
(``--cold``); warm as a user that is not root ("not root": a kernel in namespaces of its own);
and, for one learner of the class, nbgrader, the default (which chooses), warm and cold again
(a regrade of one submission: ``--student``; the least of three turns each, the four kinds
taking turns). A grading of one learner, not counted, first sets up what autograd-lab keeps in
the gradebook. The floor is the solution's own code cells run in a started plain kernel,
imports included. Each figure is CPU-seconds of the whole process tree (kernels, sandboxes, the
warm server), from a cpuacct cgroup made for the run (cgroup v1, or v2's cpu.stat), per
notebook; the ratios are against the floor and against nbgrader in the same run. The engine
and the grader are byte-compiled first, as installed ones are. Needs root (the cgroup). A
report, not a test.
"""
import argparse
import compileall
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "grader")]

from autograd_lab_grader.course import CONFIG_FILE, Course  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "support"))
from unprivileged import as_user  # noqa: E402

V1 = Path("/sys/fs/cgroup/cpuacct")
V2 = Path("/sys/fs/cgroup/unified") if Path("/sys/fs/cgroup/unified").is_dir() \
    else Path("/sys/fs/cgroup")


class Cgroup:
    """A cgroup of its own whose CPU time is read after: every process a command starts is in it."""

    def __init__(self):
        self.v1 = (V1 / "cpuacct.usage").exists()
        self.path = (V1 if self.v1 else V2) / f"autograd-lab-bench-{uuid.uuid4().hex[:8]}"
        self.path.mkdir()

    def join(self):
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def seconds(self) -> float:
        if self.v1:
            return int((self.path / "cpuacct.usage").read_text()) / 1e9
        stat = dict(line.split() for line in (self.path / "cpu.stat").read_text().splitlines())
        return int(stat["usage_usec"]) / 1e6

    def remove(self):
        """Once its last process is gone (what a grading leaves ends a moment after it)."""
        import signal
        import time
        for tries in range(200):
            left = (self.path / "cgroup.procs").read_text().split()
            if not left:
                self.path.rmdir()
                return
            if tries == 100:
                for pid in left:
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except OSError:
                        pass
            time.sleep(0.05)
        sys.exit(f"processes left in {self.path}: {left}")


def cpu(args, cwd, env) -> float:
    """CPU-seconds of `args` and of everything it started."""
    group = Cgroup()
    try:
        proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                              preexec_fn=group.join)
        if proc.returncode:
            sys.exit(f"{' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        return group.seconds()
    finally:
        group.remove()


FLOOR = r"""
import sys, nbformat
from jupyter_client.manager import start_new_kernel
nb = nbformat.read(sys.argv[1], as_version=4)
km, kc = start_new_kernel(kernel_name="python3")
with open(sys.argv[2], "w") as f:
    f.write(str(km.provisioner.pid))
input()                 # the kernel is started: the benchmark moves it into the cgroup
for cell in nb.cells:
    if cell.cell_type == "code":
        kc.execute_interactive(cell.source, timeout=300, output_hook=lambda msg: None)
print("done", flush=True)
input()
kc.stop_channels()
km.shutdown_kernel(now=True)
"""


def floor(notebook: Path, env) -> float:
    """CPU-seconds of the solution's code cells in a started plain kernel."""
    with tempfile.TemporaryDirectory() as tmp:
        pid_file = Path(tmp) / "pid"
        proc = subprocess.Popen([sys.executable, "-c", FLOOR, str(notebook), str(pid_file)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                env=dict(env, MPLBACKEND="Agg"), cwd=notebook.parent)
        group = Cgroup()
        try:
            while not pid_file.exists() or not pid_file.read_text():
                if proc.poll() is not None:
                    sys.exit("the floor's kernel did not start")
                os.sched_yield()
            (group.path / "cgroup.procs").write_text(pid_file.read_text())
            proc.stdin.write("\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "done"
            seconds = group.seconds()
            proc.stdin.write("\n")
            proc.stdin.flush()
            proc.wait()
            return seconds
        finally:
            proc.kill()
            proc.wait()
            group.remove()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=12, help="submissions per lesson")
    parser.add_argument("--lessons", default="02_scalar_backward,05_accumulation")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("grading_cpu.py needs root (it reads CPU time from a cgroup it makes)")
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'grader'}",
               PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    # (byte-compiled first, as an installed engine and grader are: a machine that says
    # PYTHONDONTWRITEBYTECODE, as this VM does, would otherwise compile both from source in
    # every command and kernel, 0.2 CPU-seconds nbgrader's own command does not pay)
    for package in (ROOT / "autograd_lab", ROOT / "grader" / "autograd_lab_grader"):
        compileall.compile_dir(package, quiet=1)
    course = Course(ROOT)
    print(f"{args.count} submissions per lesson, {os.cpu_count()} cores; CPU-seconds per "
          "notebook, every process of the grading counted")
    head = (f"{'lesson':20} {'floor':>6} {'nbgrader':>9} {'warm':>6} {'cold':>6} "
            f"{'not root':>9} {'warm/floor':>11} {'not root/warm':>14} | one learner: "
            f"{'nbgrader':>8} {'default':>8} {'warm':>6} {'cold':>6} {'default/nbgrader':>17}")
    print(head)
    with tempfile.TemporaryDirectory(prefix="autograd-lab-bench-") as tmp:
        os.chmod(tmp, 0o755)            # (nobody grades a copy in here: as_user)
        for lesson in args.lessons.split(","):
            copy = _scratch(course, Path(tmp) / lesson, lesson, args.count)
            n = args.count
            grade = [sys.executable, "-m", "autograd_lab_grader", "grade", lesson, "--force"]
            nbgrader = [str(bin_dir / "nbgrader"), "autograde", lesson, "--force"]
            low = floor(copy.root / "solutions" / lesson / f"{lesson}.ipynb", env)
            # (not counted: what autograd-lab sets up once in a gradebook, its tables and the
            # course's secret, made before any run is measured)
            cpu(grade + ["--student", "learner000", "--cold"], copy.root, env)
            class_ = {"nbgrader": cpu(nbgrader, copy.root, env) / n,
                      "warm": cpu(grade + ["--warm"], copy.root, env) / n,
                      "cold": cpu(grade + ["--cold"], copy.root, env) / n}
            home = Path(tmp) / f"home-{lesson}"
            home.mkdir()
            class_["user"] = cpu(as_user(grade + ["--warm"], copy.root, home), copy.root,
                                 dict(env, HOME=str(home))) / n
            one = ["--student", "learner000"]
            # (the least of three turns each, the four kinds taking turns: a single grading
            # varies by a tenth, and the VM's speed drifts over minutes)
            kinds = (("nbgrader", nbgrader + one), ("default", grade + one),
                     ("warm", grade + one + ["--warm"]), ("cold", grade + one + ["--cold"]))
            turns = [{kind: cpu(args, copy.root, env) for kind, args in kinds}
                     for _ in range(3)]
            alone = {kind: min(turn[kind] for turn in turns) for kind, _ in kinds}
            print(f"{lesson:20} {low:6.2f} {class_['nbgrader']:9.2f} {class_['warm']:6.2f} "
                  f"{class_['cold']:6.2f} {class_['user']:9.2f} {class_['warm'] / low:10.2f}x "
                  f"{class_['user'] / class_['warm']:13.2f}x | {'':12} "
                  f"{alone['nbgrader']:8.2f} {alone['default']:8.2f} {alone['warm']:6.2f} "
                  f"{alone['cold']:6.2f} {alone['default'] / alone['nbgrader']:16.2f}x",
                  flush=True)


def _scratch(course, folder, lesson, count):
    folder.mkdir()
    shutil.copy2(ROOT / CONFIG_FILE, folder / CONFIG_FILE)
    shutil.copytree(course.directory("source"), folder / "solutions")
    copy = Course(folder)
    assert copy.api().generate_assignment(lesson, force=True)["success"], lesson
    notebooks = [copy.root / "solutions" / lesson / f"{lesson}.ipynb",
                 copy.root / "notebooks" / lesson / f"{lesson}.ipynb"]
    for i in range(count):
        target = copy.submission(lesson, f"learner{i:03d}")
        target.mkdir(parents=True)
        shutil.copy2(notebooks[i % 2], target / f"{lesson}.ipynb")
    return copy


if __name__ == "__main__":
    main()
