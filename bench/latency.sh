#!/usr/bin/env bash
# Wall time of `cloudfit recommend` over the whole embedded catalog (all
# clouds, 1–64 nodes, spot allowed), warm: one untimed run first, then RUNS
# timed runs; prints the median and p90 in milliseconds.
# Usage: bench/latency.sh [BUILD_DIR] [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
runs=${2:-50}
bin=$build/cli/cloudfit
spec=$here/latency-spec.json
[ -x "$bin" ] || { echo "bench: no binary at $bin (build first)" >&2; exit 1; }
"$bin" recommend --no-history -q --max-catalog-age-days 100000 "$spec" > /dev/null
times=()
for _ in $(seq "$runs"); do
  start=$(date +%s%N)
  "$bin" recommend --no-history -q --max-catalog-age-days 100000 "$spec" > /dev/null
  end=$(date +%s%N)
  times+=($(( (end - start) / 1000 )))
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
median=${sorted[$(( runs / 2 ))]}
p90=${sorted[$(( runs * 9 / 10 ))]}
configs=$("$bin" recommend --no-history -q -f json "$spec" | /usr/bin/python3 -c \
  'import json,sys; s=json.load(sys.stdin)["explanation"]["search"]; print(s["offers"], s["model_evaluations"], s["priced_configurations"])')
read -r offers evals priced <<< "$configs"
printf 'recommend latency over %s offers, 1-64 nodes (%s model evaluations, %s priced configurations), %s runs:\n' \
  "$offers" "$evals" "$priced" "$runs"
printf '  median %.1f ms, p90 %.1f ms (target <= 50 ms)\n' "$(echo "$median/1000" | bc -l)" "$(echo "$p90/1000" | bc -l)"
