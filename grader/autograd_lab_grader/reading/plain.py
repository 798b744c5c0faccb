"""A learner's text as plain text: no byte of it can drive a terminal.

A learner's bytes reach the instructor's terminal by many ways: a name in an LMS download, a
file name, a reason that quotes the notebook, whatever a kernel writes to its standard output
and error (the grading logs), a CSV printed with ``cat``. A terminal obeys control characters
(ESC starts a sequence that can move the cursor, retitle the window, write the clipboard or
make a link; CR and BS overwrite what was printed), so every C0 and C1 control character but
newline and tab is written as its escape (``\\x1b``) instead: ``printable``. A notebook's
output keeps the colour sequences of a traceback (``\\x1b[31m``), which nbconvert and
JupyterLab draw as colours, and carriage returns, which they handle: ``output_text``.
"""
from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_OUTPUT = re.compile(r"\x1b\[[0-9;]{0,32}m|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _escape(match: re.Match) -> str:
    return "".join(f"\\x{ord(c):02x}" for c in match[0])


def printable(text) -> str:
    """``text`` with every control character but newline and tab escaped (``\\x1b``)."""
    return _CONTROL.sub(_escape, text if isinstance(text, str) else str(text))


def output_text(text: str) -> str:
    """A notebook output's text with every control character escaped but newline, tab,
    carriage return and a colour sequence (SGR, ``\\x1b[...m``)."""
    return _OUTPUT.sub(lambda m: m[0] if m[0].startswith("\x1b[") else _escape(m), text)
