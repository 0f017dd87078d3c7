#!/usr/bin/python3
"""End-to-end tests of `cloudfit profile --runner RUNNER --gpu GPU`: the
light profile plus the 2-node × 1-GPU probe through the trace runner on the
Pollux T4 rows of tests/data/search-t4-imagenet.csv (1-GPU, full-VM and
placement-11 rows), the measurements CSV, the profile cache, and
`recommend` fitting the inter-node bandwidth from the probe; the probe
skipped (trace without multi-VM rows, exec template without {nodes}) or run
at the shape a trace has (2 VMs × 4 GPUs when it has no placement 11); a
failing light profile; usage errors.
Usage: test_profile_runner.py CLOUDFIT_BINARY SOURCE_DIR"""
import csv
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = sys.argv[1], sys.argv[2]
TRACE = os.path.join(SRC, "tests", "data", "search-t4-imagenet.csv")
FAKE = os.path.join(SRC, "tests", "search", "fake_runner.py")
TMP = tempfile.mkdtemp(prefix="cloudfit-profile-runner-")
ENV = dict(os.environ, HOME=TMP, XDG_DATA_HOME=os.path.join(TMP, "xdg"), NO_COLOR="1")
POLLUX_COLUMNS = ["model", "gpu", "profile", "hw_gpus_per_node", "source", "placement", "num_nodes", "num_gpus",
                  "local_bsz", "global_bsz", "step_time_s", "sync_time_s", "compute_time_s", "samples_per_s"]


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


SPEC = {"name": "imagenet", "model": {"parameters": 25557032}, "data": {"samples": 1281167},
        "training": {"epochs": 90, "batch": 200, "lr": 0.08, "optimizer": "momentum"},
        "profile": {"noise_scale": 4000}, "search": {"objective": "cost", "deadline_hours": 30}}


def spec(name, **search):
    s = json.loads(json.dumps(SPEC))
    s["search"].update(search)
    return write(name + ".json", json.dumps(s))


def run(cmd, *args, db=None):
    extra = ["--db", db] if db else []
    p = subprocess.run([BIN, cmd, *args, *extra], capture_output=True, text=True, env=ENV, timeout=120)
    return p.returncode, p.stdout, p.stderr


def stored(db):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT backend, device, profile_json FROM profiles").fetchall()
    con.close()
    return rows


def test_trace_profile_probe_csv_cache_and_recommend():
    db, out_csv = os.path.join(TMP, "a.db"), os.path.join(TMP, "a.csv")
    path = spec("a")
    rc, out, err = run("profile", path, "--runner", "trace:" + TRACE, "--gpu", "T4", "--csv", out_csv, db=db)
    assert rc == 0, err
    assert "(light profile + 2-node × 1-GPU probe)" in out and "2-node × 1-GPU probe: measured" in out, out
    # its batches listed as a list ("at per-GPU batch 20 200" read as one number)
    assert re.search(r"2-node × 1-GPU probe: measured: 2 nodes × 1 GPU \(placement 11\) at per-GPU batches \d+, \d+\n", out), out
    # The measurements CSV: Pollux columns, 1-GPU, full-VM (4) and placement-11 rows.
    with open(out_csv) as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == POLLUX_COLUMNS, reader.fieldnames
        rows = list(reader)
    placements = sorted({r["placement"] for r in rows})
    assert placements == ["1", "11", "4"], placements
    assert sum(r["placement"] == "1" for r in rows) == 3 and sum(r["placement"] == "4" for r in rows) == 2
    probe = [r for r in rows if r["placement"] == "11"]
    assert len(probe) == 2 and all(r["num_nodes"] == "2" and r["num_gpus"] == "2" for r in probe)
    assert {r["local_bsz"] for r in probe} == {"20", "200"}  # smallest and largest batch of the trace
    # Step times are the trace's (2 % seeded noise): within 10 % of the file's medians.
    with open(TRACE) as f:
        truth = {(r["placement"], r["local_bsz"]): float(r["step_time_s"]) for r in csv.DictReader(f)}
    for r in rows:
        t = truth[(r["placement"], r["local_bsz"])]
        assert abs(float(r["step_time_s"]) / t - 1) < 0.1, (r, t)
        assert r["hw_gpus_per_node"] == "4" and r["gpu"] == "T4" and r["model"] == "imagenet"
    # The cache holds every run, the probe included.
    (backend, device, text), = stored(db)
    assert (backend, device) == ("trace", "T4")
    doc = json.loads(text)
    assert doc["runner"]["probe_status"] == "measured"
    assert [r["kind"] for r in doc["runner"]["runs"]].count("probe") == 2
    # recommend fits BW_inter from the probe: provenance fitted, "measured probe".
    # 12 h: the default network is uncertain (its upper percentile shows through the overlap), so 8 h is not
    # met at 90 % confidence
    rc, out, err = run("recommend", path, "--gpu", "T4", "--cloud", "aws", "--deadline-hours", "12", "--no-history",
                       db=db)
    assert rc == 0, err
    net = [line for line in out.splitlines() if "network:" in line]
    assert len(net) == 1 and "fitted from the measured probe: 2 nodes × 1 GPU" in net[0], net
    gbps = float(net[0].split("network:")[1].split()[0])
    assert 1 < gbps < 10, net  # the Pollux T4 VMs: a few Gbit/s effective on a 50 Gbit/s NIC
    # 12 h: the default network is uncertain (its upper percentile shows through the overlap), so 8 h is not
    # met at 90 % confidence
    rc, out, err = run("recommend", path, "--gpu", "T4", "--cloud", "aws", "--deadline-hours", "12", "--no-history",
                       "-f", "json", db=db)
    assert rc == 0, err
    doc = json.loads(out)
    t4 = [g for g in doc["explanation"]["gpus"] if g["gpu"] == "T4"][0]
    assert t4["network"] == "fitted" and t4["network_note"].startswith("measured probe"), t4
    assert doc["chosen"]["nodes"] > 1 and doc["chosen"]["provenance"]["network"] == "fitted", doc["chosen"]


def test_without_probe_the_network_is_the_default():
    """The probe is what changes the network figure: the same spec profiled
    from a trace without placement 11 keeps the default bandwidth."""
    db = os.path.join(TMP, "b.db")
    with open(TRACE) as f:
        lines = f.read().splitlines()
    header = lines[0].split(",")
    col = header.index("num_nodes")
    # no multi-VM row at all (with other multi-VM shapes the probe would run there instead)
    no11 = write("no11.csv", "\n".join([lines[0]] + [l for l in lines[1:] if l.split(",")[col] == "1"]) + "\n")
    path = spec("b")
    # --gpu as nvidia-smi prints it: the row of the GPU table it names
    rc, out, err = run("profile", path, "--runner", "trace:" + no11, "--gpu", "Tesla T4", "--csv",
                       os.path.join(TMP, "b.csv"), db=db)
    assert rc == 0, err  # the single-node profile is complete and kept
    assert "the 2-node × 1-GPU probe is skipped: the trace has no 2-node × 1-GPU rows (placement 11)" in err, err
    assert "(light profile + network probe)" in out and "network probe: skipped" in out, out
    with open(os.path.join(TMP, "b.csv")) as f:
        assert sorted({r["placement"] for r in csv.DictReader(f)}) == ["1", "4"]
    (backend, device, text), = stored(db)
    assert device == "T4", device
    assert json.loads(text)["runner"]["probe_status"] == "skipped"
    # 12 h: the default network is uncertain (its upper percentile shows through the overlap), so 8 h is not
    # met at 90 % confidence
    rc, out, err = run("recommend", path, "--gpu", "T4", "--cloud", "aws", "--deadline-hours", "12", "--no-history",
                       db=db)
    assert rc == 0, err
    net = [line for line in out.splitlines() if "network:" in line][0]
    assert "the default for" in net and "a 2-node probe would measure it" in net, net
    assert "has no measured network probe (skipped: the trace has no 2-node" in out, out


def test_probe_at_the_shape_the_trace_has():
    """A trace whose only multi-VM rows are 2 VMs × 4 GPUs (placement 44):
    the probe runs there instead of being skipped, and says so — the same
    fallback as `cloudfit search`'s."""
    db = os.path.join(TMP, "p44.db")
    with open(TRACE) as f:
        rows = list(csv.DictReader(f))
    out_rows = []
    for r in rows:
        if r["placement"] == "11":
            r = dict(r, placement="44", num_gpus="8", global_bsz=str(8 * int(r["local_bsz"])))
        elif r["num_nodes"] != "1":
            continue
        out_rows.append(r)
    path44 = os.path.join(TMP, "p44.csv")
    with open(path44, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(out_rows)
    rc, out, err = run("profile", spec("p44"), "--runner", "trace:" + path44, "--gpu", "T4", "--csv",
                       os.path.join(TMP, "p44-runs.csv"), db=db)
    assert rc == 0, err
    assert "the 2-node × 1-GPU probe: the trace has no 2-node × 1-GPU rows (placement 11) of T4 for this model; " \
           "it runs as 2 nodes × 4 GPUs instead" in err, err
    assert "probe is skipped" not in err, err
    assert "2-node × 4-GPU probe: measured: 2 nodes × 4 GPUs" in out, out
    with open(os.path.join(TMP, "p44-runs.csv")) as f:
        assert "44" in {r["placement"] for r in csv.DictReader(f)}
    (backend, device, text), = stored(db)
    assert json.loads(text)["runner"]["probe_status"] != "skipped"


def test_trace_nic_and_price_options():
    """--trace-nic-gbps was listed for profile and did nothing (every run kept the pricing VM's NIC), and a
    trace of a GPU the catalog sells no VM of said "give a price with --price", which profile did not take."""
    db = os.path.join(TMP, "nic.db")
    rc, out, err = run("profile", spec("nic"), "--runner", "trace:" + TRACE, "--gpu", "T4", "--trace-nic-gbps", "1600",
                       "-f", "json", db=db)
    assert rc == 0, err
    assert {r["network_gbps"] for r in json.loads(out)["runner"]["runs"]} == {1600}, out
    with open(TRACE) as f:
        rows = list(csv.DictReader(f))
    unsold = os.path.join(TMP, "unsold.csv")  # the same rows on a GPU no catalog VM has in these shapes
    with open(unsold, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(dict(r, gpu="A40") for r in rows)
    rc, out, err = run("profile", spec("unsold"), "--runner", "trace:" + unsold, "--gpu", "A40", db=db)
    assert rc == 3 and "--price GPU=USD_PER_GPU_HR" in err, err
    rc, out, err = run("profile", spec("unsold"), "--runner", "trace:" + unsold, "--gpu", "A40", "--price",
                       "A40=1.1", db=db)
    assert rc == 0, err
    rc, out, err = run("profile", spec("unsold"), "--price", "A40=1.1", db=db)
    assert rc == 2 and "'--price' needs '--runner trace:" in err, err


def test_trace_rows_spelt_as_tools_print_the_gpu():
    """'--gpu T4' over a trace whose gpu column says 'Tesla T4' failed (exit 3, "no priced symmetric
    configuration"): the runner reads the column in the GPU table, as validate does."""
    with open(TRACE) as f:
        tesla = write("tesla-t4.csv", f.read().replace(",T4,", ",Tesla T4,"))
    outs = []
    for trace in (TRACE, tesla):
        rc, out, err = run("profile", spec("spelt"), "--runner", "trace:" + trace, "--gpu", "T4", "-f", "json",
                           db=os.path.join(TMP, "spelt.db"))
        assert rc == 0, (trace, rc, err)
        outs.append(json.loads(out)["runner"]["runs"])
    assert outs[0] == outs[1] and outs[0], outs


def test_runs_recorded_on_the_vms_the_rows_ran_on():
    """With --instance-type n1-highmem-8 (the GCP VM the runner prices 2-GPU T4 shapes on), the full-VM runs
    measured on the trace's AWS 4-GPU VMs were recorded as GCP n1-highmem-16 at 32 Gbit/s."""
    db = os.path.join(TMP, "it.db")
    rc, out, err = run("profile", spec("it"), "--runner", "trace:" + TRACE, "--gpu", "T4", "--instance-type",
                       "n1-highmem-8", "-f", "json", db=db)
    assert rc == 0, err
    runs = {(r["gpus_per_node"], r["cloud"], r["instance_type"], r["network_gbps"])
            for r in json.loads(out)["runner"]["runs"] if r["hw_gpus_per_node"] == 4}
    assert runs and all(c == "aws" and t == "g4dn.12xlarge" and n == 50 for g, c, t, n in runs), runs


def test_exec_runner_probe_and_template_without_nodes():
    db = os.path.join(TMP, "c.db")
    path = write("fake.json", json.dumps({
        "name": "fake-t4", "model": {"parameters": 25557032}, "data": {"samples": 1281167},
        "training": {"epochs": 10, "batch": 256, "lr": 0.1},
        "profile": {"noise_scale": 4000, "local_batches": [16, 32, 64]},
        "search": {"objective": "cost", "deadline_hours": 3, "clouds": ["aws"], "max_nodes": 4}}))
    template = ("exec:/usr/bin/python3 " + FAKE +
                " --nodes {nodes} --gpus {gpus_per_node} --batch {local_batch} --instance {instance_type}")
    rc, out, err = run("profile", path, "--runner", template, "--gpu", "T4", "--instance-type", "g4dn.12xlarge",
                       "--probe-steps", "5", "-f", "json", db=db)
    assert rc == 0, err
    doc = json.loads(out)
    runs = doc["runner"]["runs"]
    assert all(r["instance_type"] == "g4dn.12xlarge" for r in runs), runs
    shapes = sorted({(r["nodes"], r["gpus_per_node"]) for r in runs})
    assert shapes == [(1, 1), (1, 4), (2, 1)], shapes
    probe = [r for r in runs if r["kind"] == "probe"]
    # fake_runner.py: (0.02 + 0.002·m)·(1 + 0.03·(g − 1)) + 0.08 + 0.01·nodes for nodes > 1
    for r in probe:
        assert abs(r["step_time_s"] - (0.02 + 0.002 * r["local_batch"] + 0.1)) < 1e-6, r
    assert doc["runner"]["probe_status"] == "measured"
    # Without {nodes} the template cannot start two nodes: the probe is skipped.
    no_nodes = "exec:/usr/bin/python3 " + FAKE + " --nodes 1 --gpus {gpus_per_node} --batch {local_batch} --instance x"
    rc, out, err = run("profile", path, "--runner", no_nodes, "--gpu", "T4", "--instance-type", "g4dn.12xlarge",
                       "--probe-steps", "5", db=db)
    assert rc == 0, err
    assert "probe is skipped: the exec template has no {nodes} placeholder" in err, err


def test_newest_profile_of_a_gpu_gives_its_throughput():
    """Two cached profiles of T4 (a trace one, then a newer exec-runner one, another backend): the newest gives T4's
    throughput. The older used to win (each overwrote the last, newest first) while both were listed as used."""
    import time
    db, path = os.path.join(TMP, "newest.db"), spec("newest", clouds=["aws"], max_nodes=4)
    rc, out, err = run("profile", path, "--runner", "trace:" + TRACE, "--gpu", "T4", "-q", db=db)
    assert rc == 0, err
    time.sleep(1.1)  # created_at has whole seconds
    template = ("exec:/usr/bin/python3 " + FAKE +
                " --nodes {nodes} --gpus {gpus_per_node} --batch {local_batch} --instance {instance_type}")
    rc, out, err = run("profile", path, "--runner", template, "--gpu", "T4", "--probe-steps", "3", "-q", db=db)
    assert rc == 0, err
    at = {backend: json.loads(doc)["created_at"] for backend, device, doc in stored(db)}
    trace_at, runner_at = at["trace"], at["runner"]
    assert runner_at > trace_at
    rc, out, err = run("recommend", path, "--gpu", "T4", "--no-history", "-f", "json", db=db)
    assert rc == 0, err
    doc = json.loads(out)
    t4 = [g for g in doc["explanation"]["gpus"] if g["gpu"] == "T4"][0]
    assert "(runner, %s)" % runner_at in t4["note"], t4
    assert ("the trace profile on T4 (%s) is not used for its throughput: the newest, the runner profile of %s, is"
            % (trace_at, runner_at)) in doc["explanation"]["notes"], doc["explanation"]["notes"]


def test_exec_runner_profile_keeps_precision_and_memory_format():
    """The exec runner's 'device' event says how the run trained; a runner profile dropped it (stored null), so
    recommend used an fp16 channels_last profile for an fp32 contiguous job as it was, silently. Now the profile
    stores both, as a sweep does, and recommend moves the precision and compares the memory format."""
    db = os.path.join(TMP, "trained.db")
    doc = json.loads(json.dumps(SPEC))
    doc["search"].update(clouds=["aws"], max_nodes=2, deadline_hours=1000)  # the wider interval still fits
    doc["model"].update(precision="fp32", memory_format="contiguous")
    path = write("trained.json", json.dumps(doc))
    template = ("exec:/usr/bin/python3 " + FAKE +
                " --nodes {nodes} --gpus {gpus_per_node} --batch {local_batch} --instance {instance_type}")
    said = {"precision": "fp16", "memory_format": "channels_last"}
    env = dict(ENV, FAKE_DEVICE=json.dumps(said))
    p = subprocess.run([BIN, "profile", path, "--runner", template, "--gpu", "T4", "--instance-type", "g4dn.12xlarge",
                        "--probe-steps", "3", "-f", "json", "--db", db], capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert {k: json.loads(p.stdout)[k] for k in said} == said, p.stdout
    batches = [r["local_batch"] for r in json.loads(p.stdout)["runner"]["runs"] if r["kind"] == "profile"]
    assert batches[-1] != batches[0], batches
    assert [{k: json.loads(d)[k] for k in said} for _, _, d in stored(db)] == [said], stored(db)
    rc, out, err = run("recommend", path, "--gpu", "T4", "--no-history", "-f", "json", db=db)
    assert rc == 0, err
    rec = json.loads(out)
    notes = rec["explanation"]["notes"]
    assert [n for n in notes if n.startswith("the runner profile on T4 trained in fp16, the job in fp32 "
                                             "(model.precision): step times × ")], notes
    assert [n for n in notes if n.startswith("the runner profile on T4 ran in memory format channels_last, "
                                             "the job in contiguous (model.memory_format)")], notes
    t4 = [g for g in rec["explanation"]["gpus"] if g["gpu"] == "T4"][0]
    assert t4["memory_format_mismatch"] == {"profile": "channels_last", "spec": "contiguous"}, t4
    # One profile, one way of training: a run that reports another precision fails the light profile.
    env["FAKE_DEVICE_%d" % batches[-1]] = json.dumps({"precision": "bf16"})
    p = subprocess.run([BIN, "profile", path, "--runner", template, "--gpu", "T4", "--instance-type", "g4dn.12xlarge",
                        "--probe-steps", "3", "-q", "--db", os.path.join(TMP, "trained2.db")], capture_output=True,
                       text=True, env=env, timeout=120)
    assert p.returncode == 3 and "the precision changed between runs ('fp16', then 'bf16')" in p.stderr, \
        (p.returncode, p.stderr)


def test_carried_over_gpus_show_their_own_line():
    """explanation.gpus[].alpha_s/beta_s of a GPU type carried over from the T4 profile were T4's own line, though its
    note said '×0.48 time per sample': now the line the model uses, the profile's times the carry factor."""
    db, path = os.path.join(TMP, "carry.db"), spec("carry", clouds=["aws"], max_nodes=2)
    rc, out, err = run("profile", path, "--runner", "trace:" + TRACE, "--gpu", "T4", "-q", db=db)
    assert rc == 0, err
    rc, out, err = run("recommend", path, "--no-history", "-f", "json", db=db)
    assert rc == 0, err
    gpus = {g["gpu"]: g for g in json.loads(out)["explanation"]["gpus"]}
    t4 = gpus["T4"]
    carried = [g for g in gpus.values() if g.get("carried_from") == "T4"]
    assert carried, gpus
    for g in carried:
        factor = float(g["note"].split("(×")[1].split()[0])  # two decimals
        for key in ("alpha_s", "beta_s"):
            assert abs(g[key] / t4[key] - factor) <= 0.006, (key, t4[key], factor, g)


def test_cached_profile_replacing_the_specs_own_says_so():
    """A cached profile of T4 replaced the spec's profile.gpus.T4 without a word: now a note names the entry set aside."""
    s = json.loads(json.dumps(SPEC))
    s["search"].update(clouds=["aws"], max_nodes=2)
    s["profile"]["gpus"] = {"t4": {"compute_s": {"alpha": 0.05, "beta": 0.004}}}
    db, path = os.path.join(TMP, "given.db"), write("given.json", json.dumps(s))
    rc, out, err = run("profile", path, "--runner", "trace:" + TRACE, "--gpu", "T4", "-q", db=db)
    assert rc == 0, err
    created = json.loads(stored(db)[0][2])["created_at"]
    rc, out, err = run("recommend", path, "--gpu", "T4", "--no-history", "-f", "json", db=db)
    assert rc == 0, err
    doc = json.loads(out)
    assert ("the cached trace profile on T4 (%s) replaces profile.gpus.t4 of the spec (profile in the spec: "
            "t_c(m) = 0.05 + 0.004·m s)" % created) in doc["explanation"]["notes"], doc["explanation"]["notes"]


def test_failing_light_profile_stores_nothing():
    db = os.path.join(TMP, "d.db")
    path = write("fail.json", json.dumps({
        "name": "fail-t4", "model": {"parameters": 1000000}, "data": {"samples": 100000},
        "training": {"epochs": 1, "batch": 64, "lr": 0.1},
        "profile": {"noise_scale": 100, "local_batches": [16, 32]}, "search": {"clouds": ["aws"]}}))
    template = "exec:/usr/bin/python3 -c 'import sys; sys.exit(4)' {nodes} {local_batch}"
    rc, out, err = run("profile", path, "--runner", template, "--gpu", "T4", "--probe-steps", "2", db=db)
    assert rc == 6, (rc, err)  # docs/profiler.md "Exit codes": a script that exits non-zero is 6, not a crash
    assert "light profile run 1 node × 1 GPU" in err and "nothing was stored" in err, err
    assert not os.path.exists(db) or stored(db) == []


SLOW_PROBE = r"""
import json, os, sys, time
nodes, b = int(sys.argv[1]), int(os.environ["CLOUDFIT_LOCAL_BATCH"])
print(json.dumps({"event": "device", "name": "Tesla T4"}), flush=True)
if nodes > 1:  # the 2-node probe: say so, then take long (the user presses Ctrl-C)
    open(sys.argv[2], "w").close()
    time.sleep(60)
for i in range(int(os.environ["CLOUDFIT_WARMUP_STEPS"]) + int(os.environ["CLOUDFIT_STEPS"])):
    print(json.dumps({"event": "step", "step": i + 1, "time_s": 0.02 + 0.002 * b, "samples": b}), flush=True)
print(json.dumps({"event": "done"}), flush=True)
"""


def test_a_stop_signal_during_the_probe_stores_nothing():
    """A stop signal during the 2-node probe was taken as a failed probe: the light profile was stored, --csv
    written and the command exited 0. It is a stop now: exit 128 + signal, nothing stored or written."""
    import signal
    import time
    db, csv_path, marker = (os.path.join(TMP, n) for n in ("stop.db", "stop.csv", "stop.marker"))
    path = write("stop.json", json.dumps({
        "name": "stop-t4", "model": {"parameters": 1000000}, "data": {"samples": 100000},
        "training": {"epochs": 1, "batch": 64, "lr": 0.1},
        "profile": {"noise_scale": 100, "local_batches": [16, 32]}, "search": {"clouds": ["aws"]}}))
    script = write("slow_probe.py", SLOW_PROBE)
    for sig in (signal.SIGTERM, signal.SIGINT):
        if os.path.exists(marker):
            os.unlink(marker)
        p = subprocess.Popen([BIN, "profile", path, "--runner", "exec:/usr/bin/python3 %s {nodes} %s" % (script, marker),
                              "--gpu", "T4", "--probe-steps", "2", "--csv", csv_path, "--db", db],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(ENV, CLOUDFIT_STOP_GRACE_S="2"),
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        for _ in range(600):
            if os.path.exists(marker) or p.poll() is not None:
                break
            time.sleep(0.05)
        assert os.path.exists(marker), p.communicate()
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 128 + sig, (sig, p.returncode, err)
        assert "interrupted by" in err and "stored the profile" not in err, err
        assert "kept only when" not in err, err  # the light profile succeeded: the stop is the one reason
        assert not os.path.exists(csv_path) and (not os.path.exists(db) or stored(db) == []), err


CPU_RUNNER = r"""
import json, os
print(json.dumps({"event": "device", "name": "AMD EPYC 7B13", "type": "cpu"}))
for i in range(int(os.environ["CLOUDFIT_WARMUP_STEPS"]) + int(os.environ["CLOUDFIT_STEPS"])):
    print(json.dumps({"event": "step", "step": i, "time_s": 2.5, "samples": int(os.environ["CLOUDFIT_LOCAL_BATCH"])}))
print(json.dumps({"event": "done"}))
"""


def test_a_run_on_the_cpu_is_not_the_gpus_throughput():
    # a launched job that fell back to the CPU (no CUDA on the VM) reports
    # "type": "cpu": its step times were stored as the T4's
    db = os.path.join(TMP, "cpu.db")
    template = "exec:/usr/bin/python3 %s {nodes} {local_batch}" % write("cpu_runner.py", CPU_RUNNER)
    rc, out, err = run("profile", spec("cpu"), "--runner", template, "--gpu", "T4", "--probe-steps", "2", db=db)
    assert rc == 3, (rc, err)
    assert "the 'device' event says the run was on a CPU ('AMD EPYC 7B13'" in err and "not on T4" in err, err
    assert "nothing was stored" in err, err
    assert not os.path.exists(db) or stored(db) == []
    rc, out, err = run("search", spec("cpu-search"), "--runner", template, "--gpu", "T4", "--cloud", "aws",
                       "--max-nodes", "1", "--probe-steps", "2", "--max-probes", "1", "--no-history")
    # the same exit code as `profile --runner`'s for the same failure
    assert rc == 3 and "every run failed" in err and "was on a CPU" in err, (rc, err)


DEVICE_RUNNER = r"""
import json, os, sys
print(json.dumps({"event": "device", "name": sys.argv[1]}))
for i in range(int(os.environ["CLOUDFIT_WARMUP_STEPS"]) + int(os.environ["CLOUDFIT_STEPS"])):
    print(json.dumps({"event": "step", "step": i, "time_s": 0.01 + 0.001 * int(os.environ["CLOUDFIT_LOCAL_BATCH"]),
                      "samples": int(os.environ["CLOUDFIT_LOCAL_BATCH"])}))
print(json.dumps({"event": "done"}))
"""


def test_a_run_on_another_gpu_is_not_this_gpus_throughput():
    # the launcher gave the job another accelerator than asked for (a node
    # pool of another type, a fallback): its step times were stored as the
    # asked-for GPU's profile
    script = write("device_runner.py", DEVICE_RUNNER)
    for reported, kept in [("Tesla T4", True), ("NVIDIA T4", True), ("T4", True),
                           ("Some Future Board", True),  # a name the table does not know: taken on trust
                           ("NVIDIA A100-SXM4-40GB", False), ("A100", False), ("NVIDIA L4", False)]:
        db = os.path.join(TMP, "dev.db")
        if os.path.exists(db):
            os.unlink(db)
        template = "exec:/usr/bin/python3 %s '%s' {nodes}" % (script, reported)
        rc, out, err = run("profile", spec("dev"), "--runner", template, "--gpu", "T4", "--probe-steps", "2", db=db)
        if kept:
            assert rc == 0 and len(stored(db)) == 1, (reported, rc, err)
        else:
            assert rc == 3, (reported, rc, err)
            assert "the 'device' event says the run was on '%s', not on T4" % reported in err, (reported, err)
            assert "hint: check which GPU the launcher gave the job" in err and "nothing was stored" in err, err
            assert not os.path.exists(db) or stored(db) == []
    # a family name stands for each of its rows: "A100" may be the A100-80GB asked for
    template = "exec:/usr/bin/python3 %s A100 {nodes}" % script
    rc, out, err = run("profile", spec("dev80"), "--runner", template, "--gpu", "A100-80GB", "--probe-steps", "2",
                       db=os.path.join(TMP, "dev80.db"))
    assert rc == 0, err
    template = "exec:/usr/bin/python3 %s 'NVIDIA A100-SXM4-40GB' {nodes}" % script
    rc, out, err = run("search", spec("dev-search"), "--runner", template, "--gpu", "A100-80GB",
                       "--max-nodes", "1", "--probe-steps", "2", "--max-probes", "1", "--no-history")
    # the same exit code as `profile --runner`'s for the same failure
    assert rc == 3 and "every run failed" in err and "was on 'NVIDIA A100-SXM4-40GB', not on A100-80GB" in err, (rc, err)


GPUS_RUNNER = r"""
import json, os, sys
nodes, gpus_per_node, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
world = {"one": 1, "world": nodes * gpus_per_node, "per-node": gpus_per_node}.get(mode)
device = {"event": "device", "name": "Tesla T4"}
if world is not None:
    device["gpus"] = world
print(json.dumps(device))
b = int(os.environ["CLOUDFIT_LOCAL_BATCH"])
for i in range(int(os.environ["CLOUDFIT_WARMUP_STEPS"]) + int(os.environ["CLOUDFIT_STEPS"])):
    print(json.dumps({"event": "step", "step": i, "time_s": 0.01 + 0.001 * b, "samples": b * (world or 1)}))
print(json.dumps({"event": "done"}))
"""


def test_a_run_on_fewer_gpus_is_not_this_shapes_throughput():
    # a launcher that started one GPU where 2 nodes or a full VM were asked
    # for (a node that never joined, a dropped GPU request) says so in its
    # 'device' event ("gpus": the world size); its step time was stored as
    # the shape's
    script = write("gpus_runner.py", GPUS_RUNNER)
    for mode, kept in (("world", True), ("absent", True), ("one", False), ("per-node", False)):
        db = os.path.join(TMP, "gpus-%s.db" % mode)
        template = "exec:/usr/bin/python3 %s {nodes} {gpus_per_node} %s" % (script, mode)
        rc, out, err = run("profile", spec("gpus-" + mode), "--runner", template, "--gpu", "T4", "--probe-steps", "2",
                           db=db)
        if kept:
            assert rc == 0 and len(stored(db)) == 1, (mode, rc, err)
            runs = json.loads(stored(db)[0][2])["runner"]["runs"]
            assert any(r["nodes"] * r["gpus_per_node"] > 1 for r in runs), runs
            continue
        if mode == "one":  # the light profile's full-VM run fails, and the profile with it
            assert rc == 3, (mode, rc, err)
            assert "nothing was stored" in err and (not os.path.exists(db) or stored(db) == []), err
            assert "hint: \"gpus\" is the run's world size" in err, err
            said = err
        else:  # the 2-node probe's runs fail: the single-node profile is kept, its probe marked failed
            assert rc == 0, (mode, rc, err)
            runner = json.loads(stored(db)[0][2])["runner"]
            assert runner["probe_status"] == "failed", runner
            said = runner["probe_note"]
        m = re.search(r"'([^']*)': the 'device' event says the run used (\d+) GPUs? \(\"gpus\"\), not the (\d+) "
                      r"asked for \((\d+) nodes? × (\d+) T4\)", said)
        assert m and int(m.group(3)) == int(m.group(4)) * int(m.group(5)) > int(m.group(2)), (mode, said)
        assert "gpus_runner.py" in m.group(1), said  # the run's command line names the runner
    # search: the same check, the same exit code
    template = "exec:/usr/bin/python3 %s {nodes} {gpus_per_node} one" % script
    rc, out, err = run("search", spec("gpus-search"), "--runner", template, "--gpu", "T4", "--cloud", "aws",
                       "--max-nodes", "2", "--probe-steps", "2", "--no-history", "-f", "json")
    assert rc == 0, err
    runs = json.loads(out)["search"]["runs"]
    multi = [r for r in runs if r["config"]["nodes"] * r["config"]["gpus_per_node"] > 1]
    assert multi and all(r["failed"] and "says the run used 1 GPU" in r["error"] for r in multi), multi
    assert all(not r["failed"] for r in runs if r["config"]["nodes"] * r["config"]["gpus_per_node"] == 1), runs



SAMPLES_RUNNER = r"""
import json, os, sys
nodes, gpus_per_node, batch, mode = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
world = nodes * gpus_per_node
if mode == "fixed":  # a launcher that ignores {local_batch}: it always trains 16 per GPU, and says so
    batch = 16
print(json.dumps({"event": "device", "name": "Tesla T4", "gpus": world}))
samples = batch if mode == "device" else batch * world
for i in range(int(os.environ["CLOUDFIT_WARMUP_STEPS"]) + int(os.environ["CLOUDFIT_STEPS"])):
    print(json.dumps({"event": "step", "step": i + 1, "time_s": 0.01 + 0.001 * batch, "samples": samples}))
print(json.dumps({"event": "done"}))
"""


def test_a_run_that_trained_another_batch_is_not_the_batch_asked_for():
    # "samples" is one device's (CLOUDFIT_LOCAL_BATCH × CLOUDFIT_MICRO_BATCHES) or the world's (× nodes × GPUs
    # per node): a launcher that dropped {local_batch} and trained 16 per GPU had its step time stored as
    # batches 32 and 64's, without a word
    script = write("samples_runner.py", SAMPLES_RUNNER)
    for mode in ("device", "world", "fixed"):
        db = os.path.join(TMP, "samples-%s.db" % mode)
        template = "exec:/usr/bin/python3 %s {nodes} {gpus_per_node} {local_batch} %s" % (script, mode)
        rc, out, err = run("profile", spec("samples-" + mode), "--runner", template, "--gpu", "T4",
                           "--probe-steps", "2", db=db)
        if mode != "fixed":
            assert rc == 0 and len(stored(db)) == 1, (mode, rc, err)
            runner = json.loads(stored(db)[0][2])["runner"]
            assert runner["probe_status"] == "measured", runner
            continue
        assert rc == 3, (mode, rc, err)
        assert "nothing was stored" in err and (not os.path.exists(db) or stored(db) == []), err
        m = re.search(r"'[^']*samples_runner.py 1 1 (\d+) fixed': stdout line 2: \"samples\": 16, but the run was "
                      r"asked for (\d+) \(CLOUDFIT_LOCAL_BATCH (\d+) × 1 micro-batch\) on its one GPU", err)
        assert m and m.group(1) == m.group(2) == m.group(3) != "16", err
        assert "hint: \"samples\" is the step's samples on one device" in err, err
    # search: the same check; a full VM's run names both accepted values
    template = "exec:/usr/bin/python3 %s {nodes} {gpus_per_node} {local_batch} fixed" % script
    s = json.loads(json.dumps(SPEC))
    s["profile"]["local_batches"] = [16, 32, 64]
    rc, out, err = run("search", write("samples-search.json", json.dumps(s)), "--runner", template, "--gpu", "T4",
                       "--cloud", "aws", "--max-nodes", "2", "--probe-steps", "2", "--no-history", "-f", "json")
    runs = json.loads(out)["search"]["runs"] if rc == 0 else []
    # it reports 16 × its world size: that is taken as one device's samples where the batch asked for is that
    # (64 on a 4-GPU VM): the rule cannot tell those apart
    def accepted(c):
        return 16 * c["nodes"] * c["gpus_per_node"] in (c["local_batch"], c["local_batch"] * c["nodes"] *
                                                             c["gpus_per_node"])
    bad = [r for r in runs if not accepted(r["config"])]
    assert bad and all(r["failed"] for r in bad), (rc, err, runs)
    assert all(not r["failed"] for r in runs if accepted(r["config"])), runs
    for r in bad:
        c = r["config"]
        world = c["nodes"] * c["gpus_per_node"]
        said = "\"samples\": %d, but the run was asked for %d" % (16 * world, c["local_batch"])
        if world > 1:
            said += " per device (CLOUDFIT_LOCAL_BATCH %d × 1 micro-batch), %d over its %d GPUs" % (
                c["local_batch"], c["local_batch"] * world, world)
        assert said in r["error"], (said, r)

BAD_TEXT_RUNNER = r"""
import json, os, sys
nodes, gpus_per_node, shift = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
if nodes > 1:  # the 2-node probe fails: a line with ESC and a byte that is not UTF-8, or a long French error
    if shift == "raw":
        sys.stdout.buffer.write(b"Traceback \x1b[31m\xff\n")
    else:
        print(json.dumps({"event": "error", "message": shift + "\u00e9" * 200}, ensure_ascii=False))
    sys.exit(0)
b = int(os.environ["CLOUDFIT_LOCAL_BATCH"])
print(json.dumps({"event": "device", "name": "Tesla T4", "gpus": gpus_per_node}))
for i in range(int(os.environ["CLOUDFIT_WARMUP_STEPS"]) + int(os.environ["CLOUDFIT_STEPS"])):
    print(json.dumps({"event": "step", "step": i + 1, "time_s": 0.02 + 0.002 * b, "samples": b * gpus_per_node}))
print(json.dumps({"event": "done"}))
"""


def test_a_failed_probes_message_is_stored_as_text():
    # the failed probe's message quotes the runner's output: stored raw (a
    # byte 0xff) or cut at its field's size inside an 'é', the profile
    # stored with exit 0 was not UTF-8, and recommend found it unreadable
    script = write("bad_text_runner.py", BAD_TEXT_RUNNER)
    for shift in ("raw", "x", "xy"):  # one of "x", "xy" puts the cut inside a character
        db = os.path.join(TMP, "bad-text-%s.db" % shift)
        template = "exec:/usr/bin/python3 %s {nodes} {gpus_per_node} %s" % (script, shift)
        path = spec("bad-text-" + shift)
        rc, out, err = run("profile", path, "--runner", template, "--gpu", "T4", "--probe-steps", "2", db=db)
        assert rc == 0, (shift, rc, err)
        con = sqlite3.connect(db)
        con.text_factory = bytes
        (raw,) = con.execute("SELECT profile_json FROM profiles").fetchone()
        con.close()
        runner = json.loads(raw.decode("utf-8"))["runner"]  # UnicodeDecodeError before the fix
        assert runner["probe_status"] == "failed", runner
        note = runner["probe_note"]
        assert "\x1b" not in note, note
        said = "Traceback \\e[31m\\xff" if shift == "raw" else "the script reported an error"
        assert said in note, note
        rc, out, err = run("recommend", path, db=db)
        assert "unreadable" not in err, err


def test_usage_errors():
    path = spec("e")
    cases = [
        (["--runner", "trace:" + TRACE], "needs exactly one --gpu"),
        (["--runner", "trace:" + TRACE, "--gpu", "T4", "--gpu", "V100"], "needs exactly one --gpu"),
        (["--runner", "trace:" + TRACE, "--gpu", "T4", "--backend", "cpu"], "exclude each other"),
        (["--runner", "ssh:host", "--gpu", "T4"], "expects trace:MEASUREMENTS.csv"),
        (["--runner", "trace:" + TRACE, "--gpu", "NoSuchGPU"], "unknown GPU model 'NoSuchGPU'"),
        # an option of the other way of profiling was accepted and did nothing
        (["--gpu", "T4"], "option '--gpu' needs '--runner'"),
        (["--instance-type", "g4dn.xlarge"], "option '--instance-type' needs '--runner'"),
        (["--probe-steps", "7"], "option '--probe-steps' needs '--runner'"),
        (["--max-catalog-age-days", "9"], "option '--max-catalog-age-days' needs '--runner'"),
        (["--trace-model", "x"], "option '--trace-model' needs '--runner trace:MEASUREMENTS.csv'"),
        (["--trace-noise", "5%"], "option '--trace-noise' needs '--runner trace:MEASUREMENTS.csv'"),
        (["--runner", "exec:/bin/true {nodes}", "--gpu", "T4", "--trace-noise", "5%"],
         "option '--trace-noise' needs '--runner trace:MEASUREMENTS.csv'"),
        (["--runner", "trace:" + TRACE, "--gpu", "T4", "--noise-steps", "5"],
         "option '--noise-steps' does not apply with '--runner'"),
        (["--runner", "trace:" + TRACE, "--gpu", "T4", "--noise-micro-batches", "4"],
         "option '--noise-micro-batches' does not apply with '--runner'"),
    ]
    for args, message in cases:
        rc, out, err = run("profile", path, *args, db=os.path.join(TMP, "e.db"))
        assert rc == 2 and message in err, (args, rc, err)
        assert out == ""
    # A GPU the trace does not hold, an instance type without configurations: bad input (3).
    for args, message in [(["--gpu", "V100"], "no configuration of GPU 'V100'"),
                          (["--gpu", "T4", "--instance-type", "p3.2xlarge"], "on instance type 'p3.2xlarge'")]:
        rc, out, err = run("profile", path, "--runner", "trace:" + TRACE, *args, db=os.path.join(TMP, "e.db"))
        assert rc == 3 and message in err, (args, rc, err)
    # A T4 VM of the catalog that the trace is not priced on (it takes the
    # cheapest VM of each GPU count): the hint named 'cloudfit prices T4',
    # which lists g4dn.2xlarge. Now it names the VMs the trace can use.
    rc, out, err = run("profile", path, "--runner", "trace:" + TRACE, "--gpu", "T4", "--instance-type", "g4dn.2xlarge",
                       db=os.path.join(TMP, "e.db"))
    assert rc == 3 and "on instance type 'g4dn.2xlarge'" in err, err
    assert "hint: the trace runner prices each configuration on the cheapest catalog VM of its GPU count: " in err, err
    assert "g4dn.xlarge" in err and "cloudfit prices" not in err, err


def next_measurement(path, db):
    rc, out, err = run("recommend", path, "--gpu", "T4", "--cloud", "aws", "--no-history", "-f", "json", db=db)
    assert rc == 0, err
    doc = json.loads(out)
    return doc["chosen"]["provenance"], doc["next_measurement"]


def test_next_measurement_command_runs_as_printed():
    """recommend --db DB named `cloudfit profile --runner RUNNER ... MODEL.json` without --db: run as printed,
    the profile went to the default history and the next `recommend --db DB` asked for it again. The command
    names the history now, and the loop closes: the next recommend uses the measurement."""
    import shlex
    db = os.path.join(TMP, "loop.db")
    s = json.loads(json.dumps(SPEC))
    s["model"]["flops_per_sample"] = 2.46e10  # no profile: T4 estimated from its FLOPs
    path = write("loop.json", json.dumps(s))
    provenance, nm = next_measurement(path, db)
    assert provenance["throughput"] == "estimated" and nm["kind"] == "profile", (provenance, nm)
    words = shlex.split(nm["command"])
    assert words[:4] == ["cloudfit", "profile", "--runner", "RUNNER"] and words[-1] == path, words
    assert words[words.index("--db") + 1] == db, words
    words[3] = "trace:" + TRACE
    p = subprocess.run([BIN, *words[1:]], capture_output=True, text=True, env=ENV, timeout=120)
    assert p.returncode == 0, p.stderr
    provenance, after = next_measurement(path, db)
    assert provenance["throughput"] == "fitted" and after != nm, (provenance, after)
    # without --db (the default history) the command names none
    rc, out, err = run("recommend", path, "--gpu", "T4", "--cloud", "aws", "--no-history", "-f", "json")
    assert rc == 0 and "--db" not in json.loads(out)["next_measurement"]["command"], out


def test_next_measurement_command_names_the_offer_it_priced():
    """recommend --cloud gcp on a spec whose search names aws priced a gcp VM, and the command it printed
    (profile filters by the spec's clouds) was refused: "no configuration of GPU 'T4' on instance type ...".
    The command names the offer's cloud and region, and profile --runner takes --cloud/--region as
    recommend does."""
    import shlex
    db = os.path.join(TMP, "offer.db")
    s = json.loads(json.dumps(SPEC))
    s["model"]["flops_per_sample"] = 2.46e10
    s["search"]["clouds"] = ["aws"]
    path = write("offer.json", json.dumps(s))
    rc, out, err = run("recommend", path, "--gpu", "T4", "--cloud", "gcp", "--no-history", "-f", "json", db=db)
    assert rc == 0, err
    nm = json.loads(out)["next_measurement"]
    words = shlex.split(nm["command"])
    assert nm["cloud"] == "gcp" and words[words.index("--cloud") + 1] == "gcp", nm
    assert words[words.index("--region") + 1] == nm["region"], nm
    words[3] = ("exec:/usr/bin/python3 " + FAKE + " --nodes {nodes} --gpus {gpus_per_node} --batch {local_batch}"
                " --instance {instance_type}")
    p = subprocess.run([BIN, *words[1:]], capture_output=True, text=True, env=ENV, timeout=120)
    assert p.returncode == 0 and len(stored(db)) == 1, p.stderr
    # a local profile measures the machine it runs on: --cloud means nothing there
    rc, out, err = run("profile", path, "--cloud", "gcp", db=db)
    assert rc == 2 and "option '--cloud' needs '--runner'" in err, (rc, err)


def test_next_measurement_command_runs_for_a_spec_path_starting_with_a_dash():
    """A spec file '-dash.json' (recommend -- -dash.json): the command ended '-dash.json', quoted, which
    cloudfit's option parser still read as options (`unknown option '-d'`, exit 2). It names ./-dash.json now
    and runs as printed."""
    import shlex
    db = os.path.join(TMP, "dash.db")
    s = json.loads(json.dumps(SPEC))
    s["model"]["flops_per_sample"] = 2.46e10  # no profile: T4 estimated, so a profile is the measurement
    write("-dash.json", json.dumps(s))
    p = subprocess.run([BIN, "recommend", "--gpu", "T4", "--cloud", "aws", "--no-history", "-f", "json", "--db", db,
                        "--", "-dash.json"], capture_output=True, text=True, env=ENV, timeout=120, cwd=TMP)
    assert p.returncode == 0, p.stderr
    nm = json.loads(p.stdout)["next_measurement"]
    words = shlex.split(nm["command"])
    assert words[-1] == "./-dash.json", words
    words[3] = "trace:" + TRACE
    p = subprocess.run([BIN, *words[1:]], capture_output=True, text=True, env=ENV, timeout=120, cwd=TMP)
    assert p.returncode == 0 and len(stored(db)) == 1, p.stderr

def test_next_measurement_command_runs_beyond_the_specs_max_nodes():
    """recommend --max-nodes 16 on a spec of search.max_nodes 2 named a 16-node probe, and the command it printed
    was refused by an exec runner: "the spec allows 2 nodes ... the probe needs 16 × 4" (profile held the probe
    to the spec's limits, and took no --max-nodes). The command passes on the limits recommend used, and
    profile --runner takes --max-nodes/--max-gpus as recommend and search do."""
    import shlex
    db, path = os.path.join(TMP, "maxn.db"), spec("maxn", clouds=["aws"], max_nodes=2)
    rc, out, err = run("profile", path, "--runner", "trace:" + TRACE, "--gpu", "T4", db=db)
    assert rc == 0, err
    rc, out, err = run("recommend", path, "--gpu", "T4", "--objective", "time", "--max-nodes", "16", "--no-history",
                       "-f", "json", db=db)
    assert rc == 0, err
    nm = json.loads(out)["next_measurement"]
    assert nm["kind"] == "network" and nm["nodes"] > 2, nm
    words = shlex.split(nm["command"])
    assert words[words.index("--max-nodes") + 1] == "16", words
    words[3] = ("exec:/usr/bin/python3 " + FAKE + " --nodes {nodes} --gpus {gpus_per_node} --batch {local_batch}"
                " --instance {instance_type}")
    p = subprocess.run([BIN, *words[1:]], capture_output=True, text=True, env=ENV, timeout=120)
    assert p.returncode == 0, p.stderr
    probe = [r for r in json.loads(stored(db)[-1][2])["runner"]["runs"] if r["nodes"] > 1]
    assert probe and all(r["nodes"] == nm["nodes"] and r["gpus_per_node"] == nm["gpus_per_node"] for r in probe), probe
    # a local profile measures the device it runs on: no VMs to limit
    rc, out, err = run("profile", path, "--max-nodes", "4", db=db)
    assert rc == 2 and "option '--max-nodes' needs '--runner'" in err, (rc, err)


def test_a_probe_of_another_shape_is_named_as_measured():
    """profile --probe-nodes 4 --probe-gpus 4 (a next measurement's command), and recommend explained the network
    as "fitted from the measured probe: 2 nodes × 1 GPU": the shape was written in, not read from the runs. The
    profile's table called it "2-node probe" too; it names the shape that ran now."""
    db, path = os.path.join(TMP, "shape44.db"), spec("shape44", clouds=["aws"])
    rc, out, err = run("profile", path, "--runner", "trace:" + TRACE, "--gpu", "T4", "--instance-type",
                       "g4dn.12xlarge", "--probe-nodes", "4", "--probe-gpus", "4", db=db)
    assert rc == 0, err
    # the profile's own table called it "2-node probe" whatever its shape
    assert "7 runs (light profile + 4-node × 4-GPU probe)" in out, out
    assert "\n4-node × 4-GPU probe: measured: 4 nodes × 4 GPUs at per-GPU batches " in out, out
    assert "2-node" not in out, out
    rc, out, err = run("recommend", path, "--gpu", "T4", "--no-history", "-f", "json", db=db)
    assert rc == 0, err
    t4 = [g for g in json.loads(out)["explanation"]["gpus"] if g["gpu"] == "T4"][0]
    assert t4["network_note"].startswith("measured probe: 4 nodes × 4 GPUs at per-GPU batch "), t4


def test_a_probe_shape_asked_for_that_cannot_run_is_refused():
    """--probe-nodes 3 --probe-gpus 1 (a next measurement's command) on a trace without 3 × 1 rows, or beyond
    the spec's max_nodes with exec, exited 0 and stored a profile with no probe over the stored one whose 2-node
    probe was measured: the next recommend fell back to the default network. Refused now (exit 2), the stored
    profile left as it was."""
    db, path = os.path.join(TMP, "shape.db"), spec("shape", max_nodes=16)
    rc, out, err = run("profile", path, "--runner", "trace:" + TRACE, "--gpu", "T4", db=db)
    assert rc == 0, err
    before = stored(db)
    assert json.loads(before[0][2])["runner"]["probe_status"] == "measured"
    exec_runner = ("exec:/usr/bin/python3 " + FAKE + " --nodes {nodes} --gpus {gpus_per_node} --batch {local_batch}"
                   " --instance {instance_type}")
    for runner, shape, message in [
            ("trace:" + TRACE, ["--probe-nodes", "3", "--probe-gpus", "1"],
             "--probe-nodes 3 --probe-gpus 1: the trace has no 3-node × 1-GPU rows of T4"),
            (exec_runner, ["--probe-nodes", "30", "--probe-gpus", "1"],
             "--probe-nodes 30 --probe-gpus 1: the spec allows 16 nodes")]:
        rc, out, err = run("profile", path, "--runner", runner, "--gpu", "T4", "--instance-type", "g4dn.xlarge",
                           *shape, db=db)
        assert rc == 2 and message in err and "nothing was run or stored" in err and out == "", (rc, err)
        assert stored(db) == before


def test_a_trace_probe_is_held_to_the_limits():
    """The trace runner ran and stored a probe of any shape its rows held, whatever the spec's max_nodes and
    max_gpus (or --max-nodes/--max-gpus) said: a 2 × 4 probe on a spec of max_nodes 1, a 4 × 4 probe under
    --max-gpus 4, the default 2 × 1 with max_nodes 1, where the exec runner refuses or skips it. The limits
    are one check now, for both runners."""
    path = spec("lim1", clouds=["aws"], max_nodes=1)
    db = os.path.join(TMP, "lim1.db")
    for extra, message in [
            (["--probe-nodes", "2", "--probe-gpus", "4"], "--probe-nodes 2 --probe-gpus 4: the spec allows 1 node and"),
            (["--max-nodes", "16", "--max-gpus", "4", "--probe-nodes", "4", "--probe-gpus", "4"],
             "--probe-nodes 4 --probe-gpus 4: the spec allows 16 nodes and 4 GPUs")]:
        rc, out, err = run("profile", path, "--runner", "trace:" + TRACE, "--gpu", "T4", "--instance-type",
                           "g4dn.12xlarge", *extra, db=db)
        assert rc == 2 and message in err and "nothing was run or stored" in err and out == "", (extra, rc, err)
        assert not os.path.exists(db) or not stored(db), extra
    rc, out, err = run("profile", path, "--runner", "trace:" + TRACE, "--gpu", "T4", db=db)
    assert rc == 0, err
    assert "probe is skipped: the spec allows 1 node and" in err, err
    runner = json.loads(stored(db)[0][2])["runner"]
    assert runner["probe_status"] == "skipped" and all(r["nodes"] == 1 for r in runner["runs"]), runner


sys.exit(pyharness.run(globals(), cleanup=lambda: shutil.rmtree(TMP, ignore_errors=True)))
