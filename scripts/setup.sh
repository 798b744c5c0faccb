#!/usr/bin/env bash
# Installs what the course needs on a fresh machine: graphviz's `dot` (Debian package) and a
# virtual environment in .venv with the project and its course and dev extras.
# Safe to run again: it does only what is missing or out of date.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v dot >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: installing graphviz (the 'dot' program draws the backward graphs)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null
    else
        echo "setup: graphviz's 'dot' is missing; install it (sudo apt-get install graphviz," \
             "or brew install graphviz) to see the graphs drawn" >&2
    fi
fi

VENV=${VENV:-.venv}
stamp="$VENV/.installed"
if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating $VENV"
    python3 -m venv "$VENV"
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "setup: installing autograd-lab with its course and dev extras into $VENV"
    # (this machine's pip configuration names mirror folders that may be absent: not an error)
    "$VENV/bin/pip" install -q --disable-pip-version-check \
        --config-settings editable_mode=compat -e '.[course,dev]' \
        2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
    touch "$stamp"
fi
