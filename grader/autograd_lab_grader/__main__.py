from .commands.cli import app

app(prog_name="autograd-lab")
