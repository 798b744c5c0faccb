"""Run one snippet under PyTorch and under autograd_lab, and capture what each prints.

``run(code, lib)`` executes ``code`` with ``torch`` bound to ``lib`` and returns everything it
printed, the exception it ended with (class name and text) and the warnings it raised. Memory
addresses are blanked, since they differ from run to run anyway.

A snippet's own import lines (``import torch.nn.functional as F``, ``from torch.autograd
import gradcheck``) import from ``lib`` too, so that tutorial code runs as it is written.

``run(code, lib, sites=True)`` also says where each warning points: ``"<snippet>:<line>"`` for
the snippet's own line, ``"library"`` for a file inside ``lib`` itself.

``run_fresh(code, lib_name)`` does the same in a new interpreter. PyTorch shows some warnings
only once per process (``float()`` of a tensor that requires grad, ``backward(create_graph=True)``),
so a snippet about those must start from a process that has not warned yet.
"""
import builtins
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import warnings

ADDRESS = re.compile(r"0x[0-9a-f]+")
SNIPPET = "<snippet>"


def run(code, lib, sites=False):
    out = io.StringIO()
    error = None
    env = {"torch": lib, "__name__": "__snippet__",
           "__builtins__": dict(vars(builtins), __import__=_importer(lib.__name__))}
    if lib.__name__ == "torch":
        from torch.autograd import Variable
    else:
        from autograd_lab.autograd import Variable
    env["Variable"] = Variable
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        try:
            exec(compile(code, SNIPPET, "exec"), env)
        except Exception as e:      # the snippet's own error is part of what we compare
            error = (type(e).__name__, _clean(str(e)))
    # (a ResourceWarning is the garbage collector finalizing an object an earlier test left
    # open, a database connection say, while the snippet happens to run: neither library
    # raises one)
    warned = [(w.category.__name__, _clean(str(w.message))) + ((_site(w, lib),) if sites else ())
              for w in caught if not issubclass(w.category, ResourceWarning)]
    return _clean(out.getvalue()), error, warned


def run_fresh(code, lib_name, sites=False):
    """``run`` in a new Python process that imports ``lib_name`` itself."""
    script = ("import importlib, json, sys, dual\n"
              "lib = importlib.import_module(sys.argv[1])\n"
              "print(json.dumps(dual.run(sys.stdin.read(), lib, sites=sys.argv[2] == '1')))")
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [here, os.path.dirname(os.path.dirname(here)), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", script, lib_name, "1" if sites else "0"],
                          input=code, capture_output=True, text=True, env=env)
    if proc.returncode:
        raise RuntimeError(f"the fresh {lib_name} process failed:\n{proc.stderr}")
    out, error, warned = json.loads(proc.stdout)
    return out, error and tuple(error), [tuple(w) for w in warned]


def _importer(lib_name):
    """``__import__`` for a snippet: the module ``torch`` and its submodules are ``lib_name``'s."""
    def import_(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and (name == "torch" or name.startswith("torch.")):
            name = lib_name + name[len("torch"):]
        return builtins.__import__(name, globals, locals, fromlist, level)
    return import_


def _site(w, lib):
    if w.filename == SNIPPET:
        return f"{SNIPPET}:{w.lineno}"
    lib_dir = os.path.dirname(os.path.abspath(lib.__file__))
    if os.path.abspath(w.filename).startswith(lib_dir + os.sep):
        return "library"
    return w.filename       # neither: shows up as a difference, with the file to look at


def _clean(text):
    text = ADDRESS.sub("0x…", text)
    # PyTorch's warnings end with the C++ file they were raised in; the build path varies.
    return re.sub(r"\(Triggered internally at [^)]*\)", "(Triggered internally at …)", text)
