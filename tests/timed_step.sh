#!/usr/bin/env bash
# make test's steps: run one, print its wall time, and add that line to the run's summary file (argument 1).
set -u
summary=$1 name=$2
shift 2
start=$(date +%s%N)
"$@"
rc=$?
line=$(printf '== step %-28s %7.1f s  (exit %d)' "$name:" "$(( ($(date +%s%N) - start) / 1000000 ))e-3" "$rc")
echo "$line"
echo "$line" >> "$summary"
if [ "$rc" -ne 0 ]; then cat "$summary"; fi
exit "$rc"
