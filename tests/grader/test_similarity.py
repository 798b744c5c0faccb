"""The similarity report on lesson 08 (my_backward, the heart of backward, written by each
learner): a class of independent solutions, two learners who both handed in the model
solution, and one who copied a classmate's answer with every variable renamed and the
comments rewritten. The copied pair comes first and alone beyond chance; the model solution
shared by two is not evidence; the page is the instructor's, safe to open."""
import shutil
from pathlib import Path

import nbformat
from typer.testing import CliRunner

from autograd_lab_grader.commands.cli import app
from autograd_lab_grader.course import Course
from autograd_lab_grader.steps import similarity

ROOT = Path(__file__).resolve().parents[2]
LESSON = "08_backward_by_hand"
STUB = "            # YOUR CODE HERE\n            raise NotImplementedError()"

ANSWERS = {
    "ada": '''
if hasattr(node, "variable"):
    v = node.variable
    if v.grad is None:
        v.grad = grad
    else:
        v.grad = v.grad + grad
    continue
result = node(grad)
if not isinstance(result, tuple):
    result = (result,)
for (child, _), g in zip(node.next_functions, result):
    if child is not None:
        if child in arrived:
            arrived[child] = arrived[child] + g
        else:
            arrived[child] = g
        edges_in[child] = edges_in[child] - 1
        if edges_in[child] == 0:
            ready.append(child)
''',
    "ben": '''
name = type(node).__name__
if name == "AccumulateGrad":          # a leaf's node: add into .grad
    t = node.variable
    t.grad = grad.clone() if t.grad is None else t.grad.add(grad)
    continue
grads = node(grad)
grads = grads if isinstance(grads, tuple) else [grads]
pairs = [(fn, gr) for (fn, _), gr in zip(node.next_functions, grads) if fn is not None]
for fn, gr in pairs:
    arrived[fn] = arrived.get(fn, 0) + gr
    edges_in[fn] -= 1
    if not edges_in[fn]:
        ready.insert(0, fn)
''',
    "cai": '''
if getattr(node, "variable", None) is not None:
    leaf = node.variable
    leaf.grad = grad if leaf.grad is None else leaf.grad + grad
else:
    outputs = node(grad)
    if isinstance(outputs, tuple) is False:
        outputs = tuple([outputs])
    i = 0
    while i < len(node.next_functions):
        target = node.next_functions[i][0]
        if target is not None:
            previous = arrived.get(target)
            arrived[target] = outputs[i] if previous is None else previous + outputs[i]
            edges_in[target] -= 1
            if edges_in[target] == 0:
                ready.append(target)
        i += 1
''',
    "dee": '''
def deliver(to, g):
    arrived[to] = arrived[to] + g if to in arrived else g
    edges_in[to] -= 1
    return edges_in[to] == 0
if hasattr(node, "variable"):
    x = node.variable
    x.grad = x.grad + grad if x.grad is not None else grad
    continue
back = node(grad)
back = back if type(back) is tuple else (back,)
for k, (nxt_fn, _unused) in enumerate(node.next_functions):
    if nxt_fn is not None and deliver(nxt_fn, back[k]):
        ready.append(nxt_fn)
''',
    # ben's answer, every name changed, the comment rewritten, a blank line added
    "eli": '''
kind = type(node).__name__
if kind == "AccumulateGrad":     # leaves collect their gradient here

    leaf_tensor = node.variable
    leaf_tensor.grad = grad.clone() if leaf_tensor.grad is None else leaf_tensor.grad.add(grad)
    continue
gs = node(grad)
gs = gs if isinstance(gs, tuple) else [gs]
todo = [(f, q) for (f, _), q in zip(node.next_functions, gs) if f is not None]
for f, q in todo:
    arrived[f] = arrived.get(f, 0) + q
    edges_in[f] -= 1
    if not edges_in[f]:
        ready.insert(0, f)
''',
}
MODEL = ("fay", "gus")          # both hand in the model solution as it is
HOSTILE_NAME = "<script>alert(1)</script>"


def _model_answer():
    nb = nbformat.read(ROOT / "solutions" / LESSON / f"{LESSON}.ipynb", as_version=4)
    cell = next(c for c in nb.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == "my_backward")
    body = cell.source.split("### BEGIN SOLUTION\n")[1].split("            ### END SOLUTION")[0]
    return body.rstrip("\n")


def _class(root: Path):
    release = nbformat.read(root / "notebooks" / LESSON / f"{LESSON}.ipynb", as_version=4)
    bodies = {s: "\n".join("            " + line if line else line
                           for line in a.strip("\n").splitlines())
              for s, a in ANSWERS.items()}
    bodies.update({s: _model_answer() for s in MODEL})
    for student, body in bodies.items():
        nb = nbformat.from_dict(release)
        cell = next(c for c in nb.cells
                    if c.metadata.get("nbgrader", {}).get("grade_id") == "my_backward")
        assert STUB in cell.source
        cell.source = cell.source.replace(STUB, body)
        folder = root / "submitted" / student / LESSON
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{LESSON}.ipynb")


def test_the_copied_pair_comes_first_and_alone(tmp_path):
    root = tmp_path / "course"
    root.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", root)
    for folder in ("solutions", "notebooks"):
        shutil.copytree(ROOT / folder / LESSON, root / folder / LESSON)
    _class(root)
    course = Course(root)
    with course.gradebook() as gb:
        gb.add_student("ben", last_name=HOSTILE_NAME)
    result = similarity.similarity(course, LESSON)
    assert len(result.learners) == 7 and len(result.pairs) == 21
    first = result.pairs[0]
    assert {first.a, first.b} == {"ben", "eli"}, [(p.a, p.b, p.similarity)
                                                  for p in result.pairs[:5]]
    assert first.similarity > 0.8
    # no pair of independent solutions at or above it, and it alone beyond chance
    assert all(p.similarity < first.similarity for p in result.pairs[1:])
    assert [(p.a, p.b) for p in result.named] == [(first.a, first.b)]
    # the model solution handed in by two is left out: nothing of it makes them alike
    fay_gus = next(p for p in result.pairs if {p.a, p.b} == set(MODEL))
    assert not fay_gus.beyond and fay_gus.similarity < 0.2

    runner = CliRunner()
    said = runner.invoke(app, ["-C", str(root), "similarity", "08"])
    assert said.exit_code == 0, said.output
    rows = [line for line in said.output.splitlines() if line.startswith("│")]
    assert "ben, eli" in rows[0] and "100%" in rows[0] and "beyond chance" in rows[0], said.output
    assert not any("beyond chance" in row for row in rows[1:])
    page = (root / "reports" / f"{LESSON}-similarity.html").read_text()
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "evidence to read, not a verdict" in page
    # the shared lines side by side: both sides' own names, the shared code marked
    section = page[page.index('id="pair-ben-eli"'):]
    section = section[:section.index("</section>")]
    assert "leaf_tensor.grad" in section and "t.grad = grad.clone()" in section
    assert section.count("<mark>") >= 2
