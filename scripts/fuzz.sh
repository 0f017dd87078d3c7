#!/usr/bin/env bash
# Runs every fuzz target (fuzz/) for SECONDS each, CF_FUZZ_JOBS (default 2,
# one per core of the CI machine) at a time:
#   scripts/fuzz.sh SECONDS [TARGET...]        e.g. scripts/fuzz.sh 600
# Configures and builds $CF_FUZZ_BUILD_DIR (default build-fuzz) with clang,
# ASan + UBSan and libFuzzer (-DCLOUDFIT_FUZZ=ON) when needed. Each target
# starts from its seed corpus (fuzz/corpus/TARGET) and regression inputs
# (fuzz/regressions/TARGET), with its dictionary (fuzz/dict/TARGET.dict);
# what it discovers stays in $CF_FUZZ_BUILD_DIR/fuzz-corpus/TARGET. Leak
# detection is on; an input that crashes, leaks, hangs (over
# CF_FUZZ_TIMEOUT_S, default 10 s) or runs out of memory (over
# CF_FUZZ_RSS_MB, default 2048) is copied to fuzz/regressions/TARGET/, where
# the normal test run replays it (ctest -L fuzz), and the script exits 1.
# The json target runs with a 2 s timeout (CF_FUZZ_JSON_TIMEOUT_S): it reads
# large documents made from each input, so a super-linear step in the JSON
# reader shows as a timeout (fuzz/fuzz_json.c).
# CF_FUZZ_MAX_RUNS caps the executions per target (libFuzzer -runs).
# Prints one line per target: executions, executions/s, coverage, corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || ! [[ "$1" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh SECONDS [TARGET...]" >&2
  exit 2
fi
seconds=$1
shift
all=(spec measurements gns_traces exec_line price_overrides compare_to price_azure price_aws price_gcp price_lambda spot_trace gpu_names spot_model rebalance_lines json)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
build=${CF_FUZZ_BUILD_DIR:-build-fuzz}
jobs=${CF_FUZZ_JOBS:-2}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCLOUDFIT_FUZZ=ON -DCLOUDFIT_CUDA=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
fi
fuzz_bins=()
for t in "${targets[@]}"; do fuzz_bins+=("fuzz_$t"); done
cmake --build "$build" -j"$jobs" --target "${fuzz_bins[@]}" > "$build/fuzz-build.log" 2>&1 ||
  { tail -50 "$build/fuzz-build.log"; exit 1; }
mkdir -p "$build/fuzz-logs"
# Deterministic, quiet runs: the sanitizers stop at the first report.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=0
printf '%-16s %12s %10s %8s %8s %7s  %s\n' target executions exec/s cov corpus rss_mb result
# fuzz_one TARGET: one target's run; its table line into fuzz-logs/TARGET.result.
fuzz_one() {
  local t=$1 corpus artifacts seeds timeout_s args log rc execs speed rss cov units result found
  corpus="$build/fuzz-corpus/$t"
  artifacts="$build/fuzz-artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  rm -f "$artifacts"/*
  seeds=(fuzz/corpus/"$t")
  [ -d fuzz/regressions/"$t" ] && seeds+=(fuzz/regressions/"$t")
  timeout_s=${CF_FUZZ_TIMEOUT_S:-10}
  [ "$t" = json ] && timeout_s=${CF_FUZZ_JSON_TIMEOUT_S:-2}
  args=(-max_total_time="$seconds" -timeout="$timeout_s" -rss_limit_mb="${CF_FUZZ_RSS_MB:-2048}"
        -malloc_limit_mb="${CF_FUZZ_RSS_MB:-2048}" -print_final_stats=1 -artifact_prefix="$artifacts/"
        -dict=fuzz/dict/"$t".dict -close_fd_mask=3)
  [ -n "${CF_FUZZ_MAX_RUNS:-}" ] && args+=(-runs="$CF_FUZZ_MAX_RUNS")
  log="$build/fuzz-logs/$t.log"
  set +e
  "$build/fuzz/fuzz_$t" "${args[@]}" "$corpus" "${seeds[@]}" > "$log" 2>&1
  rc=$?
  set -e
  stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
  execs=$(stat number_of_executed_units)
  speed=$(stat average_exec_per_sec)
  rss=$(stat peak_rss_mb)
  cov=$({ grep -o 'cov: [0-9]*' "$log" || true; } | tail -1 | cut -d' ' -f2) # none when it stopped at once
  units=$(find "$corpus" -type f | wc -l)
  result=ok
  found=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | head -20)
  if [ -n "$found" ] || [ $rc -ne 0 ]; then
    result="FAILED (exit $rc)"
    mkdir -p fuzz/regressions/"$t"
    for f in $found; do
      cp "$f" fuzz/regressions/"$t"/
      result="$result, kept fuzz/regressions/$t/$(basename "$f")"
    done
    grep -m3 -E 'ERROR: |runtime error|SUMMARY' "$log" >&2 || tail -20 "$log" >&2
  fi
  printf '%-16s %12s %10s %8s %8s %7s  %s\n' "$t" "${execs:-?}" "${speed:-?}" "${cov:-?}" "$units" "${rss:-?}" "$result" \
    > "$build/fuzz-logs/$t.result"
}
running=0
for t in "${targets[@]}"; do
  rm -f "$build/fuzz-logs/$t.result"
  fuzz_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait
# The table in the targets' order; a target without its line did not finish.
for t in "${targets[@]}"; do
  if [ -f "$build/fuzz-logs/$t.result" ]; then
    cat "$build/fuzz-logs/$t.result"
    grep -q ' FAILED ' "$build/fuzz-logs/$t.result" && failed=1
  else
    printf '%-16s %s\n' "$t" "FAILED (no result)"
    failed=1
  fi
done
exit $failed
