#!/usr/bin/env python3
"""An exec runner for `cloudfit search` / `cloudfit profile --runner` that
measures one configuration as a Kubeflow PyTorchJob:

    kubectl apply -f JOB.json                      (one Master, nodes-1 Workers)
    kubectl get pytorchjob NAME -o json            (until Succeeded or Failed)
    kubectl logs -l <master 0 of NAME> -c pytorch  (the probe's JSON lines)
    kubectl delete pytorchjob NAME                 (always; its pods go with it)

The job keeps its pods when it ends (runPolicy.cleanPodPolicy: None): the
operator's "All" deletes them as soon as the job finishes, before their
log can be read, and the measurement is lost. Deleting the PyTorchJob
deletes the pods (they are owned by it), so nothing is left behind.

Template (docs/launch.md, examples/runners/README.md):

    cloudfit search model.json --timeout 1800 --runner "exec:python3 examples/runners/k8s_probe.py
        --cloud {cloud} --instance-type {instance_type} --gpu {gpu}
        --gpus-per-node {gpus_per_node} --nodes {nodes}"

Each replica is a whole node of the instance type (node selector on the
labels the cloud's managed Kubernetes sets: kubernetes.io/arch everywhere,
node.kubernetes.io/instance-type on EKS, GKE and AKS, GKE's
cloud.google.com/gke-accelerator for GPUs attached to an N1 host; Lambda
labels no instance type, so give CLOUDFIT_K8S_NODE_SELECTOR there; all its
GPUs under the device plugin's resource: nvidia.com/gpu or amd.com/gpu,
from data/launch_accelerators.csv),
running `torchrun CLOUDFIT_PROBE_COMMAND` in CLOUDFIT_K8S_IMAGE with
cloudfit's CLOUDFIT_* variables; the operator sets torchrun's rendezvous
(PET_*). The probe speaks the exec protocol (docs/exec-protocol.md) on
global rank 0; lines of the master's log that are protocol JSON objects go
to stdout, the rest to stderr.

Environment: CLOUDFIT_K8S_IMAGE (required), CLOUDFIT_PROBE_COMMAND
(required: the script and its arguments, split like a POSIX shell would),
KUBECTL (default "kubectl"), CLOUDFIT_K8S_NAMESPACE (optional),
CLOUDFIT_K8S_DEADLINE_S (default 3600: the job's activeDeadlineSeconds, so
the cluster stops it even if this runner and its watchdog die),
CLOUDFIT_K8S_POLL_S (default 5), CLOUDFIT_K8S_NODE_SELECTOR (optional:
"KEY=VALUE[,KEY=VALUE...]", added to the node selector; the only
instance-type selector on Lambda). The job is deleted on success, failure,
SIGINT/SIGTERM/SIGHUP, when cloudfit goes away, and (by a watchdog in its
own session) after a SIGKILL; then the state folder ($TMPDIR/cloudfit-k8s-*)
is removed (kept, and named, when the delete fails). A missing kubectl or a
bad setting: one line on stderr and the protocol's error event, exit 1."""
import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner_common import (RunnerError, Teardown, cannot_run, env_number, failed, launcher_program,  # noqa: E402
                           launcher_row, log, probe_words, run_main, run_streaming)

PASSED_ENV = ("CLOUDFIT_LOCAL_BATCH", "CLOUDFIT_MICRO_BATCHES", "CLOUDFIT_STEPS", "CLOUDFIT_WARMUP_STEPS",
              "CLOUDFIT_SEED")
EVENTS = ("device", "step", "oom", "error", "done")


def protocol_line(line):
    """A line of the exec protocol (one JSON object with a known event), else None."""
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return line if isinstance(obj, dict) and obj.get("event") in EVENTS else None


def k8s_literal(word):
    """The kubelet expands $(VAR) in commands and turns $$ into $: double every $."""
    return word.replace("$", "$$")


MANAGED = {"aws": "EKS", "gcp": "GKE", "azure": "AKS"}  # label nodes with node.kubernetes.io/instance-type


def node_selector(a, row, extra):
    """Labels the node carries without anyone adding them (docs/launch.md), then the user's."""
    sel = {"kubernetes.io/arch": row["cpu_arch"]}
    if a.cloud in MANAGED:
        sel["node.kubernetes.io/instance-type"] = a.instance_type
    if row.get("attached") == "1" and row.get("gke_accelerator"):
        sel["cloud.google.com/gke-accelerator"] = row["gke_accelerator"]
    sel.update(extra)
    return sel


def parse_selector(text):
    out = {}
    for kv in filter(None, (t.strip() for t in (text or "").split(","))):
        key, eq, value = kv.partition("=")
        if not eq or not key:
            raise RunnerError(f"CLOUDFIT_K8S_NODE_SELECTOR: {kv!r} is not KEY=VALUE")
        out[key] = value
    return out


def manifest(name, a, row, image, words, env, deadline_s, extra_selector):
    resource = row["k8s_gpu_resource"]

    def replica(count):
        return {"replicas": count, "restartPolicy": "Never", "template": {"spec": {
            "nodeSelector": node_selector(a, row, extra_selector),
            "containers": [{"name": "pytorch", "image": image,
                            "command": ["torchrun", *[k8s_literal(w) for w in words]],
                            "env": [{"name": k, "value": v} for k, v in env.items()],
                            "resources": {"limits": {resource: a.gpus_per_node}}}]}}}
    specs = {"Master": replica(1)}
    if a.nodes > 1:
        specs["Worker"] = replica(a.nodes - 1)
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/created-by": "cloudfit-probe"}},
            "spec": {"nprocPerNode": str(a.gpus_per_node),
                     # None: the pods stay until the job is deleted, so the
                     # master's log can be read after the job ends
                     "runPolicy": {"cleanPodPolicy": "None", "activeDeadlineSeconds": deadline_s, "backoffLimit": 0},
                     "pytorchReplicaSpecs": specs}}


def job_state(kubectl, name):
    """('Succeeded' or 'Failed', the condition's reason and message) or None
    (still going), from the job's conditions. RunnerError naming the cause
    when `kubectl get` fails or prints no JSON object."""
    try:
        p = subprocess.run([*kubectl, "get", "pytorchjob", name, "-o", "json"], capture_output=True,
                           encoding="utf-8", errors="replace", stdin=subprocess.DEVNULL)
    except OSError as e:
        raise RunnerError(cannot_run(kubectl[0], "KUBECTL", e)) from None
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or [""])[-1]
        raise RunnerError(f"kubectl get pytorchjob {name} exited with {p.returncode}" + (f": {last}" if last else ""))
    try:
        status = json.loads(p.stdout).get("status") or {}
        conditions = list(status.get("conditions") or [])
    except (ValueError, AttributeError, TypeError):
        raise RunnerError(f"kubectl get pytorchjob {name} printed no JSON object: {p.stdout[:200]!r}") from None
    for c in conditions:
        if isinstance(c, dict) and c.get("type") in ("Succeeded", "Failed") and c.get("status") == "True":
            why = "; ".join(str(c[k]) for k in ("reason", "message") if c.get(k))
            return c["type"], why
    return None


GET_TRIES = 3  # a `kubectl get` that fails or prints no JSON: tried this often in a row before giving up


def poll_job(kubectl, name, poll_s, tries=GET_TRIES):
    """job_state() until the job ended, every poll_s seconds. One failed or
    garbled `kubectl get` (an API server blip, a dropped connection) is not
    the job failing: it is logged and tried again, up to `tries` times in a
    row; then its RunnerError stands."""
    failures = 0
    while True:
        try:
            result = job_state(kubectl, name)
            failures = 0
        except RunnerError as e:
            failures += 1
            if failures >= tries or str(e).startswith("cannot run"):
                raise
            log(f"{e}; trying again ({failures} of {tries})")
            result = None
        if result is not None:
            return result
        time.sleep(poll_s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cloud", required=True, help="{cloud}: picks the row of data/launch_accelerators.csv")
    ap.add_argument("--instance-type", required=True)
    return run_main(ap, probe)


def probe(a):
    image = os.environ.get("CLOUDFIT_K8S_IMAGE")
    probe_command = os.environ.get("CLOUDFIT_PROBE_COMMAND")
    if not image or not probe_command:
        raise RunnerError("set CLOUDFIT_K8S_IMAGE and CLOUDFIT_PROBE_COMMAND")
    words = probe_words(probe_command)
    deadline_s = env_number("CLOUDFIT_K8S_DEADLINE_S", "3600", int, 1)
    poll_s = env_number("CLOUDFIT_K8S_POLL_S", "5", float, 0.01)
    row = launcher_row(a.cloud, a.instance_type, a.gpu)
    extra_selector = parse_selector(os.environ.get("CLOUDFIT_K8S_NODE_SELECTOR"))
    if a.cloud not in MANAGED and not extra_selector:
        log(f"{a.cloud} labels no node with its instance type: the pods may land on any {row['cpu_arch']} node "
            f"with {row['k8s_gpu_resource']}; set CLOUDFIT_K8S_NODE_SELECTOR=KEY=VALUE to pick the nodes")
    kubectl = [launcher_program("KUBECTL", "kubectl")]
    if os.environ.get("CLOUDFIT_K8S_NAMESPACE"):
        kubectl += ["--namespace", os.environ["CLOUDFIT_K8S_NAMESPACE"]]
    name = "cf-probe-" + secrets.token_hex(4)  # a DNS-1035 label
    # The manifest and the teardown's marker and log; removed once the job is
    # deleted (kept, and named, when the delete fails).
    state = tempfile.mkdtemp(prefix="cloudfit-k8s-")
    job_file = os.path.join(state, "job.json")
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    with open(job_file, "w") as f:
        json.dump(manifest(name, a, row, image, words, env, deadline_s, extra_selector), f)

    teardown = Teardown([*kubectl, "delete", "pytorchjob", name, "--ignore-not-found"], state, "KUBECTL",
                        f"PyTorchJob {name} (and its pods)")
    teardown.start_watchdog()
    rc, failure = 1, None
    try:
        rc = run_streaming(teardown, [*kubectl, "apply", "-f", job_file])
        if rc != 0:
            failure = failed("kubectl apply", rc, teardown)
        else:
            state_name, why = poll_job(kubectl, name, poll_s)
            selector = (f"training.kubeflow.org/job-name={name},training.kubeflow.org/replica-type=master,"
                        "training.kubeflow.org/replica-index=0")
            rc = run_streaming(teardown, [*kubectl, "logs", "-l", selector, "-c", "pytorch", "--tail=-1"],
                               protocol_line)
            if state_name != "Succeeded":
                # the master's last log line is the probe's own reason, when it gave one
                last = teardown.last_output
                failure = (f"PyTorchJob {name} failed" + (f" ({why})" if why else "") +
                           (f"; the master's last log line: {last}" if last else ""))
                rc = rc or 1
            elif rc != 0:
                failure = failed("kubectl logs", rc, teardown)
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
