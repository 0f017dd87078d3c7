#!/usr/bin/python3
"""End-to-end tests of `cloudfit validate` on step times: where the
inter-node bandwidth comes from, --fit-all-rows, model and GPU names from
outside the project's tables, unknown models, the interval's coverage, the
precision column, the step-time model's constants, and each message of a
run that cannot predict anything (issue 13). Data: tests/data/
search-t4-imagenet.csv (real Pollux T4 rows, 1–16 nodes).
Usage: test_validate_cli.py CLOUDFIT_BINARY SOURCE_DIR"""
import csv
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = sys.argv[1], sys.argv[2]
DATA = os.path.join(SRC, "tests", "data", "search-t4-imagenet.csv")
TMP = pyharness.temp_dir(prefix="cloudfit-validate-")
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


def test_probe_rows_missing_and_an_unknown_nic():
    """--with-2node-probe on rows with no 2-node x 1-GPU run says why the network is the default; on a
    GPU no catalog VM has in that size (the NIC unknown) a measured network is not bounded by the
    10 Gbit/s the default assumes (docs/model.md "Only a NIC the catalog gives bounds anything")."""
    path = os.path.join(TMP, "no-probe.csv")
    with open(DATA) as f, open(path, "w", newline="") as g:
        rows = list(csv.DictReader(f))
        w = csv.DictWriter(g, fieldnames=rows[0].keys())
        w.writeheader()
        w.writerows(r for r in rows if not (r["num_nodes"] == "2" and r["num_gpus"] == "2"))
    src = run_json("--with-2node-probe", path)["groups"][0]["inter_node_source"]
    assert src.startswith("no 2-node × 1-GPU row to fit the probe on: catalog VM aws g4dn.12xlarge"), src
    src = run_json("--with-2node-probe", DATA)["groups"][0]["inter_node_source"]
    assert src.startswith("fitted from the multi-node rows"), src
    # the same rows under a GPU name whose 4-per-VM size no catalog VM has: the NIC is unknown
    unknown = renamed("imagenet", "Quadro RTX 6000", "unknown-nic.csv")
    doc = run_json("--with-2node-probe", unknown)
    g = doc["groups"][0]
    assert g["model_parameters"]["nic_gbps"] == 0, g["model_parameters"]
    known = run_json("--with-2node-probe", DATA)["groups"][0]
    # a network slower than the default fits as on the known 50 Gbit/s NIC (the A2 grid starts at the bound,
    # so its points differ) and predicts as well; test_fit holds a fast one unbounded
    assert abs(g["model_parameters"]["inter_gbps"] / known["model_parameters"]["inter_gbps"] - 1) < 0.25, (g, known)
    assert abs(g["errors"]["median_ape"] - known["errors"]["median_ape"]) < 0.02, (g["errors"], known["errors"])


def test_nic_span_said_for_an_unknown_nic():
    """JSON nic_span_gbps is what the default network's interval spans. On a NIC no catalog VM gives it was null,
    while the interval spans the catalog's NICs and the warning said so ("their 80 % interval spans the catalog's
    NICs, 2.5 to 6400 Gbit/s"); a known VM of one NIC, a measured or a given network span nothing."""
    unknown = renamed("imagenet", "Quadro RTX 6000", "span-unknown-nic.csv")
    p = subprocess.run([BIN, "validate", "-f", "json", unknown], capture_output=True, text=True, env=ENV, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "their 80 % interval spans the catalog's NICs, 2.5 to 6400 Gbit/s" in p.stderr, p.stderr
    params = json.loads(p.stdout)["groups"][0]["model_parameters"]
    assert params["nic_gbps"] == 0 and params["nic_span_gbps"] == [2.5, 6400], params
    for args in ((DATA,), ("--with-2node-probe", DATA), ("--with-2node-probe", unknown), ("--inter-node-gbps", "50", unknown)):
        params = run_json(*args)["groups"][0]["model_parameters"]
        assert params["nic_span_gbps"] is None, (args, params)


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


def test_quadro_rtx_6000_rows_are_carried_not_skipped():
    """A cluster whose gpu column spells the Turing Quadro RTX 6000 as tools
    do is carried over from the T4 fit (issue 25); the Ada RTX 6000 is its
    own row (data/gpus_added.csv), not taken for it, and a GPU the table
    lacks is skipped with the reason. The rows are the T4 rows renamed:
    this checks the name, not the accuracy."""
    with open(DATA) as f:
        rows = list(csv.DictReader(f))
    for name, entry in [("Quadro RTX 6000", "RTX6000"), ("QuadroRTX6000", "RTX6000"),
                        ("Quadro_RTX_6000", "RTX6000"), ("NVIDIA RTX 6000 Ada Generation", "RTX6000-Ada"),
                        # longer than 31 characters: cut to "NVIDIA RTX PRO 6000 Blackwell S" before, and skipped
                        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000"),
                        ("AMD Instinct MI300X VF", "MI300X"),
                        ("NVIDIA GeForce RTX 3090", None)]:
        path = os.path.join(TMP, "quadro.csv")
        with open(path, "w", newline="") as g:
            w = csv.DictWriter(g, fieldnames=rows[0].keys())
            w.writeheader()
            w.writerows(rows)
            w.writerows(dict(r, gpu=name, profile="quad") for r in rows)
        doc = run_json("--train-gpus", "T4", path)
        (quad,) = [g for g in doc["groups"] if g["gpu"] == name]
        assert quad["gpu_table_entry"] == entry, (name, quad)
        if entry:
            assert quad["predicted"] == len(rows) and "error" not in quad, (name, quad)
        else:
            assert "not in the GPU table" in quad["error"], (name, quad)


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
    # bounded as the spec's model.parameters: 1e308 gave inf% errors (null in JSON) at exit 0
    rc, out, err = run("--params", "my-own-net=1e308", path)
    assert rc == 2 and out == "" and "up to 1e+15 (as the spec's model.parameters), got 'my-own-net=1e308'" in err, (rc, err)
    assert run_json("--params", "my-own-net=1e15", path)["groups"][0]["predicted"] > 0


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
    assert "1 of 4 rows name a GPU that is not in the GPU table (RTX 9999; docs/catalog.md)" in err, err
    assert doc["rows_left_out"] == 1, doc


def test_crossgpu_batch_size_is_positive():
    """batch_size_per_gpu took -64 and 0; empty still means not given."""
    for batch, ok in (("-64", False), ("0", False), ("", True), ("64", True)):
        path = os.path.join(TMP, "batch.csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["source", "gpu", "gpu_count", "model", "precision", "batch_size_per_gpu", "throughput",
                        "unit", "notes"])
            w.writerow(["test", "H100", 1, "resnet50", "fp16", 64, 2000, "images/s", "benchmark v1"])
            w.writerow(["test", "V100", 1, "resnet50", "fp16", batch, 700, "images/s", "benchmark v1"])
        rc, out, err = run("--crossgpu", path)
        if ok:
            assert rc == 0, (batch, err)
        else:
            assert rc == 3 and out == "", (batch, rc, out)
            assert "%s:3: column 'batch_size_per_gpu': expected a positive number, got %s" % (path, batch) in err, err


def rows_of(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def write_rows(name, rows, fields=None):
    path = os.path.join(TMP, name)
    with open(path, "w", newline="") as g:
        w = csv.DictWriter(g, fieldnames=fields or list(rows[0].keys()))
        w.writeheader()
        for r in rows:
            w.writerow(r)
    return path


def test_interval_coverage_reported():
    doc = run_json("--with-2node-probe", DATA)
    cov = doc["overall"]["interval_coverage"]
    assert 0 < cov <= 1.0, cov
    assert "interval_coverage" in doc["groups"][0]["errors"]
    rc, out, _ = run("--with-2node-probe", DATA)
    assert "IN 80%" in out, out


def test_nothing_predicted_single_node_rows():
    """The hint is built from the options in force: it said 'pass --fit-all-rows' with --fit-all-rows given
    (which scores the same rows, so never helps) and 'lower --train-max-nodes' at 1."""
    single = write_rows("single.csv", [r for r in rows_of(DATA) if r["num_nodes"] == "1"])
    rc, out, err = run(single)
    assert rc == 3 and out == "", (rc, out)
    assert "nothing could be predicted: every row is in the training subset" in err, err
    assert "hint: add rows with more nodes, or fit only the search's light profile (--light-profile" in err, err
    for args in (["--fit-all-rows"], ["--train-max-nodes", "1"], ["--fit-all-rows", "--train-max-nodes", "1"]):
        rc, out, err = run(*args, single)
        assert rc == 3 and out == "", (args, rc, out)
        assert "pass --fit-all-rows" not in err and "lower --train-max-nodes" not in err, (args, err)
    rc, _, err = run("--fit-all-rows", single)
    assert "hint: --fit-all-rows does not change which rows are scored; add rows with more nodes" in err, err
    rc, _, err = run("--train-max-nodes", "2", single)
    assert "lower --train-max-nodes (now 2)" in err, err
    # the light profile's suggestion works: the other single-node rows are scored
    assert run_json("--light-profile", single)["overall"]["n"] > 0


def test_a_group_with_nothing_to_predict_has_no_error():
    """A group whose every row is in the training subset (only single-node rows) beside one that is scored
    printed 0.0 % / 0.0 % / 0.0 % — a perfect score — and JSON median_ape 0: now '-' and null."""
    rows = rows_of(DATA)
    single = [dict(r, model="cifar10") for r in rows if r["num_nodes"] == "1"]
    path = write_rows("one-group-unscored.csv", rows + single)
    rc, out, err = run(path)
    assert rc == 0, err
    line, = [x for x in out.splitlines() if x.strip().startswith("cifar10/T4/aws")]
    assert "%" not in line and line.split()[1:7] == [str(len(single)), "0", "-", "-", "-", "-"], line
    assert "nothing left to predict" in line, line
    doc = run_json(path)
    errors, = [g["errors"] for g in doc["groups"] if g["model"] == "cifar10"]
    assert errors == {"n": 0, "median_ape": None, "p90_ape": None, "max_ape": None}, errors
    assert doc["overall"]["n"] > 0 and doc["overall"]["median_ape"] > 0


def test_a_gpu_the_table_lacks_is_named_when_nothing_carries():
    """Carrying a fit to or from a GPU the table lacks said "GPU 'T4' or 'RTX 2080 Ti' is not in the GPU
    table", leaving the reader to guess which."""
    rows = rows_of(DATA)
    path = write_rows("two-gpus.csv", rows + [dict(r, gpu="RTX 2080 Ti") for r in rows])
    for train, message in (("T4", "GPU 'RTX 2080 Ti' is not in the GPU table: T4's fit cannot be carried to it"),
                           ("RTX 2080 Ti", "the fitted GPU 'RTX 2080 Ti' is not in the GPU table: its fit cannot "
                                           "be carried to T4")):
        doc = run_json("--train-gpus", train, path)
        errors = [g["error"] for g in doc["groups"] if "error" in g]
        assert errors == [message], (train, errors)


def test_train_gpus_absent_from_the_file():
    rc, out, err = run("--train-gpus", "A100", DATA)
    assert rc == 3 and out == "", (rc, out)
    assert "training GPU 'A100' has no rows in the measurements (their GPUs: T4)" in err, err
    assert "--train-gpus names GPUs of the file's gpu column" in err, err


def test_crossgpu_without_pairs():
    path = os.path.join(TMP, "onegpu.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["source", "gpu", "gpu_count", "model", "precision", "batch_size_per_gpu", "throughput", "unit",
                    "notes"])
        w.writerow(["test", "T4", 1, "resnet50", "fp16", 64, 250, "images/s", "benchmark v1"])
        w.writerow(["test", "A100", 1, "resnet50", "bf16", 64, 900, "images/s", "benchmark v1"])
    rc, out, err = run("--crossgpu", path)
    assert rc == 3 and out == "", (rc, out)
    assert "no pair to score" in err and path in err, err  # the file is named (it was not)


def test_crossgpu_precision_pairs():
    path = os.path.join(TMP, "prec.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["source", "gpu", "gpu_count", "model", "precision", "batch_size_per_gpu", "throughput", "unit",
                    "notes"])
        for gpu, prec, x in [("V100", "fp32", 350), ("A100-40GB", "fp32", 600), ("A100-40GB", "tf32", 1000),
                             ("V100", "fp16", 900), ("A100-40GB", "bf16", 2000)]:
            w.writerow(["test", gpu, 1, "resnet50", prec, 64, x, "images/s", "benchmark v1"])
    doc = json.loads(run("-f", "json", "--crossgpu", path)[1])
    methods = {m["method"]: m for m in doc["methods"]}
    assert methods["cross-precision"]["n"] > 0 and methods["cross-fp32"]["n"] == methods["cross-precision"]["n"]
    # V100 FP32 → A100 TF32 with each side's own peak beats FP32 peaks on both sides
    assert methods["cross-precision"]["median_ape"] < methods["cross-fp32"]["median_ape"], methods


def test_params_without_a_count_limit_the_last_wins():
    """--params as often as needed; of repeats the last wins, as with --model-constants (the first did)."""
    args = []
    for i in range(40):
        args += ["--params", "imagenet=%d" % (1000000 + i)]
    doc = run_json(*args, "--params", "imagenet=25557032", DATA)  # the built-in table's count
    assert doc["groups"][0]["predicted"] > 0
    assert doc["overall"] == run_json(DATA)["overall"], doc["overall"]
    small = run_json("--params", "imagenet=1000000", DATA)["overall"]
    assert small != doc["overall"], small


def test_params_must_name_a_model_of_the_file():
    """A --params NAME no model of the file has was ignored (exit 0); names match as the size table's do
    (case and separators ignored: ImageNet is imagenet)."""
    rc, out, err = run("--params", "resnet50=25557032", DATA)
    assert rc == 2 and out == "", (rc, out, err)
    assert "option '--params': no model 'resnet50' in %s (its models: imagenet)" % DATA in err, err
    assert run_json("--params", "Image-Net=1000000", DATA)["overall"] == \
        run_json("--params", "imagenet=1000000", DATA)["overall"]


def test_batches_up_to_2_pow_24():
    rows = rows_of(DATA)
    for r in rows:
        r["local_bsz"] = str(int(r["local_bsz"]) * 65536)  # up to 200 × 2^16 > 2^23
    big = max(int(r["local_bsz"]) for r in rows)
    rows[0]["local_bsz"] = str(1 << 24)
    assert big > 1 << 23
    for r in rows:  # derived, and checked: num_gpus × local_bsz
        r["global_bsz"] = str(int(r["num_gpus"]) * int(r["local_bsz"]))
    doc = run_json(write_rows("big.csv", rows))
    assert doc["overall"]["n"] > 0


def test_a_global_batch_that_is_not_gpus_times_local_batch_is_refused():
    """global_bsz is derived (num_gpus × local_bsz, no gradient accumulation
    in the format): a row of 8 GPUs whose num_gpus said 2 was validated as
    2 GPUs' step time without a word; it is now bad input naming the file,
    line, column and values. Empty is not checked."""
    rows = rows_of(DATA)
    i = next(k for k, r in enumerate(rows) if r["global_bsz"] and int(r["num_gpus"]) > 1)
    rows[i]["global_bsz"] = str(int(rows[i]["global_bsz"]) * 2)
    rc, out, err = run("-f", "json", write_rows("gb.csv", rows))
    assert rc == 3 and out == "", (rc, out, err)
    assert re.search(r"gb\.csv:%d: column 'global_bsz': %s is not num_gpus × local_bsz \(%s × %s = %d\)"
                     % (i + 2, rows[i]["global_bsz"], rows[i]["num_gpus"], rows[i]["local_bsz"],
                        int(rows[i]["num_gpus"]) * int(rows[i]["local_bsz"])), err), err
    assert "hint: global_bsz is derived" in err, err
    for r in rows:
        r["global_bsz"] = ""
    assert run_json(write_rows("gb-empty.csv", rows))["overall"]["n"] > 0


def test_a_gpu_name_longer_than_the_field_is_refused_not_cut():
    """A gpu field of 64 characters or more was cut to the field's size and
    validated as whatever that prefix named; it is now an error naming the
    file, line and column."""
    name = "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition (rev 2, lab)"
    path = renamed("imagenet", name, "long.csv")
    rc, out, err = run("-f", "json", path)
    assert rc == 3 and out == "", (rc, out, err)  # bad input data (docs/exit-codes.md)
    assert re.search(r"long\.csv:2: column 'gpu': expected at most 63 characters, got %d" % len(name), err), err


def test_new_gpu_names_resolve():
    for name, entry in [("NVIDIA A30", "A30"), ("NVIDIA A40", "A40"), ("Tesla V100S-PCIE-32GB", "V100S-PCIE"),
                        ("V100S", "V100S-PCIE"), ("Tesla V100-PCIE-32GB", "V100-PCIE-32GB"),
                        ("Tesla V100-PCIE-16GB", "V100-PCIE")]:
        doc = run_json("--inter-node-gbps", "50", renamed("imagenet", name, "n.csv"))
        assert doc["groups"][0]["gpu_table_entry"] == entry, (name, doc["groups"][0]["gpu_table_entry"])


def test_precision_column_carries_with_the_runs_peak():
    rows = rows_of(DATA)
    for r in rows:
        r["precision"] = "fp32"
    a100 = []
    for r in rows:
        q = dict(r, gpu="A100", hw_gpus_per_node="8", precision="tf32")
        q["step_time_s"] = str(float(r["step_time_s"]) / 3)
        a100.append(q)
    path = write_rows("prec.csv", rows + a100)
    doc = run_json("--train-gpus", "T4", "--inter-node-gbps", "50", path)
    g = [x for x in doc["groups"] if x["gpu"] == "A100"][0]
    assert g["precision"] == "tf32" and g["carried_from"] == "T4", g
    # the same rows without the column: both sides at FP32, a different carry
    plain = [dict((k, v) for k, v in r.items() if k != "precision") for r in rows + a100]
    doc2 = run_json("--train-gpus", "T4", "--inter-node-gbps", "50", write_rows("plain.csv", plain))
    g2 = [x for x in doc2["groups"] if x["gpu"] == "A100"][0]
    assert g["errors"]["median_ape"] != g2["errors"]["median_ape"], (g, g2)
    bad = write_rows("badprec.csv", [dict(rows[0], precision="int4")])
    rc, _, err = run(bad)
    assert rc == 3 and "column 'precision': expected fp32, tf32, fp16, bf16 or amp, got 'int4'" in err, err


def test_groups_apart_by_precision_each_on_its_vm_size():
    """Two groups of one model and GPU, apart only by precision: their table labels were identical, and the
    second's NIC was looked up with the first's GPUs per VM (4 H100s: gcp's a3-highgpu-4g, not its own
    8-GPU p5.48xlarge)."""
    base = [dict(r, gpu="H100", precision="") for r in rows_of(DATA)]
    fp16 = [dict(r, hw_gpus_per_node="8", precision="fp16") for r in base]
    alone = run_json(write_rows("fp16.csv", fp16))["groups"][0]
    assert "p5.48xlarge" in alone["inter_node_source"], alone
    mixed = write_rows("by-precision.csv", base + fp16)
    doc = run_json(mixed)
    (g,) = [x for x in doc["groups"] if x.get("precision") == "fp16"]
    assert g["inter_node_source"] == alone["inter_node_source"] and g["errors"] == alone["errors"], (g, alone)
    rc, out, err = run(mixed)
    assert rc == 0, err
    labels = [line.split()[0:2] for line in out.splitlines() if line.startswith("  imagenet/")]
    assert labels == [["imagenet/H100/aws", "20"], ["imagenet/H100/aws", "fp16"]], out


def test_group_on_two_vm_sizes_is_said():
    """Multi-node rows of one group measured on VMs of two sizes: the first size's NIC is used, and a warning
    names the row."""
    rows = rows_of(DATA)
    first = next(i for i, r in enumerate(rows) if r["num_nodes"] == "2")
    other = next(i for i, r in enumerate(rows) if r["num_nodes"] == "4")
    rows[other]["hw_gpus_per_node"] = "8"
    path = write_rows("two-sizes.csv", rows)
    rc, out, err = run(path)
    assert rc == 0, err
    assert ("warning: %s:%d: imagenet/T4/aws: hw_gpus_per_node 8, but the group's multi-node rows from line %d "
            "ran on VMs of 4 GPUs; its network is taken as the 4-GPU VM's" % (path, other + 2, first + 2)) in err, err
    assert "g4dn.12xlarge" in out, out
    rc, _, err = run(DATA)
    assert "hw_gpus_per_node" not in err, err


def test_rows_file_is_not_the_measurements_file():
    """--rows naming the measurements file replaced the measurements with the predictions."""
    path = write_rows("keep.csv", rows_of(DATA))
    with open(path) as f:
        before = f.read()
    link = os.path.join(TMP, "keep-link.csv")
    os.symlink(path, link)
    hard = os.path.join(TMP, "keep-hard.csv")
    os.link(path, hard)
    for rows in (path, link, hard, os.path.join(TMP, ".", "keep.csv")):
        rc, out, err = run("--rows", rows, path)
        assert rc == 2 and out == "", (rows, rc, out)
        assert "option '--rows' names the input '%s': writing it would replace that input" % path in err, err
    with open(path) as f:
        assert f.read() == before
    rc, _, err = run("--rows", os.path.join(TMP, "keep-rows.csv"), path)
    assert rc == 0, err


def test_train_gpus_names_no_gpu():
    """--train-gpus '' or ',' was accepted as 'every GPU'; names past 1024 bytes or 64 names were dropped."""
    for value in ("", ",", "T4,", "T4,,T4"):
        rc, out, err = run("--train-gpus", value, DATA)
        assert rc == 2 and out == "", (value, rc, out)
        assert "option '--train-gpus' expects NAME[,NAME...], got '%s' (an empty name)" % value in err, err
    rc, out, err = run("--train-gpus", ",".join(["T4"] * 64 + ["A100"]), DATA)
    assert rc == 3 and "training GPU 'A100' has no rows" in err, (rc, err)
    assert run_json("--train-gpus", ",".join(["t4"] * 300), DATA)["overall"]["n"] > 0


def test_extreme_results_print_short():
    """--inter-node-gbps 1e-300 and a progress of 1e300 in a noise trace printed errors of 2.9e302 % with all their
    ~300 digits (%f); a magnitude of 1e9 or more is written %.3g. (The M0 run's progress is its iterations: both are
    1e300 at its last epoch.)"""
    rc, out, err = run("--inter-node-gbps", "1e-300", DATA)
    assert rc == 0 and "e+3" in out, (rc, out, err)
    assert max(len(line) for line in out.splitlines()) < 200, out
    traces, models = gns_files("cifar10,128,acc,higher\n", "extreme")
    with open(traces) as f:
        lines = f.read().splitlines()
    lines = [",".join(l.split(",")[:4] + ["1e300", "1e300"] + l.split(",")[6:]) if l.startswith("cifar10,128,128,20,")
             else l for l in lines]
    with open(traces, "w") as f:
        f.write("\n".join(lines) + "\n")
    rc, out, err = run("--gns", traces, "--models", models)
    assert rc == 0 and "e+29" in out and max(len(line) for line in out.splitlines()) < 200, (rc, out, err)


def gns_files(models, name, drop_m0_run=False):
    """A 128-sample M0 run and a 512-sample run of cifar10 (as tests/test_usecase_validate.c), and `models`."""
    traces = os.path.join(TMP, name + "-traces.csv")
    with open(traces, "w") as f:
        f.write("model,batch_size,m0,epoch,progress,iteration,metric,b_noise\n")
        # progress in M0 steps: the M0 run's is its iterations, the 512 run makes 3 (of at most 512/128) a step
        for batch, per_epoch, progress in ((128, 100, 100), (512, 30, 90)):
            if batch == 128 and drop_m0_run:
                continue
            for e in range(1, 21):
                f.write("cifar10,%d,128,%d,%d,%d,%.3f,%.1f\n" % (batch, e, e * progress, e * per_epoch,
                                                                  0.5 + e * 0.02, 300.0 + 40 * e))
    path = os.path.join(TMP, name + "-models.csv")
    with open(path, "w") as f:
        f.write("model,m0,metric_name,metric_better\n" + models)
    return traces, path


def test_gns_models_file_is_checked_and_named():
    """A model listed twice was scored twice; the traces' m0 column was never compared with MODELS.csv; and the
    scoring's errors named neither file ("model 'cifar10': no run at its M0 batch 128")."""
    traces, models = gns_files("cifar10,128,acc,higher\n", "ok")
    assert run_json("--gns", traces, "--models", models)["overall"]["n"] == 1
    traces, models = gns_files("cifar10,128,acc,higher\nncf,256,hr,higher\ncifar10,128,acc,higher\n", "dup")
    rc, out, err = run("--gns", traces, "--models", models)
    assert rc == 3 and out == "", (rc, out)
    assert "cloudfit: %s:4: model 'cifar10' is listed twice (first at line 2)" % models in err, err
    traces, models = gns_files("cifar10,256,acc,higher\n", "m0")
    rc, out, err = run("--gns", traces, "--models", models)
    assert rc == 3 and out == "", (rc, out)
    assert "cloudfit: %s:2: column 'm0': 128, but %s:2 gives model 'cifar10' m0 256" % (traces, models) in err, err
    traces, models = gns_files("cifar10,128,acc,higher\n", "nom0", drop_m0_run=True)
    rc, out, err = run("--gns", traces, "--models", models)
    assert rc == 3 and out == "", (rc, out)
    assert "cloudfit: %s: no run of model 'cifar10' at its M0 batch 128 (%s:2)" % (traces, models) in err, err
    # a trace model MODELS.csv does not list was dropped silently: it is left out and said (a models file may
    # name a subset of the traces' models); nothing to score was exit 0, "n 0"
    traces, models = gns_files("ncf,256,hr,higher\n", "unlisted")
    rc, out, err = run("--gns", traces, "--models", models)
    assert rc == 3 and out == "", (rc, out)
    assert "nothing could be predicted" in err, err
    with open(traces, "a") as f:  # one scoreable model beside the unlisted one: ncf, M0 256, and a run at 1024
        for batch, per_epoch, progress in ((256, 100, 100), (1024, 30, 90)):
            for e in range(1, 21):
                f.write("ncf,%d,256,%d,%d,%d,%.3f,%.1f\n" % (batch, e, e * progress, e * per_epoch, 0.5 + e * 0.02,
                                                            300.0 + 40 * e))
    rc, out, err = run("--gns", traces, "--models", models)
    assert rc == 0 and "left out: " in out and "trace rows of models %s does not list (the first: 'cifar10', %s:2)" % (
        models, traces) in out, (rc, out, err)
    doc = run_json("--gns", traces, "--models", models)["unlisted_models"]
    assert doc["rows_left_out"] > 0 and doc["first_model"] == "cifar10" and doc["first_line"] == 2, doc
    traces, models = gns_files("cifar10,512,acc,higher\n", "nothing")
    with open(traces) as f:
        # the 512 run as its own M0 run: m0 512, its progress its iterations
        only_512 = [",".join(fields[:2] + ["512", fields[3], fields[5]] + fields[5:])
                    for fields in (line.split(",") for line in f if ",512," in line)]
    with open(traces, "w") as f:
        f.write("model,batch_size,m0,epoch,progress,iteration,metric,b_noise\n" + "".join(only_512))
    rc, out, err = run("--gns", traces, "--models", models)
    assert rc == 3 and out == "", (rc, out)
    assert "nothing could be predicted: no model has a run at a batch above its M0" in err, err


def test_gns_progress_is_in_m0_steps():
    """progress is counted in M0 steps (docs/model.md): a trace whose progress was a fraction of training (0.05 ...
    1.0, as the project's own test traces had) was taken without a word and predicted 0 iterations against 600
    (-99.9 %). It is exit 3 naming the row; a consistent file predicts a sensible number."""
    traces, models = gns_files("cifar10,128,acc,higher\n", "fraction")
    with open(traces) as f:
        lines = f.read().splitlines()
    with open(traces, "w") as f:
        for line in lines:
            fields = line.split(",")
            if fields[0] == "cifar10":
                fields[4] = "%.3f" % (int(fields[3]) / 20.0)
            f.write(",".join(fields) + "\n")
    rc, out, err = run("--gns", traces, "--models", models)
    assert rc == 3 and out == "", (rc, out, err)
    assert ("cloudfit: %s:2: column 'progress': 0.05 at iteration 100 of the M0 run (batch 128); progress is counted "
            "in M0 steps, so the M0 run's progress should equal its iterations\nhint: " % traces) in err, err
    traces, models = gns_files("cifar10,128,acc,higher\n", "consistent")
    doc = run_json("--gns", traces, "--models", models)
    p = doc["predictions"][0]
    assert p["measured_iterations"] == 600 and 0.5 < p["predicted_iterations"] / 600 < 2, p

def test_light_profile():
    # the search's light profile: 1 GPU at 20, 81, 200; the full node (4 GPUs) at 20, 200; the probe at 20, 200
    doc = run_json("--light-profile", "--with-2node-probe", DATA)
    assert doc["options"]["light_profile"] is True
    g = doc["groups"][0]
    assert g["fitted"] == 7, g
    assert g["predicted"] == len(rows_of(DATA)) - 7, g
    assert any(b["nodes"] == "1" for b in g["by_nodes"]), g["by_nodes"]  # single-node rows are scored too
    rc, out, _ = run("--light-profile", DATA)
    assert rc == 0 and "fitted on the search's light profile\n" in out, out
    picked = {("1", "1", "20"), ("1", "1", "81"), ("1", "1", "200"), ("1", "4", "20"), ("1", "4", "200")}
    light = write_rows("light.csv", [r for r in rows_of(DATA)
                                     if (r["num_nodes"], r["num_gpus"], r["local_bsz"]) in picked])
    rc, out, err = run("--light-profile", light)
    assert rc == 3 and out == "", (rc, out)
    assert "every row is in the search's light profile" in err, err
    rc, out, err = run("--light-profile", "--train-max-nodes", "2", DATA)
    assert rc == 2 and "both choose the rows to fit" in err, (rc, err)


def test_overall_row_counts_the_fitted_rows():
    """The table's overall row said FITTED 0 while its group had fitted 20 rows."""
    rc, out, err = run("--with-2node-probe", DATA)
    assert rc == 0, err
    fitted = [int(line.split()[1]) for line in out.splitlines() if line.strip().startswith("overall")]
    groups = [int(line.split()[-6]) for line in out.splitlines()
              if re.match(r"^  \S", line) and not line.strip().startswith(("overall", "GROUP"))]
    assert fitted and fitted[0] > 0 and fitted[0] == sum(groups), (fitted, groups, out)


def test_model_constants_option():
    base = run_json("--with-2node-probe", DATA)["overall"]
    other = run_json("--with-2node-probe", "--model-constants", "a=1,L=0", "--model-constants", "psi=0.2",
                     DATA)["overall"]
    assert base["median_ape"] != other["median_ape"] or base["p90_ape"] != other["p90_ape"]
    rc, _, err = run("--model-constants", "gamma=2", DATA)
    assert rc == 2 and "unknown model constant 'gamma'" in err, err
    rc, _, err = run("--model-constants", "a=lots", DATA)
    assert rc == 2 and "expects a number" in err, err
    # a range is checked as a whole, whichever order the two arrive in
    rc, _, err = run("--model-constants", "a_max=0.5", "--model-constants", "a_min=1", DATA)
    assert rc == 2 and "a_min (1) is above a_max (0.5)" in err, err
    wide = run_json("--with-2node-probe", "--model-constants", "a_min=0,a_max=3", DATA)["overall"]
    point = run_json("--with-2node-probe", "--model-constants", "a_min=0.5,a_max=0.5", DATA)["overall"]
    assert wide["interval_coverage"] > point["interval_coverage"], (wide, point)
    # a long list is read whole, never cut (kT=0...01.25 was read as kT=0; then refused at 511 bytes)
    long = run_json("--with-2node-probe", "--model-constants", "kT=" + "0" * 600 + "1.25", DATA)["overall"]
    assert long == base, (long, base)  # 1.25 is the shipped kT


def test_options_of_another_mode_are_refused():
    """--rows and the step-time options did nothing with --crossgpu or --gns (exit 0, no rows file, an
    invalid constant accepted); --models and --train-epochs do nothing without --gns."""
    rows = os.path.join(TMP, "never.csv")
    for args, says in ((["--crossgpu", DATA, "--rows", rows], "'--rows' applies to a measurements file"),
                       (["--crossgpu", DATA, "--model-constants", "rho_def=inf"], "'--model-constants'"),
                       (["--gns", DATA, "--models", DATA, "--with-2node-probe"], "not to --gns"),
                       ([DATA, "--models", DATA], "'--models' goes with --gns")):
        rc, out, err = run(*args)
        assert rc == 2 and says in err and out == "", (args, rc, err)
    assert not os.path.exists(rows)


def test_rows_file_only_after_the_result_is_delivered():
    """--rows was written before the result: a failed delivery (a full disk) left it behind."""
    rows = os.path.join(TMP, "rows-full.csv")
    with open("/dev/full", "w") as full:
        p = subprocess.run([BIN, "validate", "-q", "--with-2node-probe", "--rows", rows, DATA], stdout=full,
                           stderr=subprocess.PIPE, text=True, env=ENV, timeout=120)
    assert p.returncode == 1 and "No space left on device" in p.stderr, p.stderr
    assert not os.path.exists(rows) and not [f for f in os.listdir(TMP) if "cloudfit-" in f], os.listdir(TMP)
    rc, out, err = run("-q", "--with-2node-probe", "--rows", rows, DATA)
    assert rc == 0 and os.path.exists(rows), err


sys.exit(pyharness.run(globals()))
