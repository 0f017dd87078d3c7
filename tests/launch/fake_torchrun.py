#!/usr/bin/python3
"""A stand-in `torchrun` for the launch-spec tests: appends its argument
list (and the rendezvous variables it would read) as one JSON line to
$FAKE_TORCHRUN_LOG, so the test parses it with torch 1.13's own parser
(torch.distributed.run.get_args_parser) in one process, and exits 0.
With FAKE_TORCHRUN_EXEC=1 it then runs the training script (argv after
the torchrun flags, as torchrun would: `python3 SCRIPT ARGS`), which the
runner tests use to run a probe (FAKE_TORCHRUN_NNODES, FAKE_TORCHRUN_NPROC:
the nodes and the processes per node it was given)."""
import json
import os
import sys

with open(os.environ["FAKE_TORCHRUN_LOG"], "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "env": {k: v for k, v in os.environ.items()
                                                      if k.startswith(("PET_", "CLOUDFIT_", "MASTER_"))}}) + "\n")

if os.environ.get("FAKE_TORCHRUN_EXEC") == "1":
    args = sys.argv[1:]
    flags = {}
    while args and args[0].startswith("--"):  # the launcher's own flags, all in --flag=value form
        key, _, value = args[0][2:].partition("=")
        flags[key] = value
        args = args[1:]
    # what the probe learns from the launch (torchrun reads PET_* when a flag is absent)
    nnodes = flags.get("nnodes", os.environ.get("PET_NNODES", "1")).split(":")[-1]
    os.environ["FAKE_TORCHRUN_NNODES"] = nnodes
    nproc = flags.get("nproc_per_node", os.environ.get("PET_NPROC_PER_NODE", "1"))
    os.environ["FAKE_TORCHRUN_NPROC"] = nproc if nproc.isdigit() else "1"
    os.execv(sys.executable, [sys.executable, *args])
