#!/usr/bin/python3
"""PyTorch side of bench/engine.sh: the median training-step time of the
same MLP as the CPU engine (Linear + ReLU/GELU layers, softmax
cross-entropy, the same optimizer and learning rate) on the CPU, with the
same number of threads. One JSON line per batch size, like engine_bench.

A step is what the engine's step is: zero the gradients, forward, loss,
backward, optimizer update. PyTorch gets its fastest settings
(zero_grad(set_to_none=True), no autograd anomaly checks, inputs prepared
in advance).

Usage: engine_torch.py [--widths 784,1024,1024,10] [--batches 64,128,256]
       [--threads N] [--steps N] [--warmup N] [--optimizer sgd|momentum|adam|adamw]
       [--lr X] [--activation relu|gelu]
"""
import argparse
import json
import statistics
import sys
import time

try:
    import torch
except ImportError:
    print("engine_torch.py: PyTorch is not installed (Debian: apt-get install python3-torch)", file=sys.stderr)
    sys.exit(3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--widths", default="784,1024,1024,10")
    ap.add_argument("--batches", default="64,128,256")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--optimizer", default="sgd", choices=["sgd", "momentum", "adam", "adamw"])
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--activation", default="relu", choices=["relu", "gelu"])
    args = ap.parse_args()
    widths = [int(w) for w in args.widths.split(",")]
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(1)

    layers = []
    for i in range(len(widths) - 1):
        layers.append(torch.nn.Linear(widths[i], widths[i + 1]))
        if i < len(widths) - 2:
            layers.append(torch.nn.ReLU() if args.activation == "relu" else torch.nn.GELU())
    model = torch.nn.Sequential(*layers)
    params = model.parameters()
    if args.optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=args.lr)
    elif args.optimizer == "momentum":
        opt = torch.optim.SGD(params, lr=args.lr, momentum=0.9)
    elif args.optimizer == "adam":
        opt = torch.optim.Adam(params, lr=args.lr)
    else:
        opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()

    for batch in [int(b) for b in args.batches.split(",")]:
        pool = [(torch.randn(batch, widths[0]), torch.randint(0, widths[-1], (batch,))) for _ in range(8)]
        times = []
        for step in range(args.warmup + args.steps):
            x, y = pool[step % len(pool)]
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            t1 = time.perf_counter()
            if step >= args.warmup:
                times.append(t1 - t0)
        print(json.dumps({"impl": "torch", "batch": batch, "threads": torch.get_num_threads(),
                          "step_s": statistics.median(times), "torch_version": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
