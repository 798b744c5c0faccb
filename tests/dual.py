"""Run one snippet under PyTorch and under autograd_lab, and capture what each prints.

``run(code, lib)`` executes ``code`` with ``torch`` bound to ``lib`` and returns everything it
printed, the exception it ended with (class name and text) and the warnings it raised. Memory
addresses are blanked, since they differ from run to run anyway.
"""
import contextlib
import io
import re
import traceback
import warnings

ADDRESS = re.compile(r"0x[0-9a-f]+")


def run(code, lib):
    out = io.StringIO()
    error = None
    env = {"torch": lib, "__name__": "__snippet__"}
    if lib.__name__ == "torch":
        from torch.autograd import Variable
    else:
        from autograd_lab.autograd import Variable
    env["Variable"] = Variable
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        try:
            exec(compile(code, "<snippet>", "exec"), env)
        except Exception as e:      # the snippet's own error is part of what we compare
            error = (type(e).__name__, _clean(str(e)))
    warned = [(w.category.__name__, _clean(str(w.message))) for w in caught]
    return _clean(out.getvalue()), error, warned


def _clean(text):
    text = ADDRESS.sub("0x…", text)
    # PyTorch's warnings end with the C++ file they were raised in; the build path varies.
    return re.sub(r"\(Triggered internally at [^)]*\)", "(Triggered internally at …)", text)
