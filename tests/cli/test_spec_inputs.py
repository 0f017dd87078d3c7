#!/usr/bin/python3
"""End-to-end tests: no output option of a command that reads a spec may
replace a file the spec names (profile.gpus.<GPU> measurements CSVs,
data.source.npy.x/y, data.source.tokens). `recommend SPEC -o
data/t4-profile.csv`, the spec's own measurements, replaced them with the
result and exited 0; so did simulate, profile and search. Now exit 2
naming the option, the spec's key and the file, before anything runs (no
probe of search or profile), nothing written.
Usage: test_spec_inputs.py CLOUDFIT_BINARY SOURCE_DIR"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = sys.argv[1], sys.argv[2]
EXAMPLES = os.path.join(SRC, "examples")
TMP = pyharness.temp_dir(prefix="cloudfit-spec-inputs-")
ENV = pyharness.clean_env(TMP)
TRACE = os.path.join(EXAMPLES, "spot-traces", "availability_1node_02-15-2023_us-east-1a_V100x1.csv")


def run(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=ENV, timeout=120, cwd=TMP)
    return p.returncode, p.stdout, p.stderr


def make_job(name):
    """A folder with a spec naming every kind of input file, relative to
    the spec (two GPU profiles, one keyed by a tool's spelling), and those
    files. The tokens file is named as recommend's --emit skypilot file."""
    d = os.path.join(TMP, name)
    os.makedirs(os.path.join(d, "data"))
    spec = json.load(open(os.path.join(EXAMPLES, "resnet50-imagenet.json")))
    spec["name"] = "inp"
    spec["data"]["source"] = {"tokens": "inp.sky.yaml"}
    spec["profile"]["gpus"] = {"T4": "data/t4.csv", "Tesla V100-SXM2-16GB": "./data/v100.csv"}
    with open(os.path.join(d, "inp.json"), "w") as f:
        json.dump(spec, f)
    shutil.copy(os.path.join(EXAMPLES, "data", "resnet50-t4-profile.csv"), os.path.join(d, "data", "t4.csv"))
    with open(os.path.join(EXAMPLES, "data", "resnet50-t4-profile.csv")) as f:  # the same rows, as a V100's
        rows = [line.replace(",T4,", ",V100,", 1) for line in f]
    with open(os.path.join(d, "data", "v100.csv"), "w") as f:
        f.writelines(rows)
    with open(os.path.join(d, "inp.sky.yaml"), "w") as f:
        f.write("tokens\n")
    npy = dict(spec, name="npy")
    npy["data"] = dict(spec["data"], source={"npy": {"x": "x.npy", "y": "data/y.npy"}})
    with open(os.path.join(d, "npy.json"), "w") as f:
        json.dump(npy, f)
    for name in ("x.npy", "data/y.npy"):
        with open(os.path.join(d, name), "wb") as f:
            f.write(b"\x93NUMPY")
    return d


def snapshot(d):
    """Every file under d with its bytes: what must not change."""
    out = {}
    for root, _dirs, files in os.walk(d):
        for name in files:
            path = os.path.join(root, name)
            out[path] = open(path, "rb").read()
    return out


def test_an_output_never_replaces_a_file_the_spec_names():
    d = make_job("job")
    spec, npy = os.path.join(d, "inp.json"), os.path.join(d, "npy.json")
    t4, v100 = os.path.join(d, "data", "t4.csv"), os.path.join(d, "data", "v100.csv")
    x, y, tokens = os.path.join(d, "x.npy"), os.path.join(d, "data", "y.npy"), os.path.join(d, "inp.sky.yaml")
    marker = os.path.join(TMP, "probed")
    probe = f"exec:touch {marker}"  # a probe that ran leaves the marker
    db = ["--db", os.path.join(TMP, "h.db")]
    # (command and options, spec, option named, key named, file named)
    cases = [
        (["recommend", "--no-history", "-o", t4], spec, "--out-file", "profile.gpus.T4", t4),
        (["recommend", *db, "-o", os.path.join(d, "data", ".", "t4.csv")], spec, "--out-file", "profile.gpus.T4", t4),
        (["recommend", "--no-history", "--report", v100], spec, "--report",
         "profile.gpus.Tesla V100-SXM2-16GB", v100),
        (["recommend", "--no-history", "--plot", os.path.join(d, "data", "..", "data", "v100.csv")], spec, "--plot",
         "profile.gpus.Tesla V100-SXM2-16GB", v100),
        (["recommend", "--no-history", "--emit", "skypilot", "--emit-dir", d], spec,
         f"--emit skypilot' (in --emit-dir '{d}')", "data.source.tokens", tokens),  # the label quotes itself
        (["recommend", "--no-history", "-o", x], npy, "--out-file", "data.source.npy.x", x),
        (["simulate", "--trace", TRACE, "-o", t4], spec, "--out-file", "profile.gpus.T4", t4),
        (["simulate", "--trace", TRACE, "-o", y], npy, "--out-file", "data.source.npy.y", y),
        (["profile", *db, "--csv", t4], spec, "--csv", "profile.gpus.T4", t4),
        (["profile", *db, "-o", tokens], spec, "--out-file", "data.source.tokens", tokens),
        (["profile", *db, "--runner", probe, "--gpu", "T4", "--instance-type", "g4dn.xlarge", "--csv", v100], spec,
         "--csv", "profile.gpus.Tesla V100-SXM2-16GB", v100),
        (["search", *db, "--runner", probe, "-o", t4], spec, "--out-file", "profile.gpus.T4", t4),
        (["search", "--no-history", "--runner", probe, "-o", x], npy, "--out-file", "data.source.npy.x", x),
    ]
    before = snapshot(d)
    for args, which, option, key, path in cases:
        rc, out, err = run(*args, which)
        label = f"option '{option}" + ("" if option.endswith(")") else "'")
        want = f"cloudfit: {label} names the spec's {key} '{path}': writing it would replace that input"
        assert rc == 2 and want in err, (args, rc, err)
        assert "hint: " in err and out == "", (args, out, err)
        assert snapshot(d) == before, (args, "changed or left a file")
        assert not os.path.exists(marker), (args, "a probe ran before the refusal")
        assert not os.path.exists(db[1]), (args, "a history was created")


def test_other_outputs_still_run():
    """The same spec with its outputs elsewhere runs as before; its inputs stay as they were."""
    d = make_job("ok")
    spec = os.path.join(d, "inp.json")
    before = snapshot(d)
    out_file = os.path.join(TMP, "ok-result.txt")
    rc, out, err = run("recommend", "--no-history", "-q", "-n", "1", "-o", out_file, spec)
    assert rc == 0, err
    assert open(out_file).read().startswith("inp: ")
    assert snapshot(d) == before


def test_an_output_never_replaces_the_runner_trace():
    """`search --runner trace:F -o F` (and profile's -o, --csv) replaced the measured step times the probes
    were answered from with the result, exit 0. Now exit 2 before the first probe, nothing written."""
    d = make_job("runner")
    spec = os.path.join(d, "inp.json")
    trace = os.path.join(d, "data", "t4-runner.csv")
    shutil.copy(os.path.join(d, "data", "t4.csv"), trace)
    db = ["--db", os.path.join(TMP, "runner.db")]
    cases = [(["search", *db, "--trace-model", "imagenet", "-o", trace], "--out-file"),
             (["search", "--no-history", "--trace-model", "imagenet", "-o",
               os.path.join(d, "data", ".", "t4-runner.csv")], "--out-file"),
             (["profile", *db, "--gpu", "T4", "--trace-model", "imagenet", "--csv", trace], "--csv"),
             (["profile", *db, "--gpu", "T4", "--trace-model", "imagenet", "-o", trace], "--out-file")]
    before = snapshot(d)
    for args, option in cases:
        rc, out, err = run(*args, "--runner", f"trace:{trace}", spec)
        want = f"cloudfit: option '{option}' names the --runner trace '{trace}': writing it would replace that input"
        assert rc == 2 and want in err and out == "", (args, rc, out, err)
        assert snapshot(d) == before, (args, "changed or left a file")
        assert not os.path.exists(db[1]), (args, "a history was created")


def main():
    return pyharness.run(globals())


if __name__ == "__main__":
    sys.exit(main())
