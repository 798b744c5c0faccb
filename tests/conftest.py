"""What every test shares: the tiers, the needs and the xdist groups, all derived (no list of
test files to keep), and the fixtures several folders use.

The tree (docs/maintainers/tests.md): a test's folder is its tier, and tests/support/ holds
the helpers and tests/support/submissions/ (learners' wrong answers, as data).

- **Tier marker** from the folder under tests/: engine, checks, course, grader, deploy,
  browser, tooling (TIERS). `fast` (`./run test --fast`, `-m fast`) is the engine and checks
  folders (FAST). A new test file gets its folder's markers; a test file outside a tier
  folder fails tests/tooling/test_tiers.py.
- **Need markers** from the fixtures a test uses (transitively): a fixture declares what it
  needs with ``@needs(...)`` below (the PostgreSQL server, the Slurm cluster, Chromium). Where
  nothing can be derived, the test file says it (``pytestmark = pytest.mark.needs_root``, or
  the mark on a test or a fixture's param). A test marked ``needs_root`` is skipped where the
  tests do not run as root.
- **xdist groups** (`./run test`: pytest-xdist, ``--dist loadgroup``): tests that share one
  instance of expensive work run in one process, every other test wherever a process is
  free. The work a fixture does is shared by the tests it serves: a module-scoped fixture (or
  a session-scoped one defined in a test file) by its file's tests, per value of its params
  (test_course's ``graded``, per lesson; test_hostile's ``hostile``, warm and cold); a
  session-scoped fixture of this file that says ``@once_per_run`` (the lessons' runs, the
  learner's environment) by every test using it. Tests sharing any such instance are joined
  (transitively), and each set is one group, named after what it shares: the fixture
  (``lesson_runs``, ``learner_env``) or the file (``test_sandbox``, ``test_course-<lesson>``).
"""
import os
import shutil
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# The helpers (dual.py, gradingcourse.py, ...) and the submissions/ package live in
# tests/support/, on the import path: test modules and helpers import them by their bare
# names (`import gradingcourse`, `import_module("submissions.02_scalar_backward")`), as do
# benchmarks/cluster.py and the helpers run as scripts (`python tests/support/learner_env.py`).
sys.path.insert(0, str(TESTS / "support"))

TIERS = {
    "engine": "the engine against PyTorch: parity, gradients, structure, drawings, tracebacks",
    "checks": "the course's checks (autograd_lab.checks), called as test cells call them",
    "course": "the lessons: released, graded, run headless and under PyTorch",
    "grader": "the instructor's grader (autograd_lab_grader) on fixture and real classes",
    "deploy": "grading on a cluster: Slurm's job array, Kubernetes' Indexed Job",
    "browser": "the learner's and reader's browser: Binder's environment, JupyterLab, the site",
    "tooling": "the repository's tools: README, benchmarks, the lock, the test tiers",
}
FAST = {"engine", "checks"}
NEEDS = {
    "needs_root": "runs only as root (Slurm's daemons, warm kernels, a pod's user); skipped "
                  "otherwise",
    "needs_postgres": "starts a throwaway PostgreSQL server (the postgresql fixture)",
    "needs_slurm": "starts a one-node Slurm cluster (the slurm_cluster fixture)",
    "needs_browser": "drives Debian's Chromium through Playwright (the chromium fixture)",
}


def pytest_configure(config):
    for tier, what in TIERS.items():
        config.addinivalue_line("markers", f"{tier}: tests/{tier}/: {what}")
    config.addinivalue_line("markers", "fast: the engine and checks tiers (./run test --fast)")
    for need, what in NEEDS.items():
        config.addinivalue_line("markers", f"{need}: {what}")


def tier_of(path):
    """The tier of a test file: its first folder under tests/ (None outside a tier folder)."""
    try:
        parts = Path(path).resolve().relative_to(TESTS).parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 and parts[0] in TIERS else None


# -- what fixtures declare ---------------------------------------------------------------------

def needs(*marks):
    """A fixture's declaration: every test using it (directly or through other fixtures) gets
    these markers."""
    def declare(fixture):
        fixture.implied_marks = marks
        return fixture
    return declare


def once_per_run(fixture):
    """A session-scoped fixture whose work every test using it shares, wherever its file: those
    tests are one xdist group, named after the fixture."""
    fixture.once_per_run = True
    return fixture


def _fixturedefs(item):
    """{name: the FixtureDef the item uses} over its whole fixture closure."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return {}
    return {name: defs[-1] for name, defs in info.name2fixturedefs.items() if defs}


def _shared(item, defs):
    """The instances of shared work the item uses, each a hashable key with a readable name:
    ("fixture", name) for a @once_per_run fixture; ("file", path, name, params) for a fixture
    set up once per file (params: the values of the parametrized ones in its closure)."""
    params = getattr(getattr(item, "callspec", None), "params", {})

    def closure(name, seen):
        if name in seen or name not in defs:
            return seen
        seen.add(name)
        for arg in defs[name].argnames:
            closure(arg, seen)
        return seen

    keys = set()
    for name, fixturedef in defs.items():
        ours = bool(fixturedef.baseid) or name in params    # not a plugin's (tmp_path_factory)
        if not ours or fixturedef.scope in ("function", "class"):
            continue
        if getattr(fixturedef.func, "once_per_run", False):
            keys.add(("fixture", name))
        elif fixturedef.scope in ("module", "package") or fixturedef.baseid.endswith(".py"):
            values = tuple(sorted((arg, str(params[arg])) for arg in closure(name, set())
                                  if arg in params))
            keys.add(("file", str(item.path), name, values))
    return keys


def _group_name(keys):
    fixtures = sorted(k[1] for k in keys if k[0] == "fixture")
    if fixtures:
        return "+".join(fixtures)
    files = sorted({Path(k[1]).stem for k in keys})
    values = sorted({v for k in keys for _, v in k[3]})
    return "+".join(files + values) if len(files) > 1 else "-".join(files + values)


def xdist_groups(items):
    """{item: group name} for the items sharing work, joined transitively (union-find)."""
    parent = {}

    def find(key):
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    shared = {}
    for item in items:
        keys = _shared(item, _fixturedefs(item))
        if keys:
            shared[item] = keys
            first, *rest = keys
            for key in rest:
                parent[find(key)] = find(first)
    members = {}
    for keys in shared.values():
        for key in keys:
            members.setdefault(find(key), set()).add(key)
    names = {root: _group_name(keys) for root, keys in members.items()}
    return {item: names[find(next(iter(keys)))] for item, keys in shared.items()}


# (first: xdist's own hook reads the xdist_group marks to schedule, in each process)
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    groups = xdist_groups(items)
    for item in items:
        tier = tier_of(item.path)
        if tier:
            item.add_marker(tier)
            if tier in FAST:
                item.add_marker("fast")
        for fixturedef in _fixturedefs(item).values():
            for mark in getattr(fixturedef.func, "implied_marks", ()):
                item.add_marker(mark)
        if item in groups:
            item.add_marker(pytest.mark.xdist_group(groups[item]))


def pytest_runtest_setup(item):
    mark = item.get_closest_marker("needs_root")
    if mark and os.geteuid() != 0:
        pytest.skip(mark.kwargs.get("reason", "needs root"))


@pytest.fixture(autouse=True)
def _environ_restored():
    """Each test starts from the same os.environ: nbgrader's setenv (autograde, validate run in
    this process) leaves NBGRADER_EXECUTION behind when what it wraps raises, and a kernel a
    later test starts would then believe itself graded."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(autouse=True, scope="session")
def _kernels_over_unix_sockets(tmp_path_factory):
    """Kernels the tests start in this process talk over Unix sockets, as the grader's do:
    with tests spread over processes, a TCP port one worker found free can be taken by
    another's connection before its kernel binds it ("Address already in use", a kernel
    that "died before replying to kernel_info")."""
    from jupyter_client.manager import KernelManager
    sockets = tmp_path_factory.mktemp("kernel-sockets")
    original = KernelManager._async_pre_start_kernel

    async def pre_start(self, **kw):
        if self.transport == "tcp":
            self.transport = "ipc"
            self.ip = str(sockets / f"{os.getpid()}-{id(self)}")
        return await original(self, **kw)

    KernelManager._async_pre_start_kernel = pre_start
    yield
    KernelManager._async_pre_start_kernel = original


@pytest.fixture(scope="session")
def torch():
    """Real PyTorch, the oracle. CI installs it; elsewhere its tests are skipped."""
    return pytest.importorskip("torch")


@pytest.fixture(scope="session")
@once_per_run
def lesson_runs():
    """Every solution notebook run once per session (tests/support/learner_code.py: as it is,
    every cell twice, the learner's code under PyTorch), for all the tests that read the runs:
    ``lesson_runs.solution_run(lesson)``, ``.twice_run``, ``.pytorch_run`` (each run on first
    use)."""
    import learner_code
    return learner_code


@pytest.fixture(scope="session")
@once_per_run
def learner_env(tmp_path_factory):
    """The learner's environment (tests/support/learner_env.py), built fresh once per test
    session: (venv dir, environ for its Jupyter processes). AUTOGRAD_LAB_LEARNER_ENV=DIR reuses
    one built by `python tests/support/learner_env.py DIR` instead, to iterate on the browser
    test."""
    import learner_env as le
    if os.environ.get("AUTOGRAD_LAB_LEARNER_ENV"):
        base = Path(os.environ["AUTOGRAD_LAB_LEARNER_ENV"]).resolve()
        return base / "venv", le.jupyter_environ(base / "venv", base / "home")
    base = tmp_path_factory.mktemp("learner")
    return base / "venv", le.build(base / "venv", base / "home")


@pytest.fixture(scope="module")
def jupyter_server(learner_env, tmp_path_factory):
    """JupyterLab of the learner's environment on loopback (tests/support/lab_browser.py),
    serving a copy of the course as a learner gets it: notebooks/ and nbgrader_config.py, so the
    test's edits and the Validate button's saves never touch the repository."""
    import lab_browser
    venv, environ = learner_env
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    shutil.copy(ROOT / "nbgrader_config.py", root)
    lab_browser.ARTIFACTS.mkdir(exist_ok=True)
    with lab_browser.jupyter_lab(venv / "bin" / "python", environ, root,
                                 lab_browser.ARTIFACTS / "jupyterlab.log") as server:
        yield server


@pytest.fixture(scope="module")
@needs("needs_browser")
def chromium():
    """Debian's Chromium, headless, through Playwright (its own browser download is not used)."""
    from playwright.sync_api import sync_playwright
    import lab_browser
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=lab_browser.CHROMIUM)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
@needs("needs_postgres")
def postgresql():
    """A throwaway PostgreSQL server for the module's tests (tests/support/pgserver.py); the
    tests are skipped where PostgreSQL is not installed."""
    import pgserver
    if pgserver.MISSING:
        pytest.skip(pgserver.MISSING)
    with pgserver.PostgresServer() as server:
        yield server


@pytest.fixture(scope="module")
@needs("needs_slurm", "needs_root")
def slurm_cluster():
    """A throwaway one-node Slurm for the module's tests (tests/support/slurmcluster.py: two
    CPUs); skipped where Slurm is not installed or the tests do not run as root."""
    import slurmcluster
    why = slurmcluster.missing()
    if why:
        pytest.skip(why)
    with slurmcluster.SlurmCluster(cpus=2) as cluster:
        yield cluster
