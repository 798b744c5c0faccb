import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# tests/ holds shared helpers (dual.py, seed_snippets.py) that test modules import directly
sys.path.insert(0, str(Path(__file__).parent))


# Tests that share expensive work run in one process when the suite is spread over several
# (pytest-xdist, --dist loadgroup); every other test goes wherever a process is free.
# - the files that share a run of every lesson (tests/learner_code.py), or the learner's
#   environment, together;
# - test_course: each lesson's tests together (they read one grading of its class);
# - each file whose tests share a module-scoped fixture (a graded class, a cluster, a kernel's
#   outputs), together.
_GROUPS = {"test_learner_code": "lesson-runs", "test_headless": "lesson-runs",
           "test_seed_coverage": "lesson-runs", "test_binder": "learner-env",
           "test_browser": "learner-env"}
_BY_LESSON = {"test_course"}
_BY_FILE = {"test_grading_claims", "test_grading_collect", "test_grading_feedback_page",
            "test_grading_forgery", "test_grading_hostile", "test_grading_k8s",
            "test_grading_lms", "test_grading_memory", "test_grading_postgres",
            "test_grading_robustness", "test_grading_sandbox", "test_grading_slurm",
            "test_grading_steps", "test_grading_student_repo", "test_lesson_times", "test_site",
            "test_tracebacks", "test_viz_notebook"}


def _group(item):
    module = item.path.stem
    if module in _GROUPS:
        return _GROUPS[module]
    if module in _BY_FILE:
        return module
    lesson = getattr(item, "callspec", None) and item.callspec.params.get("lesson")
    if module in _BY_LESSON and lesson:
        return f"{module}-{lesson}"
    return None


# `./run test --fast` (-m fast): the engine against PyTorch and the checks, no lesson run,
# no grading, no browser
FAST = {"test_parity", "test_structure", "test_gradcheck", "test_namespace", "test_random",
        "test_random_programs", "test_viz", "test_seeds", "test_tracebacks", "test_answers",
        "test_right_answers", "test_lesson_times", "test_benchmarks"}


def pytest_configure(config):
    config.addinivalue_line("markers", "fast: the engine and the checks (./run test --fast)")


# (first: xdist's own hook reads the xdist_group marks to schedule, in each process)
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.path.stem
        group = _group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
        if module in FAST:
            item.add_marker(pytest.mark.fast)


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
def learner_env(tmp_path_factory):
    """The learner's environment (tests/learner_env.py), built fresh once per test session:
    (venv dir, environ for its Jupyter processes). AUTOGRAD_LAB_LEARNER_ENV=DIR reuses one built
    by `python tests/learner_env.py DIR` instead, to iterate on the browser test."""
    import learner_env as le
    if os.environ.get("AUTOGRAD_LAB_LEARNER_ENV"):
        base = Path(os.environ["AUTOGRAD_LAB_LEARNER_ENV"]).resolve()
        return base / "venv", le.jupyter_environ(base / "venv", base / "home")
    base = tmp_path_factory.mktemp("learner")
    return base / "venv", le.build(base / "venv", base / "home")


@pytest.fixture(scope="module")
def jupyter_server(learner_env, tmp_path_factory):
    """JupyterLab of the learner's environment on loopback (tests/lab_browser.py), serving a copy
    of the course as a learner gets it: notebooks/ and nbgrader_config.py, so the test's edits
    and the Validate button's saves never touch the repository."""
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
def chromium():
    """Debian's Chromium, headless, through Playwright (its own browser download is not used)."""
    from playwright.sync_api import sync_playwright
    import lab_browser
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=lab_browser.CHROMIUM)
        yield browser
        browser.close()
