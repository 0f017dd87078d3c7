#!/usr/bin/env bash
# The spot preemption model against the shipped traces (docs/spot.md "Calibration"):
#  1. `simulate --calibrate` with the shipped table on every shipped trace (in-sample),
#     for three example plans;
#  2. the traces split by start date: the model fitted to one half (--fit), scored
#     on the other, both ways (A: 2023-02-15 and 2023-08-03; B: the rest);
#  3. simulate on every shipped trace: progress per dollar, gain vs fixed rule;
#  4. recommend latency with spot allowed (bench/latency.sh) for reference.
# Each calibration line: pooled windows, then the share of windows below the
# model's p10 / p50 / p90 and done by its check quantile, each with the band a
# correct model gives on traces of those lengths ([lo, hi]).
# Usage: bench/spot.sh [BUILD_DIR]     (about a minute plus the latency runs)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=${1:-$src/build}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
bin=$build/cli/cloudfit
[ -x "$bin" ] || { echo "bench: build first (no $bin)" >&2; exit 1; }
cd "$src"
traces=examples/spot-traces
halves=$(mktemp -d)
trap 'rm -rf "$halves"' EXIT
mkdir -p "$halves/A" "$halves/B"
for h in A B; do head -1 "$traces/index.csv" > "$halves/$h/index.csv"; done
tail -n +2 "$traces/index.csv" | while IFS= read -r line; do
  f=${line%%,*}
  case "$f" in *02-15-2023*|*08-03-2023*) h=A ;; *) h=B ;; esac
  echo "$line" >> "$halves/$h/index.csv"
  ln -s "$src/$traces/$f" "$halves/$h/$f"
done
calibrate() { # LABEL SPEC TRACES [FIT]
  local label=$1 spec=$2 dir=$3 fit=${4:-}
  "$bin" simulate "examples/$spec.json" --calibrate "$dir" ${fit:+--fit "$fit"} -f json \
      --max-catalog-age-days 100000 2>/dev/null |
    /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
cells = []
for k, name in (("below_p10", "p10"), ("below_p50", "p50"), ("below_p90", "p90"), ("done_by_check_quantile", "check")):
    s = d[k]
    flag = "" if s["band_lo"] <= s["share"] <= s["band_hi"] else "*"
    cells.append("%s %.3f [%.3f, %.3f]%s" % (name, s["share"], s["band_lo"], s["band_hi"], flag))
print("  %-34s %-24s %6d windows  %s" % (sys.argv[1], sys.argv[2], d["windows"], "  ".join(cells)))' "$label" "$spec"
}
specs="resnet50-imagenet bert-base-squad gpt2-124m-openwebtext"
echo "== 1. shipped table, every shipped trace (in-sample); * = outside the band"
for s in $specs; do calibrate "in-sample" "$s" "$traces"; done
echo
echo "== 2. split by start date: fitted to one half, scored on the other"
for s in $specs; do
  calibrate "fit A (02-15, 08-03), score B" "$s" "$halves/B" "$halves/A"
  calibrate "fit B (the rest), score A" "$s" "$halves/A" "$halves/B"
done
echo
echo "== 3. cloudfit simulate on every shipped trace (resnet50-imagenet plan): M0-samples per dollar, gain / fixed rule"
/usr/bin/python3 "$here/spot_ratios.py" "$build"
echo
echo "== 4. recommend latency, spot allowed (bench/latency.sh)"
"$here/latency.sh" "$build" 20
