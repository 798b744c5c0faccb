"""What a grading kernel's print() goes through (loaded in the kernel: ``--IPKernelApp.
outstream_class``): ipykernel's stream, less what one cell writes past a limit.

ipykernel gathers everything a cell writes in a fifth of a second into one message, so a loop
printing megabyte strings makes messages of hundreds of megabytes, which the grader would have
to receive whole. Cut at the source, printed output stays in small messages, and the grader
counts and keeps at most its own limit of it. (Learner code that goes around this reaches the
grader's own bounds instead: ``reading/execute.py``.)
"""
from ipykernel.iostream import OutStream

LIMIT = 2 * 1024**2          # characters one cell may print, on each of stdout and stderr
CHUNK = 256 * 1024           # characters after which what is gathered is sent


class BoundedOutStream(OutStream):
    _written = None

    def write(self, string):
        if not isinstance(string, str):
            return super().write(string)            # (its own TypeError)
        cell = self.parent_header.get("msg_id") if isinstance(self.parent_header, dict) else None
        if self._written is None or self._written[0] != cell:
            self._written = [cell, 0, 0]            # this cell's: characters kept, since sent
        kept = self._written[1]
        if kept >= LIMIT:
            return len(string)
        if kept + len(string) > LIMIT:
            string = (string[:LIMIT - kept]
                      + "\n[... what this cell printed past the grader's limit was dropped]\n")
        self._written[1] += len(string)
        self._written[2] += len(string)
        super().write(string)
        if self._written[2] >= CHUNK:
            self._written[2] = 0
            self.flush()
        return len(string)
