#!/usr/bin/python3
"""A stand-in `sky` for the runner tests (examples/runners/skypilot_probe.py).

It accepts exactly the options the real CLI defines for `sky launch`,
`sky exec` and `sky down` — transcribed from skypilot-org/skypilot
sky/client/cli/command.py (launch, exec, down) and sky/client/cli/flags.py
(TASK_OPTIONS_WITH_NAME, EXTRA_RESOURCES_OPTIONS, COMMON_OPTIONS,
config_option, yes_option; wait_for_option) — and refuses anything else as
click does ("No such option", exit 2). It checks the values SkyPilot
checks: the cluster name (CLUSTER_NAME_VALID_REGEX), --infra (the
resources schema's pattern), --env KEY=VAL names, the task YAML (task
schema), and which GPUs a cluster gets, as SkyPilot's catalog has it
(tests/vendor/skypilot-catalog through tests/launch/sky_catalog.py): an
instance type that comes with GPUs brings them (by SkyPilot's name), --gpus
must name those; a GCP N1 host has none of its own, so it gets GPUs only
when --gpus asks for ones SkyPilot attaches, and a cluster launched
without them has no GPU for `sky exec --gpus` to use. The instance type
must exist in that cloud and region (data/gpu_vms.csv).

Clusters live in $FAKE_SKY_STATE/clusters.json; every call is appended to
$FAKE_SKY_STATE/calls.jsonl. `exec` runs the task's `run` block with bash
as node 0 (SKYPILOT_* variables, loopback addresses), prefixing each output
line as SkyPilot's log tailing does, byte for byte (a line that is not
UTF-8 comes through as it is). FAKE_SKY_FAIL=launch provisions the
cluster and then fails (a setup error), =exec fails the job, =down fails
to terminate (the cluster stays)."""
import argparse
import csv
import json
import os
import re
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "launch"))
import sky_catalog  # noqa: E402
import validators as V  # noqa: E402

STATE = os.environ["FAKE_SKY_STATE"]
CLUSTERS = os.path.join(STATE, "clusters.json")
ENV_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):  # click's wording and exit code for usage errors
        raise UsageError(message)


def task_options(p, with_name=True):
    if with_name:
        p.add_argument("--name", "-n")
    p.add_argument("--workdir")
    p.add_argument("--infra")
    p.add_argument("--cloud")
    p.add_argument("--region")
    p.add_argument("--zone")
    p.add_argument("--num-nodes", type=int)
    p.add_argument("--cpus")
    p.add_argument("--memory")
    p.add_argument("--disk-size", type=int)
    p.add_argument("--disk-tier", choices=["low", "medium", "high", "ultra", "best", "none"])
    p.add_argument("--network-tier", choices=["standard", "best", "none"])
    p.add_argument("--use-spot", action="store_true", default=None)
    p.add_argument("--no-use-spot", dest="use_spot", action="store_false")
    p.add_argument("--image-id")
    p.add_argument("--env-file")
    p.add_argument("--env", action="append", default=[])
    p.add_argument("--secret", action="append", default=[])
    # EXTRA_RESOURCES_OPTIONS
    p.add_argument("--gpus")
    p.add_argument("--instance-type", "-t")
    p.add_argument("--ports", action="append", default=[])
    # COMMON_OPTIONS, config_option
    p.add_argument("--async", dest="async_call", action="store_true")
    p.add_argument("--no-async", dest="async_call", action="store_false")
    p.add_argument("--config", action="append", default=[])
    p.add_argument("--git-url")
    p.add_argument("--git-ref")


def parsers():
    launch = Parser(prog="sky launch", allow_abbrev=False)
    launch.add_argument("entrypoint", nargs="*")
    launch.add_argument("--cluster", "-c")
    launch.add_argument("--dryrun", action="store_true")
    launch.add_argument("--detach-run", "-d", action="store_true")
    launch.add_argument("--docker", action="store_true")
    task_options(launch)
    launch.add_argument("--idle-minutes-to-autostop", "-i", type=int)
    launch.add_argument("--wait-for", choices=["jobs_and_ssh", "jobs", "none"])
    launch.add_argument("--down", action="store_true")
    launch.add_argument("--retry-until-up", "-r", action="store_true")
    launch.add_argument("--yes", "-y", action="store_true")
    launch.add_argument("--no-setup", action="store_true")
    launch.add_argument("--clone-disk-from", "--clone")
    launch.add_argument("--fast", action="store_true")
    exe = Parser(prog="sky exec", allow_abbrev=False)
    exe.add_argument("args", nargs="*")  # CLUSTER ENTRYPOINT...
    exe.add_argument("--cluster", "-c", dest="cluster_option")
    exe.add_argument("--detach-run", "-d", action="store_true")
    task_options(exe)
    down = Parser(prog="sky down", allow_abbrev=False)
    down.add_argument("clusters", nargs="*")
    down.add_argument("--all", "-a", action="store_true")
    down.add_argument("--all-users", "-u", action="store_true")
    down.add_argument("--yes", "-y", action="store_true")
    down.add_argument("--purge", "-p", action="store_true")
    down.add_argument("--async", dest="async_call", action="store_true")
    down.add_argument("--no-async", dest="async_call", action="store_false")
    down.add_argument("--config", action="append", default=[])
    return {"launch": (launch, cmd_launch), "exec": (exe, cmd_exec), "down": (down, cmd_down)}


def load():
    return json.load(open(CLUSTERS)) if os.path.exists(CLUSTERS) else {}


def save(clusters):
    tmp = CLUSTERS + ".tmp"
    json.dump(clusters, open(tmp, "w"))
    os.replace(tmp, CLUSTERS)


def check_common(a, errors):
    for kv in a.env:
        key = kv.split("=", 1)[0]
        if not ENV_NAME.fullmatch(key) or ("=" not in kv and key not in os.environ):
            errors.append(f"--env {kv!r}")
    if a.num_nodes is not None and a.num_nodes < 1:
        errors.append("--num-nodes must be at least 1")
    if a.infra is not None:
        pattern = V.sky_schema("resources")["properties"]["infra"]["pattern"]
        if not re.search(pattern, a.infra):
            errors.append(f"--infra {a.infra!r} does not match {pattern}")


def cluster_gpus(cloud, region, instance_type, gpus, errors):
    """The ACC:COUNT a launched cluster has, as SkyPilot's catalog decides:
    the instance type's own GPUs, or for a host without any (GCP N1) the
    attached ones --gpus asks for (None when it asks for none)."""
    rows = [r for r in csv.DictReader(open(os.path.join(SRC, "data", "gpu_vms.csv")))
            if r["cloud"] == cloud and r["instance_type"] == instance_type and (not region or r["region"] == region)]
    if not rows:
        errors.append(f"no instance type {instance_type} on {cloud}/{region}")
        return None
    try:
        fixed = sky_catalog.fixed_gpus(cloud, instance_type)
    except KeyError as e:
        errors.append(str(e))
        return None
    if fixed is not None:
        own = f"{fixed[0]}:{rows[0]['gpu_count']}"
        if gpus and gpus != own and gpus + ":1" != own:
            errors.append(f"{instance_type} on {cloud}/{region} offers {own}, not {gpus}")
        return own
    if not gpus:
        return None  # an N1 host launched by its type alone: no GPU
    name, _, count = gpus.partition(":")
    if not sky_catalog.attachable(cloud, name, int(count or 1)):
        errors.append(f"{instance_type} on {cloud}/{region}: SkyPilot does not attach {gpus}")
    return gpus


def read_task(path, errors):
    import yaml  # here: its import costs every other command of this process ~0.05 s
    try:
        doc = yaml.safe_load(open(path))
    except OSError as e:
        errors.append(f"cannot read {path}: {e}")
        return {}
    errors.extend(V.check_skypilot_task(doc))
    return doc


def cmd_launch(a):
    errors = []
    check_common(a, errors)
    if not a.cluster or not V.SKY_CLUSTER_NAME.fullmatch(a.cluster):
        errors.append(f"cluster name {a.cluster!r}")
    if not a.yes:
        errors.append("no -y: the confirmation prompt reads stdin (Aborted!)")
    task = read_task(a.entrypoint[0], errors) if len(a.entrypoint) == 1 else errors.append("one YAML entrypoint")
    cloud, _, rest = (a.infra or "").partition("/")
    region = rest.split("/")[0]
    gpus = cluster_gpus(cloud, region, a.instance_type, a.gpus, errors) if a.instance_type else a.gpus
    if errors:
        print("ValueError: " + "; ".join(errors), file=sys.stderr)
        return 1
    clusters = load()
    clusters[a.cluster] = {"status": "UP", "nodes": a.num_nodes or (task or {}).get("num_nodes", 1),
                           "gpus": gpus, "instance_type": a.instance_type, "infra": a.infra,
                           "autodown": a.down, "idle_minutes": a.idle_minutes_to_autostop}
    save(clusters)
    print(f"Launching a new cluster '{a.cluster}'.")
    print("✓ Cluster launched.")
    if os.environ.get("FAKE_SKY_FAIL") == "launch":
        print("sky.exceptions.CommandError: Command setup failed with return code 1", file=sys.stderr)
        return 1
    return 0


def cmd_exec(a):
    errors = []
    check_common(a, errors)
    args = list(a.args)
    cluster = a.cluster_option or (args.pop(0) if args else None)
    if cluster not in load():
        print(f"sky.exceptions.ClusterNotUpError: Cluster {cluster!r} does not exist.", file=sys.stderr)
        return 1
    info = load()[cluster]
    task = read_task(args[0], errors) if len(args) == 1 else errors.append("one YAML entrypoint")
    if a.num_nodes and a.num_nodes > info["nodes"]:
        errors.append(f"--num-nodes {a.num_nodes} > the cluster's {info['nodes']}")
    if a.gpus:  # the job's demand must fit the cluster's accelerators
        want, _, count = a.gpus.partition(":")
        have, _, have_count = (info["gpus"] or ":0").partition(":")
        if not info["gpus"]:
            errors.append(f"--gpus {a.gpus}: the cluster has no GPU (launched as {info['instance_type']} alone)")
        elif want != have or float(count or 1) > float(have_count):
            errors.append(f"--gpus {a.gpus} does not fit the cluster's {info['gpus']}")
    if errors:
        print("ValueError: " + "; ".join(errors), file=sys.stderr)
        return 1
    if os.environ.get("FAKE_SKY_FAIL") == "exec":
        print("(task, pid=4242) Traceback: simulated job failure")
        return 100
    nodes = a.num_nodes or info["nodes"]
    env = dict(os.environ)
    env.update({k: str(v) for k, v in (task.get("envs") or {}).items()})
    env.update(dict(kv.split("=", 1) for kv in a.env))
    env.update(SKYPILOT_NODE_RANK="0", SKYPILOT_NUM_NODES=str(nodes),
               SKYPILOT_NODE_IPS="\n".join(f"127.0.0.{i + 1}" for i in range(nodes)),
               SKYPILOT_NUM_GPUS_PER_NODE=(a.gpus or info["gpus"]).partition(":")[2] or "1")
    job = subprocess.Popen(["bash", "-c", task.get("run") or "true"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, env=env, start_new_session=True)  # bytes, as they come
    clusters = load()  # the job runs "on the cluster": `sky down` ends it
    clusters[cluster].setdefault("job_pgids", []).append(job.pid)
    save(clusters)

    def stop(signum, frame):  # Ctrl-C stops the log tailing (the job would go on in SkyPilot)
        os.killpg(job.pid, signal.SIGKILL)
        sys.exit(130)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    for line in job.stdout:  # the job's bytes as they are: SkyPilot tails a log file, whatever its encoding
        sys.stdout.buffer.write(f"(task, pid={job.pid}) ".encode() + line)
        sys.stdout.buffer.flush()
    return job.wait()


def cmd_down(a):
    if not a.yes:
        print("Aborted! (no -y)", file=sys.stderr)
        return 1
    if os.environ.get("FAKE_SKY_FAIL") == "down":
        print("sky.exceptions.CloudError: simulated failure to terminate", file=sys.stderr)
        return 1
    clusters = load()
    for name in a.clusters:
        info = clusters.pop(name, None)
        for pgid in (info or {}).get("job_pgids", []):
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if info is not None:
            print(f"Cluster {name} terminated.")
        else:
            print(f"Cluster(s) not found: {name}.")
    save(clusters)
    return 0


def main():
    argv = sys.argv[1:]
    with open(os.path.join(STATE, "calls.jsonl"), "a") as f:
        f.write(json.dumps(argv) + "\n")
    table = parsers()
    try:
        if not argv or argv[0] not in table:
            raise UsageError(f"No such command {argv[0] if argv else ''!r}.")
        p, fn = table[argv[0]]
        a = p.parse_intermixed_args(argv[1:])
    except UsageError as e:
        print(f"Usage: sky {argv[0] if argv else ''} [OPTIONS]\nError: {e}", file=sys.stderr)
        return 2
    return fn(a)


if __name__ == "__main__":
    sys.exit(main())
