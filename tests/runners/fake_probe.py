#!/usr/bin/python3
"""A probe for the runner tests: speaks the exec protocol
(docs/exec-protocol.md) with step times from a formula of the per-GPU batch
and the node count torchrun was given (FAKE_TORCHRUN_NNODES, set by
tests/launch/fake_torchrun.py); its "gpus" is the world size (× the
processes per node, FAKE_TORCHRUN_NPROC). Writes one log line to stderr
(runners must keep it out of the protocol). FAKE_PROBE_MODE=hang sleeps instead (the
interrupt tests), =fail exits 1, =latin1 also writes a log line with a
byte that is not UTF-8 (Latin-1 'é'), as a library's log may."""
import json
import os
import sys
import time

mode = os.environ.get("FAKE_PROBE_MODE", "")
if mode == "hang":
    time.sleep(600)
if mode == "fail":
    print("fake probe: simulated CUDA error", file=sys.stderr)
    sys.exit(1)
batch = int(os.environ["CLOUDFIT_LOCAL_BATCH"])
nodes = int(os.environ.get("FAKE_TORCHRUN_NNODES", "1"))
step = 0.02 + 0.002 * batch + (0.08 + 0.01 * nodes if nodes > 1 else 0)
warm, steps = int(os.environ["CLOUDFIT_WARMUP_STEPS"]), int(os.environ["CLOUDFIT_STEPS"])
print("fake probe: starting", file=sys.stderr, flush=True)
if mode == "latin1":
    sys.stderr.buffer.write(b"fake probe: loading caf\xe9 dataset\n")
    sys.stderr.buffer.flush()
# "gpus" is the world size, as cloudfit_probe reports it under torchrun
world = nodes * int(os.environ.get("FAKE_TORCHRUN_NPROC", "1"))
print(json.dumps({"event": "device", "name": "Tesla T4 (fake)", "memory_gib": 16, "gpus": world}), flush=True)
for i in range(warm + steps):
    print(json.dumps({"event": "step", "step": i + 1, "time_s": step * (1.5 if i < warm else 1.0),
                      "samples": batch}), flush=True)
print(json.dumps({"event": "done"}), flush=True)
