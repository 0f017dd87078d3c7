#!/usr/bin/python3
"""Limits by construction (docs/reliability.md, issue 33): the extreme
values the validator accepts, taken from its own table (cf_spec_limits,
printed by the cf_spec_limits tool), run through recommend (table, JSON,
HTML report, SVG plot, the three launch-spec emitters), search and
simulate. Each must end as an answer (exit 0) or a clear "nothing fits"
(exit 4), and no output may hold a negative, wrapped (2^31, 2^63) or
non-finite number.
Usage: test_extremes.py CLOUDFIT_BINARY SOURCE_DIR (CF_SPEC_LIMITS: the tool)"""
import copy
import json
import math
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

from fhelp import BIN, ENV, SRC, Skip, main, tmp

TRACE_RUNNER = "trace:" + os.path.join(SRC, "tests", "data", "search-t4-imagenet.csv")
AVAILABILITY = os.path.join(SRC, "examples", "spot-traces", "availability_16node_08-27-2023_us-east-2b_V100x1.csv")
# ImageNet on ResNet-50 as the search tests have it (the trace runner's
# model), with a FLOP count so that any GPU can be estimated.
BASE = {"name": "imagenet", "model": {"parameters": 25557032, "flops_per_sample": 1.2e10},
        "data": {"samples": 1281167},
        "training": {"epochs": 90, "batch": 200, "lr": 0.08, "optimizer": "momentum"},
        "profile": {"noise_scale": 4000},
        "search": {"objective": "cost", "deadline_hours": 30, "max_nodes": 4}}
MAX_SAMPLES = 2.0 ** 53
SIMULATE_UP_TO_H = 500.0  # jobs up to this long replay in well under a second
# What simulate does with a checkpoint so slow that nothing finishes before
# its 20,000 h horizon is the same whichever key makes it slow: one case
# runs it, with one LR rule and one batch policy (all ten took 15 s under
# ASan), the other is left out (CI time).
HORIZON_CASE = "search.checkpoint_minutes=100000 "
SIMULATED_ELSEWHERE = ("search.storage_mb_per_s=2.2250738585072014e-308 ",)
# Wrapped integers and what C prints for non-finite doubles.
WRAPPED = re.compile(r"(?<![\w.])-?(2147483648|4294967296|9223372036854775808|18446744073709551616)(?![\w.])|"
                     r"(?<![\w.])-?(inf|nan)(?![\w.])", re.I)
NEGATIVE = re.compile(r"(?<![\w.\-/:])-\d")


def limits():
    out = subprocess.run([os.environ["CF_SPEC_LIMITS"]], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def extremes(limit):
    """The smallest and the largest accepted value of a key."""
    lo = limit["lo"]
    if limit["lo_exclusive"]:
        lo = math.nextafter(lo, math.inf) if lo != 0 else 2.2250738585072014e-308  # the smallest normal double
    if limit["integer"]:
        lo = int(math.ceil(lo))
    hi = int(limit["hi"]) if limit["integer"] else limit["hi"]
    return lo, hi


def place(spec, key, value):
    """Puts value at key ("*" a GPU of the profile, "[]" each element)."""
    parts = key.split(".")
    if parts[0] == "model" and parts[1] == "architecture":
        kind = {"layers[]": "mlp", "channels[]": "cnn", "image_size": "cnn", "classes": "cnn"}.get(parts[2], "decoder")
        arch = {"type": kind}
        if kind == "mlp":
            arch["layers"] = [value, 10]
        elif kind == "cnn":
            arch[parts[2].rstrip("[]")] = [value] if parts[2].endswith("[]") else value
        else:
            arch[parts[2]] = value
        spec["model"]["architecture"] = arch
        return
    if key.startswith("profile.noise_scale.trace"):
        point = [0.5, 4000.0]
        point[0 if key.endswith("[0]") else 1] = value
        spec["profile"]["noise_scale"] = {"trace": [point]}
        return
    if key.startswith("profile.gpus.*"):
        gpu = {"compute_s": {"alpha": 0.05, "beta": 0.004}, "sync_s": {"inter_node_gbps": 25}}
        rest = parts[3:]
        node = gpu
        for p in rest[:-1]:
            node = node.setdefault(p, {})
        node[rest[-1]] = value
        spec["profile"]["gpus"] = {"T4": gpu}
        return
    if key == "profile.local_batches[]":
        spec["profile"]["local_batches"] = [value]
        return
    if key.startswith("training.current."):  # today's set-up: all three keys or none
        spec["training"]["current"] = {"gpu": "T4", "gpus_per_node": 4, "nodes": 1}
    node = spec
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    node[parts[-1]] = value
    if key == "training.samples":
        del spec["training"]["epochs"]


def make_valid(spec):
    """Moves the other keys so that the cross-key rules hold (spec.c): the
    training samples within 2^53, the base batch within them,
    max_global_batch not below the batch. None when no other key can make
    up for the value (e.g. 1e-308 epochs: even 2^53 samples are less than
    one batch): the validator must then refuse the spec, naming why."""
    t, d, s = spec["training"], spec["data"], spec["search"]
    if s.get("max_global_batch", t["batch"]) < t["batch"]:
        t["batch"] = s["max_global_batch"]
    if "epochs" in t and t["epochs"] * d["samples"] > MAX_SAMPLES:
        t["epochs"] = MAX_SAMPLES / d["samples"] / 2
    if "samples" in t:
        t["samples"] = max(t["samples"], float(t["batch"]))
        return spec
    if t["batch"] > t["epochs"] * d["samples"]:
        need = t["batch"] / t["epochs"]
        if need >= MAX_SAMPLES:
            return None
        d["samples"] = int(math.ceil(need)) + 1
    return spec


def numbers(doc, path=""):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from numbers(v, path + "." + k)
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from numbers(v, "%s[%d]" % (path, i))
    elif isinstance(doc, (int, float)) and not isinstance(doc, bool):
        yield path, doc


# JSON fields that are signed by meaning: a change from a baseline or from
# today's set-up, a coordinate of a plot (none reach here today).
SIGNED = ("savings", "change", "delta", "diff")


def check_json(what, text):
    doc = json.loads(text)
    for path, v in numbers(doc):
        assert math.isfinite(v), (what, path, v)
        assert v >= 0 or any(s in path for s in SIGNED), (what, path, v)
        assert abs(v) not in (2 ** 31, 2 ** 32, 2 ** 63, 2 ** 64), (what, path, v)
    check_text(what, text, negatives=False)
    return doc


def check_text(what, text, negatives=True):
    m = WRAPPED.search(text)
    assert not m, (what, m.group(0), text[max(0, m.start() - 200):m.end() + 100])
    if negatives:
        m = NEGATIVE.search(text)
        assert not m, (what, m.group(0), text[max(0, m.start() - 200):m.end() + 100])


def run(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=ENV, timeout=300)
    return p.returncode, p.stdout, p.stderr


def exercise(case):
    """Every command on one spec; returns a line describing what ran."""
    name, spec, refused_spec = case
    folder = tmp()
    path = os.path.join(folder, "spec.json")
    with open(path, "w") as f:
        json.dump(spec or refused_spec, f)
    if spec is None:
        rc, out, err = run("recommend", "--no-history", path)
        assert rc == 3 and "%s: training." % path in err, (name, rc, err)
        return name
    report, plot, emit = (os.path.join(folder, n) for n in ("r.html", "p.svg", "launch"))
    rc, out, err = run("recommend", "--no-history", "-f", "json", "--report", report, "--plot", plot, "--emit",
                       "skypilot", "--emit", "torchrun", "--emit", "k8s", "--emit-dir", emit, path)
    assert rc in (0, 4), (name, rc, err)
    check_text(name + " stderr", err)
    hours = math.inf
    if rc == 0:
        hours = check_json(name + " recommend json", out)["chosen"]["hours"]
        for f in sorted(os.listdir(emit)):
            check_text(name + " " + f, open(os.path.join(emit, f)).read())
        check_text(name + " report", re.sub(r"<svg.*?</svg>", "", open(report).read(), flags=re.S), negatives=False)
    rc, out, err = run("recommend", "--no-history", "--no-chart", path)
    assert rc in (0, 4), (name, rc, err)
    check_text(name + " recommend table", out + err)
    rc, out, err = run("search", "--no-history", "--method", "model", "--runner", TRACE_RUNNER, "-f", "json", path)
    assert rc in (0, 4), (name, rc, err)
    check_text(name + " search stderr", err)
    if rc == 0:
        check_json(name + " search json", out)
    # simulate replays the trace tick by tick, up to 20,000 h: a job of
    # thousands of hours costs seconds (25 under ASan) and is left out; the
    # horizon itself is reached by search.checkpoint_minutes at its largest.
    if hours <= SIMULATE_UP_TO_H and not name.startswith(SIMULATED_ELSEWHERE):
        one_rule = ("--rule", "gain", "--batch", "hold") if name.startswith(HORIZON_CASE) else ()
        rc, out, err = run("simulate", path, "--trace", AVAILABILITY, *one_rule, "-f", "json")
        assert rc in (0, 4), (name, rc, err)
        check_text(name + " simulate stderr", err)
        if rc == 0:
            check_json(name + " simulate json", out)
    return name


def cases():
    out = []
    for limit in limits():
        for end, value in zip(("lo", "hi"), extremes(limit)):
            spec = copy.deepcopy(BASE)
            place(spec, limit["key"], value)
            as_placed = copy.deepcopy(spec)
            out.append(("%s=%r (%s)" % (limit["key"], value, end), make_valid(spec), as_placed))
    return out


def test_extreme_accepted_values_give_no_wrapped_or_negative_number():
    extreme_cases = cases()
    assert len(extreme_cases) >= 80, len(extreme_cases)
    def attempt(case):
        try:
            exercise(case)
            return None
        except AssertionError as e:
            return repr(e)[:700]
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        failures = [f for f in pool.map(attempt, extreme_cases) if f]
    assert not failures, "%d of %d cases:\n%s" % (len(failures), len(extreme_cases), "\n".join(failures))


def write_spec(**changes):
    spec = copy.deepcopy(BASE)
    for key, value in changes.items():
        section, name = key.split("__")
        spec[section][name] = value
    path = os.path.join(tmp(), "audit.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def test_audit_batch_of_2_to_the_30_no_wrapped_local_batch():
    """Issue 33 (1): training.batch >= 2^30 overflowed an int in the batch
    grid: local batch -2147483648 in the table, JSON and launch specs."""
    path = write_spec(training__batch=2 ** 30, data__samples=20000000)
    folder = tmp()
    rc, out, err = run("recommend", "--no-history", "-f", "json", "--emit", "torchrun", "--emit-dir", folder, path)
    assert rc == 0, err
    doc = check_json("batch 2^30 json", out)
    assert doc["chosen"]["local_batch"] >= 1 and doc["constraints"]["max_global_batch"] == 2 ** 31 - 1
    check_text("batch 2^30 torchrun", open(os.path.join(folder, "imagenet.torchrun.sh")).read())
    rc, out, err = run("recommend", "--no-history", path)
    assert rc == 0, err
    check_text("batch 2^30 table", out)


def test_audit_epochs_1e300_and_no_budget():
    """Issue 33 (9, 10): epochs 1e300 is refused naming the key (it printed
    -9,223,372,036,854,775,808 samples); a job that nothing can run,
    without a deadline or budget, no longer says "budget ($0)"."""
    rc, out, err = run("recommend", "--no-history", write_spec(training__epochs=1e300))
    assert rc == 3 and "training.epochs: expected a positive number up to 1e6, got 1e+300" in err, (rc, err)
    rc, out, err = run("recommend", "--no-history", write_spec(training__epochs=1e6, data__samples=2 ** 50))
    assert rc == 3 and "training.epochs: 1e+06 epochs of data.samples (1125899906842624) are 1.126e+21 training " \
                       "samples, more than 2^53" in err, (rc, err)
    spec = copy.deepcopy(BASE)
    spec["model"]["memory_per_sample_mib"] = 1e9
    del spec["search"]["deadline_hours"]
    path = os.path.join(tmp(), "nofit.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    rc, out, err = run("recommend", "--no-history", path)
    assert rc == 4 and "no configuration can run the job" in err and "budget" not in err, (rc, err)



def sanitized():
    """The ASan build: its runtime reserves terabytes of shadow memory and LeakSanitizer opens /proc files at
    exit, so address-space and descriptor limits test the sanitizer, not cloudfit (the plain build runs them)."""
    return "sanitize=ON" in subprocess.run([BIN, "version"], capture_output=True, text=True, env=ENV).stdout


def test_too_many_open_files_is_not_bad_input():
    """'Too many open files' was exit 3 (bad input), or a hint that the database was not writable."""
    if sanitized():
        raise Skip("under the sanitizers: LeakSanitizer needs file descriptors of its own at exit")
    spec = os.path.join(SRC, "examples", "resnet50-imagenet.json")
    for n in (5, 6, 8):
        p = subprocess.run(["prlimit", "--nofile=%d" % n, BIN, "recommend", "--no-history", "-q", spec],
                           capture_output=True, text=True, env=ENV, timeout=60, cwd=SRC)
        if p.returncode == 0:
            continue  # enough descriptors at this count
        assert p.returncode == 1 and "Too many open files" in p.stderr and "ulimit -n" in p.stderr, (n, p.stderr)

def test_a_small_address_space_never_hangs():
    """Under an address-space limit of 50-170 MiB every command spun at 100 % CPU for ever: OpenBLAS's worker
    threads, started at load, retried their 128 MiB buffer and main's join waited on them; at 40 MiB it exited
    130 as if interrupted. Now no worker starts at load: the command runs, or says it is out of memory (exit 1)."""
    if sanitized():
        raise Skip("under the sanitizers: AddressSanitizer reserves its shadow memory beyond any such limit")
    spec = os.path.join(SRC, "examples", "mlp-synthetic.json")
    for mib, args in ((64, ["--version"]), (128, ["--version"]), (160, ["help"]),
                      (256, ["recommend", "--no-history", "-q", spec])):
        p = subprocess.run(["prlimit", "--as=%d" % (mib << 20), BIN, *args], capture_output=True, text=True,
                           env=ENV, timeout=60)
        assert p.returncode in (0, 1), (mib, args, p.returncode, p.stderr[-400:])
        assert p.returncode == 0 or "out of memory" in p.stderr, (mib, args, p.stderr[-400:])
    # the probes cloudfit starts see the user's environment, not the one-thread setting used at load
    folder = tmp()
    probe, seen = os.path.join(folder, "env_probe.sh"), os.path.join(folder, "seen")
    with open(probe, "w") as f:
        f.write("#!/bin/sh\nprintf '%%s' \"${OPENBLAS_NUM_THREADS-unset}\" > %s\nexit 3\n" % seen)
    doc = json.load(open(spec))
    doc["profile"] = {"backend": "exec", "command": ["/bin/sh", probe], "local_batches": [8], "steps": 3}
    exec_spec = os.path.join(folder, "exec.json")
    json.dump(doc, open(exec_spec, "w"))
    subprocess.run([BIN, "profile", "-q", "--db", os.path.join(folder, "h.db"), exec_spec], capture_output=True,
                   env=ENV, timeout=60)
    assert open(seen).read() == "unset", open(seen).read()


def test_synthetic_data_out_of_memory_is_not_a_model_that_does_not_fit():
    """The CPU engine's synthetic data set (samples × input width floats) that the host cannot hold was
    reported as 'the model alone does not fit' with hints to lower the widths, exit 4: it is out of memory
    (exit 1), and data.samples is what to lower."""
    if sanitized():
        raise Skip("under the sanitizers: AddressSanitizer reserves its shadow memory beyond any such limit")
    folder = tmp()
    spec = os.path.join(folder, "wide.json")
    json.dump({"name": "wide", "model": {"architecture": {"type": "mlp", "layers": [100000, 64, 10]}},
               "data": {"samples": 42949}, "training": {"epochs": 1, "batch": 32, "lr": 0.05},
               "profile": {"local_batches": [8], "steps": 3}}, open(spec, "w"))
    p = subprocess.run(["prlimit", "--as=%d" % (2048 << 20), BIN, "profile", "-q", "--backend", "cpu", "--db",
                        os.path.join(folder, "h.db"), spec], capture_output=True, text=True, env=ENV, timeout=120)
    assert p.returncode == 1 and "out of memory: no room for 42949 synthetic samples" in p.stderr, p.stderr
    assert "smaller data.samples" in p.stderr and "model alone does not fit" not in p.stderr, p.stderr


if __name__ == "__main__":
    main(dict(globals()))
