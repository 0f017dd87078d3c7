#!/usr/bin/python3
"""A NumPy MLP that speaks cloudfit's exec probe protocol
(docs/exec-protocol.md): the same model, data, initial weights and
optimizers as probe_torch.py and the CPU engine, with forward and backward
written out by hand (float32). Needs only python3-numpy.

    profile.command: ["/usr/bin/python3", "examples/probe_numpy.py", "--spec", "examples/mlp-synthetic.json"]

GELU uses erf from the Abramowitz–Stegun 7.1.26 approximation (error
below 1.5e-7, under float32 resolution), as NumPy has no erf."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine_twin as cp  # noqa: E402
import numpy as np  # noqa: E402


def erf(x):
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * \
        np.exp(-a * a)
    return sign * y


def activation(name):
    if name == "gelu":
        def fwd(z):
            return (0.5 * z * (1.0 + erf(z * 0.7071067811865476))).astype(np.float32)

        def grad(z):
            cdf = 0.5 * (1.0 + erf(z * 0.7071067811865476))
            pdf = np.exp(-0.5 * z * z) * 0.3989422804014327
            return (cdf + z * pdf).astype(np.float32)
        return fwd, grad
    return (lambda z: np.maximum(z, 0.0)), (lambda z: (z > 0).astype(np.float32))


def loss_and_grads(layers, act, x, y):
    """Mean softmax cross-entropy over the rows and its gradient per tensor."""
    fwd, grad = act
    inputs, pres = [], []
    h = x
    for l, (w, b) in enumerate(layers):
        inputs.append(h)
        z = h @ w + b
        pres.append(z)
        h = fwd(z) if l < len(layers) - 1 else z
    zmax = h.max(axis=1, keepdims=True)
    e = np.exp(h - zmax)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(len(y))
    loss = float(np.mean(np.log(s[:, 0]) - (h[rows, y] - zmax[:, 0])))
    d = e / s
    d[rows, y] -= 1.0
    d = (d / len(y)).astype(np.float32)
    grads = [None] * len(layers)
    for l in range(len(layers) - 1, -1, -1):
        w, _ = layers[l]
        grads[l] = (inputs[l].T @ d, d.sum(axis=0))
        if l > 0:
            d = (d @ w.T) * grad(pres[l - 1])
    return loss, grads


class Optimizer:
    def __init__(self, name, lr, shapes):
        if name not in ("sgd", "momentum", "adam", "adamw"):
            cp.emit("error", message="optimizer %r is not supported by probe_numpy.py (sgd, momentum, adam, adamw)"
                    % name)
            sys.exit(2)
        self.name, self.lr, self.t = name, lr, 0
        self.m = [np.zeros(s, dtype=np.float32) for s in shapes]
        self.v = [np.zeros(s, dtype=np.float32) for s in shapes]

    def step(self, params, grads):
        self.t += 1
        lr = np.float32(self.lr)
        for i, (p, g) in enumerate(zip(params, grads)):
            if self.name == "sgd":
                p -= lr * g
            elif self.name == "momentum":
                self.m[i] = np.float32(0.9) * self.m[i] + g
                p -= lr * self.m[i]
            else:
                if self.name == "adamw":
                    p *= np.float32(1.0 - self.lr * 0.01)
                self.m[i] = np.float32(0.9) * self.m[i] + np.float32(0.1) * g
                self.v[i] = np.float32(0.999) * self.v[i] + np.float32(0.001) * g * g
                step = np.float32(self.lr / (1.0 - 0.9 ** self.t))
                root_bc2 = np.float32(np.sqrt(1.0 - 0.999 ** self.t))
                p -= step * self.m[i] / (np.sqrt(self.v[i]) / root_bc2 + np.float32(1e-8))


def main():
    cfg = cp.config(sys.argv[1:], __doc__.splitlines()[0])
    cp.emit("device", name="%s (CPU, NumPy %s)" % (cp.cpu_name(), np.__version__), memory_gib=round(cp.memory_gib(), 1),
            gpus=1, type="cpu")
    widths = cfg["layers"]
    layers = [(w.copy(), b.copy()) for w, b in cp.init_weights(widths, cfg["seed"])]
    params = [t for wb in layers for t in wb]
    opt = Optimizer(cfg["optimizer"], cfg["lr"], [p.shape for p in params])
    act = activation(cfg["activation"])
    data = cp.Dataset(cfg["samples"], widths[0], widths[-1], cfg["seed"], cfg["npy"])
    steps = cp.run_indices(data, cfg)
    B, k = cfg["local_batch"], cfg["micro_batches"]
    try:
        for step, indices in enumerate(steps, start=1):
            t0 = time.perf_counter()
            mean = [np.zeros_like(p) for p in params]
            micro_sqnorms, loss_sum = [], 0.0
            for j in range(k):
                x, y = data.gather(indices[j * B:(j + 1) * B])
                loss, grads = loss_and_grads(layers, act, x, y)
                flat = [g for wb in grads for g in wb]
                micro_sqnorms.append(sum(float(np.dot(g.ravel().astype(np.float64), g.ravel())) for g in flat))
                for m, g in zip(mean, flat):
                    m += g / np.float32(k)
                loss_sum += loss
            mean_sqnorm = sum(float(np.dot(m.ravel().astype(np.float64), m.ravel())) for m in mean)
            opt.step(params, mean)
            elapsed = time.perf_counter() - t0
            event = dict(step=step, time_s=elapsed, samples=B * k, loss=loss_sum / k)
            if k > 1:
                event.update(micro_sqnorms=micro_sqnorms, mean_sqnorm=mean_sqnorm)
            cp.emit("step", **event)
    except MemoryError:
        cp.emit("oom")
        return 0
    cp.emit("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
