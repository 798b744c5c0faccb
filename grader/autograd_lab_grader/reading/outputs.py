"""The one walk over what a kernel handed back: every output of every cell, as a typed view.

A notebook's outputs came from the learner's kernel (or the learner's file): any of their
fields can be missing, of another type, a list of strings where a string is expected. Every
part of the grader that reads or rewrites outputs (the kernel's bounds and verdicts in
``reading/execute.py``, the sandbox's refusals, the report's misconceptions, the feedback page's
scrubbing and sanitising, the worker's timeouts) walks them here, and reads them through
``Output``: its ``kind`` (``output_type``), a stream's ``name`` and ``text``, ``data`` by MIME
type, an error's ``ename``, ``evalue`` and ``traceback``, each of the type it names whatever the
kernel sent (a missing field reads as empty). An output that is not a mapping is skipped.
``Output.node`` is the output itself, for the steps that rewrite it (``rewrite``).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass


def _text(value) -> str:
    """A text field as one string (nbformat allows a list of lines)."""
    if isinstance(value, list):
        return "".join(v if isinstance(v, str) else str(v) for v in value)
    return value if isinstance(value, str) else "" if value is None else str(value)


def text_mimes(mime: str) -> bool:
    """The MIME types whose value is text the grader bounds (``kernel.TruncateOutput``)."""
    return mime.startswith("text/")


@dataclass(frozen=True)
class Output:
    node: Mapping            # the output, as the notebook holds it (rewritten in place)
    cell: int = 0            # the index of its cell, where the walk was over cells
    position: int = 0        # its index among its cell's outputs

    @property
    def kind(self) -> str:
        """``stream``, ``error``, ``execute_result``, ``display_data``, ... ("" if none)."""
        kind = self.node.get("output_type")
        return kind if isinstance(kind, str) else ""

    @property
    def name(self) -> str:
        """A stream's name (``stdout``, ``stderr``)."""
        return _text(self.node.get("name"))

    @property
    def text(self) -> str:
        """A stream's text, as one string."""
        return _text(self.node.get("text", ""))

    @property
    def data(self) -> dict:
        """MIME type -> value (an ``execute_result``'s or ``display_data``'s)."""
        data = self.node.get("data")
        return dict(data) if isinstance(data, Mapping) else {}

    @property
    def ename(self) -> str:
        return _text(self.node.get("ename", ""))

    @property
    def evalue(self) -> str:
        return _text(self.node.get("evalue", ""))

    @property
    def traceback(self) -> list[str]:
        lines = self.node.get("traceback") or []
        return [_text(line) for line in lines] if isinstance(lines, list) else [_text(lines)]

    def is_error(self, name: str | None = None) -> bool:
        """An error output (named ``name``, if given)."""
        return self.kind == "error" and (name is None or self.ename == name)

    def rewrite(self, change: Callable, mimes: Callable[[str], bool] = text_mimes,
                traceback: bool = False) -> None:
        """Apply ``change`` (text or list of lines -> text) to every text this output shows: a
        stream's text, each value of ``data`` whose MIME type ``mimes`` accepts (a string or a
        list of lines), an error's ``evalue`` and, with ``traceback``, each of its lines."""
        node = self.node
        if "text" in node:
            node["text"] = change(node["text"])
        data = node.get("data")
        if isinstance(data, Mapping):
            for mime, value in list(data.items()):
                if mimes(mime) and isinstance(value, (str, list)):
                    data[mime] = change(value)
        if "evalue" in node:
            node["evalue"] = change(node["evalue"])
            if traceback:
                node["traceback"] = [change(line) for line in node.get("traceback") or []]


def of_cell(cell, index: int = 0) -> Iterator[Output]:
    """The outputs of one cell (none for a cell that has none, or not a list of them)."""
    found = cell.get("outputs") if isinstance(cell, Mapping) else None
    if not isinstance(found, list):
        return
    for position, node in enumerate(found):
        if isinstance(node, Mapping):
            yield Output(node, index, position)


def of_cells(cells: Iterable) -> Iterator[Output]:
    """Every output of every cell, in order."""
    for index, cell in enumerate(cells):
        yield from of_cell(cell, index)


def of_notebook(nb) -> Iterator[Output]:
    cells = nb.get("cells") if isinstance(nb, Mapping) else None
    return of_cells(cells if isinstance(cells, list) else [])
