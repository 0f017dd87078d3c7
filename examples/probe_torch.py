#!/usr/bin/python3
"""The spec's MLP in PyTorch, profiled through the cloudfit_probe helper
(python/cloudfit_probe, docs/profiler.md): the CPU engine's synthetic (or
.npy) data in the engine's sample order, its initial weights, the spec's
optimizer and learning rate, in fp32 — so its noise scale can be compared
with the built-in engines' (tests/profiler/test_probe_helper.py: within
1 %), and its step times with the CUDA engine's (bench/gpu.sh).

    cloudfit profile --backend exec model.json     # with profile.command:
      ["/usr/bin/python3", "examples/probe_torch.py", "--spec", "examples/mlp-synthetic.json"]

Runs on a CUDA GPU when PyTorch sees one, else on the CPU. The helper is
found on PYTHONPATH (pip install ./python) or next to this file in the
checkout (../python)."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import engine_twin as cp  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:  # report through the protocol, then fail
    cp.emit("error", message="PyTorch is not installed (%s); on Debian: apt-get install python3-torch" % e)
    sys.exit(3)
try:
    import cloudfit_probe
except ImportError:
    sys.path.append(os.path.join(here, "..", "python"))
    import cloudfit_probe


class EngineMLP(torch.nn.Module):
    """h = x·W + b per layer (W stored [in, out] as the engine does), the
    spec's activation between layers, logits out."""

    def __init__(self, widths, activation, seed):
        super().__init__()
        self.act = F.gelu if activation == "gelu" else F.relu
        self.weights = torch.nn.ParameterList()
        self.biases = torch.nn.ParameterList()
        for w, b in cp.init_weights(widths, seed):
            self.weights.append(torch.nn.Parameter(torch.tensor(w)))
            self.biases.append(torch.nn.Parameter(torch.tensor(b)))

    def forward(self, x):
        n = len(self.weights)
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            x = x @ w + b
            if i < n - 1:
                x = self.act(x)
        return x


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
    model = EngineMLP(cfg["layers"], cfg["activation"], cfg["seed"]).to(device)
    optimizer = make_optimizer(cfg["optimizer"], model.parameters(), cfg["lr"])
    data = cp.Dataset(cfg["samples"], cfg["layers"][0], cfg["layers"][-1], cfg["seed"], cfg["npy"])
    # Every step's samples drawn up front in the engine's order; micro-batch
    # j of a step is entries [j·B, (j+1)·B) of its B·k indices, so the
    # stream of micro-batches is the steps' indices cut into B.
    steps = cp.run_indices(data, cfg)

    def batches(batch_size):
        for indices in steps:
            for j in range(0, len(indices), batch_size):
                x, y = data.gather(indices[j:j + batch_size])
                yield torch.from_numpy(x), torch.from_numpy(y)

    return cloudfit_probe.run(model, torch.nn.CrossEntropyLoss(), batches, optimizer, precision="fp32")


if __name__ == "__main__":
    sys.exit(main())
