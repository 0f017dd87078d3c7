#!/usr/bin/python3
"""End-to-end tests of `cloudfit validate` on step times: where the
inter-node bandwidth comes from, --fit-all-rows, model and GPU names from
outside the project's tables, unknown models. Data: tests/data/
search-t4-imagenet.csv (real Pollux T4 rows, 1–16 nodes).
Usage: test_validate_cli.py CLOUDFIT_BINARY SOURCE_DIR"""
import csv
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = sys.argv[1], sys.argv[2]
DATA = os.path.join(SRC, "tests", "data", "search-t4-imagenet.csv")
TMP = tempfile.mkdtemp(prefix="cloudfit-validate-")
ENV = dict(os.environ, HOME=TMP, XDG_DATA_HOME=os.path.join(TMP, "xdg"))


def run(*args):
    p = subprocess.run([BIN, "validate", *args], capture_output=True, text=True, env=ENV, timeout=120)
    return p.returncode, p.stdout, p.stderr


def run_json(*args):
    rc, out, err = run("-f", "json", *args)
    assert rc == 0, (rc, err)
    return json.loads(out)


def renamed(model, gpu, name, profile=None):
    """The test rows with another model and GPU name (and profile)."""
    path = os.path.join(TMP, name)
    with open(DATA) as f, open(path, "w", newline="") as g:
        rows = list(csv.DictReader(f))
        w = csv.DictWriter(g, fieldnames=rows[0].keys())
        w.writeheader()
        for r in rows:
            r["model"], r["gpu"] = model, gpu
            if profile is not None:
                r["profile"] = profile
            w.writerow(r)
    return path


def test_network_source_from_catalog_and_fit():
    doc = run_json(DATA)
    g = doc["groups"][0]
    assert "catalog VM aws g4dn.12xlarge (50 Gbit/s NIC)" in g["inter_node_source"], g["inter_node_source"]
    assert g["model_parameters"]["inter_gbps"] == 5  # AWS's per-flow limit: the TCP default
    doc = run_json("--train-max-nodes", "2", DATA)
    assert doc["groups"][0]["inter_node_source"].startswith("fitted from the multi-node rows")
    rc, out, _ = run(DATA)
    assert "inter-node all-reduce 5 Gbit/s: catalog VM aws g4dn.12xlarge" in out, out


def test_inter_node_option_named():
    doc = run_json("--inter-node-gbps", "100", DATA)
    g = doc["groups"][0]
    assert g["inter_node_source"].startswith("--inter-node-gbps 100"), g["inter_node_source"]
    assert g["model_parameters"]["inter_gbps"] == 5  # TCP cap of the default


def test_fit_all_rows_scores_same_rows_in_sample():
    plain = run_json("--train-max-nodes", "2", DATA)
    floor = run_json("--train-max-nodes", "2", "--fit-all-rows", DATA)
    n_rows = sum(1 for _ in open(DATA)) - 1
    assert floor["options"]["fit_all_rows"] is True
    assert floor["groups"][0]["fitted"] == n_rows
    assert floor["overall"]["n"] == plain["overall"]["n"] > 0
    # fitting the scored rows too cannot make them worse by much (robust
    # loss, several starts): a fit that did would be broken
    assert floor["overall"]["median_ape"] <= plain["overall"]["median_ape"] + 0.01, (floor, plain)
    rc, out, _ = run("--fit-all-rows", DATA)
    assert "in-sample" in out and "not a prediction" in out


def test_model_names_resolve_without_separators():
    path = renamed("ResNet-50", "T4", "named.csv", profile="aws")
    doc = run_json(path)
    assert doc["groups"][0]["predicted"] > 0
    path = renamed("bert_large_squad", "T4", "bert.csv", profile="aws")
    assert run_json(path)["groups"][0]["predicted"] > 0


def test_gpu_names_from_nvidia_smi_resolve():
    for name, expect in [("Tesla T4", "g4dn.12xlarge"), ("NVIDIA-T4", "g4dn.12xlarge")]:
        doc = run_json(renamed("imagenet", name, "gpu.csv", profile="aws"))
        assert expect in doc["groups"][0]["inter_node_source"], (name, doc["groups"][0]["inter_node_source"])
    doc = run_json(renamed("imagenet", "NoSuchGPU 9000", "gpu2.csv"))
    assert "GPU not in the GPU table" in doc["groups"][0]["inter_node_source"]


def test_unknown_model_needs_params():
    path = renamed("my-own-net", "T4", "own.csv")
    rc, out, err = run(path)
    assert rc == 3 and out == "", (rc, out)
    assert "model 'my-own-net' has no known parameter count" in err, err
    assert "hint: pass --params my-own-net=COUNT" in err, err
    doc = run_json("--params", "my-own-net=25557032", path)
    assert doc["groups"][0]["predicted"] > 0
    rc, _, err = run("--params", "my-own-net=lots", path)
    assert rc == 2 and "positive parameter count" in err, err


def test_crossgpu_names_resolve_and_unknown_gpus_are_reported():
    path = os.path.join(TMP, "crossgpu.csv")
    rows = [("NVIDIA A100-SXM4-40GB", 900), ("Tesla V100-SXM2-16GB", 400), ("H100", 2000), ("RTX 9999", 100)]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["source", "gpu", "gpu_count", "model", "precision", "batch_size_per_gpu", "throughput", "unit",
                    "notes"])
        for gpu, x in rows:
            w.writerow(["test", gpu, 1, "resnet50", "fp16", 256, x, "images/s", "benchmark v1"])
    rc, out, err = run("-f", "json", "--crossgpu", path)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["pairs"] == 6, doc  # 3 known GPUs, both directions; RTX 9999 left out
    assert "1 of 4 rows name a GPU that is not in the GPU table" in err, err


sys.exit(pyharness.run(globals()))
