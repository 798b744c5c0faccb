"""The engine's layers hold: ``lint-imports`` keeps every contract of ``.importlinter`` (the
core below the operations below the public modules, no cycles, the course's checks and the
grader above the engine, the grader's own rooms in layers) -- and would notice if one broke.
(tests/grader/test_import_graph.py checks the grader's modules, file by file, for cycles.)"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def package_copy(where):
    """The engine and the grader's package, copied into ``where`` with .importlinter."""
    shutil.copytree(REPO / "autograd_lab", where / "autograd_lab",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copytree(REPO / "grader" / "autograd_lab_grader", where / "autograd_lab_grader",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(REPO / ".importlinter", where / ".importlinter")
    return where


def plant(module, line):
    module.write_text(module.read_text() + f"\n{line}  # noqa: E402, F401\n")


def broken(run):
    return [line for line in run.stdout.splitlines() if line.endswith("BROKEN")]


def lint_imports(where):
    """Run lint-imports on the packages and .importlinter found in ``where`` (the grader's in
    its grader/ folder in a checkout: never an installed copy of it)."""
    paths = [where] + [where / "grader"] * (where / "grader" / "autograd_lab_grader").is_dir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(map(str, paths)))
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=where, env=env,
                          capture_output=True, text=True, timeout=120)


def test_every_contract_is_kept():
    run = lint_imports(REPO)
    assert run.returncode == 0, run.stdout + run.stderr


def test_an_upward_import_breaks_the_layers(tmp_path):
    """A copy of the package where the core imports an operation: lint-imports fails, and
    says which contracts broke."""
    package_copy(tmp_path)
    plant(tmp_path / "autograd_lab" / "_core" / "graph.py", "from .._ops import arithmetic")
    run = lint_imports(tmp_path)
    assert run.returncode != 0, run.stdout
    assert any(line.startswith("The engine in layers") for line in broken(run)), run.stdout
    assert "autograd_lab._core.graph -> autograd_lab._ops.arithmetic" in run.stdout


def test_the_engine_or_the_checks_importing_the_grader_breaks_a_contract(tmp_path):
    for planted in ("viz.py", "checks/lesson01.py"):
        where = package_copy(tmp_path / planted.replace("/", "-"))
        plant(where / "autograd_lab" / planted, "import autograd_lab_grader.steps.grade")
        run = lint_imports(where)
        assert run.returncode != 0, run.stdout
        assert any(line.startswith("The engine and the checks never import the grader")
                   for line in broken(run)), run.stdout


def test_the_engine_importing_the_checks_breaks_a_contract(tmp_path):
    package_copy(tmp_path)
    plant(tmp_path / "autograd_lab" / "autograd" / "gradcheck.py", "from ..checks import answers")
    run = lint_imports(tmp_path)
    assert any(line.startswith("The engine never imports the course's checks")
               for line in broken(run)), run.stdout


def test_the_sandboxs_inside_importing_the_grader_breaks_a_contract(tmp_path):
    """zygote.py and streams.py run inside the sandbox, where the rest of the grader is not."""
    package_copy(tmp_path)
    plant(tmp_path / "autograd_lab_grader" / "sandbox" / "inside" / "streams.py",
          "from ...gradebook import status")
    run = lint_imports(tmp_path)
    assert any(line.startswith("What runs inside the grading sandbox") for line in broken(run)), \
        run.stdout


GRADER_LAYERS = "The grader in layers"


def test_a_room_of_the_grader_importing_one_above_it_breaks_its_layers(tmp_path):
    """Canvas's format reaching up into the export step, the kernel's start-up into what reads
    its replies, the course model into the gradebook: each breaks the grader's layers, and
    lint-imports names the import."""
    planted = {"lms/canvas.py": ("from ..steps import export",
                                 "autograd_lab_grader.lms.canvas -> autograd_lab_grader.steps.export"),
               "kernel/start.py": ("from ..reading import execute",
                                   "autograd_lab_grader.kernel.start -> "
                                   "autograd_lab_grader.reading.execute"),
               "course.py": ("from .gradebook import late",
                             "autograd_lab_grader.course -> autograd_lab_grader.gradebook.late")}
    for module, (source, named) in planted.items():
        where = package_copy(tmp_path / module.replace("/", "-"))
        plant(where / "autograd_lab_grader" / module, source)
        run = lint_imports(where)
        assert run.returncode != 0, run.stdout
        assert any(line.startswith(GRADER_LAYERS) for line in broken(run)), run.stdout
        assert named in run.stdout, run.stdout


def test_the_gradebook_importing_an_lms_format_breaks_the_graders_layers(tmp_path):
    """The LMSs' formats sit above the gradebook (they read its outcomes), never below."""
    where = package_copy(tmp_path)
    plant(where / "autograd_lab_grader" / "gradebook" / "outcome.py", "from ..lms import canvas")
    run = lint_imports(where)
    assert any(line.startswith(GRADER_LAYERS) for line in broken(run)), run.stdout
