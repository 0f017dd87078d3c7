"""Shared parts of cloudfit's example probe scripts (probe_torch.py,
probe_numpy.py): the run configuration from the environment and the
command line, the exec protocol's JSON lines (docs/exec-protocol.md), and
the built-in CPU engine's data and initial weights, reproduced bit for bit
where it matters so a script's noise scale can be compared with the
engine's (docs/profiler.md, "Same data, same weights").

The engine (cuda_probe/rng.c, data_cpu.c, engine_cpu.c) defines:
  * random numbers: xoshiro256** seeded through splitmix64 from
    seed ^ (0xd1b54a32d192ed03 * (stream + 1)); uniform = (next >> 11)·2⁻⁵³;
    normal = sqrt(−2 ln u1)·cos(2π u2) from a fresh pair (u1 ≥ 1e-300);
    below(n) rejects draws ≥ 2⁶⁴−1 − (2⁶⁴−1) mod n, then takes r mod n;
  * weights (stream 0): per layer, weight [in, out] row-major then bias
    [out], each U(−1/√in, 1/√in) as (2u − 1)/√in (PyTorch's nn.Linear
    default distribution);
  * synthetic data: a teacher in → 64 ReLU → classes (stream 1: w1 [in, 64]
    ~ N(0, 2/in), b1 ~ 0.1·N(0, 1), w2 [64, classes] ~ N(0, 1/64), b2 = 0);
    sample i has x ~ N(0, I) from its own stream 1000 + i and the label
    argmax of the teacher's logits;
  * order (stream 2): a Fisher–Yates shuffle of the previous order at every
    epoch start (including the first); micro-batch j of a step takes the
    entries [j·B, (j+1)·B) of the step's B·k indices.
Labels are computed here in float64 where the engine sums in float32, so
a sample whose two best logits tie to within rounding may get the other
label; that is the only intended difference.
Only the Python standard library, NumPy and the torch-free part of the
cloudfit_probe helper (../python) are used here."""
import json
import math
import os
import sys

import numpy as np

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from cloudfit_probe.host import cpu_name, memory_gib  # noqa: E402,F401 (the probes' device event)

M64 = (1 << 64) - 1
TEACHER_HIDDEN = 64
STREAM_TEACHER, STREAM_ORDER, STREAM_SAMPLE_BASE = 1, 2, 1000


# ---- the engine's random numbers ------------------------------------------------

def _splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return x, z ^ (z >> 31)


class Rng:
    """One xoshiro256** stream, in plain Python integers (sequential use)."""

    def __init__(self, seed, stream):
        x = (seed ^ ((0xD1B54A32D192ED03 * (stream + 1)) & M64)) & M64
        self.s = []
        for _ in range(4):
            x, z = _splitmix64(x)
            self.s.append(z)

    def next(self):
        s0, s1, s2, s3 = self.s
        r = (s1 * 5) & M64
        r = ((((r << 7) | (r >> 57)) & M64) * 9) & M64
        t = (s1 << 17) & M64
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = ((s3 << 45) | (s3 >> 19)) & M64
        self.s = [s0, s1, s2, s3]
        return r

    def uniforms(self, n):
        """n uniforms in [0, 1); the loop is inlined for speed."""
        s0, s1, s2, s3 = self.s
        out = [0.0] * n
        scale = 1.0 / 9007199254740992.0
        for i in range(n):
            r = (s1 * 5) & M64
            r = ((((r << 7) | (r >> 57)) & M64) * 9) & M64
            t = (s1 << 17) & M64
            s2 ^= s0
            s3 ^= s1
            s1 ^= s2
            s0 ^= s3
            s2 ^= t
            s3 = ((s3 << 45) | (s3 >> 19)) & M64
            out[i] = (r >> 11) * scale
        self.s = [s0, s1, s2, s3]
        return out

    def normals(self, n):
        u = self.uniforms(2 * n)
        return [math.sqrt(-2.0 * math.log(max(u[2 * i], 1e-300))) * math.cos(6.283185307179586 * u[2 * i + 1])
                for i in range(n)]

    def below(self, n):
        limit = M64 - M64 % n
        while True:
            r = self.next()
            if r < limit:
                return r % n


class VecRng:
    """Many independent streams advanced in lock step (NumPy uint64)."""

    def __init__(self, seed, streams):
        streams = np.asarray(streams, dtype=np.uint64)
        x = np.uint64(seed) ^ (np.uint64(0xD1B54A32D192ED03) * (streams + np.uint64(1)))
        self.s = []
        for _ in range(4):
            x = x + np.uint64(0x9E3779B97F4A7C15)
            z = x.copy()
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            self.s.append(z ^ (z >> np.uint64(31)))

    def uniform(self):
        s0, s1, s2, s3 = self.s
        r = s1 * np.uint64(5)
        r = ((r << np.uint64(7)) | (r >> np.uint64(57))) * np.uint64(9)
        t = s1 << np.uint64(17)
        s2 = s2 ^ s0
        s3 = s3 ^ s1
        s1 = s1 ^ s2
        s0 = s0 ^ s3
        s2 = s2 ^ t
        s3 = (s3 << np.uint64(45)) | (s3 >> np.uint64(19))
        self.s = [s0, s1, s2, s3]
        return (r >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)

    def normal(self):
        u1 = np.maximum(self.uniform(), 1e-300)
        u2 = self.uniform()
        return np.sqrt(-2.0 * np.log(u1)) * np.cos(6.283185307179586 * u2)


# ---- weights and data -----------------------------------------------------------

def init_weights(widths, seed):
    """[(W [in, out] float32, b [out] float32), ...] as the CPU engine draws them."""
    rng = Rng(seed, 0)
    layers = []
    for l in range(len(widths) - 1):
        fan_in, fan_out = widths[l], widths[l + 1]
        bound = 1.0 / math.sqrt(fan_in)
        w = (2.0 * np.array(rng.uniforms(fan_in * fan_out)) - 1.0) * bound
        b = (2.0 * np.array(rng.uniforms(fan_out)) - 1.0) * bound
        layers.append((w.astype(np.float32).reshape(fan_in, fan_out), b.astype(np.float32)))
    return layers


class Dataset:
    """The engine's data: synthetic from the teacher (generated for the
    samples a run uses) or NumPy .npy arrays, in the engine's order."""

    def __init__(self, n, features, classes, seed, npy=None):
        self.n, self.features, self.classes, self.seed = n, features, classes, seed
        self.order_rng = Rng(seed, STREAM_ORDER)
        self.perm = list(range(n))
        self.cursor = n
        self.x = self.y = None
        if npy:
            self.x = np.load(npy[0]).astype(np.float32)
            self.y = np.load(npy[1]).astype(np.int64)
            if self.x.ndim != 2 or self.x.shape[1] != features:
                raise ValueError("%s: expected shape (n, %d), got %s" % (npy[0], features, self.x.shape))
            self.n = self.x.shape[0]
            self.perm = list(range(self.n))
            self.cursor = self.n
        else:
            rng = Rng(seed, STREAM_TEACHER)
            h = TEACHER_HIDDEN
            w1 = np.array(rng.normals(features * h)) * math.sqrt(2.0 / features)
            b1 = 0.1 * np.array(rng.normals(h))
            w2 = np.array(rng.normals(h * classes)) * math.sqrt(1.0 / h)
            self.teacher = (w1.astype(np.float32).reshape(features, h), b1.astype(np.float32),
                            w2.astype(np.float32).reshape(h, classes))
            self.cache = {}

    def take(self, count):
        out = []
        for _ in range(count):
            if self.cursor >= self.n:
                perm = self.perm
                for i in range(self.n - 1, 0, -1):
                    j = self.order_rng.below(i + 1)
                    perm[i], perm[j] = perm[j], perm[i]
                self.cursor = 0
            out.append(self.perm[self.cursor])
            self.cursor += 1
        return out

    def prepare(self, indices):
        """Generates the synthetic samples among `indices` (vectorised over samples)."""
        if self.x is not None:
            return
        todo = sorted(set(i for i in indices if i not in self.cache))
        for start in range(0, len(todo), 8192):
            part = todo[start:start + 8192]
            rng = VecRng(self.seed, [STREAM_SAMPLE_BASE + i for i in part])
            x = np.empty((len(part), self.features), dtype=np.float32)
            for k in range(self.features):
                x[:, k] = rng.normal()
            w1, b1, w2 = self.teacher
            hidden = np.maximum(x.astype(np.float64) @ w1.astype(np.float64) + b1, 0.0).astype(np.float32)
            logits = hidden.astype(np.float64) @ w2.astype(np.float64)
            labels = np.argmax(logits, axis=1)
            for r, i in enumerate(part):
                self.cache[i] = (x[r], int(labels[r]))

    def gather(self, indices):
        if self.x is not None:
            idx = np.asarray(indices)
            return self.x[idx], self.y[idx]
        x = np.stack([self.cache[i][0] for i in indices])
        y = np.array([self.cache[i][1] for i in indices], dtype=np.int64)
        return x, y


# ---- configuration and protocol -------------------------------------------------

def emit(event, **fields):
    fields = dict(event=event, **fields)
    sys.stdout.write(json.dumps(fields, allow_nan=False) + "\n")  # JSON has no NaN: fail here, not in cloudfit
    sys.stdout.flush()


def env_int(name, default):
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        emit("error", message="%s: expected an integer, got %r" % (name, value))
        sys.exit(2)


def config(argv, description):
    """The run: model from --spec MODEL.json (or --layers etc.), batch and
    steps from the CLOUDFIT_* environment (defaults for a run by hand)."""
    import argparse
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--spec", help="cloudfit model.json: model.architecture, training.lr/optimizer, data")
    p.add_argument("--layers", help="widths incl. input and output, e.g. 784,1024,1024,10")
    p.add_argument("--activation", choices=["relu", "gelu"])
    p.add_argument("--optimizer", choices=["sgd", "momentum", "adam", "adamw"])
    p.add_argument("--lr", type=float)
    p.add_argument("--samples", type=int, help="synthetic data set size (data.samples)")
    p.add_argument("--threads", type=int, default=0, help="intra-op threads (0 = library default)")
    a = p.parse_args(argv)
    cfg = {"layers": None, "activation": "relu", "optimizer": "sgd", "lr": 0.05, "samples": 60000, "npy": None}
    if a.spec:
        with open(a.spec) as f:
            spec = json.load(f)
        arch = spec.get("model", {}).get("architecture", {})
        if arch.get("type") != "mlp":
            emit("error", message="%s: model.architecture.type must be \"mlp\" for this probe" % a.spec)
            sys.exit(2)
        cfg["layers"] = arch["layers"]
        cfg["activation"] = arch.get("activation", "relu")
        training = spec.get("training", {})
        cfg["optimizer"] = training.get("optimizer", "sgd")
        cfg["lr"] = training["lr"]
        data = spec.get("data", {})
        cfg["samples"] = int(data.get("samples", cfg["samples"]))
        source = data.get("source", "synthetic")
        if isinstance(source, dict) and "npy" in source:
            base = os.path.dirname(os.path.abspath(a.spec))
            cfg["npy"] = tuple(os.path.join(base, source["npy"][k]) for k in ("x", "y"))
    for key in ("activation", "optimizer", "lr", "samples"):
        if getattr(a, key) is not None:
            cfg[key] = getattr(a, key)
    if a.layers:
        cfg["layers"] = [int(w) for w in a.layers.split(",")]
    if not cfg["layers"] or len(cfg["layers"]) < 2:
        emit("error", message="no model: give --spec MODEL.json or --layers IN,...,CLASSES")
        sys.exit(2)
    cfg["threads"] = a.threads
    cfg["local_batch"] = env_int("CLOUDFIT_LOCAL_BATCH", 32)
    cfg["micro_batches"] = env_int("CLOUDFIT_MICRO_BATCHES", 1)
    cfg["steps"] = env_int("CLOUDFIT_STEPS", 10)
    cfg["warmup_steps"] = env_int("CLOUDFIT_WARMUP_STEPS", 0)
    cfg["seed"] = env_int("CLOUDFIT_SEED", 1)
    return cfg


def run_indices(data, cfg):
    """Every step's sample indices, drawn up front in the engine's order."""
    per_step = cfg["local_batch"] * cfg["micro_batches"]
    steps = [data.take(per_step) for _ in range(cfg["warmup_steps"] + cfg["steps"])]
    data.prepare([i for s in steps for i in s])
    return steps
