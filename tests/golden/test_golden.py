#!/usr/bin/python3
"""Golden-file tests: the table, JSON and markdown renderers and each
launch-spec emitter, byte for byte against tests/golden/*.golden, with the
clock fixed (SOURCE_DATE_EPOCH) and no CI variables. The emitted SkyPilot
task and PyTorchJob must parse as YAML (python3-yaml) and agree with the
JSON result. After an intended output change, regenerate them all with
tests/golden/regenerate.sh BUILD_DIR and review the diff.
Usage: test_golden.py CLOUDFIT_BINARY SOURCE_DIR [--update]"""
import difflib
import json
import os
import shlex
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = sys.argv[1], sys.argv[2]
UPDATE = "--update" in sys.argv[3:]
GOLDEN = os.path.join(SRC, "tests", "golden")
TMP = pyharness.temp_dir(prefix="cloudfit-golden-")
RESNET = os.path.join("examples", "resnet50-imagenet.json")
BASELINE = os.path.join("tests", "golden", "baseline.json.golden")
# spot alone at a loose deadline (its q0.95 of a tight one is far off): a multi-node elastic spot job
SPOT = ["--gpu", "H100", "--spot", "only", "--objective", "time", "--deadline-hours", "1000", "-n", "20"]

# name → (arguments after "recommend --no-history", output): output is
# "stdout" or the file an --emit wrote. Paths are relative to SOURCE_DIR so
# the goldens do not depend on where the tree lives.
CASES = {
    "table": (["-n", "5", RESNET], "stdout"),
    "json": (["-n", "5", "-f", "json", RESNET], "stdout"),
    # The markdown's diff section compares with an earlier run (the
    # time-objective result, itself a golden file).
    "baseline.json": (["-n", "3", "-f", "json", "--objective", "time", RESNET], "stdout"),
    "markdown": (["-n", "5", "-f", "markdown", "--compare-to", BASELINE, "--max-cost-increase", "10%",
                  "--max-cost", "5000", RESNET], "stdout"),
    "skypilot.yaml": (SPOT + ["--emit", "skypilot", "--entrypoint", "train.py --epochs 90", RESNET],
                      "resnet50-imagenet.sky.yaml"),
    "torchrun.sh": (SPOT + ["--emit", "torchrun", "--entrypoint", "train.py --epochs 90", RESNET],
                    "resnet50-imagenet.torchrun.sh"),
    "pytorchjob.yaml": (SPOT + ["--emit", "k8s", "--entrypoint", "train.py --epochs 90", RESNET],
                        "resnet50-imagenet.pytorchjob.yaml"),
    "torchrun-ondemand.sh": (["--emit", "torchrun", RESNET], "resnet50-imagenet.torchrun.sh"),
}
ORDER = ["table", "json", "baseline.json", "markdown", "skypilot.yaml", "torchrun.sh", "pytorchjob.yaml",
         "torchrun-ondemand.sh"]


def env():
    return pyharness.clean_env(TMP, SOURCE_DATE_EPOCH="1795000000")


def produce(name):
    args, output = CASES[name]
    emit_dir = os.path.join(TMP, name)
    os.makedirs(emit_dir, exist_ok=True)
    cmd = [BIN, "recommend", "--no-history", "-q", *args]
    if output != "stdout":
        cmd[3:3] = ["--emit-dir", emit_dir]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env(), cwd=SRC, timeout=120)
    assert p.returncode == 0, (shlex.join(cmd), p.returncode, p.stderr)
    if output == "stdout":
        return p.stdout
    return open(os.path.join(emit_dir, output)).read()


def chosen_for(args):
    p = subprocess.run([BIN, "recommend", "--no-history", "-q", "-f", "json", *args], capture_output=True,
                       text=True, env=env(), cwd=SRC, timeout=120)
    return json.loads(p.stdout)


def skypilot_name(c):
    import csv
    rows = list(csv.DictReader(open(os.path.join(SRC, "data", "launch_accelerators.csv"))))
    exact = [r for r in rows if (r["cloud"], r["instance_type"], r["cloudfit_gpu"]) == (c["cloud"], c["instance_type"], c["gpu"])]
    wild = [r for r in rows if (r["cloud"], r["instance_type"], r["cloudfit_gpu"]) == (c["cloud"], "*", c["gpu"])]
    return (exact or wild)[0]["skypilot_accelerator"]


def check_yaml(name, text):
    """The emitted YAML parses and says what the JSON result says."""
    doc = yaml.safe_load(text)
    result = chosen_for(SPOT + [RESNET])
    c = result["chosen"]
    if name == "skypilot.yaml":
        assert doc["num_nodes"] == c["nodes"], doc
        res = doc["resources"]
        # SkyPilot's accelerator name for the chosen cloud and instance type (data/launch_accelerators.csv)
        assert res["accelerators"] == f"{skypilot_name(c)}:{c['gpus_per_node']}" and res["use_spot"] is c["spot"], res
        first = res["ordered"][0]
        assert first["instance_type"] == c["instance_type"] and first["infra"] == f"{c['cloud']}/{c['region']}"
        alts = [a["instance_type"] for a in result["alternatives"]]
        assert [o["instance_type"] for o in res["ordered"][1:]] == [
            a["instance_type"] for a in result["alternatives"]
            if a["gpu"] == c["gpu"] and a["gpus_per_node"] == c["gpus_per_node"] and (c["spot"] or not a["spot"])
        ], (res["ordered"], alts)
        assert doc["envs"]["CLOUDFIT_LOCAL_BATCH"] == str(c["local_batch"])
        assert float(doc["envs"]["CLOUDFIT_LR"]) == c["lr"], (doc["envs"]["CLOUDFIT_LR"], c["lr"])  # one number
        assert "'train.py' '--epochs' '90'" in doc["run"], doc["run"]
    else:
        assert doc["apiVersion"] == "kubeflow.org/v1" and doc["kind"] == "PyTorchJob"
        specs = doc["spec"]["pytorchReplicaSpecs"]
        assert sum(s["replicas"] for s in specs.values()) == c["nodes"]
        # a multi-node spot job is elastic: Workers only (the webhook wants a Worker with elasticPolicy)
        pod = specs["Worker" if "elasticPolicy" in doc["spec"] else "Master"]["template"]["spec"]
        assert pod["nodeSelector"]["node.kubernetes.io/instance-type"] == c["instance_type"]
        container = pod["containers"][0]
        assert container["resources"]["limits"]["nvidia.com/gpu"] == c["gpus_per_node"]
        assert container["command"] == ["torchrun", "train.py", "--epochs", "90"]
        assert all(isinstance(e["value"], str) for e in container["env"]), container["env"]
        if c["spot"]:
            assert doc["spec"]["elasticPolicy"]["maxReplicas"] == c["nodes"]


def main():
    passed = failed = 0
    for name in ORDER:
        path = os.path.join(GOLDEN, name + ".golden")
        try:
            got = produce(name)
            if UPDATE:
                with open(path, "w") as f:
                    f.write(got)
                print(f"[ UP ] {name}")
                passed += 1
                continue
            want = open(path).read()
            if got != want:
                diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), path, "now", n=1))
                raise AssertionError(f"{name} differs from {path} (regenerate with tests/golden/regenerate.sh "
                                     f"if the change is intended):\n{diff[:4000]}")
            if name.endswith(".yaml"):
                check_yaml(name, got)
            if name.endswith("json"):
                json.loads(got)
            print(f"[ OK ] {name}")
            passed += 1
        except Exception as e:  # noqa: BLE001 (report and go on)
            failed += 1
            print(f"[FAIL] {name}: {e}")
    print(f"{passed} passed, {failed} failed")
    pyharness.remove_temp_dirs(failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
