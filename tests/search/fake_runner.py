#!/usr/bin/env python3
"""A fake probe command for `cloudfit search --runner exec:...` tests: speaks
the exec protocol (docs/exec-protocol.md) with step times from a formula of
the configuration it is given as arguments:
    fake_runner.py --nodes N --gpus G --batch M --instance TYPE
FAKE_FAIL (environment) makes chosen configurations misbehave, as a
comma-separated list of MODE:GPUS:BATCH with MODE one of
    exit     exit with status 1 after a line on stderr
    garbage  print a line that is not JSON
    hang     print nothing and sleep (the runner's --timeout must stop it)
    flaky    fail the first run only (a marker file in FAKE_STATE_DIR)
    ctlerror an 'error' event whose message holds ESC, CR and TAB
FAKE_DEVICE (environment, JSON) adds fields to the 'device' event, e.g.
{"precision": "fp16", "memory_format": "channels_last"}; FAKE_DEVICE_<BATCH>
replaces it for that per-GPU batch.
"""
import argparse, json, os, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--nodes", type=int, required=True)
ap.add_argument("--gpus", type=int, required=True)
ap.add_argument("--batch", type=int, required=True)
ap.add_argument("--instance", required=True)
a = ap.parse_args()
assert int(os.environ["CLOUDFIT_LOCAL_BATCH"]) == a.batch, "environment and argument disagree"

for rule in filter(None, os.environ.get("FAKE_FAIL", "").split(",")):
    mode, gpus, batch = rule.split(":")
    if int(gpus) != a.gpus or int(batch) != a.batch or a.nodes != 1:
        continue
    if mode == "exit":
        print("fake: simulated launch failure", file=sys.stderr)
        sys.exit(1)
    if mode == "garbage":
        print("Traceback (most recent call last): not a JSON line")
        sys.exit(0)
    if mode == "ctlerror":
        print(json.dumps({"event": "error", "message": "no GPU\x1b[31m red\rover\tend"}))
        sys.exit(0)
    if mode == "hang":
        time.sleep(60)
    if mode == "flaky":
        marker = os.path.join(os.environ["FAKE_STATE_DIR"], "flaky-%d-%d" % (a.gpus, a.batch))
        if not os.path.exists(marker):
            open(marker, "w").close()
            sys.exit(3)

# compute ∝ batch with contention, an all-reduce across nodes
step = (0.02 + 0.002 * a.batch) * (1 + 0.03 * (a.gpus - 1))
if a.nodes > 1:
    step += 0.08 + 0.01 * a.nodes
warm, steps = int(os.environ["CLOUDFIT_WARMUP_STEPS"]), int(os.environ["CLOUDFIT_STEPS"])
# "gpus" is the world size: every node's GPUs together
extra = json.loads(os.environ.get("FAKE_DEVICE_%d" % a.batch, os.environ.get("FAKE_DEVICE", "{}")))
print(json.dumps(dict({"event": "device", "name": "Tesla T4 (fake)", "memory_gib": 16, "gpus": a.gpus * a.nodes},
                      **extra)))
for i in range(warm + steps):
    print(json.dumps({"event": "step", "step": i + 1, "time_s": step * (1.5 if i < warm else 1.0),
                      "samples": a.batch * a.gpus * a.nodes}))
print(json.dumps({"event": "done"}))
