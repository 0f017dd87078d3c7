#!/usr/bin/env bash
# The spot preemption model against the shipped traces (issue 15; docs/spot.md):
#  1. model p50/p90 of a fixed plan vs the trace replay on the 4- and 16-node
#     traces, for the LN-AR model fitted in-sample, leave-trace-out and as
#     shipped, and for resampling families (block and cycle bootstraps), with
#     how likely the bars are even for an exactly right model (--band);
#  2. the deadline claim as recommend makes it (q95, recommend's Monte Carlo);
#  3. the same model on the 1-node traces (where PHI, RHO and q95 were chosen);
#  4. simulate on every shipped trace: progress per dollar, gain vs fixed rule;
#  5. recommend latency with spot allowed (bench/latency.sh) for reference.
# Usage: bench/spot.sh [BUILD_DIR]     (≈ 10 s plus the latency runs)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=${1:-$src/build}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
bench=$build/bench/spot_bench
bin=$build/cli/cloudfit
[ -x "$bench" ] && [ -x "$bin" ] || { echo "bench: build first (no $bench or $bin)" >&2; exit 1; }
cd "$src"
echo "== 1-3. preemption model vs trace replays"
"$bench" examples/spot-traces --band --single
echo
echo "== 4. cloudfit simulate on every shipped trace (resnet50-imagenet plan): M0-samples per dollar, gain / fixed rule"
/usr/bin/python3 "$here/spot_ratios.py" "$build"
echo
echo "== 5. recommend latency, spot allowed (bench/latency.sh)"
"$here/latency.sh" "$build" 20
