#!/usr/bin/python3
"""End-to-end tests of `cloudfit profile`: the CPU engine on the shipped MLP
example (under a minute) and `recommend` reusing the cached profile; the
exec backend's failures through the command line (exit codes, line numbers,
nothing cached); a GPU profile from an exec script feeding the throughput
of its catalog GPU; the measurements CSV; `--backend cuda` without a GPU.
Usage: test_profile_cli.py CLOUDFIT_BINARY SOURCE_DIR"""
import csv
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

import jsonschema

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = sys.argv[1], sys.argv[2]
EXAMPLES = os.path.join(SRC, "examples")
SCHEMA = json.load(open(os.path.join(SRC, "data", "schema", "recommendation.schema.json")))
TMP = tempfile.mkdtemp(prefix="cloudfit-profile-")
ENV = dict(os.environ, HOME=TMP, XDG_DATA_HOME=os.path.join(TMP, "xdg"), SOURCE_DATE_EPOCH="1795000000")
ENV.pop("NO_COLOR", None)
# The columns of groundtruth/pollux_aws_t4/throughput.csv (docs/profiler.md "The measurements CSV").
POLLUX_COLUMNS = ["model", "gpu", "profile", "hw_gpus_per_node", "source", "placement", "num_nodes", "num_gpus",
                  "local_bsz", "global_bsz", "step_time_s", "sync_time_s", "compute_time_s", "samples_per_s"]


def run(*args, timeout=120):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=ENV, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def profiles_rows(db):
    if not os.path.exists(db):
        return 0
    with sqlite3.connect(db) as con:
        return con.execute("SELECT count(*) FROM profiles").fetchone()[0]


def exec_spec(name, script_body, batches=(8, 16)):
    """A spec whose profile.command runs a shell script (the user's choice of argv)."""
    script = write(name + ".sh", script_body)
    spec = {
        "name": name, "model": {"parameters": 1000000, "flops_per_sample": 1e9},
        "data": {"samples": 10000}, "training": {"epochs": 1, "batch": 32, "lr": 0.1},
        "profile": {"backend": "exec", "command": ["/bin/sh", script], "local_batches": list(batches), "steps": 3},
        "search": {"max_nodes": 2},
    }
    return write(name + ".json", json.dumps(spec))


DEVICE = 'echo \'{"event": "device", "name": "%s", "memory_gib": 40, "type": "%s"}\'\n'
STEPS = ('n=$((CLOUDFIT_WARMUP_STEPS + CLOUDFIT_STEPS)); i=1\n'
         'while [ $i -le $n ]; do\n'
         '  t=$(awk "BEGIN {print 0.02 + 0.001 * $CLOUDFIT_LOCAL_BATCH}")\n'
         '  echo "{\\"event\\": \\"step\\", \\"step\\": $i, \\"time_s\\": $t, \\"samples\\": $((CLOUDFIT_LOCAL_BATCH * CLOUDFIT_MICRO_BATCHES)),'
         ' \\"micro_sqnorms\\": [$(awk "BEGIN {for (j = 1; j <= $CLOUDFIT_MICRO_BATCHES; j++)'
         ' printf \\"%s3.0\\", (j > 1 ? \\",\\" : \\"\\")}")], \\"mean_sqnorm\\": 1.0}"\n'
         '  i=$((i + 1))\n'
         'done\n'
         'echo \'{"event": "done"}\'\n')


def test_cpu_engine_profile_then_recommend_uses_it():
    db = os.path.join(TMP, "cpu.db")
    spec = os.path.join(EXAMPLES, "mlp-synthetic.json")
    out_csv = os.path.join(TMP, "mlp.csv")
    t0 = time.monotonic()
    rc, out, err = run("profile", "--db", db, "--backend", "cpu", "--csv", out_csv, spec, timeout=300)
    elapsed = time.monotonic() - t0
    assert rc == 0, err
    # The under-a-minute target is measured by bench/profile.sh, not asserted here.
    print(f"  cloudfit profile mlp-synthetic --backend cpu: {elapsed:.1f} s")
    assert "fit: t_c(m) = " in out and "noise scale: B_noise = " in out, out
    # plain periodic progress lines, not a bar: the first, the last (cli/term/progress.c)
    assert "profile: 0/6 runs (0%): local batch 16" in err and "profile: 6/6 runs (100%)" in err, err
    assert "\r" not in err and "\x1b" not in err, err
    assert profiles_rows(db) == 1
    with open(out_csv) as f:
        rows = list(csv.reader(f))
    # The engine trains in fp32 and says so: the optional precision column.
    assert rows[0] == POLLUX_COLUMNS + ["precision"], rows[0]
    assert all(r[14] == "fp32" for r in rows[1:]), rows
    assert "trained in: fp32" in out, out
    assert [int(r[8]) for r in rows[1:]] == [16, 32, 64, 128, 256]
    assert all(float(r[10]) > 0 and r[0] == "mlp-synthetic" for r in rows[1:])
    with sqlite3.connect(db) as con:
        b_noise, stored = con.execute("SELECT b_noise, profile_json FROM profiles").fetchone()
    assert b_noise > 0 and json.loads(stored)["noise"]["b_noise"] == b_noise
    # recommend: the noise scale comes from the profile; CPU step times are not a GPU's.
    rc, out, err = run("recommend", "--db", db, "--no-history", "--format", "json", spec)
    assert rc == 0, err
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    noise = doc["explanation"]["noise_scale"]
    text = json.dumps(doc)
    assert "measured by 'cloudfit profile' (cpu backend" in text, text[:2000]
    assert "are CPU times and are not used for GPU throughput" in text
    assert doc["chosen"]["provenance"]["noise_scale"] == "measured", doc["chosen"]["provenance"]
    assert doc["chosen"]["provenance"]["throughput"] == "estimated"
    assert "using the cached cpu profile" in err, err
    assert noise["source"] == "measured" and abs(noise["start"] - noise["end"]) > 0, noise
    # Without the cache (another database) the noise scale is the default.
    rc, out, err = run("recommend", "--db", os.path.join(TMP, "empty.db"), "--no-history", "--format", "json", spec)
    assert rc == 0, err
    assert json.loads(out)["chosen"]["provenance"]["noise_scale"] == "default"
    # Editing the search section keeps the profile (its key covers model, data, recipe).
    with open(spec) as f:
        edited = json.load(f)
    edited["search"]["deadline_hours"] = 2
    rc, out, err = run("recommend", "--db", db, "--no-history", "--format", "json",
                       write("edited.json", json.dumps(edited)))
    assert rc == 0 and json.loads(out)["chosen"]["provenance"]["noise_scale"] == "measured", err
    # Changing the learning rate does not.
    edited["training"]["lr"] = 0.1
    rc, out, err = run("recommend", "--db", db, "--no-history", "--format", "json",
                       write("edited2.json", json.dumps(edited)))
    assert rc == 0 and json.loads(out)["chosen"]["provenance"]["noise_scale"] == "default", err


def test_gpu_exec_profile_feeds_throughput():
    db = os.path.join(TMP, "gpu.db")
    spec = exec_spec("gpu-probe", DEVICE % ("NVIDIA A100-SXM4-40GB", "gpu") + STEPS, batches=(8, 16, 32, 64))
    rc, out, err = run("profile", "--db", db, "--format", "json", "--csv", os.path.join(TMP, "gpu.csv"), spec)
    assert rc == 0, err
    prof = json.loads(out)
    assert abs(prof["fit"]["alpha_s"] - 0.02) < 1e-6 and abs(prof["fit"]["beta_s"] - 0.001) < 1e-8, prof["fit"]
    # k = 8 micro-batches of 4: |G_b|² = 3, |G_B|² = 1 → |G|² = (32·1 − 4·3)/28, tr Σ = 2/(1/4 − 1/32)
    expected = (2 / (1 / 4 - 1 / 32)) / ((32 * 1 - 4 * 3) / 28)
    assert abs(prof["noise"]["b_noise"] - expected) < 1e-6 * expected, prof["noise"]
    with open(os.path.join(TMP, "gpu.csv")) as f:
        rows = list(csv.reader(f))
    assert rows[1][1] == "A100-40GB", rows[1]              # the catalog's name for the device
    rc, out, err = run("recommend", "--db", db, "--no-history", "--format", "json", spec)
    assert rc == 0, err
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    text = json.dumps(doc)
    assert "measured by 'cloudfit profile' (exec backend" in text
    gpus = {g["gpu"]: g for g in doc["explanation"]["gpus"]}
    a100 = gpus["A100-40GB"]
    assert a100["throughput"] == "measured" and abs(a100["alpha_s"] - 0.02) < 1e-4, a100
    assert abs(a100["beta_s"] - 0.001) < 1e-6, a100
    carried = [g for g in gpus.values() if g.get("carried_from") == "A100-40GB"]
    assert carried, "no GPU type carried over from the measured A100"
    assert doc["explanation"]["noise_scale"]["source"] == "measured"
    rc, out, err = run("recommend", "--db", db, "--no-history", spec)
    assert rc == 0, err
    assert "A100-40GB throughput measured: measured by 'cloudfit profile' (exec backend" in out, out


def test_out_file_gets_the_profile():
    # --out-file was no option of profile (a note, the result on standard
    # output, no file); the profile is stored, then the file put in place
    db = os.path.join(TMP, "out-file.db")
    out_file = os.path.join(TMP, "out-file-profile.json")
    spec = exec_spec("out-file-probe", DEVICE % ("NVIDIA A100-SXM4-40GB", "gpu") + STEPS)
    rc, out, err = run("profile", "--db", db, "--format", "json", "--out-file", out_file, spec)
    assert rc == 0, err
    assert out == "" and "no option --out-file" not in err, (out, err)
    assert json.load(open(out_file))["device"]["name"] == "NVIDIA A100-SXM4-40GB"
    assert profiles_rows(db) == 1


def test_two_device_names_of_one_gpu_type_are_named():
    """Exec profiles of one spec on 'Tesla T4' and then 'T4' (both the catalog's T4): the newest gives T4's
    throughput, and the note setting the other aside named neither device ("the exec profile on T4 (TIME) is
    not used ...: the newest, the exec profile of TIME, is": within one second, the same words for both)."""
    db = os.path.join(TMP, "two-names.db")
    name_file = os.path.join(TMP, "two-names.txt")
    device = 'echo "{\\"event\\": \\"device\\", \\"name\\": \\"$(cat %s)\\", \\"memory_gib\\": 16, ' \
             '\\"type\\": \\"gpu\\"}"\n' % name_file
    spec = exec_spec("two-names", device + STEPS)
    for name in ("Tesla T4", "T4"):
        write("two-names.txt", name)
        rc, out, err = run("profile", "--db", db, "-q", "--noise-steps", "5", spec)
        assert rc == 0, err
    rc, out, err = run("recommend", "--db", db, "--no-history", "--gpu", "T4", "--format", "json", spec)
    assert rc == 0, err
    notes = [n for n in json.loads(out)["explanation"]["notes"] if "is not used for its throughput" in n]
    assert len(notes) == 1 and notes[0].startswith("the exec profile on T4 ('Tesla T4', ") and \
        "the newest, the exec profile on 'T4' of " in notes[0], notes


def check_failure(name, script, want_rc, *parts, timeout_arg=None):
    db = os.path.join(TMP, name + ".db")
    args = ["profile", "--db", db]
    if timeout_arg:
        args += ["--timeout", timeout_arg]
    rc, out, err = run(*args, exec_spec(name, script))
    assert rc == want_rc, (rc, err)
    for part in parts:
        assert part in err, (part, err)
    assert "nothing was stored" in err, err
    assert out == "", out
    assert profiles_rows(db) == 0, "a failed profile was cached"
    print(f"  {name}: " + next(l for l in err.splitlines() if l.startswith("cloudfit:")))


def test_exec_malformed_line():
    check_failure("malformed", DEVICE % ("T4", "gpu") + "echo 'epoch 1 loss 0.3'\n" + STEPS, 3,
                  "exec backend, local batch 8", "stdout line 2", "expected one JSON object per line")



def test_exec_a_run_of_another_batch_is_refused():
    # a script that trains 16 whatever CLOUDFIT_LOCAL_BATCH says, and reports it: its step times were stored
    # as batch 8's and 16's, and the profile as complete
    check_failure("other-batch", DEVICE % ("T4", "gpu") + STEPS.replace(
        "$((CLOUDFIT_LOCAL_BATCH * CLOUDFIT_MICRO_BATCHES))", "16"), 3,
        "exec backend, local batch 8", "stdout line 2: \"samples\": 16, but the run was asked for 8 "
        "(CLOUDFIT_LOCAL_BATCH 8 × 1 micro-batch) on its one GPU", "hint: \"samples\" is the step's samples")


def test_exec_an_event_after_oom_is_refused():
    # 'oom' ends the run: a 'done' (or a second 'oom', a 'device') after it was accepted without a word
    check_failure("oom-done", DEVICE % ("T4", "gpu") + "echo '{\"event\": \"oom\"}'\necho '{\"event\": \"done\"}'\n",
                  3, "exec backend, local batch 8", "stdout line 3: a 'done' event after the 'oom' event (a run that "
                  "reports 'oom' ends there)")

def test_exec_crash():
    check_failure("crash", DEVICE % ("T4", "gpu") + 'kill -SEGV $$\n', 6, "crashed (signal 11", "after stdout line 1")


def test_exec_timeout():
    t0 = time.monotonic()
    check_failure("hang", DEVICE % ("T4", "gpu") + "sleep 60\n", 6, "timed out", "after stdout line 1",
                  timeout_arg="3")
    assert time.monotonic() - t0 < 40  # the script would sleep 60 s: it was killed


def test_exec_nonzero_exit():
    check_failure("exit", DEVICE % ("T4", "gpu") + "echo 'RuntimeError: boom' >&2\nexit 4\n", 6,
                  "exited with status 4 after stdout line 1: RuntimeError: boom")


def test_exec_failure_in_a_later_run_caches_nothing():
    # The first batch works, the second crashes: the whole profile is dropped.
    check_failure("later", DEVICE % ("T4", "gpu") + '[ "$CLOUDFIT_LOCAL_BATCH" = 16 ] && exit 2\n' + STEPS, 6,
                  "local batch 16", "exited with status 2")


def test_cuda_backend_unavailable():
    rc, out, err = run("profile", "--db", os.path.join(TMP, "cuda.db"), "--backend", "cuda",
                       os.path.join(EXAMPLES, "mlp-synthetic.json"))
    assert rc == 6, (rc, err)
    assert err.startswith("cloudfit: cannot profile on CUDA: "), err
    assert "hint: " in err
    print(f"  cuda: {err.splitlines()[0]}")


def test_usage_errors():
    rc, out, err = run("profile", "--backend", "tpu", os.path.join(EXAMPLES, "mlp-synthetic.json"))
    assert rc == 2 and "'tpu'" in err, err
    rc, out, err = run("profile")
    assert rc == 2 and "missing the spec file" in err, err
    # a one-output MLP: the spec takes it, the engine (a classifier) cannot: said with the key, before the sweep
    doc = json.load(open(os.path.join(EXAMPLES, "mlp-synthetic.json")))
    doc["model"]["architecture"]["layers"][-1] = 1
    one = write("one-output.json", json.dumps(doc))
    rc, out, err = run("profile", "--backend", "cpu", "--db", os.path.join(TMP, "one.db"), one)
    last = len(doc["model"]["architecture"]["layers"]) - 1
    assert rc == 3 and "model.architecture.layers[%d]: the cpu backend trains a classifier" % last in err, err
    assert "local batch" not in err, err
    rc, out, err = run("profile", "--backend", "cpu", os.path.join(EXAMPLES, "resnet50-imagenet.json"))
    assert rc == 3 and "\"mlp\"" in err and "--backend exec" in err, err
    rc, out, err = run("profile", "--backend", "exec", os.path.join(EXAMPLES, "resnet50-imagenet.json"))
    assert rc == 3 and "profile.command" in err, err
    rc, out, err = run("profile", "--help")
    assert rc == 0 and "--backend" in out and "--csv" in out and "--timeout" in out, out
    # --timeout typed for the in-process cpu backend timed nothing and was accepted without a word
    rc, out, err = run("profile", "--backend", "cpu", "--timeout", "30", os.path.join(EXAMPLES, "mlp-synthetic.json"))
    assert rc == 2 and out == "" and "option '--timeout' applies to the exec backend and --runner, not to the cpu " \
                                     "backend" in err, (rc, err)
    # --seed reaches a local profile's probe (CLOUDFIT_SEED; it was always 1)
    seen = os.path.join(TMP, "seed.txt")
    spec = exec_spec("seed", 'echo "$CLOUDFIT_SEED" >> %s\n' % seen + DEVICE % ("T4", "gpu") + STEPS)
    rc, out, err = run("profile", "--db", os.path.join(TMP, "seed.db"), "--noise-steps", "2", "--seed", "5", "-q", spec)
    assert rc == 0, err
    assert set(open(seen).read().split()) == {"5"}, open(seen).read()


def test_noise_micro_batches_range_is_said_once():
    """--noise-micro-batches 0 said 'expects a positive integer (1 to 1000000)', then 1 said 'expects 2 to 64':
    every value out of range is told the option's range, 2 to 64."""
    spec = os.path.join(EXAMPLES, "mlp-synthetic.json")
    for bad in ("0", "1", "65", "1000001", "-3"):
        rc, out, err = run("profile", "--db", os.path.join(TMP, "nmb.db"), "--noise-micro-batches", bad, spec)
        assert rc == 2 and "option '--noise-micro-batches' expects an integer from 2 to 64, got '%s'" % bad in err, (
            bad, err)
        assert not os.path.exists(os.path.join(TMP, "nmb.db")), bad


def test_exec_step_times_bounded_and_a_flat_curve():
    """A step time of 1e308 s overflowed the median to inf (the fit printed "-nan + -nan·m", the profile was
    stored); every batch at one step time printed "R² nan"; a device name over 127 bytes, sent twice the
    same, was "another device"."""
    huge = STEPS.replace('t=$(awk "BEGIN {print 0.02 + 0.001 * $CLOUDFIT_LOCAL_BATCH}")', "t=1e308")
    check_failure("huge-step", DEVICE % ("T4", "gpu") + huge, 3, "stdout line 2",
                  '"time_s": 1e+308 s is not a step time (1e-09 to 1e+06 s)')
    flat = STEPS.replace('t=$(awk "BEGIN {print 0.02 + 0.001 * $CLOUDFIT_LOCAL_BATCH}")', "t=0.05")
    long_name = "NVIDIA T4 " + "x" * 190
    db = os.path.join(TMP, "flat.db")
    rc, out, err = run("profile", "--db", db, exec_spec("flat", (DEVICE % (long_name, "gpu")) * 2 + flat))
    assert rc == 0 and "R² n/a (the same step time at every batch)" in out and "nan" not in out, (rc, out, err)


def test_helper_writes_a_subnormal_as_zero():
    """The cloudfit_probe helper's channel (python/cloudfit_probe/protocol.py) writes a subnormal double as 0:
    json.dumps writes 5e-324 as is, and cloudfit refuses a number that is not a normal double or 0 (it now says
    so at its column; before, "expected one JSON object per line")."""
    probe = write("subnormal.py", "\n".join([
        "import sys",
        "sys.path.insert(0, %r)" % os.path.join(SRC, "python"),
        "from cloudfit_probe.protocol import Channel, Config",
        "c, ch = Config(), Channel()",
        "ch.emit('device', name='NVIDIA A100-SXM4-40GB')",
        "for i in range(c.warmup_steps + c.steps):",
        "    ch.emit('step', step=i, time_s=0.01, samples=c.local_batch * c.micro_batches, loss=5e-324 if i == 1 else 1.0,",
        "            micro_sqnorms=[3.0, 1e-320][:c.micro_batches], mean_sqnorm=1.0)",
        "ch.emit('done')", ""]))
    spec = json.loads(open(exec_spec("subnormal", "")).read())
    spec["profile"]["command"] = [sys.executable, probe]
    path = write("subnormal.json", json.dumps(spec))
    db = os.path.join(TMP, "subnormal.db")
    rc, out, err = run("profile", "--db", db, "--noise-steps", "2", "-q", path)
    assert rc == 0, err
    # the C side, fed the number itself, names it and its column
    raw = exec_spec("subnormal-raw", DEVICE % ("T4", "gpu") +
                    "echo '{\"event\": \"step\", \"step\": 1, \"time_s\": 0.01, \"samples\": 8, \"loss\": 5e-324}'\n")
    rc, out, err = run("profile", "--db", db, raw)
    assert rc == 3 and "stdout line 2, column 68: invalid JSON: number out of range '5e-324'" in err, err
    assert "must fit a double" in err, err


def test_cpu_profile_uses_the_cpus_it_may_run_on():
    """Pinned to one CPU (taskset, a cpuset), the engine ran one OpenBLAS thread per online processor of the
    machine, all on that CPU, and its device said so ('2 threads'): step times measured oversubscribed."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise pyharness.Skip("one CPU already: nothing to tell apart")
    spec = write("pinned.json", json.dumps({
        "name": "pinned", "model": {"architecture": {"type": "mlp", "layers": [4, 8, 3]}},
        "data": {"samples": 100}, "training": {"epochs": 1, "batch": 16, "lr": 0.05},
        "profile": {"backend": "cpu", "local_batches": [2, 4], "steps": 3}}))
    p = subprocess.run([BIN, "profile", "-q", "--noise-steps", "3", "--db", os.path.join(TMP, "pinned.db"), spec],
                       capture_output=True, text=True, env=ENV, timeout=120,
                       preexec_fn=lambda: os.sched_setaffinity(0, {cpus[0]}))
    assert p.returncode == 0, p.stderr
    assert "(CPU, 1 thread)" in p.stdout.splitlines()[0], p.stdout


def main():
    return pyharness.run(globals(), cleanup=lambda: shutil.rmtree(TMP, ignore_errors=True))


if __name__ == "__main__":
    sys.exit(main())
