"""The grader's modules import in one direction: the graph of which module of
``autograd_lab_grader`` imports which (every import, those inside a function included, read
with ``ast``) has no cycle; the LMSs' formats import no step and no command, and a step no
command. ``.importlinter``'s grader contract says the same of its rooms, as packages
(tests/engine/test_layers.py); this is the same rule for each file."""
import ast
import shutil
from pathlib import Path

GRADER = Path(__file__).resolve().parents[2] / "grader" / "autograd_lab_grader"
PACKAGE = "autograd_lab_grader"


def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """{dotted name: (its file, whether it is a package's __init__)} of the package at `root`."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def import_graph(root: Path = GRADER) -> dict[str, set[str]]:
    """{module: the modules of the package it imports}. ``from . import x`` is an import of
    the module ``x`` when there is one, else of the package that defines ``x``."""
    known = modules(root)
    graph = {}
    for name, (path, is_package) in known.items():
        here = name.split(".") if is_package else name.split(".")[:-1]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(here[:len(here) - node.level + 1] + ([base] if base else []))
                for alias in node.names:
                    targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known
                                else base)
        graph[name] = {t for t in targets if t in known and t != name}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of `graph` (its modules, the first repeated at the end), or None."""
    done, path, on_path = set(), [], set()

    def visit(node):
        path.append(node)
        on_path.add(node)
        for target in sorted(graph[node]):
            if target in on_path:
                return path[path.index(target):] + [target]
            if target not in done:
                found = visit(target)
                if found:
                    return found
        path.pop()
        on_path.discard(node)
        done.add(node)
        return None

    for start in sorted(graph):
        if start not in done:
            found = visit(start)
            if found:
                return found
    return None


def test_the_graders_import_graph_has_no_cycle():
    graph = import_graph()
    # (the graph is the package's: its steps, the LMSs' formats, and what they import)
    assert "autograd_lab_grader.gradebook.outcome" in graph["autograd_lab_grader.lms.canvas"]
    assert "autograd_lab_grader.lms.canvas" in graph["autograd_lab_grader.steps.export"]
    found = cycle(graph)
    assert found is None, " -> ".join(found)


def test_an_import_back_up_makes_a_cycle_that_is_found(tmp_path):
    """The LMS's formats importing the export step that imports them: the cycle is named."""
    copy = tmp_path / PACKAGE
    shutil.copytree(GRADER, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    canvas = copy / "lms" / "canvas.py"
    canvas.write_text(canvas.read_text() + "\n\ndef late():\n    from ..steps import export\n")
    found = cycle(import_graph(copy))
    assert found is not None and found[0] == found[-1]
    assert {"autograd_lab_grader.lms.canvas", "autograd_lab_grader.steps.export"} <= set(found)


def test_the_lms_formats_import_no_step_and_no_command():
    for name, targets in import_graph().items():
        if name.startswith(f"{PACKAGE}.lms"):
            above = [t for t in targets if t.startswith((f"{PACKAGE}.steps", f"{PACKAGE}.commands"))]
            assert not above, (name, above)


def test_a_step_imports_no_command():
    for name, targets in import_graph().items():
        if name.startswith(f"{PACKAGE}.steps"):
            above = [t for t in targets if t.startswith(f"{PACKAGE}.commands")]
            assert not above, (name, above)
