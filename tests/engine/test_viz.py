"""autograd_lab.viz: the seeds' graphs drawn with real `dot` and checked against PyTorch's own
graphs, saved tensors shown freed after backward, traces whose steps add up to `.grad`, DOT
that is the same in every process, and a readable fallback where `dot` is missing; every
drawing and trace frame in words (the text alternative a screen reader reads: Jupyter's
text/plain, the alt of the <img> it shows, the SVG's own title and description), and a
sentence for every matplotlib figure."""
import base64
import html.parser
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import graphviz
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograd_lab
from autograd_lab import viz

ROOT = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"
OP = re.compile(r"^(\w+Backward\d*|AccumulateGrad)( #\d+)?$")

# The seeds' examples (tests/support/seed_snippets.py), each ending by naming its tensors, its root
# and the seed v it was given. Some retain_grad() or keep the graph on purpose.
EXAMPLES = {
    "mul": """
x = torch.tensor(1.0, requires_grad = True)
y = torch.tensor(2.0)
z = x * y
names, root, seed = {x: "x", y: "y", z: "z"}, z, None
""",
    "cube": """
x = torch.tensor(1.0, requires_grad = True)
z = x ** 3
z.backward()
names, root, seed = {x: "x", z: "z"}, z, None
""",
    "square_w": """
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2
w = torch.FloatTensor([1.0, 1.0])
y.backward(w)
names, root, seed = {x: "x", y: "y"}, y, w
""",
    "cube_of_square": """
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2
y.retain_grad()
z = y**3
w = torch.FloatTensor([1.0, 1.0])
z.backward(w, retain_graph=True)
names, root, seed = {x: "x", y: "y", z: "z"}, z, w
""",
    "two_leaves": """
x = torch.tensor([2.0, 2.0], requires_grad=True)
z = torch.tensor([4.0, 4.0], requires_grad=True)
y = x**2 + z**3
w = torch.FloatTensor([1.0, 1.0])
y.backward(w, retain_graph=True)
names, root, seed = {x: "x", z: "z", y: "y"}, y, w
""",
    "mm": """
x = Variable(torch.FloatTensor([[2,1]]), requires_grad=True)
M = Variable(torch.FloatTensor([[1,2],[3,4]]))
y = torch.mm(x, M)
v = torch.FloatTensor([[1,1]])
y.backward(v, retain_graph = True)
names, root, seed = {x: "x", M: "M", y: "y"}, y, v
""",
    "sum_rows": """
x = Variable(torch.FloatTensor([[1, 2, 3, 4]]), requires_grad=True)
z = 2*x
loss = z.sum(dim=1)
loss.backward(retain_graph=True)
names, root, seed = {x: "x", z: "z", loss: "loss"}, loss, None
""",
}


def run_example(name, lib, backward=True):
    """The example's namespace under ``lib`` (torch or autograd_lab); ``backward=False``
    stops before the first ``.backward`` call."""
    code = EXAMPLES[name]
    if not backward:
        code = "\n".join(line for line in code.splitlines() if ".backward(" not in line)
    env = {"torch": lib, "Variable": lib.autograd.Variable}
    exec(code, env)
    return env


# -- reading what dot drew ---------------------------------------------------------------
def svg(graph):
    """``(nodes, edges)`` from the SVG that ``dot`` renders: ``{DOT id: [text lines]}`` and
    ``[(tail id, head id, [label lines], stroke colour)]``."""
    root = ET.fromstring(graph.pipe(format="svg"))
    nodes, edges = {}, []
    for g in root.iter(SVG + "g"):
        title = g.find(SVG + "title").text
        texts = [t.text.replace("\xa0", " ") for t in g.iter(SVG + "text")]
        if g.get("class") == "node":
            nodes[title] = texts
        elif g.get("class") == "edge":
            path = g.find(SVG + "path")
            edges.append((*title.split("->"), texts, path.get("stroke")))
    return nodes, edges


def squeeze(text):
    return "".join(text.split())


def node_with(nodes, first_line):
    [lines] = [lines for lines in nodes.values() if lines[0] == first_line]
    return squeeze(" ".join(lines))


def printed(t):
    """The values as PyTorch prints them, without ``tensor(...)`` around them."""
    return squeeze(repr(t.detach())[len("tensor("):-1])


def torch_nodes(root):
    """Every node of PyTorch's graph of ``root``: the oracle for what viz must draw."""
    seen, todo = [], [root.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is not None and not any(fn is s for s in seen):
            seen.append(fn)
            todo += [nxt for nxt, _ in fn.next_functions]
    return seen


def op_names(nodes):
    return Counter(OP.match(lines[0])[1] for lines in nodes.values() if OP.match(lines[0]))


# -- the drawings ------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_drawing_shows_pytorchs_nodes_leaves_values_and_grads(name, torch):
    ours, theirs = run_example(name, autograd_lab), run_example(name, torch)
    nodes, _ = svg(viz.draw(ours["root"], names=ours["names"], gradient=ours["seed"]))

    graph = torch_nodes(theirs["root"])
    assert op_names(nodes) == Counter(type(fn).__name__ for fn in graph)
    variables = [fn.variable for fn in graph if hasattr(fn, "variable")]
    for t, label in theirs["names"].items():
        drawn = (any(t is v for v in variables) or t is theirs["root"]
                 or any(t.grad_fn is fn for fn in graph))
        header = f"{label}  {tuple(t.shape)}"
        if not drawn:                   # a constant: not part of the backward graph
            assert all(lines[0] != header for lines in nodes.values())
            continue
        text = node_with(nodes, header)
        assert text.startswith(squeeze(header) + printed(t))
        grad = t.grad if t.is_leaf or t.retains_grad else None
        assert ("grad" + printed(grad) in text) if grad is not None else ("grad" not in text)
        if t is theirs["root"] and theirs["seed"] is not None:
            assert "seedv" + printed(theirs["seed"]) in text


SECOND_ORDER = {
    "tanh": "x.tanh()", "square": "x ** 2", "sigmoid": "x.sigmoid()", "relu": "x.relu()",
    "softmax": "x.softmax(0)", "mm": "x[None] @ W", "sum_of_mean": "(x * W).mean(1).sum()",
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_a_second_order_graph_is_drawn_with_pytorchs_nodes(name, torch):
    """The gradient that autograd.grad(..., create_graph=True) returns is drawn as PyTorch
    records it: its derivative formulas' own nodes (TanhBackwardBackward0, MulBackward1...)."""
    def gradient(lib):
        x = lib.tensor([0.5, -1.5], requires_grad=True)
        W = lib.tensor([[1.0, 2.0], [-0.5, 0.3]], requires_grad=True)
        y = eval(SECOND_ORDER[name], {"x": x, "W": W})
        (g,) = lib.autograd.grad(y, x, lib.ones_like(y, requires_grad=True), create_graph=True)
        return g
    g, theirs = gradient(autograd_lab), gradient(torch)
    nodes, _ = svg(viz.draw(g, names={g: "g"}))
    assert op_names(nodes) == Counter(type(fn).__name__ for fn in torch_nodes(theirs))


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_saved_tensors_are_those_pytorch_saves(name, torch):
    ours, theirs = run_example(name, autograd_lab, False), run_example(name, torch, False)
    nodes, edges = svg(viz.draw(ours["root"], names=ours["names"], show_saved=True))
    drawn = Counter((OP.match(nodes[tail][0])[1], nodes[head][0].split()[1])
                    for tail, head, _, _ in edges if nodes[head][0].startswith("saved "))
    expected = Counter((type(fn).__name__, attr[len("_saved_"):])
                       for fn in torch_nodes(theirs["root"]) for attr in dir(fn)
                       if attr.startswith("_saved_")
                       and isinstance(getattr(fn, attr), torch.Tensor))
    assert drawn == expected


def test_saved_tensor_of_a_leaf_is_its_own_node_linked_to_the_leaf():
    x = autograd_lab.tensor([1.0, 2.0], requires_grad=True)
    nodes, edges = svg(viz.draw(x * x, names={x: "x"}, show_saved=True))
    leaf = next(i for i, lines in nodes.items() if lines[0] == "x  (2,)")
    saved = [i for i, lines in nodes.items() if lines[0].startswith("saved ")]
    assert len(saved) == 2 and leaf not in saved
    assert sorted(tail for tail, head, label, _ in edges if head == leaf and label == ["is"]) \
        == sorted(saved)


def test_saved_tensors_show_freed_after_backward_without_retain_graph():
    env = run_example("two_leaves", autograd_lab, backward=False)
    y, w = env["root"], env["seed"]
    y.backward(w, retain_graph=True)
    kept, _ = svg(viz.draw(y, names=env["names"], show_saved=True))
    assert sorted(ls[0] for ls in kept.values() if ls[0].startswith("saved ")) == \
        ["saved self = x  (2,)", "saved self = z  (2,)"]
    y.backward(w)                       # this one frees them
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _ = y.grad_fn.next_functions[0][0]._saved_self
    freed, _ = svg(viz.draw(y, names=env["names"], show_saved=True))
    assert [ls for ls in freed.values() if ls[0].startswith("saved ")] == \
        [["saved self", "freed"]] * 2


def test_direction_forward_turns_the_arrows_and_reads_from_the_leaves():
    x = autograd_lab.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).sum()
    height = {}
    for direction in ("backward", "forward"):
        graph = viz.draw(y, names={x: "x", y: "y"}, direction=direction)
        root = ET.fromstring(graph.pipe(format="svg"))
        ys = {t.text.replace("\xa0", " "): float(t.get("y")) for t in root.iter(SVG + "text")}
        height[direction] = ys["x  (2,)"] - ys["y  ()"]    # SVG y grows downwards
    assert height["backward"] > 0 > height["forward"]
    assert "dir=back" in viz.draw(y, direction="forward").source
    with pytest.raises(ValueError, match="'backward' or 'forward'"):
        viz.draw(y, direction="up")


def test_names_from_the_dict_the_tensor_or_the_order_found():
    a = autograd_lab.tensor([1.0, 2.0], requires_grad=True)
    b = autograd_lab.tensor([1.0, 2.0], requires_grad=True)    # equal values, another tensor
    c = autograd_lab.tensor([3.0, 4.0], requires_grad=True)
    b.name = "bias"
    nodes, _ = svg(viz.draw(a * b + c, names={a: "a"}))
    headers = {lines[0] for lines in nodes.values()}
    assert {"a  (2,)", "bias  (2,)", "t0  (2,)", "t1  (2,)"} <= headers     # t0 is the root


def test_several_roots_each_with_its_seed_and_a_constant_root():
    x = autograd_lab.tensor([1.0, 2.0], requires_grad=True)
    p, q, c = x * 2, x ** 2, autograd_lab.tensor([5.0])
    v = autograd_lab.tensor([1.0, 0.5])
    nodes, _ = svg(viz.draw(p, q, c, names={x: "x", p: "p", q: "q", c: "c"},
                            gradient=[v, None, None]))
    assert "seedv" + printed(v) in node_with(nodes, "p  (2,)")
    assert "seed" not in node_with(nodes, "q  (2,)") + node_with(nodes, "c  (1,)")
    assert op_names(nodes) == Counter(["MulBackward0", "PowBackward0", "AccumulateGrad"])


def test_big_tensors_are_summarized():
    x = autograd_lab.ones(100, 100, requires_grad=True)
    nodes, _ = svg(viz.draw(x.sum(), names={x: "x"}))
    lines = next(ls for ls in nodes.values() if ls[0] == "x  (100, 100)")
    assert len(lines) < 10 and any("..." in line for line in lines)


# -- in words -----------------------------------------------------------------------------
def said_about(description, name):
    """The description's line that tells ``name``: a node's (where it sends gradients), or a
    tensor's (its name, a colon, what it is)."""
    (line,) = [ln for ln in description.splitlines()
               if ln.startswith((f"{name} sends ", f"{name} adds ", f"{name}: "))]
    return line


def described(graph, nodes, edges):
    """Check that ``graph.description`` tells every box and arrow dot drew: each operation
    by its drawn name, each leaf and named tensor by its name and shape, each arrow as a
    node sending gradients to the next (an AccumulateGrad named by its leaf)."""
    text = graph.description
    words = {}                  # DOT id -> how the description names the box
    for i, lines in nodes.items():
        head = lines[0]
        if OP.match(head) and head != "AccumulateGrad":
            words[i] = head
        elif not head.startswith("saved ") and OP.match(head) is None:
            name, shape = head.split("  ")
            words[i] = name
            assert f"shape {shape}" in said_about(text, name), (name, text)
    for tail, head, _, _ in edges:
        if nodes[tail][0] == "AccumulateGrad":      # AccumulateGrad -> its leaf
            leaf = words[head]
            words[tail] = f"AccumulateGrad of {leaf}"
            assert f"into {leaf}.grad" in said_about(text, words[tail])
    for tail, head, _, _ in edges:
        if OP.match(nodes[tail][0]) and OP.match(nodes[head][0]):
            line = said_about(text, words[tail])
            assert words[head] in line.split(" sends gradients to ", 1)[1], (line, text)
    return words


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_drawing_in_words_names_pytorchs_nodes_its_tensors_and_edges(name, torch):
    ours, theirs = run_example(name, autograd_lab), run_example(name, torch)
    graph = viz.draw(ours["root"], names=ours["names"], gradient=ours["seed"])
    nodes, edges = svg(graph)
    described(graph, nodes, edges)
    told = Counter(m[1] for m in re.finditer(r"\b(\w+Backward\d*|AccumulateGrad)( #\d+| of \w+)? "
                                             r"(sends|adds)", graph.description))
    assert told == Counter(type(fn).__name__ for fn in torch_nodes(theirs["root"]))
    root = said_about(graph.description, ours["names"][ours["root"]])
    assert root.startswith(f"{ours['names'][ours['root']]}: the root, shape "
                           f"{tuple(ours['root'].shape)}")
    assert f"made by {type(theirs['root'].grad_fn).__name__}" in root
    if ours["seed"] is not None:
        assert "seed v" in root


def test_in_words_what_was_saved_and_what_backward_freed():
    env = run_example("two_leaves", autograd_lab, backward=False)
    y, w = env["root"], env["seed"]
    kept = viz.draw(y, names=env["names"], show_saved=True).description
    assert "saved self = x (shape (2,))" in said_about(kept, "PowBackward0 #1")
    assert "exponent = 2" in said_about(kept, "PowBackward0 #1")
    y.backward(w)
    freed = viz.draw(y, names=env["names"], show_saved=True).description
    for node in ("PowBackward0 #1", "PowBackward0 #2"):
        assert "saved self, freed by backward" in said_about(freed, node)
    assert "saved" not in viz.draw(y, names=env["names"]).description     # not drawn


def test_a_trace_frame_in_words_says_which_node_runs_and_what_was_sent():
    env = run_example("two_leaves", autograd_lab, backward=False)
    trace = viz.trace_backward(env["root"], env["seed"], names=env["names"])
    for k, step in enumerate(trace.steps):
        frame = trace.frame(k)
        text = frame.description
        described(frame, *svg(frame))
        now = "AccumulateGrad of " + step.leaf if step.leaf else step.name
        assert frame.title.endswith(f"step {k} of backward (steps 0 to {len(trace) - 1}): "
                                    f"{now} runs")
        line = text.splitlines()[1]
        assert line.startswith(f"{now} runs now, receiving ")
        _, ran, waiting = line.split("; ")
        for other in trace.steps:
            label = "AccumulateGrad of " + other.leaf if other.leaf else other.name
            if other.index != k:
                assert label in (ran if other.index < k else waiting), (label, line)
    first = trace.frame(0).description
    assert "; no node has run before it; " in first
    # what the running node sends is drawn on its arrows already (in red), and told
    assert "(sent [1., 1.])" in said_about(first, "AddBackward0")
    assert "(sent" not in said_about(first, "PowBackward0 #1")     # it has not run yet
    assert "grad [4., 4.]" in said_about(trace.frame(-1).description, "x")


def test_what_jupyter_receives_a_described_svg_an_img_with_its_alt_and_the_words():
    x = autograd_lab.tensor([1.0, 2.0], requires_grad=True)
    graph = viz.draw((x * x).sum(), names={x: "x"}, show_saved=True)
    bundle = graph._repr_mimebundle_()
    assert set(bundle) == {"image/svg+xml", "text/html", "text/plain"}
    assert bundle["text/plain"] == graph.description
    root = ET.fromstring(bundle["image/svg+xml"])
    assert root.get("role") == "img"
    assert [child.tag for child in root][:2] == [SVG + "title", SVG + "desc"]
    assert root.find(SVG + "title").text == graph.title == "The backward graph of t0"
    assert root.find(SVG + "desc").text == graph.description
    assert root.find(SVG + "g").find(SVG + "title").text == graph.title     # not dot's "%3"
    box_titles = [g.find(SVG + "title").text for g in root.iter(SVG + "g")
                  if g.get("class") in ("node", "edge")]
    assert not [t for t in box_titles if re.search(r"\b[ns]\d+\b", t)], box_titles
    assert "MulBackward0 to AccumulateGrad of x" in box_titles
    assert "what MulBackward0 saved: self" in box_titles

    class Img(html.parser.HTMLParser):
        def handle_starttag(self, tag, attrs):
            self.tag, self.attrs = tag, dict(attrs)
    img = Img()
    img.feed(bundle["text/html"])
    assert img.tag == "img" and img.attrs["alt"] == graph.description
    head, data = img.attrs["src"].split(",", 1)
    assert head == "data:image/svg+xml;base64"
    assert base64.b64decode(data).decode() == bundle["image/svg+xml"]
    assert viz.draw((x * x).sum())._repr_mimebundle_(include={"text/plain"}) == {
        "text/plain": viz.draw((x * x).sum()).description}


def test_a_large_graph_in_words_stays_short():
    x = autograd_lab.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(500):
        y = y * 1.5
    text = viz.draw(y, names={x: "x"}).description
    assert len(text.splitlines()) < viz.MAX_WORDS_NODES + 10
    assert f"And {501 - viz.MAX_WORDS_NODES} more nodes, with the tensors x." in text
    assert len(text) < 8000


def test_a_figure_in_one_sentence():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    xs = [i / 10 for i in range(-20, 21)]
    fig = plt.figure()
    plt.plot(xs, [x ** 3 - 3 * x for x in xs], label="f(x) = x³ − 3x")
    plt.plot(xs, xs, "o", label="x.grad from autograd")
    plt.axhline(0)
    plt.xlabel("x")
    assert viz.describe_figure(fig) == (
        "A plot of f(x) = x³ − 3x (a line), x.grad from autograd (41 points) and a "
        "horizontal line at 0; x along x from −2.2 to 2.2 and y from −2.2 to 2.2.")
    plt.close(fig)
    fig = plt.figure()
    plt.semilogy([1.0, 0.1, 0.01], "o-", label="loss")
    plt.title("losses")
    said = viz.describe_figure(fig)
    assert said.startswith("A plot titled “losses” of loss (a line through 3 points); ")
    assert "y on a log scale" in said
    plt.close(fig)
    fig = plt.figure()
    ticks = np.linspace(-1, 1, 5)
    plt.contourf(ticks, ticks, np.outer(ticks, ticks), levels=4)
    plt.contour(ticks, ticks, np.outer(ticks, ticks), levels=[0])
    plt.scatter([0.5, -0.5], [0.5, 0.5], c=[0, 1])
    said = viz.describe_figure(fig)
    assert "filled contours (" in said and "contour lines at 0" in said
    assert "2 scattered points, coloured by value" in said
    plt.close(fig)


# -- tracing backward --------------------------------------------------------------------
def random_graph(seed):
    """Leaves of shapes (), (3,), (2, 3) and a (3, 3) matrix W, mixed by random operations:
    fan-out (a * a, a + a), broadcasting between the shapes, matmul with W, tanh."""
    rng = np.random.default_rng(seed)
    leaves = [autograd_lab.tensor(rng.uniform(-1, 1, s).astype(np.float32), requires_grad=True)
              for s in [(), (3,), (2, 3), (3, 3)]]
    W = leaves[-1]
    ops = [lambda a, b: a * b, lambda a, b: a + b, lambda a, b: a * a, lambda a, b: a + a,
           lambda a, b: a @ W if a.ndim else a * W.sum(), lambda a, b: (a - b).tanh()]
    pool = leaves[:-1]
    for _ in range(rng.integers(2, 9)):
        a, b = (pool[i] for i in rng.integers(len(pool), size=2))
        pool.append(ops[rng.integers(len(ops))](a, b))
    return leaves, sum(t.sum() for t in pool) + W.sum()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_trace_adds_up_to_what_backward_accumulates(seed):
    leaves, loss = random_graph(seed)
    names = {t: f"leaf{i}" for i, t in enumerate(leaves)}
    trace = viz.trace_backward(loss, names=names)
    plain, plain_loss = random_graph(seed)
    plain_loss.backward()
    for t, twin in zip(leaves, plain):
        added = [s.accumulated for s in trace.steps if s.leaf == names[t]]
        assert len(added) == 1          # fan-in is summed before AccumulateGrad runs
        np.testing.assert_array_equal(sum(added), twin.grad._data)
        np.testing.assert_array_equal(t.grad._data, twin.grad._data)
    assert [s.index for s in trace.steps] == list(range(len(trace)))


def test_trace_is_a_real_backward():
    x = autograd_lab.tensor([1.0, 2.0], requires_grad=True)
    y = (x ** 2).sum()
    viz.trace_backward(y)
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()
    z = (x * 3).sum()
    viz.trace_backward(z, retain_graph=True)
    before = x.grad._data.copy()
    again = viz.trace_backward(z, names={x: "x"})           # accumulates on top
    step = again.steps[-1]
    assert (step.leaf, step.accumulated.tolist()) == ("x", [3, 3])
    np.testing.assert_array_equal(step.grad, before + 3)
    np.testing.assert_array_equal(step.grad, x.grad._data)
    assert f"x.grad += [3., 3.], now {repr(x.grad)[len('tensor('):-1]}" in again.table()


@pytest.mark.parametrize("expr", ["x * x", "x + x"])
def test_fan_out_shows_both_contributions_and_their_sum(expr):
    x = autograd_lab.tensor([1.0, 2.0], requires_grad=True)
    y = eval(expr)
    trace = viz.trace_backward(y, gradient=autograd_lab.tensor([1.0, 1.0]), names={x: "x"})
    op, acc = trace.steps
    (to1, g1), (to2, g2) = op.grads_out
    assert (to1, to2) == ("x", "x") and acc.leaf == "x"
    np.testing.assert_array_equal(g1 + g2, acc.grad_in)
    np.testing.assert_array_equal(acc.grad, x.grad._data)

    nodes, edges = svg(trace.frame(1))
    c1, c2, total = (printed(autograd_lab.tensor(g)) for g in (g1, g2, acc.grad_in))
    assert sorted(squeeze(" ".join(label)) for _, _, label, _ in edges if label) == \
        sorted([c1, c2])
    assert node_with(nodes, "AccumulateGrad").endswith(f"gradin{c1}+{c2}={total}")
    assert f"{c1} + {c2} = {total}".replace(" ", "") in squeeze(trace.table())


def test_frame_highlights_the_running_node_and_shows_grads_so_far():
    env = run_example("cube_of_square", autograd_lab, backward=False)
    trace = viz.trace_backward(env["root"], env["seed"], names=env["names"])
    assert [s.name for s in trace.steps] == ["PowBackward0 #1", "PowBackward0 #2",
                                            "AccumulateGrad"]
    for k, step in enumerate(trace.steps):
        nodes, edges = svg(trace.frame(k))
        red = [tail for tail, _, _, colour in edges if colour == "#e03131"]
        assert {nodes[t][0] for t in red} == ({step.name} if step.grads_out else set())
        x_node = node_with(nodes, "x  (2,)")
        assert ("grad" in x_node) == (k == 2)      # x.grad appears once AccumulateGrad ran
        assert ("grad" in node_with(nodes, "y  (2,)")) == (k >= 1)      # retain_grad()
    assert trace.frame(-1).source == trace.frame(2).source
    assert "<table>" in trace._repr_html_() and "PowBackward0 #2" in trace.table()


def test_show_steps_with_a_slider_or_falls_back_to_the_table(monkeypatch, capsys):
    x = autograd_lab.tensor([1.0, 2.0], requires_grad=True)
    trace = viz.trace_backward((x * x).sum())
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setenv("JPY_SESSION_NAME", "/course/lesson.ipynb")     # as Jupyter Server's
    monkeypatch.setenv("JPY_PARENT_PID", str(os.getppid()))             # kernel, whose server
    trace.show()                                                        # has no session
    assert "VBox" in capsys.readouterr().out
    monkeypatch.setitem(sys.modules, "ipywidgets", None)    # "import ipywidgets" now fails
    trace.show()
    assert "HTML" in capsys.readouterr().out


@pytest.mark.parametrize("env", [{}, {"NBGRADER_EXECUTION": "autograde"},
                                 {"JPY_SESSION_NAME": "x.ipynb", "JPY_PARENT_PID": "runner"}],
                         ids=["runner", "nbgrader", "runner_started_in_a_notebook"])
def test_no_front_end_no_slider(env, monkeypatch, capsys):
    """nbclient, nbconvert, papermill and nbval start a kernel without JPY_SESSION_NAME (or
    with one inherited from the kernel they run in, which the runner itself has): nothing
    would ever answer a widget there, so the table is shown."""
    for name in ("JPY_SESSION_NAME", "JPY_PARENT_PID", "NBGRADER_EXECUTION"):
        monkeypatch.delenv(name, raising=False)
    # "runner": a process started with the variable, as a runner inside a notebook is
    runner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                              env=dict(os.environ, JPY_SESSION_NAME="x.ipynb"))
    try:
        # until the runner has exec'd, /proc shows the environment it was forked with (this
        # process's): wait for its own, as a runner's kernel would find it
        deadline = time.monotonic() + 30
        while b"JPY_SESSION_NAME=" not in Path(f"/proc/{runner.pid}/environ").read_bytes():
            assert time.monotonic() < deadline, "the runner never started"
            time.sleep(0.01)
        for name, value in env.items():
            monkeypatch.setenv(name, str(runner.pid) if value == "runner" else value)
        assert not viz.front_end()
        x = autograd_lab.tensor([1.0, 2.0], requires_grad=True)
        viz.trace_backward((x * x).sum()).show()
        out = capsys.readouterr().out
        assert "HTML" in out and "VBox" not in out
    finally:
        runner.kill()
        runner.wait()


# -- the same DOT every run, and no dot at all ---------------------------------------------
DETERMINISM = """
import autograd_lab as torch
from autograd_lab import viz
x = torch.tensor([1.0, 2.0], requires_grad=True)
W = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
y = x * x + (x @ W).tanh()
y.retain_grad()
loss = y.sum()
print(viz.draw(loss, names={x: "x", W: "W"}, show_saved=True).source)
trace = viz.trace_backward(loss)
print(trace.table())
for k in range(len(trace)):
    print(trace.frame(k).source)
print(viz.draw(loss, show_saved=True, direction="forward").source)
"""


def fresh_python(code, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), **env)).stdout


def test_dot_source_is_identical_in_fresh_processes():
    first, second = fresh_python(DETERMINISM), fresh_python(DETERMINISM)
    assert first == second
    assert "MulBackward0" in first and "0x" not in first


def test_importing_autograd_lab_does_not_import_graphviz():
    out = fresh_python("import sys, autograd_lab\n"
                       "print('graphviz' in sys.modules, 'autograd_lab.viz' in sys.modules)\n"
                       "print(autograd_lab.viz.draw.__name__)")
    assert out.split() == ["False", "False", "draw"]


def test_without_dot_jupyter_shows_how_to_install_it_and_the_source(monkeypatch, tmp_path):
    x = autograd_lab.tensor([1.0, 2.0], requires_grad=True)
    graph = viz.draw((x * 2).sum(), names={x: "x"})
    monkeypatch.setenv("PATH", str(tmp_path))              # a PATH without dot
    with pytest.raises(graphviz.ExecutableNotFound):
        graph.pipe(format="svg")
    bundle = graph._repr_mimebundle_()
    for text in bundle["text/plain"], bundle["text/html"]:
        for hint in ("apt-get install graphviz", "brew install graphviz",
                     "conda install graphviz", "MulBackward0"):
            assert hint in text
    assert graph.source in bundle["text/plain"]
    assert graph.description in bundle["text/plain"]        # the graph in words, too
