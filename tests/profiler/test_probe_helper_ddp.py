#!/usr/bin/python3
"""DistributedDataParallel through the cloudfit_probe helper with two CPU
processes (gloo; examples/ddp_probe.py, issue 29): the step reports each
worker's gradient squared norm — checked against the workers' gradients
recomputed in one process — and the all-reduced gradient's; through
`cloudfit profile --backend exec` the noise scale is finite. Skipped
without PyTorch. Usage: test_probe_helper_ddp.py CLOUDFIT_BINARY SOURCE_DIR"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from helper_common import ENV, PYTHON, SRC, main, probe_lines, profile, spec_file  # noqa: E402


def test_ddp_two_cpu_processes_report_per_worker_norms():
    ddp = os.path.join(SRC, "examples", "ddp_probe.py")
    lines, err = probe_lines([ddp, "--nproc", "2"], CLOUDFIT_LOCAL_BATCH=8, CLOUDFIT_MICRO_BATCHES=2,
                             CLOUDFIT_STEPS=1, CLOUDFIT_WARMUP_STEPS=0, CLOUDFIT_SEED=3)
    assert [e["event"] for e in lines] == ["device", "step", "done"], lines  # rank 1 said nothing
    assert lines[0]["gpus"] == 2 and lines[1]["samples"] == 16, lines
    # Each worker's gradient at the initial weights, recomputed in one process.
    code = ("import sys, json, torch; sys.path.insert(0, %r); import ddp_probe as d\n"
            "m = d.build_model(3); x, y = d.make_data(3); gs = []\n"
            "for c in range(2):\n"
            "    m.zero_grad(); xb, yb = d.micro_batch(x, y, c, 8)\n"
            "    torch.nn.functional.cross_entropy(m(xb), yb).backward()\n"
            "    gs.append([p.grad.clone().double() for p in m.parameters()])\n"
            "print(json.dumps([[float(sum((g ** 2).sum() for g in G)) for G in gs],\n"
            "                  float(sum((((a + b) / 2) ** 2).sum() for a, b in zip(*gs)))]))\n"
            % os.path.join(SRC, "examples"))
    p = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=ENV, timeout=60)
    assert p.returncode == 0, p.stderr
    per_worker, mean = json.loads(p.stdout)
    got = lines[1]
    print(f"  per-worker |g|²: {got['micro_sqnorms']} (recomputed {per_worker}); |mean|² {got['mean_sqnorm']:.6g}")
    for a, b in zip(got["micro_sqnorms"], per_worker):
        assert abs(a - b) < 1e-5 * b, (a, b)
    assert abs(got["mean_sqnorm"] - mean) < 1e-5 * mean
    # Through cloudfit: the noise run's k = 2 micro-batches of 32 are the 2
    # workers' (per-worker norms), a finite noise scale.
    spec = spec_file("ddp", [PYTHON, ddp, "--nproc", "2"], 64, batches=(8,))
    rc, out, err = profile(spec, "exec", "--noise-steps", "20", "--noise-micro-batches", "2")
    assert rc == 0, err
    prof = json.loads(out)
    assert prof["device"]["gpus"] == 2 and prof["noise"]["b_noise"] > 0, prof
    assert prof["noise"]["micro_batches"] == 2 and prof["noise"]["local_batch"] == 32, prof["noise"]
    print(f"  cloudfit profile through 2 gloo workers: B_noise {prof['noise']['b_noise']:.4g}")


if __name__ == "__main__":
    sys.exit(main(globals()))
