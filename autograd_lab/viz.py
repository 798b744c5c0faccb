"""See the backward graph: draw it, and step through a backward pass.

``draw(z)`` draws the graph the forward pass recorded for ``z``; ``trace_backward(z)`` runs
``z.backward()``, records every step and replays it node by node (a slider in Jupyter).
Use it as ``from autograd_lab import viz``. Pictures need graphviz's ``dot`` program.

Reading a drawing:

* yellow boxes: backward nodes, with PyTorch's names (``MulBackward0``, ``AccumulateGrad``);
  nodes of the same kind are numbered (``PowBackward0 #1``, ``#2``).
* blue rounded boxes: leaf tensors (name, shape, values, ``.grad`` once there is one). Green:
  other tensors -- the root (with the seed ``v`` of ``backward(v)``), tensors that
  ``retain_grad()``, non-leaf tensors you named (dotted line to their grad_fn).
* dashed boxes (``show_saved=True``): what each node saved for backward, each saved tensor a
  box of its own, linked to the tensor it is when that is drawn too; grey once backward
  freed them (it does unless ``retain_graph=True``).
* a trace frame: the node running now in red, the nodes still waiting in grey, and on every
  edge a gradient has travelled along, that gradient.

Arrows: ``direction="backward"`` (the default) points them the way gradients flow, from the
root along ``next_functions`` to the leaves, the order backward visits the graph in.
``direction="forward"`` turns them around, the way the forward pass ran, leaves at the top.

In words: every drawing carries the same graph as text, for a screen reader and wherever a
picture cannot be shown (``Graph.description``: each node by PyTorch's name and where it sends
gradients, each tensor's name, shape and values, what is saved and what backward freed, and in
a trace frame which node runs). Jupyter gets it as the drawing's ``text/plain``, as the
``alt`` of the ``<img>`` it shows, and as the SVG's own ``<title>`` and ``<desc>``.

The same graph always gives the same DOT text: ids come from a counter in the order the walk
finds things, never from memory addresses.
"""
import base64
import functools
import html
import itertools
import os
import re
import sys
from collections import Counter, deque
from dataclasses import dataclass, field

import graphviz
import numpy as np

from ._core import tensor_str as _tensor_str
from ._core.backward import _roots, _seeds
from ._core.engine import run_backward
from ._core.graph import SECOND_BACKWARD, AccumulateGrad, grad_accumulator

__all__ = ["draw", "trace_backward", "Trace", "Step", "Graph", "describe_figure"]

MISSING_DOT = (
    "graphviz's `dot` program is not installed, so this graph cannot be drawn here.\n"
    "Install it, then run the cell again:\n"
    "    Debian/Ubuntu:  sudo apt-get install graphviz\n"
    "    macOS:          brew install graphviz\n"
    "    conda:          conda install graphviz\n"
    "Meanwhile, here is the graph in words and as DOT text:")

_VALUES = {"shape": "box", "fontname": "Courier"}     # monospace, so that columns line up
_STYLE = {
    "op": {"shape": "box", "style": "filled", "fillcolor": "#fff3bf", "fontname": "Helvetica"},
    "leaf": dict(_VALUES, style="rounded,filled", fillcolor="#d0ebff"),
    "tensor": dict(_VALUES, style="rounded,filled", fillcolor="#d3f9d8"),
    "saved": dict(_VALUES, style="rounded,dashed", color="#495057", fontcolor="#495057"),
    "freed": dict(_VALUES, style="rounded,dashed,filled", fillcolor="#f1f3f5", color="#adb5bd",
                  fontcolor="#868e96"),
}
_LINK = {"style": "dashed", "dir": "none", "color": "#868e96", "fontcolor": "#868e96"}
_NOW = {"color": "#e03131", "fontcolor": "#e03131", "penwidth": "2.5"}
_WAITING = {"color": "#adb5bd", "fontcolor": "#868e96", "fillcolor": "#f8f9fa"}


class Graph(graphviz.Digraph):
    """A ``graphviz.Digraph`` that Jupyter shows as SVG, with the graph in words beside it.

    ``description`` is the drawing as text (what a screen reader reads), ``title`` its one-line
    name; Jupyter gets the SVG (titled and described inside), an ``<img>`` of it whose ``alt``
    is the description (JupyterLab shows a bare SVG as an image with no text alternative), and
    the description as plain text. Where ``dot`` is missing it shows how to install graphviz,
    the description and the DOT source, instead of raising."""

    description = None      # set by draw() and Trace.frame()
    title = None
    _titles = {}            # DOT id -> what the SVG's <title> of that node says

    def _repr_image_svg_xml(self):
        svg = super()._repr_image_svg_xml()
        return svg if self.description is None else _described_svg(svg, self)

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        try:
            svg = self._repr_image_svg_xml()
        except graphviz.ExecutableNotFound:
            words = "" if self.description is None else f"In words:\n{self.description}\n\n"
            text = f"{MISSING_DOT}\n\n{words}{self.source}"
            return {"text/plain": text, "text/html": f"<pre>{html.escape(text)}</pre>"}
        bundle = {"image/svg+xml": svg}
        if self.description is not None:
            data = base64.b64encode(svg.encode()).decode()
            bundle["text/html"] = (f'<img src="data:image/svg+xml;base64,{data}" '
                                   f'alt="{html.escape(self.description)}">')
            bundle["text/plain"] = self.description
        return {k: v for k, v in bundle.items()
                if (include is None or k in include) and k not in (exclude or ())}


def draw(*roots, names=None, gradient=None, show_values=True, show_saved=False,
         direction="backward"):
    """The backward graph of ``roots`` (tensors), as a ``Graph`` (a ``graphviz.Digraph``).

    ``names``: ``{tensor: "name"}`` for the labels; a tensor's own ``.name`` attribute works
    too (``x.name = "x"``), and the others are called t0, t1, ... in the order found.
    ``gradient``: the seed ``v`` of ``root.backward(v)``, shown on the root (a sequence,
    one per root, when there are several roots).
    ``show_values``: values and ``.grad`` on the tensors, not just names and shapes.
    ``show_saved``: what each node saved for backward. ``direction``: see the module docstring.
    """
    seeds = gradient if len(roots) > 1 and gradient is not None else (gradient,)
    return _Graph(roots, names, seeds).render(show_values, show_saved, direction)


# ----------------------------------------------------------------------------------------
# what a drawing shows: nodes and tensors in the order the walk finds them
# ----------------------------------------------------------------------------------------
class _Graph:
    def __init__(self, roots, names=None, seeds=()):
        self.ids = {}       # id(object) -> DOT id, from a counter: the same every run
        self.keep = []      # every object with an id, kept alive so that no id() is reused
        self.names = {id(t): str(n) for t, n in (names or {}).items()}
        self.keep += list(names or ())
        self.nodes, self.tensors, self.roots = [], [], roots
        self.seeds = {id(t): _copy(v) for t, v in zip(roots, seeds) if v is not None}
        self.on = {}        # id(tensor) -> the node it hangs on (AccumulateGrad or grad_fn)
        self.unnamed = 0    # tensors named by nobody are t0, t1, ... in the order found
        queue = deque()
        for t in roots:
            start = t.grad_fn or (grad_accumulator(t) if t._rg else None)
            if type(start) is not AccumulateGrad:   # a leaf comes with its AccumulateGrad
                self._add_tensor(t, start)
            if start is not None and self._add_node(start):
                queue.append(start)
        while queue:                        # breadth first: root at the top, rank by rank
            for nxt in queue.popleft()._next:
                if nxt is not None and self._add_node(nxt):
                    queue.append(nxt)
        for node in self.nodes:
            retain = (node._extras or {}).get("tensor", {}).get("retain")
            if retain is not None and retain.tensor() is not None:
                self._add_tensor(retain.tensor(), node)
        for t in names or ():
            if id(t.grad_fn) in self.ids:   # a non-leaf the user named: show it, on its node
                self._add_tensor(t, t.grad_fn)
        self.titles = _titles(self.nodes)

    def _new_id(self, obj):
        if id(obj) in self.ids:
            return False
        self.ids[id(obj)] = f"n{len(self.ids)}"
        self.keep.append(obj)
        return True

    def _add_node(self, node):
        if not self._new_id(node):
            return False
        self.nodes.append(node)
        if type(node) is AccumulateGrad:
            self._add_tensor(node.variable, node)
        return True

    def _add_tensor(self, t, node):
        if self._new_id(t):
            self.tensors.append(t)
            self.on[id(t)] = node
            if id(t) not in self.names:
                given = getattr(t, "__dict__", {}).get("name")
                if given is None:
                    given, self.unnamed = f"t{self.unnamed}", self.unnamed + 1
                self.names[id(t)] = str(given)

    def drawn(self, t):
        """The drawn tensor that ``t`` is, or shares its data with (a saved output)."""
        if id(t) in self.ids:
            return self.ids[id(t)], "is"
        for u in self.tensors:
            if u._data is t._data:
                return self.ids[id(u)], "same data"
        return None, None

    def where(self, node):
        """Where a gradient goes, in words: the leaf's name for an AccumulateGrad."""
        if type(node) is AccumulateGrad and id(node.variable) in self.names:
            return self.names[id(node.variable)]
        return self.titles[id(node)]

    # -- DOT ------------------------------------------------------------------------------
    def render(self, show_values=True, show_saved=False, direction="backward", frame=None):
        if direction not in ("backward", "forward"):
            raise ValueError(f"direction must be 'backward' or 'forward', not {direction!r}")
        forward = direction == "forward"
        # Edges always run root -> leaves, so the layout is the same both ways; "forward"
        # draws them from the other end (dir=back) and reads from the bottom up (rankdir=BT).
        dot = Graph(graph_attr={"rankdir": "BT" if forward else "TB", "nodesep": "0.3",
                                "ranksep": "0.35"},
                    node_attr={"fontsize": "11"},
                    edge_attr=dict({"fontsize": "9", "fontname": "Courier"},
                                   **({"dir": "back"} if forward else {})))
        for t in self.tensors:
            self._draw_tensor(dot, t, show_values, frame)
        for node in self.nodes:
            self._draw_node(dot, node, show_saved, frame)
        saved_ids = itertools.count()       # saved boxes are s0, s1, ...
        saved_titles = {}
        for node in self.nodes if show_saved else ():
            self._draw_saved(dot, node, saved_ids, show_values, saved_titles)
        dot.title, dot.description, dot._titles = self.describe(show_values, show_saved,
                                                                forward, frame)
        dot._titles.update(saved_titles)
        return dot

    # -- in words -------------------------------------------------------------------------
    def label(self, node):
        """A node as the text alternative names it: an AccumulateGrad by its leaf."""
        if type(node) is AccumulateGrad and id(node.variable) in self.names:
            return f"AccumulateGrad of {self.names[id(node.variable)]}"
        return self.titles[id(node)]

    def _tensor_words(self, t, show_values, frame):
        words = [f"shape {tuple(t.shape)}"]
        if show_values:
            grad = _grad_at(t, frame)
            words.append(f"values {_line(t._data)}")
            if id(t) in self.seeds:
                words.append(f"seed v {_line(self.seeds[id(t)])}")
            if grad is not None:
                words.append(f"grad {_line(grad)}")
        return ", ".join(words)

    def describe(self, show_values=True, show_saved=False, forward=False, frame=None):
        """The drawing in words: ``(title, description, {DOT id: title of that box})``. Node
        by node in the order the drawing ranks them (root first), each with PyTorch's name,
        where it sends gradients (and, in a trace frame, what it sent), what it saved; each
        tensor with its name, shape and what the drawing shows of it. At most MAX_WORDS_NODES
        nodes are told one by one: a drawing of a thousand nodes is a picture of its size."""
        roots = [self.names[id(t)] for t in self.roots if id(t) in self.names]
        title = f"The backward graph of {_and(roots)}"
        if frame is not None:
            title += (f", at step {frame.index} of backward (steps 0 to {frame.count - 1}): "
                      f"{self.label(frame.now)} runs")
        ops = sum(type(n) is not AccumulateGrad for n in self.nodes)
        lines = [f"{title}. {len(self.nodes)} nodes ({ops} operations and "
                 f"{len(self.nodes) - ops} AccumulateGrad) and {len(self.tensors)} tensors; "
                 + ("the arrows point the way the forward pass ran, from the leaves up to the "
                    "root." if forward else
                    "the arrows point the way gradients flow, from the root down to the "
                    "leaves.")]
        if frame is not None:
            ran = [self.label(n) for n in self.nodes if id(n) in frame.done]
            waiting = [self.label(n) for n in self.nodes
                       if id(n) not in frame.done and n is not frame.now]
            lines.append(f"{self.label(frame.now)} runs now, receiving {frame.grad_in}; "
                         + _counted(ran, "has run", "have run", "no node has run before it")
                         + "; " + _counted(waiting, "is still waiting", "are still waiting",
                                           "no node is left waiting") + ".")
        titles = {}
        for t in self.tensors:
            titles[self.ids[id(t)]] = f"{self.names[id(t)]}, {self._tensor_words(t, False, None)}"
        for node in self.nodes:
            titles[self.ids[id(node)]] = self.label(node)
        for t in self.roots:
            node = self.on.get(id(t))
            if id(t) not in self.ids:
                continue
            what = "a leaf" if t.grad_fn is None else "the root"
            made = ("; it requires no gradient, so backward has nothing to go through"
                    if node is None else "" if t.grad_fn is None
                    else f"; made by {self.label(node)}")
            lines.append(_sentence(f"{self.names[id(t)]}: {what}, "
                                   f"{self._tensor_words(t, show_values, frame)}{made}"))
        hung = {}
        for t in self.tensors:
            if not any(t is r for r in self.roots):
                hung.setdefault(id(self.on[id(t)]), []).append(t)
        for count, node in enumerate(self.nodes):
            if count == MAX_WORDS_NODES:
                rest = [self.names[id(t)] for n in self.nodes[count:] for t in hung.get(id(n), ())]
                lines.append(f"And {len(self.nodes) - count} more nodes"
                             + (f", with the tensors {_and(rest[:20])}" if rest else "") + ".")
                break
            lines.append(self._node_words(node, show_saved, frame))
            for t in hung.get(id(node), ()):
                if t.grad_fn is None:
                    what = "a leaf"
                else:
                    what = f"made by {self.label(node)}"
                    if t.retains_grad:
                        what += ", it keeps its .grad (retain_grad)"
                lines.append(_sentence(f"{self.names[id(t)]}: {what}, "
                                       f"{self._tensor_words(t, show_values, frame)}"))
        return title, "\n".join(lines), titles

    def _node_words(self, node, show_saved, frame):
        name = self.label(node)
        if type(node) is AccumulateGrad:
            words = f"{name} adds the gradient it receives into {self.names[id(node.variable)]}.grad"
        else:
            targets = []
            for i, nxt in enumerate(node._next):
                if nxt is None:
                    continue
                sent = None if frame is None else frame.sent.get((id(node), i))
                targets.append(self.label(nxt) + ("" if sent is None
                                                  else f" (sent {_line(sent)})"))
            words = (f"{name} sends gradients to {_and(targets)}" if targets
                     else f"{name} sends no gradient further")
        if show_saved:
            kept = [f"{k} = {v!r}" for k, v in _plain_saved(node)]
            for key, value, state in _saved(node):
                if state == "freed":
                    kept.append(f"saved {key}, freed by backward")
                elif state is not None:
                    kept.append(f"saved {key}, {state} since")
                else:
                    also = f" = {self.names[id(value)]}" if id(value) in self.names else ""
                    kept.append(f"saved {key}{also} (shape {tuple(value.shape)})")
            if kept:
                words += "; it keeps " + _and(kept)
        return _sentence(words)

    def _draw_tensor(self, dot, t, show_values, frame):
        tid, node = self.ids[id(t)], self.on[id(t)]
        lines = [f"{self.names[id(t)]}  {tuple(t.shape)}"]
        if show_values:
            grad = _grad_at(t, frame)
            lines += _values(t._data).split("\n")
            if id(t) in self.seeds:
                lines += _labelled("seed v", self.seeds[id(t)])
            if grad is not None:
                lines += _labelled("grad", grad)
        kind = "leaf" if t.grad_fn is None else "tensor"
        dot.node(tid, _text(lines), **_STYLE[kind])
        if node is None:                                  # a root that needs no gradient
            return
        if type(node) is AccumulateGrad:
            dot.edge(self.ids[id(node)], tid)             # AccumulateGrad fills the leaf's .grad
        elif any(t is r for r in self.roots):
            dot.edge(tid, self.ids[id(node)])             # the seed enters the root's grad_fn
        else:
            dot.edge(tid, self.ids[id(node)], style="dotted", dir="none")   # "its grad_fn"

    def _draw_node(self, dot, node, show_saved, frame):
        nid = self.ids[id(node)]
        lines = [self.titles[id(node)]]
        if show_saved:
            lines += [f"{k} = {v!r}" for k, v in _plain_saved(node)]
        style = dict(_STYLE["op"])
        if frame is not None:
            if node is frame.now:
                lines.append(f"grad in {frame.grad_in}")
                style.update(_NOW, fontname="Helvetica-Bold")
            elif id(node) not in frame.done:
                style.update(_WAITING)
        dot.node(nid, _text(lines), **style)
        for i, nxt in enumerate(node._next):
            sent = None if frame is None else frame.sent.get((id(node), i))
            attrs = {} if sent is None else {"label": " " + _line(sent)}
            if sent is not None and node is frame.now:
                attrs.update(_NOW)
            if nxt is not None:
                dot.edge(nid, self.ids[id(nxt)], **attrs)

    def _draw_saved(self, dot, node, saved_ids, show_values, titles):
        for name, value, state in _saved(node):
            sid = f"s{next(saved_ids)}"
            title = f"saved {name}"
            titles[sid] = f"what {self.label(node)} saved: {name}" + (
                f", {state}" if state is not None else "")
            if state is not None:
                dot.node(sid, _text([title, state]), **_STYLE["freed"])
            else:
                if id(value) in self.names:
                    title += f" = {self.names[id(value)]}"
                lines = [f"{title}  {tuple(value.shape)}"]
                if show_values:
                    lines += _values(value._data).split("\n")
                dot.node(sid, _text(lines), **_STYLE["saved"])
                target, how = self.drawn(value)
                if target is not None:
                    dot.edge(sid, target, label=how, constraint="false", **_LINK)
            dot.edge(self.ids[id(node)], sid, **_LINK)


def _grad_at(t, frame):
    """``t.grad``'s values as drawn: as far as it has accumulated at a trace frame."""
    if frame is not None:
        return frame.grads.get(id(t))
    return t._grad._data if t._grad is not None else None


def _saved(node):
    """``[(name, tensor, state), ...]``: what ``node`` saved, read the way a PyTorch user reads
    it (``grad_fn._saved_self``; ``ctx.saved_tensors`` for a custom Function). Where reading
    raises, the tensor is None and state says why: "freed" by backward, or "changed in place".
    Slots that were never filled (``x * 2`` keeps nothing of x) are left out."""
    def state(error):
        return "freed" if str(error) == SECOND_BACKWARD else "changed in place"
    if hasattr(type(node), "saved_tensors"):
        names = [f"tensors[{i}]" for i in range(len(node.saved_names))]
        try:
            return [(n, v, None) for n, v in zip(names, node.saved_tensors) if v is not None]
        except RuntimeError as e:
            return [(n, None, state(e)) for n in names]
    out = []
    for name in node.saved_names:
        try:
            value = getattr(node, "_saved_" + name)
        except RuntimeError as e:
            out.append((name, None, state(e)))
        else:
            if value is not None:
                out.append((name, value, None))
    return out


def _titles(nodes):
    """PyTorch's name for each node; numbered (``PowBackward0 #2``) where a name repeats.
    An AccumulateGrad needs no number: the leaf drawn next to it says which one it is."""
    kinds = Counter(type(n).__name__ for n in nodes if type(n) is not AccumulateGrad)
    seen, titles = Counter(), {}
    for node in nodes:
        kind = type(node).__name__
        seen[kind] += 1
        titles[id(node)] = f"{kind} #{seen[kind]}" if kinds[kind] > 1 else kind
    return titles


def _plain_saved(node):
    """The numbers a node keeps for backward besides tensors (``_saved_exponent``...)."""
    slots = [s for cls in type(node).__mro__ for s in cls.__dict__.get("__slots__", ())
             if not s.startswith("_") and s != "variable"]
    return [(s, getattr(node, s)) for s in slots if hasattr(node, s)]


def _copy(x):
    if isinstance(x, list):     # a custom Function's outputs' gradients (see function.py)
        return [_copy(g) for g in x]
    return None if x is None else np.array(x._data if hasattr(x, "_data") else x)


def _values(a, indent=0):
    """``a`` as ``print(tensor)`` shows it, summarized sooner: a label has room for a few
    numbers, not for a thousand."""
    if isinstance(a, list):     # one gradient per output of a custom Function
        return " | ".join("None" if g is None else _values(g, indent) for g in a)
    s = _tensor_str
    before = s.THRESHOLD, s.EDGEITEMS, s.LINEWIDTH
    s.THRESHOLD, s.EDGEITEMS, s.LINEWIDTH = 16, 2, 48
    try:
        return s.array_str(np.asarray(a), indent)
    finally:
        s.THRESHOLD, s.EDGEITEMS, s.LINEWIDTH = before


def _line(a):
    """``_values`` on one line, for edge labels and tables."""
    return re.sub(r",\n\s*", ", ", _values(a))


def _labelled(label, a):
    """``grad [1., 2.]`` as label lines, continuation lines lined up under the values."""
    return f"{label} {_values(a, len(label) + 1)}".split("\n")


def _text(lines):
    # \l ends a left-justified line in a DOT label; backslashes of our own text are escaped
    return "".join(line.replace("\\", "\\\\") + "\\l" for line in lines)


#: how many nodes a drawing's description tells one by one
MAX_WORDS_NODES = 60


def _and(items):
    """``a``, ``a and b``, ``a, b and c``."""
    items = list(items)
    return " and ".join(items) if len(items) < 3 else ", ".join(items[:-1]) + " and " + items[-1]


def _counted(items, one, many, none):
    """``AddBackward0 has run``; ``2 nodes have run: A and B``; ``none`` for no item."""
    if not items:
        return none
    if len(items) == 1:
        return f"{items[0]} {one}"
    return f"{len(items)} nodes {many}: {_and(items)}"


def _sentence(text):
    """``text`` ended by a full stop, unless it ends with one already (``values 3.``)."""
    return text if text.endswith(".") else text + "."


_SVG_OPEN = re.compile(r"<svg\b([^>]*)>")
_SVG_TITLE = re.compile(r"<title>([ns]\d+)(?:&#45;&gt;([ns]\d+))?</title>")
# (the whole graph's group: dot titles an unnamed graph "%3", or "%0", by its version)
_GRAPH_TITLE = re.compile(r'(<g id="graph0"[^>]*>\s*<title>)[^<]*(</title>)')


def _described_svg(svg, graph):
    """graphviz's SVG, its title and description its own (``<title>`` and ``<desc>``, first
    in the ``<svg>``, which is an image), and each box and arrow titled in words where dot
    titles them with their DOT ids (``n0``, ``n0->n1``)."""
    esc = functools.partial(html.escape, quote=False)
    names = graph._titles

    def titled(m):
        tail, head = m[1], m[2]
        if head is None:
            return f"<title>{esc(names.get(tail, tail))}</title>"
        return f"<title>{esc(names.get(tail, tail))} to {esc(names.get(head, head))}</title>"
    svg = _SVG_TITLE.sub(titled, svg)
    svg = _GRAPH_TITLE.sub(lambda m: f"{m[1]}{esc(graph.title)}{m[2]}", svg, count=1)
    return _SVG_OPEN.sub(lambda m: f'<svg{m[1]} role="img">\n<title>{esc(graph.title)}</title>'
                                   f"\n<desc>{esc(graph.description)}</desc>", svg, count=1)


# ----------------------------------------------------------------------------------------
# stepping through backward
# ----------------------------------------------------------------------------------------
@dataclass
class Step:
    """One node run by backward, in the order the engine ran it."""
    index: int
    name: str                   # the node: "MulBackward0", "AccumulateGrad", ...
    grad_in: np.ndarray         # the gradient it received (fan-in already summed)
    grads_out: tuple            # (where to, gradient) per next_functions edge; None: no grad
    leaf: str = None            # AccumulateGrad: the leaf whose .grad it updated,
    accumulated: np.ndarray = None  # what it added,
    grad: np.ndarray = None     # and that .grad afterwards
    node: object = field(default=None, repr=False)


@dataclass
class _Frame:
    now: object                 # the node running
    grad_in: str                # what it received, as text (a sum where gradients met)
    done: set                   # ids of the nodes that ran before it
    sent: dict                  # (id(node), edge index) -> the gradient sent along that edge
    grads: dict                 # id(tensor) -> its .grad at this point
    index: int = 0              # which step this is (from 0), of
    count: int = 1              # how many the pass took


def front_end():
    """Whether a front end that runs widgets is attached to this kernel: a slider shown
    where none is would be waited on, a notebook run top to bottom by nbclient, nbconvert,
    papermill, nbval or nbgrader stalling on it. Jupyter Server (JupyterLab, Notebook) starts
    a notebook's kernel with JPY_SESSION_NAME set -- which the process that started the
    kernel has not, unless it is a runner started from inside such a kernel, whose kernel
    inherits it; VS Code names the notebook in ``__vsc_ipynb_file__``; Colab is
    ``google.colab``. nbgrader (autograde, validate) says so in NBGRADER_EXECUTION."""
    env = os.environ
    if env.get("NBGRADER_EXECUTION"):
        return False
    if "google.colab" in sys.modules:
        return True
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    if shell is not None and "__vsc_ipynb_file__" in shell.user_ns:
        return True
    if not env.get("JPY_SESSION_NAME"):
        return False
    try:        # (Linux: the environment of the process that started this kernel)
        with open(f"/proc/{int(env['JPY_PARENT_PID'])}/environ", "rb") as f:
            parent = f.read().split(b"\0")
    except (KeyError, ValueError, OSError):
        return True
    return not any(v.startswith(b"JPY_SESSION_NAME=") for v in parent)


def trace_backward(root, gradient=None, retain_graph=False, names=None):
    """Run ``root.backward(gradient, retain_graph)`` -- for real: ``.grad`` ends up exactly as
    after ``backward()`` -- and return a ``Trace`` of every step it took."""
    (seed,) = _seeds((root,), (gradient,))            # PyTorch's checks of the gradient
    graph = _Graph([root], names, [seed])
    before = {id(t): _copy(t._grad) for t in graph.tensors}
    steps = []

    def record(node, grad_in, grads_out):
        # copies: backward may go on to add into these very arrays (a leaf's .grad)
        out = tuple((None if n is None else graph.where(n), _copy(g))
                    for n, g in zip(node._next, grads_out))
        step = Step(len(steps), graph.titles[id(node)], _copy(grad_in), out, node=node)
        if type(node) is AccumulateGrad:
            leaf = node.variable
            step.leaf, step.accumulated = graph.names[id(leaf)], step.grad_in
            step.grad = _copy(leaf._grad)
        steps.append(step)

    run_backward(_roots((root,)), [seed._data], retain_graph, on_step=record)
    return Trace(graph, steps, before)


class Trace:
    """What ``trace_backward`` recorded: ``.steps`` in execution order, ``.table()``,
    ``.frame(k)`` (the graph at step k); in Jupyter, a slider through the frames."""

    def __init__(self, graph, steps, grads_before):
        self.steps, self._graph, self._before = steps, graph, grads_before
        # every gradient that reached each node: more than one where the graph fans out
        self._into = {id(graph.on[i]): [g] for i, g in graph.seeds.items()}
        for s in steps:
            for nxt, (_, g) in zip(s.node._next, s.grads_out):
                if nxt is not None and g is not None:
                    self._into.setdefault(id(nxt), []).append(g)

    def __len__(self):
        return len(self.steps)

    def _grad_in(self, step):
        """``a + b = s`` where contributions met at this node, else just the gradient."""
        parts = self._into.get(id(step.node), [])
        total = _line(step.grad_in)
        if len(parts) < 2:
            return total
        return " + ".join(_line(p) for p in parts) + " = " + total

    def _rows(self):
        for s in self.steps:
            if s.leaf is not None:
                out = f"{s.leaf}.grad += {_line(s.accumulated)}"
                if not np.array_equal(s.accumulated, s.grad):   # it had a .grad already
                    out += f", now {_line(s.grad)}"
            else:
                out = "   ".join(f"-> {to}: {_line(g)}"
                                 for to, g in s.grads_out if to is not None and g is not None)
            yield str(s.index), s.name, self._grad_in(s), out

    def table(self):
        """The steps as a text table: node, gradient in, gradients out (or the leaf's .grad)."""
        rows = [("step", "node", "grad in", "grads out")] + list(self._rows())
        widths = [max(len(r[c]) for r in rows) for c in range(3)]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[3]
                         for r in rows).rstrip()

    def _repr_html_(self):
        head = "".join(f"<th>{h}</th>" for h in ("step", "node", "grad in", "grads out"))
        body = "".join("<tr>" + "".join(f"<td><code>{html.escape(c)}</code></td>" for c in r)
                       + "</tr>" for r in self._rows())
        return f"<table><tr>{head}</tr>{body}</table>"

    def frame(self, k, show_values=True, direction="backward"):
        """The graph as step ``k`` runs: that node in red with the gradient it received, the
        gradients sent so far on the edges, each ``.grad`` as far as it has accumulated."""
        k = range(len(self.steps))[k]       # negative k counts from the end, as in a list
        ran = self.steps[:k + 1]
        step_of = {id(s.node): s for s in ran}
        grads = dict(self._before)
        for t in self._graph.tensors:
            s = step_of.get(id(self._graph.on[id(t)]))
            if s is not None and s.leaf is not None:
                grads[id(t)] = s.grad
            elif s is not None and t.retains_grad:      # retain_grad() keeps grad_fn's input
                before = grads[id(t)]
                grads[id(t)] = s.grad_in if before is None else before + s.grad_in
        sent = {(id(s.node), i): g for s in ran for i, (_, g) in enumerate(s.grads_out)
                if g is not None}
        now = self.steps[k]
        state = _Frame(now.node, self._grad_in(now), {id(s.node) for s in ran[:-1]}, sent,
                       grads, k, len(self.steps))
        return self._graph.render(show_values, False, direction, frame=state)

    def show(self):
        """A slider through the frames, where a front end can move it (needs ipywidgets);
        otherwise the table of every step at once."""
        from IPython.display import HTML, display
        if not front_end():
            return display(HTML(self._repr_html_()))
        try:
            import ipywidgets
        except ImportError:
            return display(HTML(self._repr_html_()))
        rows = list(self._rows())
        slider = ipywidgets.IntSlider(min=0, max=max(len(rows) - 1, 0), description="step")

        def show_step(step):
            display(self.frame(step))
            print(" | ".join(rows[step]))
        out = ipywidgets.interactive_output(show_step, {"step": slider})
        display(ipywidgets.VBox([slider, out]))

    _ipython_display_ = show


# ----------------------------------------------------------------------------------------
# plots in words
# ----------------------------------------------------------------------------------------
def _number(v):
    """A number as a sentence gives it: three digits, a minus sign a screen reader says."""
    try:
        return f"{float(v):.3g}".replace("-", "\u2212")
    except (TypeError, ValueError):       # a date, a category
        return str(v)


def describe_figure(fig):
    """A sentence of what a matplotlib figure shows, read off the figure itself: per plot its
    title, what is drawn (each labelled line or set of points by its legend label, contours,
    scattered points, images), the axes' labels, scales and ranges. In Jupyter, once ``viz``
    is imported, every figure shown carries this sentence as the ``alt`` of its picture."""
    plots = []
    for ax in fig.axes:
        drawn, unnamed = [], 0
        for line in ax.get_lines():
            label = str(line.get_label())
            points = line.get_linestyle() in ("None", "", " ")
            xs, ys = list(line.get_xdata()), list(line.get_ydata())
            if label.startswith("_"):
                if line.get_transform() == ax.get_yaxis_transform() and len(set(ys)) == 1:
                    drawn.append(f"a horizontal line at {_number(ys[0])}")
                elif line.get_transform() == ax.get_xaxis_transform() and len(set(xs)) == 1:
                    drawn.append(f"a vertical line at {_number(xs[0])}")
                else:
                    unnamed += 1
                continue
            kind = f"{len(xs)} points" if points else (
                "a line" if line.get_marker() in (None, "None", "", " ") else
                f"a line through {len(xs)} points")
            drawn.append(f"{label} ({kind})")
        for col in ax.collections:
            kind = type(col).__name__
            if hasattr(col, "levels") and hasattr(col, "filled"):
                levels = np.asarray(col.levels)
                drawn.append(f"filled contours ({len(levels)} levels, from "
                             f"{_number(levels.min())} to {_number(levels.max())})"
                             if col.filled else "contour lines at " +
                             _and(_number(v) for v in levels[:5]))
            elif kind == "PathCollection":
                label = str(col.get_label())
                coloured = col.get_array() is not None
                what = f"{len(col.get_offsets())} scattered points" + (
                    ", coloured by value" if coloured else "")
                drawn.append(what if label.startswith("_") else f"{label} ({what})")
            else:
                unnamed += 1
        drawn += ["an image" for _ in ax.get_images()]
        if unnamed:
            drawn.append(f"{unnamed} more unlabelled {'shape' if unnamed == 1 else 'shapes'}")
        words = "a plot" if not ax.get_title() else f"a plot titled \u201c{ax.get_title()}\u201d"
        words += " of " + _and(drawn) if drawn else ", empty"
        axes = []
        for name, label, scale, (low, high) in (
                ("x", ax.get_xlabel(), ax.get_xscale(), ax.get_xlim()),
                ("y", ax.get_ylabel(), ax.get_yscale(), ax.get_ylim())):
            what = f"{label} along {name}" if label else name
            if scale != "linear":
                what += f" on a {scale} scale"
            axes.append(f"{what} from {_number(low)} to {_number(high)}")
        plots.append(f"{words}; {' and '.join(axes)}")
    if not plots:
        return "An empty figure."
    title = getattr(fig, "_suptitle", None)
    head = f"A figure titled \u201c{title.get_text()}\u201d: " if title is not None else ""
    text = "; ".join(plots) if len(plots) == 1 else "; ".join(
        f"({i + 1}) {p}" for i, p in enumerate(plots))
    text = head + text
    return text[0].upper() + text[1:] + "."


def _figure_html(fig):
    """The figure as Jupyter's inline backend draws it, as an ``<img>`` whose ``alt`` is
    describe_figure's sentence (JupyterLab shows a bare PNG with none): ``{"text/html": ...}``
    beside the PNG and the text matplotlib gives."""
    from IPython.core.pylabtools import print_figure
    data = print_figure(fig, "png", bbox_inches="tight", base64=True)
    if not data:        # (an empty figure draws nothing)
        return {}
    try:
        said = describe_figure(fig)
    except Exception:       # a learner's plot of a kind not read here still shows, unnamed
        said = f"A figure of {len(fig.axes)} plot(s)."
    alt = html.escape(said)
    return {"text/html": f'<img src="data:image/png;base64,{data}" alt="{alt}">'}


def _describe_figures():
    """In an IPython kernel: show every matplotlib figure with its sentence (_figure_html),
    without importing matplotlib (the formatter waits for a Figure to appear). A mime-bundle
    formatter: matplotlib, when pyplot starts its inline backend, takes Figure out of every
    per-type formatter to put its own PNG in."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    if shell is not None and hasattr(shell, "display_formatter"):
        shell.display_formatter.mimebundle_formatter.for_type_by_name(
            "matplotlib.figure", "Figure", _figure_html)


_describe_figures()
