"""`autograd-lab --help`, and every command's own, loads no engine: the command line imports
`autograd_lab` (numpy, the tensor, every operation) only for a command that grades or reads
answers, never to say what it offers."""
import json
import subprocess
import sys

PROBE = """
import json, sys
import typer.main
from autograd_lab_grader.commands.cli import app

group = typer.main.get_command(app)
said = []
for args in [["--help"]] + [[name, "--help"] for name in group.list_commands(None)]:
    try:
        group.main(args, prog_name="autograd-lab", standalone_mode=True)
    except SystemExit as done:
        said.append((args, done.code))
print(json.dumps({"said": said, "engine": sorted(
    m for m in sys.modules if m == "autograd_lab" or m.startswith("autograd_lab."))}))
"""


def test_help_of_the_command_and_of_every_command_imports_no_engine():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert len(found["said"]) >= 15 and all(code == 0 for _, code in found["said"]), found
    assert "Usage: autograd-lab" in done.stdout
    assert found["engine"] == [], found["engine"]


def test_python_m_autograd_lab_grader_help_imports_no_engine():
    """The installed command's own way in (``__main__``), the interpreter's import log read."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "autograd_lab_grader",
                           "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Usage: autograd-lab" in done.stdout, done.stderr
    imported = [line.rpartition("|")[2].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")]
    assert "autograd_lab_grader.commands.cli" in imported
    assert [m for m in imported if m.split(".")[0] == "autograd_lab"] == []
