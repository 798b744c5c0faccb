"""Grading a class with a Kubernetes Indexed Job (deploy/k8s/). There is no cluster here, so:
the manifests deploy/k8s/grade.sh creates are validated against Kubernetes' own schemas
(kubernetes-validate, whose schemas ship in the package: no network), and each pod's exact
command is run here, once per index, with the environment
the Job gives that pod (the completion index, the Secret's gradebook URL, the Job's uid, the
CPU limit) and the image's (its PATH, HOME), in the course directory as the volume holds it,
as the pod's user (1000, so that bubblewrap runs unprivileged and every kernel is forked warm
into namespaces of its own, as in the pod), with the grader's environment built as deploy/k8s/Containerfile builds it
(Debian 12's python3, a virtual environment, the engine and the grader installed, not
editable); then the report Job's command. What they decide equals the one-machine `grade` of
the same class. Building that environment takes about two minutes;
AUTOGRAD_LAB_GRADER_ENV=DIR keeps it in DIR and uses it again.

Not tested here, for want of a cluster, a container engine and a registry: the image build
itself (its base image), and whether a given cluster's runtime grants what the pod asks (a
user namespace, unmasked /proc, no seccomp or AppArmor confinement)."""
import math
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

import nbformat
import pytest
import yaml

import clusterclass as cc
import gradingcourse as gc
import learner_env as le
from autograd_lab_grader.course import Course
from autograd_lab_grader.gradebook import leases, status
from autograd_lab_grader.steps import grade
from pgserver import MISSING

kubernetes_validate = pytest.importorskip("kubernetes_validate")

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "k8s"
# the oldest Kubernetes with every field the Job uses (backoffLimitPerIndex, hostUsers on by
# default: 1.33), and the newest the validator knows
VERSIONS = ("1.33.0", kubernetes_validate.latest_version())
IMAGE = "registry.example.org/autograd-lab-grader:test"
# a smaller class than the others': right, wrong, dying
CLASS = {s: cc.CLASS[s] for s in ("ada", "ann", "ben", "cat", "gus", "jon")}
POD_USER = 1000


def _render(lesson, n, run=""):
    out = subprocess.run([str(DEPLOY / "grade.sh"), "--render", lesson, str(n), IMAGE,
                          *([run] if run else [])], capture_output=True, text=True, check=True)
    return list(yaml.safe_load_all(out.stdout))


def _manifests(run="a-job-uid"):
    documents = _render("02_scalar_backward", 8, run)
    documents += list(yaml.safe_load_all((DEPLOY / "course-volume.yaml").read_text()))
    return documents


def test_the_manifests_validate_against_kubernetes_schemas_without_network(monkeypatch):
    def no_network(*args, **kwargs):
        raise OSError("no network in this test")
    monkeypatch.setattr(socket.socket, "connect", no_network)
    documents = _manifests()
    assert [d["kind"] for d in documents] == ["Job", "Job", "PersistentVolumeClaim", "Secret"]
    for version in VERSIONS:
        for document in documents:
            kubernetes_validate.validate(document, version, strict=True)
    # (the validator is awake: a misspelt field and a wrong type are refused)
    job = documents[0]
    broken = yaml.safe_load(yaml.safe_dump(job))
    broken["spec"]["completionsMode"] = "Indexed"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, VERSIONS[-1], strict=True)
    broken = yaml.safe_load(yaml.safe_dump(job))
    broken["spec"]["template"]["spec"]["hostUsers"] = "no"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, VERSIONS[-1], strict=True)
    # what the recipe relies on, as rendered
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == 8
    assert spec["podReplacementPolicy"] == "Failed"
    pod = spec["template"]["spec"]
    container = pod["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    assert env["SHARDS"]["value"] == "8" and env["LESSON"]["value"] == "02_scalar_backward"
    assert env["AUTOGRAD_LAB_DB_URL"]["valueFrom"]["secretKeyRef"]["name"] == \
        documents[3]["metadata"]["name"]
    assert {v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]
            if "persistentVolumeClaim" in v} == {documents[2]["metadata"]["name"]}
    assert pod["hostUsers"] is False and container["image"] == IMAGE
    report = documents[1]["spec"]["template"]["spec"]["containers"][0]
    assert {e["name"]: e.get("value") for e in report["env"]}["AUTOGRAD_LAB_RUN"] == "a-job-uid"


def _cpus(quantity: str) -> str:
    """A CPU quantity as the downward API gives it (divisor 1: whole CPUs, rounded up)."""
    return str(math.ceil(int(quantity[:-1]) / 1000 if quantity.endswith("m")
                         else float(quantity)))


def _image_env(venv: Path, home: Path) -> dict[str, str]:
    """The image's environment (Containerfile's ENV), its venv where it was built here."""
    containerfile = (DEPLOY / "Containerfile").read_text()
    assert "ENV PATH=/opt/autograd-lab/venv/bin:/usr/local/bin:/usr/bin:/bin" in containerfile
    assert "HOME=/home/grader" in containerfile and "PYTHONDONTWRITEBYTECODE=1" in containerfile
    return {"PATH": f"{venv}/bin:/usr/local/bin:/usr/bin:/bin", "HOME": str(home),
            "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "200"}


def _pod_env(container, index: int | None, secret_url: str, job_uid: str, image: dict):
    """The environment the Job gives the container of the pod of `index`, over the image's."""
    env = dict(image)
    if index is not None:
        env["JOB_COMPLETION_INDEX"] = str(index)        # the Job controller sets it
    for entry in container["env"]:
        source = entry.get("valueFrom")
        if source is None:
            env[entry["name"]] = str(entry["value"])
        elif "secretKeyRef" in source:
            assert source["secretKeyRef"] == {"name": "autograd-lab-gradebook", "key": "url"}
            env[entry["name"]] = secret_url
        elif "fieldRef" in source:
            path = source["fieldRef"]["fieldPath"]
            assert path == "metadata.labels['batch.kubernetes.io/controller-uid']", path
            env[entry["name"]] = job_uid
        elif "resourceFieldRef" in source:
            ref = source["resourceFieldRef"]
            assert ref["resource"] == "limits.cpu" and ref["containerName"] == container["name"]
            env[entry["name"]] = _cpus(str(container["resources"]["limits"]["cpu"]))
        else:
            raise AssertionError(f"an environment source the test does not give: {entry}")
    return env


def _as_pod_user(pod_spec, argv):
    context = pod_spec["securityContext"]
    assert context["runAsUser"] == POD_USER and context["runAsNonRoot"]
    return ["setpriv", f"--reuid={context['runAsUser']}", f"--regid={context['runAsGroup']}",
            "--clear-groups", "--", *argv]


DEBIAN_PYTHON = Path("/usr/bin/python3")


@pytest.fixture(scope="session")
def grader_env():
    """The grader's virtual environment as the Containerfile builds it: Debian's python3, the
    files it copies (pyproject.toml, README.md, autograd_lab/, grader/), `pip install -r
    requirements.txt /src /src/grader`: the lock's versions, the engine and the grader, not
    editable (with uv where the test tools have
    it: le.installer), its bytecode written."""
    if not DEBIAN_PYTHON.exists() or subprocess.run(
            [str(DEBIAN_PYTHON), "-c", "import sys, venv, ensurepip; "
                                       "assert sys.version_info[:2] == (3, 11)"],
            capture_output=True).returncode:
        pytest.skip("no Debian 12 python3 with venv here (the image's Python: python3, "
                    "python3-venv)")
    kept = os.environ.get("AUTOGRAD_LAB_GRADER_ENV")
    # (not under pytest's folder, which only root may enter: the pods' user runs it)
    top = Path(kept) if kept else Path(tempfile.mkdtemp(prefix="autograd-lab-grader-image-"))
    top.mkdir(parents=True, exist_ok=True)
    top.chmod(0o755)
    venv = top / "venv"
    if not (venv / "bin" / "autograd-lab").exists():
        src = top / "src"
        shutil.rmtree(src, ignore_errors=True)
        src.mkdir(parents=True)
        checkout = DEPLOY.parent.parent
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(checkout / name, src / name)
        for name in ("autograd_lab", "grader"):
            shutil.copytree(checkout / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        # (pip only where pip installs: ensurepip costs 6 CPU-seconds)
        subprocess.run([str(DEBIAN_PYTHON), "-m", "venv", str(venv)]
                       + ([] if le.uv_path() is None else ["--without-pip"]), check=True)
        # (the Containerfile's pip, or uv where the test tools have it: the same versions)
        # (uv would take the engine from grader/'s uv workspace source, editable, as a checkout
        # wants it; --no-sources reads the requirements as pip does: /src, installed)
        install = le.installer(venv / "bin" / "python", compile_bytecode=True)
        subprocess.run(install + (["--no-sources"] if le.uv_path() else [])
                       + ["-r", str(DEPLOY / "requirements.txt"), str(src), str(src / "grader")],
                       check=True, capture_output=True)
        shutil.rmtree(src)
    yield venv
    if not kept:
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="module")
def pg(postgresql):
    """The module's PostgreSQL server (tests/conftest.py)."""
    return postgresql


@pytest.fixture(scope="module")
def one_machine(tmp_path_factory):
    top = tmp_path_factory.mktemp("one-machine")
    course = cc.make(top / "course", students=CLASS)
    result = cc.grade_here(course, "--jobs", "3")
    assert result.returncode == 1, result.stdout + result.stderr     # ada's kernel dies
    return cc.decided(course, top / "grades")


@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
@pytest.mark.needs_root(reason="runs the pods' command as their user (root becomes "
                                  "user 1000)")
def test_each_pods_command_run_here_grades_the_class_as_one_machine_does(pg, one_machine,
                                                                         grader_env, tmp_path):
    n, job_uid = 3, str(uuid.uuid4())
    top = Path(tempfile.mkdtemp(prefix="autograd-lab-k8s-"))
    try:
        course = cc.make(top / "course", pg.create("k8s"), students=CLASS)
        status.tables(course)
        home = top / "home"
        home.mkdir()
        image = _image_env(grader_env, home)
        # the volume as the pod sees it: its user owns the course directory (fsGroup, or the
        # file server's ownership)
        for path in [top, *top.rglob("*")]:
            os.lchown(path, POD_USER, POD_USER)
        grade_job, report_job = _render(gc.LESSON, n, job_uid)
        pod = grade_job["spec"]["template"]["spec"]
        container = pod["containers"][0]
        assert grade_job["spec"]["completions"] == grade_job["spec"]["parallelism"] == n
        workdir = container["volumeMounts"][0]
        assert container["workingDir"] == workdir["mountPath"] and workdir["name"] == "course"
        # one pod after another: in the cluster each pod is a user namespace of its own, whose
        # processes count for its own limits alone; here every pod's user is this machine's
        # user 1000 (what pods do at once is tested with Slurm and in test_leases.py: leases)
        pods, outputs = [], []
        for index in range(n):
            pods.append(subprocess.Popen(
                _as_pod_user(pod, container["command"]), cwd=course.root,
                env=_pod_env(container, index, course.db_url, job_uid, image),
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
            outputs.append(pods[-1].communicate(timeout=600)[0])
        parts = {index: set(grade.Shard(index + 1, n).pick(CLASS)) for index in range(n)}
        for index, (p, output) in enumerate(zip(pods, outputs)):
            assert "Traceback" not in output, output
            # a pod exits 1 when a submission of its part failed (ada's kernel died)
            assert p.returncode == (1 if "ada" in parts[index] else 0), output
        taken = leases.read(course)
        assert {c["run"] for c in taken.values()} == {job_uid}
        owners = {}
        for (_, student), c in taken.items():
            owners.setdefault(c["owner"], set()).add(student)
        assert sorted(owners.values(), key=sorted) == sorted(parts.values(), key=sorted)
        # the report Job's pod: nothing left to grade, then export and report
        report_pod = report_job["spec"]["template"]["spec"]
        report = report_pod["containers"][0]
        done = subprocess.run(_as_pod_user(report_pod, report["command"]), cwd=course.root,
                              env=_pod_env(report, None, course.db_url, "its-own-uid", image),
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Traceback" not in done.stdout + done.stderr
        assert (course.root / "reports" / f"{gc.LESSON}.png").stat().st_uid == POD_USER
        graded = list((course.root / "autograded").rglob("*.ipynb"))
        assert graded and {p.stat().st_uid for p in graded} == {POD_USER}
        assert all(c["attempts"] == 1 for c in leases.read(course).values())
        assert cc.decided(course, tmp_path / "grades") == one_machine
    finally:
        shutil.rmtree(top, ignore_errors=True)


# -- a pod's kernels: warm, each in namespaces of its own (no root: zygote.py's namespaces mode)

NEIGHBOUR_MARKER = "4242.0815"      # `sleep MARKER`: what the neighbour leaves running
LOOKS = """
import os, signal, sys, tempfile
print('WARM' if 'matplotlib.pyplot' in sys.modules else 'COLD')
print('PID', os.getpid())
print('CAPS', [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')])
spool = os.path.dirname(os.path.dirname(os.getcwd()))
print('SPOOL', len(os.listdir(spool)))
print('PROCESSES', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))
for path in ('/tmp/left', os.path.join(spool, 'planted'), '/dev/shm/left'):
    try:
        open(path, 'w').write('x')
        print('WROTE', path)
    except OSError as error:
        print('REFUSED', path, type(error).__name__)
for path in ('/proc/1/environ', '/proc/1/mem', '/proc/1/root/tmp'):    # its namespace's init
    try:
        os.listdir(path) if path.endswith('tmp') else open(path, 'rb').read(1)
        print('READ', path)
    except OSError as error:
        print('REFUSED', path, type(error).__name__)
# a user namespace of its own, where it holds every capability: the covers stay locked
import subprocess
undone = subprocess.run(['unshare', '-Urm', 'sh', '-c', f'umount -l /tmp; ls -A {spool}'],
                        capture_output=True, text=True)
print('UNCOVERED', len(undone.stdout.split()))
try:
    os.kill(-1, signal.SIGKILL)          # every process it may signal: only its own
except ProcessLookupError:
    pass
"""
LEAVES_RUNNING = ("import subprocess\nsubprocess.Popen(['sleep', '{marker}'], "
                  "start_new_session=True)\n")
RIGHT = "\ndef square(x):\n    return x * x\n"


@pytest.mark.needs_root(reason="grades as the pods' user (root becomes user 1000)")
def test_a_pods_kernels_start_warm_and_apart(grader_env):
    """Without root, each kernel is forked warm into namespaces of its own: it sees its own
    folder of the spool only, no other kernel's process (the init of its namespace and
    itself), holds no capability, writes no shared folder; what it leaves running is killed
    and reported; two kernels graded at once score as alone."""
    top = Path(tempfile.mkdtemp(prefix="autograd-lab-k8s-warm-"))
    try:
        root = gc.make_course(top / "course", timeout=20)
        gc.submit(root, "looks", {"answer_square": LOOKS + RIGHT})
        gc.submit(root, "leaves", {"answer_square":
                                   LEAVES_RUNNING.format(marker=NEIGHBOUR_MARKER) + RIGHT})
        gc.submit(root, "wrong", {"answer_square": "def square(x):\n    return 2 * x\n"})
        home = top / "home"
        home.mkdir()
        for path in [top, *top.rglob("*")]:
            os.lchown(path, POD_USER, POD_USER)
        result = subprocess.run(
            ["setpriv", f"--reuid={POD_USER}", f"--regid={POD_USER}", "--clear-groups", "--",
             str(grader_env / "bin" / "autograd-lab"), "-C", str(root), "grade", gc.LESSON,
             "--jobs", "2"], env=_image_env(grader_env, home), capture_output=True, text=True,
            timeout=300)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output
        assert "kernels start cold" not in output, output
        rows = status.read(Course(root), gc.LESSON)
        scores = {student: row.score for (_, student), row in rows.items()}
        assert scores == {"looks": 5, "leaves": 5, "wrong": 3}, output
        assert "left 1 process(es) behind" in rows[gc.LESSON, "leaves"].sandbox
        assert gc.processes_with(NEIGHBOUR_MARKER) == []
        nb = nbformat.read(root / "autograded" / "looks" / gc.LESSON / f"{gc.LESSON}.ipynb",
                           as_version=4)
        seen = "".join(o.get("text", "") for o in gc.cell(nb, "answer_square").outputs)
        assert "WARM" in seen and "PID 2\n" in seen, seen
        assert "CAPS ['0000000000000000']" in seen, seen
        assert "SPOOL 1\n" in seen and "PROCESSES [1, 2]" in seen, seen
        assert "WROTE" not in seen and "READ" not in seen and seen.count("REFUSED") == 6, seen
        assert "UNCOVERED 1\n" in seen, seen
    finally:
        shutil.rmtree(top, ignore_errors=True)
