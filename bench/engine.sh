#!/usr/bin/env bash
# The CPU engine against PyTorch (CPU) and against bare OpenBLAS sgemm, on
# the MLP of examples/mlp-synthetic.json (784-1024-1024-10, ReLU, SGD at
# lr 0.05), at batch sizes 64, 128 and 256, with the same thread count on
# both sides. The two implementations run in alternating rounds (each a
# warm-up and STEPS timed steps per batch) and each figure is the median
# over rounds of the per-round median, so a change in machine load during
# the run hits both alike.
#
# Usage: bench/engine.sh [BUILD_DIR] [ROUNDS] [STEPS]
#   THREADS="1 2"     thread counts to compare (default: 1 and all cores)
#   NATIVE_BLAS=1     also run the engine with OPENBLAS_CORETYPE unset (OpenBLAS
#                     picks its own kernels), reported as separate rows
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
rounds=${2:-5}
steps=${3:-30}
threads=${THREADS:-"1 $(nproc)"}
bin=$build/bench/engine_bench
py=/usr/bin/python3
[ -x "$bin" ] || { echo "bench: no binary at $bin (build first)" >&2; exit 1; }
have_torch=1
"$py" -c 'import torch' 2>/dev/null || { have_torch=0; echo "bench: python3-torch is not installed; PyTorch rows are skipped" >&2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
common=(--widths 784,1024,1024,10 --batches 64,128,256 --optimizer sgd --lr 0.05 --steps "$steps" --warmup 5)
for t in $threads; do
  for r in $(seq "$rounds"); do
    echo "bench: threads $t, round $r/$rounds" >&2
    "$bin" "${common[@]}" --threads "$t" | sed 's/^{/{"variant": "env", /' >> "$out"
    if [ "${NATIVE_BLAS:-0}" = 1 ]; then
      env -u OPENBLAS_CORETYPE "$bin" "${common[@]}" --threads "$t" | sed 's/^{/{"variant": "native", /' >> "$out"
    fi
    if [ "$have_torch" = 1 ]; then
      # PyTorch's best setting found on this 2-vCPU machine: its OpenMP
      # pool does the threading (OpenBLAS inside it single-threaded, so the
      # two pools do not fight) and idle OpenMP threads sleep.
      OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE "$py" "$here/engine_torch.py" "${common[@]}" --threads "$t" >> "$out"
    fi
  done
done
"$py" - "$out" "${OPENBLAS_CORETYPE:-unset}" <<'PY'
import collections, json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
env_core = sys.argv[2]
med = collections.defaultdict(list)
for r in rows:
    key = (r["impl"], r.get("variant", ""), r["threads"], r["batch"])
    med[key].append(r)
def m(key, field):
    vals = [r[field] for r in med.get(key, [])]
    return statistics.median(vals) if vals else None
print("CPU engine vs PyTorch %s and bare OpenBLAS sgemm: MLP 784-1024-1024-10, ReLU, SGD; median over %d rounds"
      % (next((r["torch_version"] for r in rows if r["impl"] == "torch"), "(absent)"),
         max(len(v) for v in med.values())))
print("OPENBLAS_CORETYPE in the environment: %s" % env_core)
print("%-7s %-22s %5s %9s %9s %11s %10s %10s %11s" % ("threads", "engine BLAS kernels", "batch", "engine ms", "torch ms",
      "eng/torch", "eng GF/s", "sgemm GF/s", "FLOP ratio"))
for (impl, variant, threads, batch) in sorted(k for k in med if k[0] == "cloudfit"):
    key = (impl, variant, threads, batch)
    eng = m(key, "step_s")
    torch = m(("torch", "", threads, batch), "step_s")
    core = med[key][0]["blas_core"] + (" (env)" if variant == "env" else " (own choice)")
    print("%-7d %-22s %5d %9.2f %9s %11s %10.1f %10.1f %11.2f" % (
        threads, core, batch, eng * 1e3, "%.2f" % (torch * 1e3) if torch else "-",
        "%.2fx" % (eng / torch) if torch else "-", m(key, "gflops"), m(key, "sgemm_gflops"), m(key, "flops_ratio")))
print("targets: engine/torch <= 1.00x (at least as fast); FLOP ratio (engine FLOP/s / bare sgemm FLOP/s) >= 0.70 at batch >= 64")
PY
