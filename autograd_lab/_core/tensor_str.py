"""Printing tensors exactly as PyTorch does (its ``torch/_tensor_str.py`` rules).

* 4 digits after the point; every element padded to the widest one.
* If every value is a whole number: ``6.`` instead of ``6.0000`` ("int mode").
* Scientific notation when the nonzero finite magnitudes span more than 1000x, or exceed
  1e8, or go below 1e-4.
* More than 1000 elements: only the first and last 3 of each dimension, with ``...``.
* Suffixes: ``dtype=`` (when not float32/int64/bool), then ``grad_fn=<Name>`` or
  ``requires_grad=True``.
"""
import math

import numpy as np

PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = 4, 1000, 3, 80
SCI_MODE = None         # set_printoptions(sci_mode=...): True or False forces it


class _Formatter:
    def __init__(self, values):
        """``values``: the (summarized) elements, flattened."""
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        if not self.floating:
            self.width = max([len(str(v)) for v in values.tolist()] or [1])
            return
        v = values.astype(np.float64)
        nz = v[np.isfinite(v) & (v != 0)]
        if nz.size == 0:
            return
        mag = np.abs(nz)
        lo, hi = mag.min(), mag.max()
        self.int_mode = bool(np.all(nz == np.ceil(nz)))
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if SCI_MODE is None \
            else SCI_MODE
        if self.sci_mode:
            strs = [f"{x:.{PRECISION}e}" for x in nz.tolist()]
        elif self.int_mode:
            strs = [f"{x:.0f}." for x in nz.tolist()]
        else:
            strs = [f"{x:.{PRECISION}f}" for x in nz.tolist()]
        self.width = max(len(s) for s in strs)

    def format(self, x):
        if not self.floating:
            s = str(x)
        elif self.sci_mode:
            s = f"{x:{self.width}.{PRECISION}e}"
        elif self.int_mode:
            s = f"{x:.0f}" + ("" if math.isinf(x) or math.isnan(x) else ".")
        else:
            s = f"{x:.{PRECISION}f}"
        return " " * (self.width - len(s)) + s


def _summarized(a):
    """The elements a summarized print shows: the first and last EDGEITEMS of each dim."""
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * EDGEITEMS:
        a = np.concatenate([a[:EDGEITEMS], a[-EDGEITEMS:]])
    if a.ndim == 1:
        return a
    return np.stack([_summarized(row) for row in a])


def _vector(a, indent, summarize, fmt):
    per_line = max(1, math.floor((LINEWIDTH - indent) / (fmt.width + 2)))
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        items = ([fmt.format(v) for v in a[:EDGEITEMS].tolist()] + [" ..."] +
                 [fmt.format(v) for v in a[-EDGEITEMS:].tolist()])
    else:
        items = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _body(a, indent, summarize, fmt):
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        rows = ([_body(a[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)] + ["..."] +
                [_body(a[i], indent + 1, summarize, fmt)
                 for i in range(len(a) - EDGEITEMS, len(a))])
    else:
        rows = [_body(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def array_str(a, indent):
    """The bracketed body of a tensor's repr, for a numpy array."""
    if a.size == 0:
        return "[]"
    summarize = a.size > THRESHOLD
    fmt = _Formatter((_summarized(a) if summarize else a).reshape(-1))
    return _body(a, indent, summarize, fmt)


def tensor_repr(t, prefix="tensor("):
    a = t._data
    indent = len(prefix)
    suffixes = []
    if a.size == 0 and a.ndim != 1:
        suffixes.append(f"size={tuple(a.shape)}")
    if a.dtype not in (np.float32, np.int64, np.bool_) or (a.size == 0 and a.dtype != np.float32):
        suffixes.append(f"dtype={t.dtype!r}")
    try:
        name = t.grad_fn and type(t.grad_fn).__name__
    except RuntimeError:    # a no_grad view whose base changed in place (_refuse_if_stale)
        name = "Invalid"
    if name:
        suffixes.append(f"grad_fn=<{name}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    out = prefix + array_str(a, indent)
    last = len(out) - out.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > LINEWIDTH:
            out += ",\n" + " " * indent + s
            last = indent + len(s)
        else:
            out += ", " + s
            last += len(s) + 2
    return out + ")"
