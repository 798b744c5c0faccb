"""``python -m autograd_lab.checks validate NOTEBOOK``: a lesson validated as JupyterLab's
Validate button validates it, with an exit status (notebook.py)."""
import sys

from .notebook import main

sys.exit(main())
