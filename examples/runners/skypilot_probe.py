#!/usr/bin/env python3
"""An exec runner for `cloudfit search` / `cloudfit profile --runner` that
measures one configuration on real VMs through SkyPilot:

    sky launch -y -c NAME --infra CLOUD/REGION --instance-type TYPE \\
               [--gpus ACC:G] --num-nodes N -i IDLE --down SETUP.yaml   (provision, sync, setup)
    sky exec NAME --num-nodes N --gpus ACC:G --env ... PROBE.yaml (torchrun the probe)
    sky down -y NAME                                             (always)

Template (docs/launch.md, examples/runners/README.md):

    cloudfit search model.json --timeout 1800 --runner "exec:python3 examples/runners/skypilot_probe.py
        --cloud {cloud} --region {region} --instance-type {instance_type} --gpu {gpu}
        --gpus-per-node {gpus_per_node} --nodes {nodes}"

The probe (CLOUDFIT_PROBE_COMMAND: the training script and its arguments,
as torchrun takes them, e.g. "examples/probe_torch.py --spec model.json")
runs under torchrun on every node and speaks the exec protocol
(docs/exec-protocol.md) on global rank 0; this runner passes cloudfit's
CLOUDFIT_* variables to it and relays its JSON lines to stdout. Everything
SkyPilot prints goes to stderr.

Environment: SKY (default "sky"), CLOUDFIT_SKY_WORKDIR (default ".",
synced to the cluster), CLOUDFIT_SKY_SETUP (a setup command, optional),
CLOUDFIT_SKY_IDLE_MINUTES (default 10: SkyPilot tears the cluster down
after that many idle minutes even if this runner and its watchdog die).
The cluster is torn down on success, failure, SIGINT/SIGTERM/SIGHUP, when
cloudfit goes away, and (by a watchdog in its own session) after a SIGKILL;
then the state folder ($TMPDIR/cloudfit-sky-*) is removed (kept, and named,
when `sky down` fails). A missing sky or a bad setting: one line on stderr
and the protocol's error event, exit 1.

GPUs: most instance types come with their GPUs, and SkyPilot infers them
from the type. A GCP N1 host has none of its own (SkyPilot's
gcp_catalog.get_accelerators_from_instance_type returns None for it): its
GPUs are attached, so `sky launch` must ask for them (--gpus ACC:G), or
the VM comes up without a GPU and the probe cannot run."""
import argparse
import json
import os
import secrets
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner_common import (RunnerError, Teardown, env_number, failed, launcher_program, launcher_row,  # noqa: E402
                           log, probe_words, run_main, run_streaming)

MARK = "CLOUDFIT-PROBE-LINE "
PASSED_ENV = ("CLOUDFIT_LOCAL_BATCH", "CLOUDFIT_MICRO_BATCHES", "CLOUDFIT_STEPS", "CLOUDFIT_WARMUP_STEPS",
              "CLOUDFIT_SEED")

# Run on every node (SkyPilot's variables); only node 0's lines are marked
# for relay, and the probe prints on global rank 0 only. torchrun's flags in
# the underscore spelling every torch release since 1.9 parses.
# CLOUDFIT_PROBE_COMMAND is split into words by Python's shlex.split, as the
# Kubernetes runner splits it (POSIX-shell quoting, nothing expanded), and
# handed to `set --` as shlex.join quotes them: `eval` of that text only
# re-makes the same words. An `eval` of the value itself expanded $VARS and
# globs and ran what followed a `;` on every node. The node has python3:
# torchrun is a Python program.
RUN = f"""set -o pipefail
MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)
words=$(python3 -c 'import os, shlex; print(shlex.join(shlex.split(os.environ["CLOUDFIT_PROBE_COMMAND"])))') || exit 1
eval "set -- $words"
torchrun --nnodes="$SKYPILOT_NUM_NODES" --nproc_per_node="$SKYPILOT_NUM_GPUS_PER_NODE" \\
  --node_rank="$SKYPILOT_NODE_RANK" --master_addr="$MASTER_ADDR" --master_port=29500 "$@" |
  while IFS= read -r line; do
    if [ "$SKYPILOT_NODE_RANK" = 0 ]; then printf '{MARK}%s\\n' "$line"; fi
  done
"""

SETUP = """if [ -n "${CLOUDFIT_SKY_SETUP:-}" ]; then eval "$CLOUDFIT_SKY_SETUP"; fi
"""


def protocol_line(line):
    """The probe's line after the marker (SkyPilot prefixes job output)."""
    i = line.find(MARK)
    return line[i + len(MARK):] if i >= 0 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cloud", required=True)
    ap.add_argument("--region", required=True)
    ap.add_argument("--instance-type", required=True)
    return run_main(ap, probe)


def probe(a):
    probe_command = os.environ.get("CLOUDFIT_PROBE_COMMAND")
    if not probe_command:
        raise RunnerError("set CLOUDFIT_PROBE_COMMAND to the probe script and its arguments")
    probe_words(probe_command)  # refused here, before anything is launched, as the run block would refuse it
    idle = env_number("CLOUDFIT_SKY_IDLE_MINUTES", "10", int, 1)
    sky = launcher_program("SKY", "sky")
    row = launcher_row(a.cloud, a.instance_type, a.gpu)
    gpus = f"{row['skypilot_accelerator']}:{a.gpus_per_node}"
    # An N1 host gets the GPUs the probe uses attached; a type that comes with
    # its GPUs is launched whole.
    attach = ["--gpus", gpus] if row.get("attached") == "1" else []
    name = "cf-probe-" + secrets.token_hex(4)  # a SkyPilot cluster name and a DNS label
    # The task files and the teardown's marker and log; removed once the
    # cluster is down (kept, and named, when the teardown fails).
    state = tempfile.mkdtemp(prefix="cloudfit-sky-")
    with open(os.path.join(state, "setup.yaml"), "w") as f:  # JSON is YAML
        json.dump({"name": name, "workdir": os.environ.get("CLOUDFIT_SKY_WORKDIR", "."), "setup": SETUP}, f)
    with open(os.path.join(state, "probe.yaml"), "w") as f:
        json.dump({"name": name, "run": RUN}, f)

    teardown = Teardown([sky, "down", "-y", name], state, "SKY", f"cluster {name}")
    teardown.start_watchdog()
    rc, failure = 1, None
    try:
        envs = [f"{k}={os.environ[k]}" for k in PASSED_ENV if k in os.environ]
        env_args = [x for kv in envs + [f"CLOUDFIT_PROBE_COMMAND={probe_command}"] for x in ("--env", kv)]
        setup_env = os.environ.get("CLOUDFIT_SKY_SETUP")
        # The whole VM (its accelerators follow from the instance type, or are
        # attached: GCP N1); the job asks for the GPUs it uses, which may be
        # fewer (1 of a 4-GPU VM).
        rc = run_streaming(teardown, [sky, "launch", "-y", "-c", name, "--infra", f"{a.cloud}/{a.region}",
                                      "--instance-type", a.instance_type, *attach, "--num-nodes", str(a.nodes),
                                      "-i", str(idle), "--down",
                                      *(["--env", f"CLOUDFIT_SKY_SETUP={setup_env}"] if setup_env else []),
                                      os.path.join(state, "setup.yaml")])
        if rc != 0:
            failure = failed("sky launch", rc, teardown)
        else:
            rc = run_streaming(teardown, [sky, "exec", name, "--num-nodes", str(a.nodes), "--gpus", gpus,
                                          *env_args, os.path.join(state, "probe.yaml")], protocol_line)
            if rc != 0:
                failure = failed("sky exec", rc, teardown)
    except RunnerError as e:
        failure = str(e)
    except KeyboardInterrupt as e:
        log(f"interrupted ({e})")
        rc = 130
    except BrokenPipeError:
        rc = 141
    finally:
        teardown.run()
    # the cause after the teardown's lines: cloudfit quotes the last one
    return teardown.outcome(rc, failure)


if __name__ == "__main__":
    sys.exit(main())
