#!/usr/bin/env bash
# Grade a lesson on Slurm: an array of N tasks (grade.sbatch), then one job that grades what
# they left, exports and reports (report.sbatch), started when every task has ended.
#
#   export AUTOGRAD_LAB_DB_URL=postgresql://grader@db-host/course
#   deploy/slurm/submit.sh LESSON N [sbatch options for both, e.g. --partition=short]
#
# Run it from the course directory on the shared filesystem, with `autograd-lab` on PATH
# (`. .venv/bin/activate`) or AUTOGRAD_LAB naming the command. Prints the two job ids.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lesson=${1:?usage: submit.sh LESSON N [sbatch options]}
n=${2:?usage: submit.sh LESSON N [sbatch options]}
shift 2
: "${AUTOGRAD_LAB_DB_URL:?set AUTOGRAD_LAB_DB_URL: the PostgreSQL gradebook every task shares}"
[ -f nbgrader_config.py ] || { echo "submit.sh: run it from the course directory" >&2; exit 2; }
mkdir -p grading-logs/slurm              # (Slurm makes no folder for a job's output)
# the run both jobs belong to: a name no other run of this gradebook has (leases.py)
run=slurm-$(date -u +%Y%m%dT%H%M%SZ)-$$-$RANDOM
array=$(sbatch --parsable --array=1-"$n" --export=ALL,AUTOGRAD_LAB_RUN="$run" "$@" \
        "$here/grade.sbatch" "$lesson")
array=${array%%;*}                       # (a federation's cluster name follows a ;)
report=$(sbatch --parsable --dependency=afterany:"$array" --kill-on-invalid-dep=yes \
         --export=ALL,AUTOGRAD_LAB_RUN="$run" "$@" "$here/report.sbatch" "$lesson")
echo "$lesson: grading array $array ($n tasks), then job ${report%%;*}" \
     "(what is left, export, report), run $run; logs in grading-logs/slurm/"
