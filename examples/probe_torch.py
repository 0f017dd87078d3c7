#!/usr/bin/python3
"""A real PyTorch training loop that speaks cloudfit's exec probe protocol
(docs/exec-protocol.md): the spec's MLP on the CPU engine's synthetic data
(or .npy data), with the engine's initial weights, trained with the spec's
optimizer and learning rate. Each step runs CLOUDFIT_MICRO_BATCHES
micro-batches of CLOUDFIT_LOCAL_BATCH samples, reports the squared norm of
every micro-batch gradient and of their mean (for the gradient noise
scale), then applies one update with the mean.

    cloudfit profile --backend exec model.json     # with profile.command:
      ["/usr/bin/python3", "examples/probe_torch.py", "--spec", "examples/mlp-synthetic.json"]

Runs on a CUDA GPU when PyTorch sees one, else on the CPU (Debian's
python3-torch is a CPU build). Copy the pattern into your own training
script: the protocol needs only the per-micro-batch gradient norms."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cloudfit_probe as cp  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:  # report through the protocol, then fail
    cp.emit("error", message="PyTorch is not installed (%s); on Debian: apt-get install python3-torch" % e)
    sys.exit(3)


def device_event(device, threads):
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        cp.emit("device", name=torch.cuda.get_device_name(device), memory_gib=props.total_memory / 2**30, gpus=1,
                type="gpu")
    else:
        cp.emit("device", name="%s (CPU, PyTorch %s, %d threads)" % (cp.cpu_name(), torch.__version__.split("+")[0],
                                                                      threads),
                memory_gib=round(cp.memory_gib(), 1), gpus=1, type="cpu")


def make_optimizer(name, params, lr):
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr)
    if name == "momentum":
        return torch.optim.SGD(params, lr=lr, momentum=0.9)
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, betas=(0.9, 0.999), eps=1e-8)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    cp.emit("error", message="optimizer %r is not supported by probe_torch.py (sgd, momentum, adam, adamw)" % name)
    sys.exit(2)


def main():
    cfg = cp.config(sys.argv[1:], __doc__.splitlines()[0])
    if cfg["threads"] > 0:
        torch.set_num_threads(cfg["threads"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device_event(device, torch.get_num_threads())
    widths = cfg["layers"]
    params = []
    for w, b in cp.init_weights(widths, cfg["seed"]):
        params.append(torch.tensor(w, device=device, requires_grad=True))
        params.append(torch.tensor(b, device=device, requires_grad=True))
    opt = make_optimizer(cfg["optimizer"], params, cfg["lr"])
    act = F.gelu if cfg["activation"] == "gelu" else F.relu
    n_layers = len(widths) - 1

    def loss_of(x, y):
        h = x
        for l in range(n_layers):
            h = h @ params[2 * l] + params[2 * l + 1]
            if l < n_layers - 1:
                h = act(h)
        return F.cross_entropy(h, y)

    data = cp.Dataset(cfg["samples"], widths[0], widths[-1], cfg["seed"], cfg["npy"])
    steps = cp.run_indices(data, cfg)
    B, k = cfg["local_batch"], cfg["micro_batches"]
    try:
        for step, indices in enumerate(steps, start=1):
            batches = []
            for j in range(k):
                x, y = data.gather(indices[j * B:(j + 1) * B])
                batches.append((torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)))
            if device.type == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            mean = [torch.zeros_like(p) for p in params]
            micro_sqnorms, loss_sum = [], 0.0
            for x, y in batches:
                loss = loss_of(x, y)
                grads = torch.autograd.grad(loss, params)
                micro_sqnorms.append(sum(float((g.double() ** 2).sum()) for g in grads))
                for m, g in zip(mean, grads):
                    m.add_(g, alpha=1.0 / k)
                loss_sum += float(loss)
            mean_sqnorm = sum(float((m.double() ** 2).sum()) for m in mean)
            for p, m in zip(params, mean):
                p.grad = m
            opt.step()
            if device.type == "cuda":
                torch.cuda.synchronize()
            elapsed = time.perf_counter() - t0
            event = dict(step=step, time_s=elapsed, samples=B * k, loss=loss_sum / k)
            if k > 1:
                event.update(micro_sqnorms=micro_sqnorms, mean_sqnorm=mean_sqnorm)
            cp.emit("step", **event)
    except (MemoryError, RuntimeError) as e:
        if isinstance(e, MemoryError) or "out of memory" in str(e):
            cp.emit("oom")
            return 0
        raise
    cp.emit("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
