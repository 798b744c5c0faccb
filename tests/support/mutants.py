"""The checks' failures, and mutants of the checks made from them (tests/tooling/test_mutants.py).

A *failure* is a call of ``fail(...)`` in a module of autograd_lab/checks/: where a check refuses
an answer. Each failure makes mutants of the function it is in, each one the function with one
change, read from its source with ``ast``:

- ``skip``: the ``fail(...)`` call left out (the check lets that answer through, or on to
  another failure);
- ``negate``: the condition of the ``if`` the call is under negated (the check refuses what
  it passed and passes what it refused);
- ``guard``: an ``if ...: return`` or ``if ...: continue`` in a function with failures
  negated (an early pass that lets the answer skip the failures after it, or skips none).

A mutant is *killed* when a wrong or right answer of tests/support/submissions/, run as
tests/checks/test_wrong_answers.py runs it, no longer gets what it says; one that survives
gives points away (or takes them) and no test would notice.
"""
import ast
import contextlib
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "autograd_lab" / "checks"
#: the modules whose functions make the checks' verdicts (written.py shows model answers,
#: answers.py describes and rebuilds answers: neither refuses an answer)
MODULES = ["__init__", *sorted(p.stem for p in PACKAGE.glob("lesson*.py"))]


@dataclass(frozen=True)
class Failure:
    module: str             # "lesson02", "__init__"
    function: str           # the top-level function it is in
    line: int               # the line of the fail(...) statement
    text: str               # the start of what it says (its first argument, as written)

    @property
    def path(self):
        return str(PACKAGE / f"{self.module}.py")


@dataclass(frozen=True)
class Mutant:
    kind: str               # "skip", "negate" or "guard"
    module: str
    function: str
    line: int               # the fail statement's line (skip), the if's line (negate, guard)
    text: str               # the failure's text (skip, negate), the condition's (guard)

    @property
    def name(self):
        """How the list of equivalent mutants names it: the same however the lines move."""
        return f"{self.kind} {self.module}.{self.function}: {self.text}"

    @property
    def path(self):
        return str(PACKAGE / f"{self.module}.py")


def _tree(module):
    source = (PACKAGE / f"{module}.py").read_text()
    return source, ast.parse(source)


def _fail_call(node):
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "fail")


def _text(source, call):
    first = call.args[0] if call.args else call
    text = " ".join(ast.get_source_segment(source, first).split())
    return text[:60]


def _functions(tree):
    return [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]


def _walk(node, ifs=()):
    """(statement, the ifs it is under, innermost last) for every statement under ``node``."""
    for name in ("body", "orelse", "finalbody", "handlers"):
        for child in getattr(node, name, []):
            yield child, ifs
            inner = ifs + (child,) if isinstance(child, ast.If) else ifs
            yield from _walk(child, inner)


def failures():
    """Every failure of the checks, in file order."""
    found = []
    for module in MODULES:
        source, tree = _tree(module)
        for function in _functions(tree):
            for statement, _ in _walk(function):
                if _fail_call(statement):
                    found.append(Failure(module, function.name, statement.lineno,
                                         _text(source, statement.value)))
    return found


def mutants():
    """Every mutant of the checks, in file order."""
    found = []
    for module in MODULES:
        source, tree = _tree(module)
        for function in _functions(tree):
            seen = set()
            statements = list(_walk(function))
            if not any(_fail_call(s) for s, _ in statements):
                continue
            for statement, ifs in statements:
                if _fail_call(statement):
                    text = _text(source, statement.value)
                    found.append(Mutant("skip", module, function.name, statement.lineno, text))
                    if ifs and ifs[-1].lineno not in seen:
                        seen.add(ifs[-1].lineno)
                        found.append(Mutant("negate", module, function.name, ifs[-1].lineno,
                                            text))
                elif isinstance(statement, ast.If) and len(statement.body) == 1 and isinstance(
                        statement.body[0], (ast.Return, ast.Continue)) and not statement.orelse:
                    text = " ".join(ast.get_source_segment(source, statement.test).split())
                    found.append(Mutant("guard", module, function.name, statement.lineno,
                                        text[:60]))
    # (a function that says one thing in two places: the second is named "... (2)")
    named, unique = {}, []
    for mutant in found:
        n = named[mutant.name] = named.get(mutant.name, 0) + 1
        unique.append(mutant if n == 1 else Mutant(mutant.kind, mutant.module, mutant.function,
                                                   mutant.line, f"{mutant.text} ({n})"))
    return unique


class _Change(ast.NodeTransformer):
    def __init__(self, mutant):
        self.mutant = mutant

    def visit_Expr(self, node):
        if self.mutant.kind == "skip" and node.lineno == self.mutant.line and _fail_call(node):
            return ast.copy_location(ast.Pass(), node)
        return node

    def visit_If(self, node):
        self.generic_visit(node)
        if self.mutant.kind != "skip" and node.lineno == self.mutant.line:
            node.test = ast.copy_location(ast.UnaryOp(ast.Not(), node.test), node.test)
        return node


@contextlib.contextmanager
def applied(mutant):
    """The checks with ``mutant`` in place of its function while the block runs: the function
    compiled again from its changed source, in its own module, and in every module of the
    checks that imported it by name."""
    import importlib
    module = importlib.import_module(f"autograd_lab.checks{'' if mutant.module == '__init__' else '.' + mutant.module}")
    source, tree = _tree(mutant.module)
    (node,) = [n for n in _functions(tree) if n.name == mutant.function]
    changed = ast.fix_missing_locations(_Change(mutant).visit(node))
    original = module.__dict__[mutant.function]
    holders = [m for name, m in list(sys.modules.items()) if name.startswith("autograd_lab.checks")
               and m is not None and m.__dict__.get(mutant.function) is original]
    namespace = module.__dict__
    code = compile(ast.Module(body=[changed], type_ignores=[]), mutant.path, "exec")
    try:
        exec(code, namespace)
        replacement = namespace[mutant.function]
        for holder in holders:
            holder.__dict__[mutant.function] = replacement
        yield
    finally:
        for holder in holders:
            holder.__dict__[mutant.function] = original
