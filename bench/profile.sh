#!/usr/bin/env bash
# The profiler's numbers for README.md, measured in one run:
#  - wall time of `cloudfit profile examples/mlp-synthetic.json --backend cpu`
#    (5 batch sizes × 33 steps + a 200-step noise run), RUNS times, median;
#  - its B_noise against examples/probe_torch.py (real PyTorch, exec backend)
#    on the same MLP, data and seed (the full 784-1024-1024-10 model);
#  - the estimator's error on the analytic linear-regression cases
#    (build/profiler/test_gns prints them).
# Usage: bench/profile.sh [BUILD_DIR] [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$here/..
build=${1:-$src/build}
runs=${2:-3}
bin=$build/cli/cloudfit
[ -x "$bin" ] || { echo "bench: no binary at $bin (build first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
times=()
for _ in $(seq "$runs"); do
  start=$(date +%s%N)
  "$bin" profile -q --db "$tmp/cpu.db" --backend cpu --format json "$src/examples/mlp-synthetic.json" > "$tmp/cpu.json"
  end=$(date +%s%N)
  times+=($(( (end - start) / 1000000 )))
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
printf 'cloudfit profile mlp-synthetic --backend cpu: median %.1f s over %s runs (%s ms)\n' \
  "$(echo "${sorted[$(( runs / 2 ))]}/1000" | bc -l)" "$runs" "${times[*]}"
# The same spec with probe_torch.py as its exec command.
/usr/bin/python3 - "$src" "$tmp" <<'EOF'
import json, sys
src, tmp = sys.argv[1], sys.argv[2]
spec = json.load(open(src + "/examples/mlp-synthetic.json"))
spec["profile"]["command"] = ["/usr/bin/python3", src + "/examples/probe_torch.py", "--spec", tmp + "/torch.json"]
json.dump(spec, open(tmp + "/torch.json", "w"))
EOF
if /usr/bin/python3 -c 'import torch' 2> /dev/null; then
  start=$(date +%s%N)
  "$bin" profile -q --db "$tmp/torch.db" --backend exec --format json "$tmp/torch.json" > "$tmp/torch_out.json"
  end=$(date +%s%N)
  /usr/bin/python3 - "$tmp" "$(( (end - start) / 1000000 ))" <<'EOF'
import json, sys
tmp, ms = sys.argv[1], int(sys.argv[2])
a = json.load(open(tmp + "/cpu.json"))["noise"]
b = json.load(open(tmp + "/torch_out.json"))["noise"]
print("B_noise, mlp-synthetic, seed 1: CPU engine %.6g ± %.3g, PyTorch (probe_torch.py) %.6g: difference %.2g %%"
      % (a["b_noise"], a["stderr"], b["b_noise"], 100 * abs(a["b_noise"] - b["b_noise"]) / a["b_noise"]))
print("  (exec profile with PyTorch took %.1f s)" % (ms / 1000))
EOF
else
  echo "B_noise vs PyTorch: skipped (python3-torch is not installed)"
fi
"$build/profiler/test_gns" 2> /dev/null | grep -E '^n=|coverage'
