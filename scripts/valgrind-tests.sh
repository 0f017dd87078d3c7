#!/usr/bin/env bash
# Runs the C tests (ctest label `unit`: the cmocka tests and the fuzz
# regression replays) of a build under valgrind memcheck: any invalid read
# or write, use of uninitialised memory, or leak (definite or indirect)
# fails the run. Usage: scripts/valgrind-tests.sh [BUILD_DIR] (default build).
# Needs a build without sanitizers (valgrind and ASan do not mix).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
jobs=${CF_VALGRIND_JOBS:-2}
logs="$build/valgrind"
mkdir -p "$logs"
rm -f "$logs"/*.log
# The tests' command lines, from ctest itself.
ctest --test-dir "$build" -L unit --show-only=json-v1 > "$logs/tests.json"
/usr/bin/python3 - "$logs/tests.json" > "$logs/commands" <<'PY'
import json, shlex, sys
tests = json.load(open(sys.argv[1]))["tests"]
def cost(t):
    return -float({p["name"]: p["value"] for p in t.get("properties", [])}.get("COST", 0))
for t in sorted(tests, key=cost):  # the costliest first (stable): a long test begun last runs alone at the end
    if "command" not in t:
        continue
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    if props.get("SKIP_RETURN_CODE") is not None and "gpu" in props.get("LABELS", []):
        continue
    if t["command"][0].endswith("python3"):  # a check of the source tree, not a C test
        continue
    env = " ".join(shlex.quote(e) for e in props.get("ENVIRONMENT", []))
    print("\x1f".join([t["name"], props.get("WORKING_DIRECTORY", "."), env, shlex.join(t["command"])]))
PY
run_one() {
  IFS=$'\x1f' read -r name dir env cmd <<< "$1"
  log="$(pwd)/$logs/$name.log"
  local started=$SECONDS
  # OpenBLAS starts threads of its own: one is enough under valgrind.
  if (cd "$dir" && eval "env OPENBLAS_NUM_THREADS=1 CF_TEST_NO_TIMING=1 $env valgrind --tool=memcheck --error-exitcode=99 \
        --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
        --track-origins=no --quiet --suppressions=$(printf %q "$supp") --log-file=$(printf %q "$log") $cmd" > "$log.out" 2>&1); then
    echo "ok      $name ($(( SECONDS - started )) s)"
  else
    echo "FAILED  $name (see $log)"
    cat "$log" >&2
    return 1
  fi
}
export -f run_one
export logs
# What is not cloudfit's (the dynamic loader's word-wise strncmp).
export supp="$(pwd)/scripts/valgrind.supp"
started=$(date +%s)
if tr '\n' '\0' < "$logs/commands" | xargs -0 -P "$jobs" -I{} bash -c 'run_one "$@"' _ {}; then
  n=$(wc -l < "$logs/commands")
  echo "valgrind memcheck: $n C tests clean (no invalid access, no leak) in $(( $(date +%s) - started )) s"
else
  echo "valgrind memcheck: FAILED" >&2
  exit 1
fi
