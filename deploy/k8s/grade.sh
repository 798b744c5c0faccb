#!/usr/bin/env bash
# Grade a lesson on Kubernetes: an Indexed Job of N pods (grade-job.yaml), then, when it has
# ended, one Job that grades what it left, exports and reports (report-job.yaml).
#
#   deploy/k8s/grade.sh LESSON N IMAGE [kubectl options, e.g. --namespace=grading]
#   deploy/k8s/grade.sh --render LESSON N IMAGE [RUN]   the manifests it would create
#
# Needs, once: course-volume.yaml's volume claim (the course directory on it) and Secret.
# Each pod takes 1 CPU and grades 2 submissions at once (grade-job.yaml says why).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
render=false
if [ "${1:-}" = --render ]; then render=true; shift; fi
lesson=${1:?usage: grade.sh LESSON N IMAGE [kubectl options]}
n=${2:?usage: grade.sh LESSON N IMAGE [kubectl options]}
image=${3:?usage: grade.sh LESSON N IMAGE [kubectl options]}
shift 3

grade_job() {         # grade-job.yaml for this lesson, N and image
    sed -e "s|^\(\s*value:\) 02_scalar_backward$|\1 $lesson|" -e "s|^\(\s*image:\) .*|\1 $image|" \
        -e "s|^\(\s*completions:\) [0-9]*|\1 $n|" -e "s|^\(\s*parallelism:\) [0-9]*|\1 $n|" \
        -e "/name: SHARDS/{n;s|value: .*|value: \"$n\"|}" "$here/grade-job.yaml"
}
report_job() {        # report-job.yaml for this lesson and image, in the run $1
    sed -e "s|^\(\s*value:\) 02_scalar_backward$|\1 $lesson|" -e "s|^\(\s*image:\) .*|\1 $image|" \
        -e "s|value: set-by-grade.sh .*|value: \"$1\"|" "$here/report-job.yaml"
}

if $render; then
    grade_job
    if [ -n "${1:-}" ]; then echo ---; report_job "$1"; fi
    exit
fi
job=$(grade_job | kubectl create "$@" -o name -f -)
uid=$(kubectl get "$@" "$job" -o jsonpath='{.metadata.uid}')
echo "$lesson: $job ($n pods), run $uid"
# until the Job has ended (Complete; or Failed, when a part failed for good)
while ! kubectl get "$@" "$job" -o jsonpath='{.status.conditions[*].type}' \
        | grep -qE 'Complete|Failed'; do
    sleep 30
done
kubectl get "$@" "$job" -o jsonpath='{range .status.conditions[*]}{.type}{" "}{end}{"\n"}'
report=$(report_job "$uid" | kubectl create "$@" -o name -f -)
echo "$lesson: $report (what is left, export, report)"
kubectl wait "$@" --for=condition=complete --timeout=2h "$report"
