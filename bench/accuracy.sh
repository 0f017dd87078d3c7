#!/usr/bin/env bash
# Accuracy of cloudfit's models on real measurements (DESIGN.md §7):
#   step time on the Pollux T4 data (three training subsets),
#   iterations to target from the M0 noise trace (full and first quarter),
#   carrying single-GPU throughput across GPU types (Lambda benchmarks).
# Reads ../shared/data when it is there (override with CLOUDFIT_SHARED_DATA);
# says so and skips otherwise. Usage: bench/accuracy.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
bin=$build/cli/cloudfit
data=${CLOUDFIT_SHARED_DATA:-$here/../../shared/data}
[ -x "$bin" ] || { echo "accuracy: no binary at $bin (build first)" >&2; exit 1; }
if [ ! -d "$data/groundtruth" ]; then
  echo "accuracy: shared data not found at $data; nothing to score (set CLOUDFIT_SHARED_DATA)"
  exit 0
fi
t4=$data/groundtruth/pollux_aws_t4/throughput.csv
summary() { /usr/bin/python3 -c 'import json,sys; o=json.load(sys.stdin)["overall"]; print("n %5d   median %5.1f%%   p90 %5.1f%%" % (o["n"], 100*o["median_ape"], 100*o["p90_ape"]))'; }
echo "== step time, T4 data ($t4)"
printf '  %-36s ' "single-node profile:";          "$bin" validate -f json "$t4" | summary
printf '  %-36s ' "single-node + 2-node probe:";   "$bin" validate -f json --with-2node-probe "$t4" | summary
printf '  %-36s ' "--train-max-nodes 2:";          "$bin" validate -f json --train-max-nodes 2 "$t4" | summary
echo "  the same rows, the model fitted to every row (--fit-all-rows: its in-sample error, a floor for the lines above)"
printf '  %-36s ' "  floor, single-node profile's rows:"; "$bin" validate -f json --fit-all-rows "$t4" | summary
printf '  %-36s ' "  floor, the probe's rows:"; "$bin" validate -f json --fit-all-rows --with-2node-probe "$t4" | summary
printf '  %-36s ' "  floor, --train-max-nodes 2 rows:"; "$bin" validate -f json --fit-all-rows --train-max-nodes 2 "$t4" | summary
traces=$data/groundtruth/gns_traces
echo "== iterations to target ($traces)"
printf '  %-36s ' "full M0 trace:"; "$bin" validate -f json --gns "$traces/gns_traces.csv" --models "$traces/models.csv" | summary
# What any predictor can reach: samples to target never fall as the batch
# grows (E(M) is non-decreasing in M), so doubling the batch at most halves
# the iterations. Where the measured iterations fall faster, some error is
# unavoidable; print the least maximum error each such pair forces.
"$bin" validate -f json --gns "$traces/gns_traces.csv" --models "$traces/models.csv" | /usr/bin/python3 -c '
import json, sys
p = json.load(sys.stdin)["predictions"]
for a, b in zip(p, p[1:]):
    if a["model"] != b["model"]:
        continue
    # predicted iterations must satisfy I(b) >= I(a)·batch_a/batch_b
    drop = a["measured_iterations"] / b["measured_iterations"]
    limit = b["batch"] / a["batch"]
    if drop > limit:
        # least e with I(a) = m_a(1−e), I(b) = m_b(1+e), I(b) = I(a)/limit
        e = (drop - limit) / (drop + limit)
        print("    bound: %s %d->%d, measured iterations fall %.2fx for %.0fx the batch: a monotone predictor errs >= %.1f%% on one"
              % (a["model"], a["batch"], b["batch"], drop, limit, 100 * e))
'
# first quarter of each model's trace: cifar10 100 epochs, imagenet 90, ncf 10 → 25, 22.5, 2.5 is not one K for
# all models, so run per model with its own quarter and pool the errors.
/usr/bin/python3 - "$bin" "$traces" <<'PY'
import csv, json, subprocess, sys, tempfile, os
bin_, traces = sys.argv[1], sys.argv[2]
models = list(csv.DictReader(open(os.path.join(traces, "models.csv"))))
errs = []
for m in models:
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        w = csv.DictWriter(f, fieldnames=models[0].keys()); w.writeheader(); w.writerow(m); path = f.name
    k = max(1.0, float(m["epochs_in_trace"]) / 4)
    out = subprocess.run([bin_, "validate", "-f", "json", "--gns", os.path.join(traces, "gns_traces.csv"),
                          "--models", path, "--train-epochs", str(k)], capture_output=True, text=True, check=True).stdout
    os.unlink(path)
    errs += [abs(p["error"]) for p in json.loads(out)["predictions"]]
errs.sort()
import math
med = (errs[len(errs)//2] if len(errs) % 2 else 0.5*(errs[len(errs)//2-1]+errs[len(errs)//2]))
p90 = errs[math.ceil(0.9*len(errs))-1]
print("  %-36s n %5d   median %5.1f%%   p90 %5.1f%%" % ("first quarter of the M0 trace:", len(errs), 100*med, 100*p90))
PY
echo "== carrying throughput across GPU types ($data/crossgpu/throughput.csv)"
"$bin" validate --crossgpu "$data/crossgpu/throughput.csv" | tail -n +3
