#!/usr/bin/env bash
# The lock's exports, for the installers that read a requirements file rather than uv.lock:
#   binder/requirements.txt      Binder (repo2docker's pip): the learner's distribution,
#                                autograd-lab[lab], and everything it brings
#   deploy/k8s/requirements.txt  the grader's container image (deploy/k8s/Containerfile's pip):
#                                autograd-lab-grader and everything it brings
#   scripts/export-locks.sh            after `uv lock`: write both
#   scripts/export-locks.sh --check    exit 1, naming the file, where one is not the lock's
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-$(command -v .venv/bin/uv || command -v uv)}
status=0

export_one() {   # FILE HEADER UV-EXPORT-ARGS...
    local file=$1 header=$2; shift 2
    local text
    text="$header
$("$UV" export --frozen --no-hashes --no-header --no-annotate --no-dev "$@")"
    if [ "${check:-}" ]; then
        if [ "$text" != "$(cat "$file")" ]; then
            echo "$file is not uv.lock's export: run scripts/export-locks.sh" >&2
            status=1
        fi
    else
        printf '%s\n' "$text" > "$file"
    fi
}

check=
[ "${1:-}" = --check ] && check=1

export_one binder/requirements.txt "\
# Binder's environment: the learner's distribution with its JupyterLab tools, autograd-lab[lab],
# at the versions of uv.lock (written by scripts/export-locks.sh; do not edit). repo2docker
# ignores the root pyproject.toml once binder/ exists, hence -e . here. No PyTorch, no grader." \
    --package autograd-lab --extra lab

export_one deploy/k8s/requirements.txt "\
# The grader image's environment (deploy/k8s/Containerfile): autograd-lab-grader and what it
# brings, at the versions of uv.lock (written by scripts/export-locks.sh; do not edit). The
# engine and the grader themselves are installed from the image's copy of the checkout." \
    --package autograd-lab-grader --no-emit-workspace

exit $status
