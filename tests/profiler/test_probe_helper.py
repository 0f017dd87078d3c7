#!/usr/bin/python3
"""The cloudfit_probe helper (python/cloudfit_probe, issue 29) with real
PyTorch on the CPU, through `cloudfit profile --backend exec`:
  * its noise scale on the engine's MLP (examples/probe_torch.py) matches
    the built-in CPU engine's within 1 %;
  * fp16's GradScaler path: norms unscaled, overflowing steps re-run at a
    lower scale (a scaler with GradScaler's interface on the CPU, where
    PyTorch 1.13 has none);
  * running out of memory is `oom`, a non-finite norm is an `error` event
    that keeps the sweep (then `--resume`), a print() in the training code
    does not break the protocol;
  * `pip install` of python/ works offline; the three-line example runs.
DDP: test_probe_helper_ddp.py; torchvision's ResNet-18: test_probe_helper_vision.py.
Without PyTorch for /usr/bin/python3 the test reports Skipped (exit 77).
Usage: test_probe_helper.py CLOUDFIT_BINARY SOURCE_DIR"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from helper_common import (BIN, ENV, HELPER, PYTHON, SRC, TMP, main, probe_lines, profile, spec_file,  # noqa: E402
                           write)


def test_three_line_example():
    # examples/three_lines.py through its spec, from the repository root as documented.
    p = subprocess.run([BIN, "profile", "-q", "--db", os.path.join(TMP, "three.db"), "--format", "json",
                        "--noise-steps", "20", "examples/three-lines.json"], capture_output=True, text=True, env=ENV,
                       cwd=SRC, timeout=300)
    assert p.returncode == 0, p.stderr
    prof = json.loads(p.stdout)
    assert [pt["local_batch"] for pt in prof["points"]] == [16, 32, 64] and prof["noise"]["b_noise"] > 0, prof
    print(f"  examples/three-lines.json: B_noise {prof['noise']['b_noise']:.4g}, {prof['device']['name']}")


def test_mlp_noise_scale_matches_the_engine():
    # The engine's MLP, data, weights and order (examples/engine_twin.py),
    # trained by PyTorch through the helper: SGD + ReLU and Adam + GELU.
    # (examples/probe_numpy.py covers more optimizers: test_probe_parity.py)
    for name, layers, act, opt, lr, batch in (("mlp-gelu-adam", [48, 96, 10], "gelu", "adam", 0.002, 128),):
        path = os.path.join(TMP, name + ".json")
        command = [PYTHON, os.path.join(SRC, "examples", "probe_torch.py"), "--spec", path, "--threads", "1"]
        spec_file(name, command, batch, model={"architecture": {"type": "mlp", "layers": layers, "activation": act}})
        with open(path) as f:
            spec = json.load(f)
        spec["training"].update(optimizer=opt, lr=lr)
        write(name + ".json", json.dumps(spec))
        rc, out, err = profile(path, "cpu", "--noise-steps", "60")
        assert rc == 0, err
        engine = json.loads(out)
        rc, out, err = profile(path, "exec", "--noise-steps", "60")
        assert rc == 0, err
        helper = json.loads(out)
        a, b = engine["noise"]["b_noise"], helper["noise"]["b_noise"]
        print(f"  {name}: CPU engine B_noise {a:.6g}, PyTorch through cloudfit_probe {b:.6g} "
              f"({helper['device']['name']}): {100 * abs(a - b) / a:.2g}% apart")
        assert abs(a - b) < 0.01 * a, (a, b)
        assert [p[0] for p in engine["noise"]["trace"]] == [p[0] for p in helper["noise"]["trace"]]
        assert helper["precision"] == "fp32" and helper["memory_format"] == "contiguous", helper
        assert [p["local_batch"] for p in helper["points"]] == [8, 16]


# A GradScaler as PyTorch defines it, on the CPU: scale the loss, unscale_
# the gradients and note an overflow, skip the step on one, halve the scale.
# Above 2^20 the backward "overflows" (the loss is scaled to infinity), as
# an fp16 backward does beyond 65504: what the scaler exists for.
FAKE_SCALER = r'''
import math, os, sys, torch
sys.path.insert(0, os.environ["EXAMPLES"])
import ddp_probe as d
import cloudfit_probe

class Scaler:
    def __init__(self, scale): self.scale_value, self.found, self.rescales = scale, False, 0
    def scale(self, loss): return loss * (self.scale_value if self.scale_value <= 2 ** 20 else float("inf"))
    def get_scale(self): return self.scale_value
    def unscale_(self, optimizer):
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self.found |= not bool(torch.isfinite(p.grad).all())
                    p.grad.div_(self.scale_value)
    def step(self, optimizer):
        if not self.found:
            optimizer.step()
    def update(self):
        if self.found:
            self.scale_value /= 2
            self.rescales += 1
        self.found = False

model = d.build_model(5)
x, y = d.make_data(5)
scaler = Scaler(float(sys.argv[1])) if len(sys.argv) > 1 else None
code = cloudfit_probe.run(model, torch.nn.CrossEntropyLoss(), d.worker_batches(x, y, 0, 1),
                          torch.optim.SGD(model.parameters(), lr=0.05), precision="fp32", scaler=scaler)
print("rescales", scaler.rescales if scaler else 0, file=sys.stderr)
sys.exit(code)
'''


def test_scaled_gradients_are_unscaled_and_overflow_is_retried():
    script = write("fake_scaler.py", FAKE_SCALER)
    env = dict(CLOUDFIT_LOCAL_BATCH=16, CLOUDFIT_MICRO_BATCHES=4, CLOUDFIT_STEPS=3, CLOUDFIT_WARMUP_STEPS=0,
               EXAMPLES=os.path.join(SRC, "examples"))
    plain, _ = probe_lines([script], **env)
    # 2^20: no overflow; 2^30: overflows until halved 10 times.
    for scale in ("1048576", str(2.0 ** 30)):
        scaled, err = probe_lines([script, scale], **env)
        rescales = int(err.split("rescales ")[-1])
        for a, b in zip(plain[1:-1], scaled[1:-1]):
            for u, v in zip(a["micro_sqnorms"] + [a["mean_sqnorm"]], b["micro_sqnorms"] + [b["mean_sqnorm"]]):
                assert abs(u - v) < 1e-5 * u, (scale, u, v)
        print(f"  scale {float(scale):.3g}: norms as unscaled fp32, {rescales} overflowing tries re-run")
        assert rescales == (0 if scale == "1048576" else 10), rescales


# A probe of a tiny model: prints to stdout from the loss (the helper keeps
# stdout for the protocol), runs out of memory above 16 samples, and in the
# noise run (k > 1) the loss turns infinite from step 3 when INF_LOSS is set.
TINY = r'''
import os, sys, torch
import cloudfit_probe
torch.manual_seed(0)
model = torch.nn.Linear(8, 3)
x = torch.randn(512, 8)
data = torch.utils.data.TensorDataset(x, (x @ torch.randn(8, 3)).argmax(dim=1))
calls = [0]

def loss_fn(model, batch):
    x, y = batch
    print("training on", x.shape[0], "samples")          # stdout: must not reach cloudfit
    if x.shape[0] > 16:
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
    calls[0] += 1
    loss = torch.nn.functional.cross_entropy(model(x), y)
    k = int(os.environ["CLOUDFIT_MICRO_BATCHES"])
    if os.environ.get("INF_LOSS") and k > 1 and calls[0] > 2 * k:
        loss = loss * float("inf")
    return loss

sys.exit(cloudfit_probe.run(model, loss_fn, data, torch.optim.SGD(model.parameters(), lr=0.1)))
'''


def test_oom_nonfinite_and_stray_prints():
    script = write("tiny.py", TINY)
    lines, err = probe_lines([script], CLOUDFIT_LOCAL_BATCH=32, CLOUDFIT_MICRO_BATCHES=1, CLOUDFIT_STEPS=3,
                             CLOUDFIT_WARMUP_STEPS=1)
    assert [e["event"] for e in lines] == ["device", "oom"], lines
    assert "training on 32 samples" in err, err  # the print() went to stderr
    # Through cloudfit, the noise run's loss turns infinite: an error event
    # naming the step, the sweep stored (and the stray prints harmless).
    spec = spec_file("tiny", [PYTHON, script], 32, batches=(4, 16))
    db = os.path.join(TMP, "inf.db")
    p = subprocess.run([BIN, "profile", "--db", db, "--noise-steps", "10", spec], capture_output=True, text=True,
                       env=dict(ENV, INF_LOSS="1"), timeout=300)
    first = next(line for line in p.stderr.splitlines() if line.startswith("cloudfit:"))
    print("  " + first)
    assert p.returncode == 6, p.stderr
    assert "the script reported an error: step 3: micro-batch 1's gradient's squared norm is " in first, first
    assert "a non-finite gradient" in first and "Infinity" not in first and "NaN" not in first, first
    assert "noise scale: FAILED" in p.stdout and "trained in: fp32, memory format contiguous" in p.stdout, p.stdout
    # Fixed (no INF_LOSS): --resume runs the noise run alone.
    p = subprocess.run([BIN, "profile", "-q", "--db", db, "--noise-steps", "10", "--resume", "--format", "json", spec],
                       capture_output=True, text=True, env=ENV, timeout=300)
    assert p.returncode == 0, p.stderr
    prof = json.loads(p.stdout)
    assert [pt["local_batch"] for pt in prof["points"]] == [4, 16] and prof["noise"]["b_noise"] > 0, prof


# A Conv3d model; LAYOUT (channels_last_3d, contiguous) is how its weights
# are stored, ASK the run's channels_last argument. The loss checks the
# layout of the 5-D inputs it is given.
CONV3D = r'''
import os, sys, torch, torch.nn as nn
import cloudfit_probe
torch.manual_seed(0)
model = nn.Sequential(nn.Conv3d(2, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool3d(1), nn.Flatten(), nn.Linear(4, 3))
if os.environ["LAYOUT"] == "channels_last_3d":
    model = model.to(memory_format=torch.channels_last_3d)
data = torch.utils.data.TensorDataset(torch.randn(64, 2, 4, 4, 4), torch.randint(0, 3, (64,)))
def loss_fn(model, batch):
    x, y = batch
    print("input channels_last_3d: %s" % (x.is_contiguous(memory_format=torch.channels_last_3d) and x.stride(1) == 1))
    return nn.functional.cross_entropy(model(x), y)
ask = {"": None, "1": True, "0": False}[os.environ.get("ASK", "")]
sys.exit(cloudfit_probe.run(model, loss_fn, data, torch.optim.SGD(model.parameters(), lr=0.1), channels_last=ask))
'''


def test_channels_last_3d_model_is_reported_as_such():
    """A Conv3d model stored torch.channels_last_3d was reported "contiguous" (only 4-D weights were looked at),
    so recommend compared a contiguous profile with a spec's model.memory_format channels_last_3d: a wider
    interval and a hint to profile in the format it had been profiled in. Now the device event says
    channels_last_3d and the 5-D inputs are moved to that layout; channels_last=False still says contiguous."""
    script = write("conv3d.py", CONV3D)
    run_env = dict(CLOUDFIT_LOCAL_BATCH=4, CLOUDFIT_MICRO_BATCHES=1, CLOUDFIT_STEPS=2, CLOUDFIT_WARMUP_STEPS=1)
    for layout, ask, want in (("channels_last_3d", "", "channels_last_3d"), ("channels_last_3d", "1", "channels_last_3d"),
                              ("channels_last_3d", "0", "contiguous"), ("contiguous", "", "contiguous")):
        lines, err = probe_lines([script], LAYOUT=layout, ASK=ask, **run_env)
        device = next(e for e in lines if e["event"] == "device")
        assert device["memory_format"] == want, (layout, ask, device)
        assert [e["event"] for e in lines][-1] == "done", lines
        moved = "input channels_last_3d: True" in err
        assert moved == (want == "channels_last_3d"), (layout, ask, err)


def test_pip_install_from_the_checkout():
    target = os.path.join(TMP, "site")
    build = shutil.copytree(HELPER, os.path.join(TMP, "python-src"))  # setuptools writes build/ and egg-info here
    p = subprocess.run([PYTHON, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps", "--no-index",
                        "--target", target, build], capture_output=True, text=True, timeout=180,
                       env=dict(ENV, PYTHONPATH="", PIP_DISABLE_PIP_VERSION_CHECK="1"))
    assert p.returncode == 0, p.stderr
    p = subprocess.run([PYTHON, "-c", "import cloudfit_probe, cloudfit_probe.vision; print(cloudfit_probe.__file__, "
                        "cloudfit_probe.__version__)"], capture_output=True, text=True, timeout=60,
                       env=dict(ENV, PYTHONPATH=target), cwd=TMP)
    assert p.returncode == 0 and p.stdout.startswith(target), (p.stdout, p.stderr)
    print(f"  pip install --no-build-isolation ./python: {p.stdout.strip()}")


if __name__ == "__main__":
    sys.exit(main(globals()))
