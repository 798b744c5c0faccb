"""The engine's layers hold: ``lint-imports`` keeps every contract of ``.importlinter`` (the
core below the operations below the public modules, no cycles, the course's checks and the
grader above the engine) -- and would notice if one broke."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(where):
    """Run lint-imports on the package and .importlinter found in ``where``."""
    env = dict(os.environ, PYTHONPATH=str(where))
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=where, env=env,
                          capture_output=True, text=True, timeout=120)


def test_every_contract_is_kept():
    run = lint_imports(REPO)
    assert run.returncode == 0, run.stdout + run.stderr


def test_an_upward_import_breaks_the_layers(tmp_path):
    """A copy of the package where the core imports an operation: lint-imports fails, and
    says which contracts broke."""
    shutil.copytree(REPO / "autograd_lab", tmp_path / "autograd_lab",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(REPO / ".importlinter", tmp_path / ".importlinter")
    graph = tmp_path / "autograd_lab" / "_core" / "graph.py"
    graph.write_text(graph.read_text() + "\nfrom .._ops import arithmetic  # noqa: E402\n")
    run = lint_imports(tmp_path)
    assert run.returncode != 0, run.stdout
    broken = [line for line in run.stdout.splitlines() if line.endswith("BROKEN")]
    assert any(line.startswith("The engine in layers") for line in broken), run.stdout
    assert "autograd_lab._core.graph -> autograd_lab._ops.arithmetic" in run.stdout


def test_importing_the_grader_breaks_a_contract(tmp_path):
    shutil.copytree(REPO / "autograd_lab", tmp_path / "autograd_lab",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(REPO / ".importlinter", tmp_path / ".importlinter")
    viz = tmp_path / "autograd_lab" / "viz.py"
    viz.write_text(viz.read_text() + "\nimport autograd_lab_grader  # noqa: E402, F401\n")
    run = lint_imports(tmp_path)
    assert run.returncode != 0, run.stdout
    assert "The engine never imports the grader BROKEN" in run.stdout, run.stdout
