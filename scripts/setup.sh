#!/usr/bin/env bash
# Installs what a fresh machine lacks, for one of three kinds of machine:
#   scripts/setup.sh lab      a learner's (./run lab): graphviz's `dot` and a .venv with the
#                             engine and its JupyterLab tools (autograd-lab[lab]), nothing more
#   scripts/setup.sh grader   an instructor's: that, the grader (grader/, the `autograd-lab`
#                             command) and bubblewrap, the sandbox every grading kernel runs in
#   scripts/setup.sh all      a maintainer's (./run test, bench, docs): that, the test and site
#                             tools, PyTorch as the tests' oracle, Chromium, PostgreSQL, Slurm
#                             and munge, the MathJax the course's site ships, axe-core,
#                             which the browser tests check pages with, and JupyterHub's
#                             proxy for the hub test (npm)
# The Python packages come from the lock, uv.lock, at the versions CI tests (`uv sync
# --locked`: a pyproject.toml changed without `uv lock` stops here). A set-up .venv is kept:
# `./run lab` after `./run setup` installs nothing and removes nothing.
# Safe to run again: it does only what is missing or out of date.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case "$what" in
    lab)    kinds="lab grader all" ;;     # (a set-up that also satisfies this one)
    grader) kinds="grader all" ;;
    all)    kinds="all" ;;
    *)      echo "usage: scripts/setup.sh [lab | grader | all]" >&2; exit 2 ;;
esac
# PyTorch, the oracle of the parity tests, is never a dependency of the engine or the grader,
# and stays out of the lock: uv would lock PyPI's CUDA build (GBs); pip takes the CPU build
# from its configured folders where a machine has one
ORACLE="torch==2.13.0"

# Debian packages: graphviz's `dot` draws the backward graphs; bubblewrap (`bwrap`) is the
# grading sandbox (grader/autograd_lab_grader/sandbox/); Chromium is the browser the browser
# test drives (tests/browser/); PostgreSQL is a gradebook several graders share (`autograd-lab
# --db-url`), and its test starts a throwaway server with its programs
missing=()
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
if [ "$what" != lab ]; then
    command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
fi
if [ "$what" = all ]; then
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
    # Slurm and its authentication daemon: the Slurm test starts a one-node Slurm of its own,
    # on loopback (deploy/slurm/ grades a class with a job array); it uses none of the
    # services the packages may start on a machine with systemd
    command -v slurmctld >/dev/null 2>&1 || [ -x /usr/sbin/slurmctld ] || missing+=(slurm-wlm)
    command -v munged >/dev/null 2>&1 || [ -x /usr/sbin/munged ] || missing+=(munge)
    # Debian's own python3 with venv: the Kubernetes test builds the grader's environment as
    # deploy/k8s/Containerfile does, from Debian 12's python3
    /usr/bin/python3 -c "import ensurepip, venv" >/dev/null 2>&1 || missing+=(python3-venv)
    # npm: the course's site ships its own MathJax, npm's mathjax package (docs/package.json);
    # the browser tests check pages' accessibility with npm's axe-core (tests/support/)
    command -v npm >/dev/null 2>&1 || missing+=(npm)
fi
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "setup: missing ${missing[*]}; install them (sudo apt-get install ${missing[*]}," \
             "or brew install graphviz): graphviz's 'dot' draws the graphs, bubblewrap is the" \
             "grading sandbox, Chromium runs the browser test, PostgreSQL's and Slurm's tests" \
             "are skipped without them (slurm-wlm, munge), npm brings the site's MathJax" >&2
    fi
fi

VENV=${VENV:-.venv}
fresh() {   # is the .venv set up for kind $1 since the lock and the projects last changed?
    [ -f "$VENV/.installed-$1" ] && [ ! uv.lock -nt "$VENV/.installed-$1" ] \
        && [ ! pyproject.toml -nt "$VENV/.installed-$1" ] \
        && [ ! grader/pyproject.toml -nt "$VENV/.installed-$1" ]
}
done_already=
for kind in $kinds; do fresh "$kind" && done_already=1; done
if [ -z "$done_already" ]; then
    if [ ! -x "$VENV/bin/python" ]; then
        echo "setup: creating $VENV"
        python3 -m venv "$VENV"
    fi
    echo "setup: installing the $what set from uv.lock into $VENV"
    # (this machine's pip configuration names mirror folders that may be absent: not an error)
    quiet() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }
    # uv installs from the lock: the one on PATH, else pip fetches it into the user's cache,
    # never into $VENV (a 37 MB program no lesson runs; the maintainer's set brings its own,
    # the dev extra's). --inexact: what the .venv has beyond this set (the test tools, the
    # oracle) stays
    uv=$(command -v uv || true)
    if [ -z "$uv" ]; then
        tools="${XDG_CACHE_HOME:-$HOME/.cache}/autograd-lab/uv"
        uv=$tools/bin/uv
        [ -x "$uv" ] || quiet "$VENV/bin/pip" install -q --disable-pip-version-check \
            --target "$tools" "uv>=0.5"
    fi
    sync=("$uv" sync -q --locked --inexact --compile-bytecode)
    case "$what" in
        lab)    sync+=(--package autograd-lab --extra lab) ;;
        grader) sync+=(--package autograd-lab-grader) ;;
        all)    sync+=(--all-packages --extra lab --extra dev --extra docs) ;;
    esac
    UV_PROJECT_ENVIRONMENT="$VENV" "${sync[@]}"
    if [ "$what" = lab ] && [ -x "$VENV/bin/uv" ] && [ ! -f "$VENV/.installed-grader" ] \
        && [ ! -f "$VENV/.installed-all" ]; then
        # a learner's .venv this script set up before it kept uv out
        "$uv" pip uninstall -q --python "$VENV/bin/python" uv
    fi
    if [ "$what" = all ]; then
        # uv reads no pip configuration: the folders pip is told to look in first (here the
        # CPU build of PyTorch) are passed on
        links=()
        configured=$("$VENV/bin/pip" config get global.find-links 2>/dev/null || true)
        for link in ${PIP_FIND_LINKS:-} $configured; do
            [ -d "$link" ] && links+=(--find-links "$link")
        done
        quiet "$uv" pip install -q --python "$VENV/bin/python" --compile-bytecode \
            "${links[@]}" "$ORACLE"
    fi
    if [ "$what" = lab ]; then
        # a learner's JupyterLab, as Binder's: nbgrader's Validate button, none of the
        # instructor's tools (binder/postBuild turns them off in this .venv). An instructor's
        # and a maintainer's set keep them: hand grading is done in the formgrader
        PATH="$VENV/bin:$PATH" bash binder/postBuild
    fi
    touch "$VENV/.installed-$what"
fi

# The grader's Jupyter server extension (a content security policy on nbgrader's formgrader
# pages: grader/autograd_lab_grader/formgrader.py), enabled in the .venv's Jupyter config. A
# wheel of the grader installs this file itself (grader/pyproject.toml's data-files); the
# editable install here does not
if [ "$what" != lab ]; then
    mkdir -p "$VENV/etc/jupyter/jupyter_server_config.d"
    cp grader/jupyter-config/autograd_lab_grader.json "$VENV/etc/jupyter/jupyter_server_config.d/"
fi

# The site's MathJax (./run docs, the site's test): docs/package-lock.json's version, into
# docs/node_modules, which the build copies into the site (docs/conf.py); and axe-core, the
# accessibility checker the browser tests run inside Chromium, with configurable-http-proxy,
# JupyterHub's proxy for the hub test (tests/support/package-lock.json, into
# tests/support/node_modules); each again only when its lock file changed
if [ "$what" = all ]; then
    npm_set() {     # npm_set FOLDER FILE WHAT: npm ci in FOLDER unless FILE is there and fresh
        if [ -f "$1/$2" ] && [ ! "$1/package-lock.json" -nt "$1/node_modules/.package-lock.json" ]
        then
            return
        fi
        if command -v npm >/dev/null 2>&1; then
            echo "setup: installing $3 (npm) into $1/node_modules"
            npm ci --prefix "$1" --no-audit --no-fund --loglevel=error >/dev/null
        else
            echo "setup: no npm: $3 cannot be installed" >&2
        fi
    }
    npm_set docs node_modules/mathjax/es5/tex-mml-chtml.js "the site's MathJax"
    npm_set tests/support node_modules/axe-core/axe.min.js \
        "axe-core, the browser tests' checker, and JupyterHub's proxy"
fi
