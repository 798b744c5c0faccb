"""Starting grading kernels and limiting them (``start.py``): below what reads their replies
(``reading/``) and above the sandbox they run in (``sandbox/``)."""
