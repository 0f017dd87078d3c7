#!/usr/bin/python3
"""A seeded sweep of `cloudfit recommend` over random specs: model size,
precision, data, epochs, batch, objective, deadline, budget, node and GPU
limits, spot policy, confidence, with or without a noise trace, and a
profile that is the shipped T4 one, a part of it (one node, one GPU, a
random subset), rescaled or noisy, measured on another GPU type. Every
answer must be exit 0 with a document the JSON schema accepts, or exit 4
(infeasible) with a message; and in every document:
  - every figure finite; each configuration's hours and dollars inside
    their own 80 % interval; global batch = nodes × GPUs × batch × accumulation;
  - the chosen configuration meets the deadline and the budget at the
    confidence it reports (the figures the JSON gives, not rounded past
    the limits: hours had 4 digits and a plan held at 16.0759 h under a
    16.076 h deadline read 16.08 h), and the node and GPU limits;
  - with objective cost or time, no alternative that meets the limits is
    better by that objective;
  - an on-demand configuration costs its hours × its price per hour.
Usage: test_recommend_sweep.py CLOUDFIT_BINARY SOURCE_DIR"""
import csv
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

import jsonschema

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
EXAMPLE = os.path.join(SRC, "examples", "resnet50-imagenet.json")
PROFILE = os.path.join(SRC, "examples", "data", "resnet50-t4-profile.csv")
SCHEMA = json.load(open(os.path.join(SRC, "data", "schema", "recommendation.schema.json")))
TMP = tempfile.mkdtemp(prefix="cloudfit-sweep-")
ENV = dict(os.environ, HOME=TMP, XDG_DATA_HOME=os.path.join(TMP, "xdg"), NO_COLOR="1")
RUNS = 200


def random_profile(rnd, i):
    with open(PROFILE) as f:
        rows = list(csv.DictReader(f))
    mode = rnd.choice(["whole", "single", "onegpu", "subset", "scaled", "noisy"])
    scale = 10 ** rnd.uniform(-1.5, 1) if mode in ("scaled", "noisy") else 1.0
    out = []
    for r in rows:
        if (mode == "single" and r["num_nodes"] != "1") or (mode == "onegpu" and r["num_gpus"] != "1"):
            continue
        if mode == "subset" and rnd.random() < 0.6:
            continue
        t = float(r["step_time_s"]) * scale * (rnd.uniform(0.8, 1.25) if mode == "noisy" else 1.0)
        out.append(dict(r, step_time_s="%.6g" % t))
    if not any(r["num_nodes"] == "1" for r in out):
        out.append(dict(rows[0]))
    gpu = rnd.choice(["T4", "A10G", "L4", "V100", "A100-40GB", "H100"])
    for r in out:
        r["gpu"] = gpu
    path = os.path.join(TMP, "p%d.csv" % i)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(out)
    return gpu, path


def random_spec(rnd, i):
    with open(EXAMPLE) as f:
        d = json.load(f)
    d["name"] = "sweep%d" % i
    d["model"].update(parameters=int(10 ** rnd.uniform(6, 9.5)), gradient_bytes=rnd.choice([2, 4]),
                      precision=rnd.choice(["fp16", "fp32", "bf16"]), flops_per_sample=10 ** rnd.uniform(8, 12))
    d["data"]["samples"] = int(10 ** rnd.uniform(4, 7.5))
    d["training"].update(epochs=rnd.choice([1, 3, 10, 90]), batch=rnd.choice([32, 128, 256, 1024]))
    d["search"].update(objective=rnd.choice(["cost", "time", "balanced"]),
                       deadline_hours=round(10 ** rnd.uniform(-0.5, 2.5), 3), budget_usd=round(10 ** rnd.uniform(0, 4), 2),
                       max_nodes=rnd.choice([1, 2, 4, 16, 64]), max_gpus=rnd.choice([8, 64, 512]),
                       spot=rnd.choice(["never", "allow"]))
    if rnd.random() < 0.2:
        d["search"]["confidence"] = rnd.choice([0.5, 0.8, 0.95, 0.99])
    if rnd.random() < 0.3:
        del d["profile"]["noise_scale"]
    gpu, path = random_profile(rnd, i) if rnd.random() < 0.6 else ("T4", PROFILE)
    d["profile"]["gpus"] = {gpu: path}
    spec = os.path.join(TMP, "s%d.json" % i)
    with open(spec, "w") as f:
        json.dump(d, f)
    return d, spec


def check(doc, limits, where):
    rows = ([doc["chosen"]] if doc.get("chosen") else []) + doc.get("alternatives", [])
    for r in rows:
        what = "%s: %s %s × %s" % (where, r["instance_type"], r["nodes"], r["gpus_per_node"])
        for k, v in r.items():
            assert not (isinstance(v, float) and not math.isfinite(v)), "%s: %s not finite" % (what, k)
        assert r["hours_p10"] <= r["hours"] * 1.000001 <= r["hours_p90"] * 1.000002, "%s: hours outside own interval" % what
        assert r["total_usd_p10"] <= r["total_usd"] * 1.000001 <= r["total_usd_p90"] * 1.000002, \
            "%s: dollars outside own interval" % what
        assert r["global_batch"] == r["nodes"] * r["gpus_per_node"] * r["local_batch"] * r["accumulation"], what
        if not r["spot"]:
            assert abs(r["hours"] * r["usd_per_hour"] - r["total_usd"]) <= 0.02 * r["total_usd"] + 0.01, \
                "%s: $%s != %s h × $%s/h" % (what, r["total_usd"], r["hours"], r["usd_per_hour"])
    c = doc["chosen"]
    assert c["hours_at_confidence"] <= limits["deadline_hours"], "%s: over the deadline at confidence" % where
    assert c["total_usd_at_confidence"] <= limits["budget_usd"], "%s: over the budget at confidence" % where
    assert c["nodes"] <= limits["max_nodes"] and c["nodes"] * c["gpus_per_node"] <= limits["max_gpus"], where
    if limits["objective"] in ("cost", "time"):
        key = "total_usd" if limits["objective"] == "cost" else "hours"
        for a in doc.get("alternatives", []):
            if a["hours_at_confidence"] <= limits["deadline_hours"] and \
                    a["total_usd_at_confidence"] <= limits["budget_usd"]:
                assert a[key] >= c[key] * 0.999, "%s: alternative %s better by %s" % (where, a["instance_type"], key)


def test_random_specs_keep_the_invariants():
    rnd = random.Random(2026)
    answered = infeasible = 0
    for i in range(RUNS):
        d, spec = random_spec(rnd, i)
        p = subprocess.run([BIN, "recommend", "--no-history", "-q", "-f", "json", "--max-catalog-age-days", "100000",
                            spec], capture_output=True, text=True, env=ENV, timeout=60)
        where = "%s (%s)" % (spec, json.dumps(d["search"]))
        if p.returncode == 4:
            assert "cloudfit: " in p.stderr and "hint: " in p.stderr, "%s: %s" % (where, p.stderr)
            infeasible += 1
            continue
        assert p.returncode == 0, "%s: exit %d: %s" % (where, p.returncode, p.stderr)
        doc = json.loads(p.stdout)
        jsonschema.validate(doc, SCHEMA)
        check(doc, d["search"], where)
        answered += 1
    # both outcomes are exercised
    assert answered >= RUNS // 2 and infeasible >= RUNS // 20, (answered, infeasible)


sys.exit(pyharness.run(globals(), cleanup=lambda: shutil.rmtree(TMP, ignore_errors=True)))
