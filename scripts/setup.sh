#!/usr/bin/env bash
# Installs what the course needs on a fresh machine: graphviz's `dot`, Chromium, PostgreSQL,
# Slurm and munge (Debian packages), a virtual environment in .venv with the project and its
# course, dev and docs extras, and the MathJax the course's site ships (npm, docs/package.json).
#   scripts/setup.sh          everything: the course, `autograd-lab`, the test tools and the
#                             site's (./run docs)
#   scripts/setup.sh course   an instructor's machine: the course and `autograd-lab`
#                             (graphviz, bubblewrap, the course extra), no PyTorch, Playwright,
#                             Chromium, PostgreSQL or Slurm
# Safe to run again: it does only what is missing or out of date.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case "$what" in
    all)    extras="course,dev,docs" ;;
    course) extras="course" ;;
    *)      echo "usage: scripts/setup.sh [all | course]" >&2; exit 2 ;;
esac

# Debian packages: graphviz's `dot` draws the backward graphs; Chromium is the browser the
# browser test drives (tests/test_browser.py) the way a learner's browser shows the course;
# PostgreSQL is a gradebook several graders share (`autograd-lab --db-url`), and its test
# starts a throwaway server with its programs; bubblewrap (`bwrap`) is the sandbox every
# grading kernel runs in (autograd_lab/grading/sandbox.py).
missing=()
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
if [ "$what" = all ]; then
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
    # Slurm and its authentication daemon: tests/test_grading_slurm.py starts a one-node
    # Slurm of its own, on loopback (deploy/slurm/ grades a class with a job array); it uses
    # none of the services the packages may start on a machine with systemd
    command -v slurmctld >/dev/null 2>&1 || [ -x /usr/sbin/slurmctld ] || missing+=(slurm-wlm)
    command -v munged >/dev/null 2>&1 || [ -x /usr/sbin/munged ] || missing+=(munge)
    # Debian's own python3 with venv: tests/test_grading_k8s.py builds the grader's environment
    # as deploy/k8s/Containerfile does, from Debian 12's python3
    /usr/bin/python3 -c "import ensurepip, venv" >/dev/null 2>&1 || missing+=(python3-venv)
    # npm: the course's site ships its own MathJax, npm's mathjax package (docs/package.json)
    command -v npm >/dev/null 2>&1 || missing+=(npm)
fi
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "setup: missing ${missing[*]}; install them (sudo apt-get install ${missing[*]}," \
             "or brew install graphviz): graphviz's 'dot' draws the graphs, Chromium runs" \
             "the browser test, PostgreSQL's and Slurm's tests are skipped without them" \
             "(slurm-wlm, munge), bubblewrap is the grading sandbox, npm brings the site's" \
             "MathJax" >&2
    fi
fi

VENV=${VENV:-.venv}
stamp="$VENV/.installed-$extras"
if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating $VENV"
    python3 -m venv "$VENV"
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "setup: installing autograd-lab with its $extras extras into $VENV"
    # (this machine's pip configuration names mirror folders that may be absent: not an error)
    quiet() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }
    # With uv (a Python package, fetched by pip first): the same versions pip picks, in a
    # quarter of the time (a fresh .venv with PyTorch: 28 s against 114), and its cache makes
    # the environments the tests build (the learner's, the grader image's) take seconds.
    # Where uv cannot be had, or fails, pip does it all.
    with_pip=1
    if quiet "$VENV/bin/pip" install -q --disable-pip-version-check uv; then
        # uv reads no pip configuration: the folders pip is told to look in first (here the
        # CPU build of PyTorch) are passed on
        links=()
        configured=$("$VENV/bin/pip" config get global.find-links 2>/dev/null || true)
        for link in ${PIP_FIND_LINKS:-} $configured; do
            links+=(--find-links "$link")
        done
        if "$VENV/bin/uv" pip install -q --python "$VENV/bin/python" --compile-bytecode \
                "${links[@]}" --config-setting editable_mode=compat -e ".[$extras]"; then
            with_pip=
        else
            echo "setup: uv failed (above); installing with pip" >&2
        fi
    fi
    if [ -n "$with_pip" ]; then
        quiet "$VENV/bin/pip" install -q --disable-pip-version-check \
            --config-settings editable_mode=compat -e ".[$extras]"
    fi
    touch "$stamp"
fi

# The site's MathJax (./run docs, tests/test_site.py): docs/package-lock.json's version, into
# docs/node_modules, which the build copies into the site (docs/conf.py); again only when the
# lock file changed
if [ "$what" = all ]; then
    mathjax=docs/node_modules/mathjax/es5/tex-mml-chtml.js
    if [ ! -f "$mathjax" ] || [ docs/package-lock.json -nt docs/node_modules/.package-lock.json ]
    then
        if command -v npm >/dev/null 2>&1; then
            echo "setup: installing the site's MathJax (npm) into docs/node_modules"
            npm ci --prefix docs --no-audit --no-fund --loglevel=error >/dev/null
        else
            echo "setup: no npm: the course's site (./run docs) cannot be built without its" \
                 "MathJax" >&2
        fi
    fi
fi
