#!/usr/bin/env bash
# Online search against the oracle (docs/search.md "How well it works", issues 6 and 13), on two
# clusters — the Pollux T4 measurements (AWS, TCP) and the Sia DGX A100
# measurements (NVLink, InfiniBand; priced at the catalog's cheapest A100
# per GPU-hour, $1.99, on the DGX's own 8 × 200 Gbit/s NIC) — with every
# constant chosen on T4: for every model, objective cost with deadlines 1.2×, 2× and
# 4× the fastest possible time, and objective time with budgets 1.2×, 2× and
# 4× the cheapest possible cost, 10 seeds each, trace runner (2 % noise);
# per method — the model alone, plain Bayesian optimisation from random
# starts, cloudfit's search — the share of runs within 3 % of the oracle,
# misses (deadline/budget broken by > 3 %), median/p90 regret, probes,
# overhead and profile cost (% of the job's cost).
# Reads ../shared/data when it is there (override with CLOUDFIT_SHARED_DATA);
# says so and stops otherwise. Usage: bench/search.sh [BUILD_DIR] [SEEDS]
# CLOUDFIT_SEARCH_ARGS adds options to every run (e.g. "--probe-startup-s 300").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
seeds=${2:-10}
clusters=${3:-t4,dgx}
bin=$build/cli/cloudfit
data=${CLOUDFIT_SHARED_DATA:-$here/../../shared/data}
[ -x "$bin" ] || { echo "search: no binary at $bin (build first)" >&2; exit 1; }
t4=$data/groundtruth/pollux_aws_t4/throughput.csv
dgx=$data/groundtruth/sia_dgx_a100/throughput.csv
if [ ! -f "$t4" ]; then
  echo "search: T4 measurements not found at $t4; nothing to score (set CLOUDFIT_SHARED_DATA)"
  exit 0
fi
exec /usr/bin/python3 - "$bin" "$t4" "$dgx" "$here/search-specs" "$seeds" "$clusters" <<'PY'
import concurrent.futures as cf, csv, json, os, subprocess, sys
bin_, t4, dgx, specs, seeds, clusters = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
env = dict(os.environ, NO_COLOR="1")
extra = os.environ.get("CLOUDFIT_SEARCH_ARGS", "").split()  # e.g. "--probe-startup-s 300"
CLUSTERS = {"t4": (t4, []), "dgx": (dgx, ["--price", "A100=1.99", "--trace-nic-gbps", "1600"])}

def run(spec, *args):
    out = subprocess.run([bin_, "search", spec, "--runner", "trace:" + trace, "--no-history", "-q", "-f", "json",
                          *cluster_args, *args, *extra],
                         capture_output=True, text=True, env=env)
    if not out.stdout.startswith("{"):  # infeasible (exit 4) still prints the document
        raise SystemExit("search failed: %s %s\n%s" % (spec, " ".join(args), out.stderr))
    return json.loads(out.stdout)

for name in clusters.split(","):
    trace, cluster_args = CLUSTERS[name]
    if not os.path.exists(trace):
        print("search: %s measurements not found at %s; skipped" % (name, trace)); continue
    models = sorted({r["model"] for r in csv.DictReader(open(trace))})
    jobs, limits = [], {}
    for m in models:
        spec = os.path.join(specs, m + ".json")
        if not os.path.exists(spec):
            print("search: no job spec for model %s in %s; skipped" % (m, specs)); continue
        base = run(spec, "--method", "model")["overall"]
        for objective, key, limit_opt in (("cost", "fastest_hours", "--deadline-hours"),
                                          ("time", "cheapest_usd", "--budget-usd")):
            for factor in (1.2, 2, 4):
                limit = float("%.6g" % (base[key] * factor))
                limits[(m, objective, factor)] = limit
                for seed in range(1, seeds + 1):
                    for method in ("model", "bo", "cloudfit"):
                        jobs.append((m, objective, factor, seed, method,
                                     [spec, "--objective", objective, limit_opt, "%.6g" % limit,
                                      "--seed", str(seed), "--method", method]))

    def one(job):
        doc = run(*job[5])
        return job[:5], doc["overall"]

    results = {}
    with cf.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        for key, ov in ex.map(one, jobs):
            results.setdefault(key[4], []).append((key, ov))

    def pct(xs, q):
        xs = sorted(xs)
        if not xs: return float("nan")
        return xs[min(len(xs) - 1, max(0, int(-(-q * len(xs) // 1)) - 1))]

    print("online search on %s (%s): %d models × 6 scenarios × %d seeds, trace noise 2%%%s" % (
        name, trace, len(models), seeds, " " + " ".join(cluster_args + extra) if cluster_args + extra else ""))
    print("%-10s %6s %9s %7s %14s %12s %16s %16s" % ("method", "runs", "within3%", "misses", "regret med/p90",
          "probes m/p90", "overhead med/p90", "profile med/p90"))
    for method, label in (("model", "model"), ("bo", "plain BO"), ("cloudfit", "cloudfit")):
        rows = results.get(method, [])
        rows = [(k, ov) for k, ov in rows if ov.get("oracle") is not None]
        n = len(rows)
        within = sum(1 for k, ov in rows if not ov["miss"] and ov["regret_pct"] is not None and ov["regret_pct"] <= 3.0)
        misses = sum(1 for k, ov in rows if ov["miss"])
        reg = [ov["regret_pct"] if ov["regret_pct"] is not None else float("inf") for k, ov in rows]
        probes = [ov["probe_count"] for k, ov in rows]
        over = [ov["overhead_pct"] if ov["overhead_pct"] is not None else float("inf") for k, ov in rows]
        prof = [ov["profile_cost_pct"] if ov["profile_cost_pct"] is not None else float("inf") for k, ov in rows]
        print("%-10s %6d %8.1f%% %6.1f%% %6.1f%%/%5.1f%% %5d/%5d %7.2f%%/%6.2f%% %7.2f%%/%6.2f%%" % (
            label, n, 100.0 * within / n, 100.0 * misses / n, pct(reg, .5), pct(reg, .9), pct(probes, .5),
            pct(probes, .9), pct(over, .5), pct(over, .9), pct(prof, .5), pct(prof, .9)))
    # Where the oracle itself lies within the confidence margin of the limit (1.28 × the 2 % trace noise:
    # 2.6 %), a search that holds the deadline/budget at 90 % confidence cannot pick it from noisy
    # measurements; the share within 3 % on the other scenarios says how the search does where that
    # trade-off does not bind.
    def slack(k, ov):
        o = ov["oracle"]
        return limits[k[:3]] / (o["hours"] if k[1] == "cost" else o["total_usd"]) - 1
    rows = [(k, ov) for k, ov in results.get("cloudfit", []) if ov.get("oracle") is not None]
    tight = [(k, ov) for k, ov in rows if slack(k, ov) < 1.2816 * 0.02]
    loose = [(k, ov) for k, ov in rows if slack(k, ov) >= 1.2816 * 0.02]
    if rows:
        ok = lambda r: not r[1]["miss"] and r[1]["regret_pct"] is not None and r[1]["regret_pct"] <= 3.0
        print("cloudfit: %d of %d runs have the oracle within 2.6 %% of the limit (within 3 %% there: %.1f %%); "
              "within 3 %% on the other %d: %.1f %%" % (len(tight), len(rows),
              100.0 * sum(map(ok, tight)) / max(1, len(tight)), len(loose), 100.0 * sum(map(ok, loose)) / max(1, len(loose))))
    if os.environ.get("CLOUDFIT_BENCH_DETAIL"):
        for method in ("cloudfit",):
            for k, ov in results[method]:
                r, o = ov["regret_pct"], ov["overhead_pct"]
                print(*k, "regret", "none" if r is None else "%.1f" % r, "miss", ov["miss"], "probes", ov["probe_count"],
                      "overhead", "none" if o is None else "%.2f" % o,
                      "slack", "none" if ov.get("oracle") is None else "%.1f%%" % (100 * slack(k, ov)))
PY
