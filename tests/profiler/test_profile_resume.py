#!/usr/bin/python3
"""`cloudfit profile --backend exec` when the noise run fails after a good
sweep (issue 29): a probe that prints `Infinity` gets a message naming the
column and the token, the sweep is stored with the noise scale marked
failed, `recommend` uses the throughput and says where the noise scale
came from instead, and `profile --resume` re-runs only the noise run.
Also the precision and memory format a probe reports: stored, shown, and
moved to the spec's precision by `recommend`. Scripted probes (/bin/sh), no
PyTorch. Usage: test_profile_resume.py CLOUDFIT_BINARY SOURCE_DIR"""
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

import jsonschema

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="cloudfit-resume-")
ENV = pyharness.clean_env(TMP)

# A GPU of the catalog; each run appends "LOCAL_BATCH MICRO_BATCHES" to a log.
# The noise run (micro-batches > 1) writes Infinity as Python's json.dumps
# does for an overflowed fp16 norm, until the file FIXED exists.
SCRIPT = r'''
echo "$CLOUDFIT_LOCAL_BATCH $CLOUDFIT_MICRO_BATCHES" >> "$LOG"
echo '{"event": "device", "name": "NVIDIA A100-SXM4-40GB", "memory_gib": 40, "precision": "%(precision)s", "memory_format": "channels_last"}'
n=$((CLOUDFIT_WARMUP_STEPS + CLOUDFIT_STEPS)); i=1
while [ $i -le $n ]; do
  t=$(awk "BEGIN {print 0.02 + 0.001 * $CLOUDFIT_LOCAL_BATCH}")
  if [ "$CLOUDFIT_MICRO_BATCHES" -gt 1 ]; then
    norm=3.0
    [ -e "$FIXED" ] || [ $i -lt 3 ] || norm=Infinity
    norms=$(awk "BEGIN {for (j = 1; j <= $CLOUDFIT_MICRO_BATCHES; j++) printf \"%%s$norm\", (j > 1 ? \",\" : \"\")}")
    echo "{\"event\": \"step\", \"step\": $i, \"time_s\": $t, \"samples\": 32, \"loss\": 7.0177, \"micro_sqnorms\": [$norms], \"mean_sqnorm\": 1.0}"
  else
    echo "{\"event\": \"step\", \"step\": $i, \"time_s\": $t, \"samples\": $CLOUDFIT_LOCAL_BATCH}"
  fi
  i=$((i + 1))
done
echo '{"event": "done"}'
'''


def make_spec(name, precision="bf16", spec_precision=None):
    script = os.path.join(TMP, name + ".sh")
    with open(script, "w") as f:
        f.write(SCRIPT % {"precision": precision})
    model = {"parameters": 25557032, "flops_per_sample": 1.23e10}
    if spec_precision:
        model["precision"] = spec_precision
    spec = {"name": name, "model": model, "data": {"samples": 1281167},
            "training": {"epochs": 1, "batch": 32, "lr": 0.1},
            "profile": {"backend": "exec", "command": ["/bin/sh", script], "local_batches": [8, 16, 32], "steps": 3},
            "search": {"max_nodes": 2}}
    path = os.path.join(TMP, name + ".json")
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def run(name, *args):
    env = dict(ENV, LOG=os.path.join(TMP, name + ".log"), FIXED=os.path.join(TMP, name + ".fixed"))
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=env, timeout=120)
    return p.returncode, p.stdout, p.stderr


def runs_logged(name):
    with open(os.path.join(TMP, name + ".log")) as f:
        lines = f.read().split("\n")
    os.remove(os.path.join(TMP, name + ".log"))
    return [line for line in lines if line]


def stored(db):
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT b_noise, profile_json FROM profiles").fetchall()
    assert len(rows) == 1, rows
    return rows[0][0], json.loads(rows[0][1])


def test_infinity_keeps_the_sweep_then_resume():
    db = os.path.join(TMP, "inf.db")
    spec = make_spec("inf")
    rc, out, err = run("inf", "profile", "--db", db, "--noise-steps", "20", spec)
    assert rc == 3, (rc, err)
    first = next(line for line in err.splitlines() if line.startswith("cloudfit:"))
    print("  " + first)
    # Line 4 of the noise run (device, steps 1 and 2, step 3), the column of the
    # token (1-based), the token, and what it probably means.
    line = '{"event": "step", "step": 3, "time_s": 0.024, "samples": 32, "loss": 7.0177, "micro_sqnorms": [Infinity'
    assert f"stdout line 4, column {len(line) - len('Infinity') + 1}: 'Infinity' is not JSON: " \
           "a non-finite gradient norm? (fp16 overflow)" in first, first
    assert "noise run (local batch 4 × 8 micro-batches)" in first and "micro_sqnorms\": [Infinity'" in first, first
    assert "hint: JSON has no NaN or Infinity" in err, err
    assert "'cloudfit profile --resume'" in err and "nothing was stored" not in err, err
    assert "noise scale: FAILED: the noise run failed: " in out, out
    assert runs_logged("inf") == ["8 1", "16 1", "32 1", "4 8"]
    b_noise, prof = stored(db)
    assert b_noise is None and prof["noise"]["failed"] is True, prof["noise"]
    assert "Infinity" in prof["noise"]["error"], prof["noise"]
    assert [p["local_batch"] for p in prof["points"]] == [8, 16, 32] and prof["fit"]["beta_s"] > 0, prof
    assert prof["precision"] == "bf16" and prof["memory_format"] == "channels_last", prof

    # recommend: the A100's throughput is the sweep's, the noise scale comes from elsewhere.
    rc, out, err = run("inf", "recommend", "--db", db, "--no-history", "--format", "json", spec)
    assert rc == 0, err
    doc = json.loads(out)
    a100 = next(g for g in doc["explanation"]["gpus"] if g["gpu"] == "A100-40GB")
    assert a100["throughput"] == "measured", a100
    assert doc["chosen"]["provenance"]["noise_scale"] == "default", doc["chosen"]["provenance"]
    notes = json.dumps(doc["explanation"])
    assert "the noise scale is a default: the cached exec profile on NVIDIA A100-SXM4-40GB has none" in notes, notes
    assert "because the noise run failed: exec backend, noise run" in notes, notes

    # --resume runs the noise run alone and keeps the sweep as measured.
    open(os.path.join(TMP, "inf.fixed"), "w").close()
    rc, out, err = run("inf", "profile", "--db", db, "--noise-steps", "20", "--resume", "--format", "json", spec)
    assert rc == 0, err
    assert runs_logged("inf") == ["4 8"]
    b_noise, resumed = stored(db)
    assert b_noise > 0 and resumed["noise"]["b_noise"] == b_noise and "failed" not in resumed["noise"], resumed
    assert resumed["points"] == prof["points"] and resumed["created_at"] == prof["created_at"]
    assert json.loads(out)["noise"]["b_noise"] == b_noise

    # Nothing failed any more: --resume runs nothing, and stores nothing
    # (it said "stored the profile in ..." and wrote the row again).
    rc, out, err = run("inf", "profile", "--db", db, "--resume", spec)
    assert rc == 0 and "nothing to resume" in err, err
    assert "stored the profile" not in err and "noise scale: B_noise" in out, (out, err)
    assert stored(db) == (b_noise, resumed)
    assert not os.path.exists(os.path.join(TMP, "inf.log"))


def test_resume_reruns_the_failed_run_as_it_was():
    # --resume without --noise-steps or --noise-micro-batches re-runs the
    # failed noise run with its own steps and micro-batches (docs/profiler.md);
    # they were not stored with the failure, and the defaults (200 × 8) ran
    db = os.path.join(TMP, "shape.db")
    spec = make_spec("shape")
    rc, out, err = run("shape", "profile", "--db", db, "--noise-steps", "6", "--noise-micro-batches", "4", spec)
    assert rc == 3, (rc, err)
    assert runs_logged("shape") == ["8 1", "16 1", "32 1", "8 4"]
    _, prof = stored(db)
    assert prof["noise"]["failed"] is True and prof["noise"]["micro_batches"] == 4, prof["noise"]
    assert prof["noise"]["steps"] == 6 and prof["noise"]["local_batch"] == 8, prof["noise"]
    open(os.path.join(TMP, "shape.fixed"), "w").close()
    rc, out, err = run("shape", "profile", "--db", db, "--resume", spec)
    assert rc == 0, err
    assert runs_logged("shape") == ["8 4"]
    b_noise, resumed = stored(db)
    assert b_noise > 0 and resumed["noise"]["micro_batches"] == 4 and resumed["noise"]["steps"] == 6, resumed["noise"]


def test_a_failed_noise_run_keeps_a_complete_profile():
    # a complete profile is stored; profiling again, the noise run fails:
    # the partial profile replaced the complete one and its noise scale was lost
    db = os.path.join(TMP, "keep.db")
    spec = make_spec("keep")
    open(os.path.join(TMP, "keep.fixed"), "w").close()
    rc, out, err = run("keep", "profile", "--db", db, "--noise-steps", "6", spec)
    assert rc == 0, err
    b_noise, complete = stored(db)
    assert b_noise > 0, complete["noise"]
    os.remove(os.path.join(TMP, "keep.fixed"))
    rc, out, err = run("keep", "profile", "--db", db, "--noise-steps", "6", spec)
    assert rc == 3 and "'Infinity' is not JSON" in err, (rc, err)
    assert "kept the stored profile of %s" % complete["created_at"] in err, err
    assert "--resume" not in err and "noise scale: FAILED" not in out, (out, err)
    assert "this sweep is not stored: the stored profile of %s keeps its noise scale" % complete["created_at"] in out
    assert stored(db) == (b_noise, complete)
    runs_logged("keep")


def test_a_noise_run_that_measured_none_keeps_a_complete_profile():
    # --noise-steps 1 runs, but one step cannot give a noise scale: that
    # sweep replaced the complete profile and its measured noise scale was lost
    db = os.path.join(TMP, "none1.db")
    spec = make_spec("none1")
    open(os.path.join(TMP, "none1.fixed"), "w").close()
    rc, out, err = run("none1", "profile", "--db", db, "--noise-steps", "6", spec)
    assert rc == 0, err
    b_noise, complete = stored(db)
    assert b_noise > 0, complete["noise"]
    rc, out, err = run("none1", "profile", "--db", db, "--noise-steps", "1", spec)
    assert rc == 0, (rc, err)
    assert "kept the stored profile of %s" % complete["created_at"] in err, err
    assert "noise scale: not measured: 1 usable step(s), need at least 2; this sweep is not stored: the stored " \
           "profile of %s keeps its noise scale" % complete["created_at"] in out, out
    assert stored(db) == (b_noise, complete)
    runs_logged("none1")


def test_resume_without_a_stored_profile():
    rc, out, err = run("none", "profile", "--db", os.path.join(TMP, "none.db"), "--resume", make_spec("none"))
    assert rc == 3 and "no stored exec profile of 'none' to resume" in err, err
    assert not os.path.exists(os.path.join(TMP, "none.log"))


def test_precision_moves_to_the_spec_precision():
    # Profiled in bf16; the spec trains in fp32 (its default): the A100's
    # step is moved by its fp32/bf16 peak ratio, and recommend says so.
    db = os.path.join(TMP, "prec.db")
    spec = make_spec("prec")
    open(os.path.join(TMP, "prec.fixed"), "w").close()
    rc, out, err = run("prec", "profile", "--db", db, "--noise-steps", "20", spec)
    assert rc == 0, err
    assert "trained in: bf16, memory format channels_last" in out, out
    rc, out, err = run("prec", "recommend", "--db", db, "--no-history", spec)
    assert rc == 0, err
    assert "(exec backend, bf16, channels_last, " in out, out
    assert "trained in bf16, the job in fp32 (model.precision): step times × " in out, out
    # The same profile for a spec that trains in bf16: no move.
    spec16 = make_spec("prec", spec_precision="bf16")
    rc, out, err = run("prec", "profile", "--db", db, "--noise-steps", "20", spec16)
    assert rc == 0, err
    rc, out, err = run("prec", "recommend", "--db", db, "--no-history", spec16)
    assert rc == 0, err
    assert "(exec backend, bf16, channels_last, " in out and "trained in bf16, the job in" not in out, out


def test_memory_format_mismatch_widens_and_says_so():
    # The probe ran channels_last; a spec that says the job trains
    # contiguous gets the same point with a wider interval (σ_format in
    # quadrature), a note and a hint in every format, and JSON names both
    # formats. A spec that does not say, or says channels_last, gets neither.
    db = os.path.join(TMP, "fmt.db")
    silent = make_spec("fmt", spec_precision="bf16")
    with open(silent) as f:
        doc = json.load(f)
    same, other = os.path.join(TMP, "fmt_same.json"), os.path.join(TMP, "fmt_other.json")
    for path, memory_format in ((same, "channels_last"), (other, "contiguous")):
        doc["model"]["memory_format"] = memory_format
        with open(path, "w") as f:
            json.dump(doc, f)
    open(os.path.join(TMP, "fmt.fixed"), "w").close()
    rc, out, err = run("fmt", "profile", "--db", db, "--noise-steps", "20", other)
    assert rc == 0, err
    docs = {}
    for name, spec in (("silent", silent), ("same", same), ("other", other)):
        rc, out, err = run("fmt", "recommend", "--db", db, "--no-history", "--format", "json", spec)
        assert rc == 0 and "using the cached exec profile" in err, err  # the key leaves the format out
        docs[name] = json.loads(out)
    for name in ("silent", "same"):
        d = docs[name]
        assert d["chosen"]["step_time_sigma"] == docs["silent"]["chosen"]["step_time_sigma"], d["chosen"]
        assert not [n for n in d["explanation"]["notes"] if "memory format" in n or "hint:" in n], d["explanation"]
        assert all(g["memory_format_mismatch"] is None for g in d["explanation"]["gpus"]), d["explanation"]["gpus"]
    a, b = docs["silent"]["chosen"], docs["other"]["chosen"]
    assert (a["instance_type"], a["local_batch"]) == (b["instance_type"], b["local_batch"]), (a, b)
    assert a["step_time_s"] == b["step_time_s"], (a, b)  # the point stays
    assert a["nodes"] == 1, a  # one node: the step's log sd is the compute part's alone
    want = (a["step_time_sigma"] ** 2 + 0.59 ** 2) ** 0.5
    assert abs(b["step_time_sigma"] - want) < 2e-3 and b["hours_p90"] > a["hours_p90"], (a, b, want)
    jsonschema.validate(docs["other"], json.load(open(os.path.join(SRC, "data", "schema", "recommendation.schema.json"))))
    gpus = {g["gpu"]: g for g in docs["other"]["explanation"]["gpus"]}
    assert gpus["A100-40GB"]["memory_format_mismatch"] == {"profile": "channels_last", "spec": "contiguous"}, gpus
    carried = [g for g in gpus.values() if g["carried_from"] == "A100-40GB"]
    assert carried and all(g["memory_format_mismatch"] == gpus["A100-40GB"]["memory_format_mismatch"]
                           for g in carried), carried
    note = ("the exec profile on A100-40GB ran in memory format channels_last, the job in contiguous "
            "(model.memory_format): step times kept, their interval widened (σ 0.59, declared from one measurement)")
    hint = ("hint: profile in contiguous to measure it (cloudfit_probe.run(..., channels_last=False); "
            "docs/profiler.md), or set model.memory_format to channels_last if the job trains as profiled")
    assert note in docs["other"]["explanation"]["notes"] and hint in docs["other"]["explanation"]["notes"], \
        docs["other"]["explanation"]["notes"]
    def md(text):  # as a markdown cell escapes it
        return text.replace("_", "\\_")

    for fmt, lines in (("table", ("  note: " + note, "  " + hint)), ("markdown", ("- note: " + md(note), "- " + md(hint))),
                       ("html", ("  note: " + note, "  " + hint))):
        report = os.path.join(TMP, "fmt.html")
        args = ["--report", report] if fmt == "html" else ["--format", fmt]
        rc, out, err = run("fmt", "recommend", "--db", db, "--no-history", *args, other)
        assert rc == 0, err
        if fmt == "html":
            with open(report) as f:
                out = f.read()
        for line in lines:
            assert line in out, (fmt, line, out)


def test_setting_model_precision_keeps_the_profile():
    # recommend's note says "set model.precision to bf16 if the job trains
    # as profiled"; doing so changed the profile's spec key, and the cached
    # profile was silently no longer used (throughput from FLOPs instead).
    db = os.path.join(TMP, "prkey.db")
    spec = make_spec("prkey")
    with open(spec) as f:
        doc = json.load(f)
    doc["model"] = {"parameters": 25557032}  # integers only: the key text below is cJSON's
    with open(spec, "w") as f:
        json.dump(doc, f)
    open(os.path.join(TMP, "prkey.fixed"), "w").close()
    rc, out, err = run("prkey", "profile", "--db", db, "--noise-steps", "20", spec)
    assert rc == 0, err
    rc, out, err = run("prkey", "recommend", "--db", db, "--no-history", spec)
    assert rc == 0 and "set model.precision to bf16 if the job trains as profiled" in out, out
    doc["model"]["precision"] = "bf16"
    spec16 = os.path.join(TMP, "prkey16.json")
    with open(spec16, "w") as f:
        json.dump(doc, f)
    rc, out, err = run("prkey", "recommend", "--db", db, "--no-history", spec16)
    assert rc == 0, err
    assert "A100-40GB throughput measured: measured by 'cloudfit profile' (exec backend, bf16" in out, out
    assert "trained in bf16, the job in" not in out and "using the cached exec profile" in err, err
    # A profile an older version stored under the key with model.precision
    # in it is still found, by recommend and by --resume.
    old_key = hashlib.sha256(json.dumps(
        {"model": doc["model"], "data": doc["data"],
         "training": {k: doc["training"][k] for k in ("batch", "lr")}, "command": doc["profile"]["command"]},
        separators=(",", ":")).encode()).hexdigest()
    with sqlite3.connect(db) as con:
        con.execute("UPDATE profiles SET spec_key = ?", (old_key,))
    rc, out, err = run("prkey", "recommend", "--db", db, "--no-history", spec16)
    assert rc == 0, err
    assert "A100-40GB throughput measured: measured by 'cloudfit profile' (exec backend, bf16" in out, out
    rc, out, err = run("prkey", "profile", "--db", db, "--resume", spec16)
    assert rc == 0 and "nothing to resume" in err, err


def test_precision_must_be_known_and_stay_the_same():
    db = os.path.join(TMP, "bad.db")
    rc, out, err = run("bad", "profile", "--db", db, make_spec("bad", precision="fp8"))
    assert rc == 3 and "\"precision\": expected one of \"fp32\", \"tf32\", \"fp16\", \"bf16\", \"amp\", got \"fp8\"" in err, err


def test_a_diverged_cpu_noise_run_hints_what_works():
    """The built-in engine's noise run diverging (lr 30): the hint said to fix the script and --resume — there is
    no script, and a lowered training.lr changes the profile's key, so --resume found nothing to resume."""
    spec = os.path.join(TMP, "diverge.json")
    json.dump({"name": "diverge", "model": {"architecture": {"type": "mlp", "layers": [16, 32, 4]}},
               "data": {"samples": 1000}, "training": {"epochs": 1, "batch": 64, "lr": 30, "optimizer": "sgd"},
               "profile": {"local_batches": [4, 8], "steps": 3}}, open(spec, "w"))
    p = subprocess.run([BIN, "profile", "--backend", "cpu", "--db", os.path.join(TMP, "diverge.db"), spec],
                       capture_output=True, text=True, env=ENV, timeout=300)
    assert p.returncode == 3 and "training diverged" in p.stderr, p.stderr
    assert "fix the script" not in p.stderr and "--resume --noise-steps N" in p.stderr, p.stderr
    assert "lower training.lr (a new profile" in p.stderr, p.stderr


def test_a_small_noise_scale_is_not_read_as_zero():
    """A measured B_noise of 0.13 ± 0.049 (micro-batch norms barely above the mean's): recommend printed it
    "%.0f", as "noise scale 0, measured" and "0 ± 0", a zero B_noise the docs say is never shown."""
    script = os.path.join(TMP, "small_noise.sh")
    with open(script, "w") as f:
        f.write(r"""
echo '{"event": "device", "name": "NVIDIA A100-SXM4-40GB", "memory_gib": 40}'
n=$((CLOUDFIT_WARMUP_STEPS + CLOUDFIT_STEPS)); i=0; k=$CLOUDFIT_MICRO_BATCHES
while [ $i -lt $n ]; do
  t=$(awk "BEGIN {print 0.01 + 0.0001 * $CLOUDFIT_LOCAL_BATCH}")
  norms=$(awk "BEGIN {for (j = 0; j < $k; j++) printf \"%s%.4f\", (j ? \",\" : \"\"), 2.0 + 0.1 * (($i * 7 + j * 3) % 5)}")
  echo "{\"event\": \"step\", \"step\": $i, \"time_s\": $t, \"samples\": $((CLOUDFIT_LOCAL_BATCH * k)), \"micro_sqnorms\": [$norms], \"mean_sqnorm\": 2.19}"
  i=$((i + 1))
done
echo '{"event": "done"}'
""")
    spec = os.path.join(TMP, "small_noise.json")
    json.dump({"name": "small-noise", "model": {"parameters": 1000000, "flops_per_sample": 1e7},
               "data": {"samples": 60000}, "training": {"epochs": 1, "batch": 128, "lr": 0.05},
               "profile": {"backend": "exec", "command": ["/bin/sh", script], "local_batches": [16, 32], "steps": 3},
               "search": {"max_nodes": 1}}, open(spec, "w"))
    db = os.path.join(TMP, "small_noise.db")
    p = subprocess.run([BIN, "profile", "-q", "--format", "json", "--noise-steps", "20", "--db", db, spec],
                       capture_output=True, text=True, env=ENV, timeout=120)
    assert p.returncode == 0, p.stderr
    noise = json.loads(p.stdout)["noise"]
    b, se = noise["b_noise"], noise["stderr"]
    assert 0.01 < b < 1 and 0 < se < 1, noise
    p = subprocess.run([BIN, "recommend", "--db", db, spec], capture_output=True, text=True, env=ENV, timeout=120)
    assert p.returncode == 0, p.stderr
    assert f"noise scale: {b:.2g} ± {se:.2g} measured by 'cloudfit profile'" in p.stdout, p.stdout
    assert f"(noise scale {b:.2g}, measured)" in p.stdout, p.stdout
    assert "noise scale 0," not in p.stdout and "0 ± 0 " not in p.stdout, p.stdout


def main():
    return pyharness.run(globals(), cleanup=lambda: shutil.rmtree(TMP, ignore_errors=True))


if __name__ == "__main__":
    sys.exit(main())
