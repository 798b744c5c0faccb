"""Where learners' code runs: a bubblewrap sandbox (``sandbox``), warm kernels forked from a
server in one (``warm``); ``inside/`` holds what runs in the sandbox."""
