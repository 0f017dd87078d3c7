#!/usr/bin/env bash
# cloudfit on a real NVIDIA GPU, in one table (docs/profiler.md, "bench/gpu.sh"):
#   1. the CUDA engine's parity test against the CPU twin (tests/test_engine_parity);
#   2. the engine's kernels timed one by one against cuBLAS's own FP32 GEMM
#      and a device copy (bench/gpu_kernel_bench);
#   3. the MLP of examples/mlp-synthetic.json: `cloudfit profile --backend
#      cuda` (the engine) against PyTorch through the cloudfit_probe helper
#      (`--backend exec`, examples/probe_torch.py, fp32): step times, B_noise;
#   4. ResNet-50 at 224×224 on synthetic data through the helper
#      (`python3 -m cloudfit_probe.vision`, `cloudfit profile --backend exec`)
#      in fp32, bf16, bf16 + channels-last (and, with CLOUDFIT_GPU_VARIANTS,
#      fp16 with the helper's GradScaler): step times, the t_c(m) fit,
#      images/s, B_noise of the synthetic task.
# Short sweeps (a few batch sizes, few steps): under 6 minutes on an H100.
# It never builds: give it a build directory made elsewhere (or the folder
# bench/gpu_bundle.sh makes from one) and the Python that has PyTorch with
# CUDA. Without a GPU it prints "skipped: ..." and exits 0.
#
# Usage: bench/gpu.sh [BUILD_DIR] [PYTHON]
#   BUILD_DIR        default $CLOUDFIT_BUILD, else build/ of the checkout
#   PYTHON           default $CLOUDFIT_PYTHON, else python3
#   CLOUDFIT_GPU_OUT also write the table (or the skip line) to this file
#   CLOUDFIT_GPU_KEEP keep every step's output in this folder
#   CLOUDFIT_GPU_VARIANTS the ResNet-50 runs (default "fp32 bf16 bf16-cl"; also fp16)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$(cd "${1:-${CLOUDFIT_BUILD:-$root/build}}" 2>/dev/null && pwd) || { echo "bench/gpu.sh: no build directory ${1:-${CLOUDFIT_BUILD:-$root/build}}" >&2; exit 2; }
py=${2:-${CLOUDFIT_PYTHON:-python3}}
out_file=${CLOUDFIT_GPU_OUT:-}
started=$(date +%s)

say_and_exit() { # the one line a run without a GPU prints
    echo "$1"
    [ -n "$out_file" ] && echo "$1" > "$out_file"
    exit "$2"
}

command -v nvidia-smi > /dev/null 2>&1 || say_and_exit "skipped: no GPU (nvidia-smi not found)" 0
listed=$(nvidia-smi -L 2> /dev/null || true) # (no `| grep -q`: with pipefail its early exit reads as a failure)
grep -q "^GPU " <<< "$listed" || say_and_exit "skipped: no GPU (nvidia-smi lists none)" 0
"$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2> /dev/null ||
    say_and_exit "skipped: no GPU visible to PyTorch ($py: $("$py" -c 'import torch; print("torch", torch.__version__)' 2>&1 | tail -1))" 0

bin=$build/cli/cloudfit
parity=$build/tests/test_engine_parity
kernels=$build/bench/gpu_kernel_bench
module=$build/cuda_probe/libcloudfit_cuda.so
for f in "$bin" "$parity" "$kernels" "$module"; do
    [ -e "$f" ] || say_and_exit "bench/gpu.sh: $f is missing: build with CUDA (nvcc found) first, on a machine with the Debian -dev packages" 2
done
export CLOUDFIT_CUDA_MODULE=$module
[ -d "$build/lib" ] && export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" # gpu_bundle.sh's

# CUDA's libraries: the toolkit's, else the ones PyTorch's wheels carry.
missing() { ldd "$bin" "$parity" "$kernels" "$module" 2> /dev/null | grep "not found" | awk '{print $1}' | sort -u; }
if grep -q -e libcublas -e libcudart <<< "$(missing)"; then
    wheel_libs=$("$py" - << 'PY'
import glob, os, site
dirs = set()
for base in site.getsitepackages() + [site.getusersitepackages()]:
    for lib in glob.glob(os.path.join(base, "nvidia", "**", "libcu*.so*"), recursive=True):
        dirs.add(os.path.dirname(lib))
print(":".join(sorted(dirs)))
PY
)
    [ -n "$wheel_libs" ] && export LD_LIBRARY_PATH="$wheel_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [ -n "$(missing)" ]; then
    say_and_exit "bench/gpu.sh: shared libraries missing here: $(missing | tr '\n' ' ')
hint: on the build machine, bench/gpu_bundle.sh BUILD_DIR DEST copies the binaries with their libraries; pass DEST here" 2
fi

tmp=$(mktemp -d)
# CLOUDFIT_GPU_KEEP=DIR: keep every run's output there (a first run on a new machine)
trap '[ -n "${CLOUDFIT_GPU_KEEP:-}" ] && mkdir -p "$CLOUDFIT_GPU_KEEP" && cp -r "$tmp"/. "$CLOUDFIT_GPU_KEEP"/; rm -rf "$tmp"' EXIT
export XDG_DATA_HOME=$tmp/xdg PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
log() { echo "bench/gpu.sh: $*" >&2; }

# 1. parity
log "engine parity test"
t0=$(date +%s%N)
"$parity" > "$tmp/parity.log" 2>&1
parity_rc=$?
parity_ms=$((($(date +%s%N) - t0) / 1000000))
# 2. kernels
log "engine kernels against cuBLAS"
"$kernels" --batches 64,256,1024 --reps 50 > "$tmp/kernels.jsonl" 2> "$tmp/kernels.err"

# 3. the MLP: engine (cuda) vs PyTorch through the helper (exec)
mlp_spec=$tmp/mlp.json
"$py" - "$root/examples/mlp-synthetic.json" "$mlp_spec" "$py" "$root/examples/probe_torch.py" << 'PY'
import json, sys
src, dst, py, probe = sys.argv[1:]
spec = json.load(open(src))
spec["profile"] = {"command": [py, probe, "--spec", dst], "local_batches": [16, 64, 256], "steps": 30}
json.dump(spec, open(dst, "w"))
PY
for backend in cuda exec; do
    log "MLP, --backend $backend"
    "$bin" profile -q --db "$tmp/mlp.db" --backend "$backend" --format json --timeout 120 "$mlp_spec" \
        > "$tmp/mlp-$backend.json" 2> "$tmp/mlp-$backend.err"
    echo $? > "$tmp/mlp-$backend.rc"
done

# 4. ResNet-50 through the helper: fp32, bf16, bf16 + channels-last (add fp16, the GradScaler path, with
#    CLOUDFIT_GPU_VARIANTS="fp32 bf16 bf16-cl fp16": about 80 s more on an H200)
for variant in ${CLOUDFIT_GPU_VARIANTS:-fp32 bf16 bf16-cl}; do
    case $variant in fp32 | bf16 | bf16-cl | fp16) ;; *) say_and_exit "bench/gpu.sh: unknown variant '$variant' in CLOUDFIT_GPU_VARIANTS (fp32 bf16 bf16-cl fp16)" 2 ;; esac
    prec=${variant%-cl}
    extra='[]'
    [ "$variant" = bf16-cl ] && extra='["--channels-last"]'
    "$py" - "$tmp/spec-rn50-$variant.json" "$py" "$prec" "$extra" << 'PY'
import json, sys
dst, py, prec, extra = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
spec = {"name": "resnet50-synthetic-" + prec, "model": {"parameters": 25557032, "flops_per_sample": 2.46e10,
        "precision": prec}, "data": {"samples": 1281167}, "training": {"epochs": 90, "batch": 256, "lr": 0.1,
        "optimizer": "momentum"},
        "profile": {"backend": "exec", "command": [py, "-m", "cloudfit_probe.vision", "--model", "resnet50",
                    "--image-size", "224", "--precision", prec] + extra, "local_batches": [32, 64, 128], "steps": 10}}
json.dump(spec, open(dst, "w"))
PY
    log "ResNet-50 $variant"
    "$bin" profile -q --db "$tmp/rn50.db" --format json --timeout 180 --noise-steps 20 "$tmp/spec-rn50-$variant.json" \
        > "$tmp/rn50-$variant.out" 2> "$tmp/rn50-$variant.err"
    echo $? > "$tmp/rn50-$variant.rc"
done

elapsed=$(($(date +%s) - started))
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
torch_version=$("$py" -c 'import torch; print(torch.__version__)')
"$py" "$here/gpu_table.py" "$tmp" "$parity_rc" "$parity_ms" "$elapsed" "$gpu" "$torch_version" > "$tmp/table.md"
rc=$?
cat "$tmp/table.md"
[ -n "$out_file" ] && cp "$tmp/table.md" "$out_file"
exit $rc
