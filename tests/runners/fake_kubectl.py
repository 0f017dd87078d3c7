#!/usr/bin/python3
"""A stand-in `kubectl` with the Kubeflow Training Operator for the runner
tests (examples/runners/k8s_probe.py).

It accepts the flags the real kubectl defines for `apply`, `get`, `logs`
and `delete` plus the global ones — transcribed from kubernetes/kubectl
pkg/cmd/apply/apply.go, pkg/cmd/get/get_flags.go + get.go, pkg/cmd/logs/
logs.go, pkg/cmd/delete/delete_flags.go and cli-runtime's ConfigFlags —
and refuses others as cobra does ("unknown flag", exit 1). `apply`
admits a PyTorchJob the way the cluster would: the operator's webhook rules
(tests/launch/validators.py), the CRD schema when vendored, and the pod
rules; then it "runs" the job: the Master's container command runs here,
with the env the operator adds (PET_NNODES, PET_NPROC_PER_NODE), and its
output becomes the master pod's log. When the job ends, the operator
cleans its pods by runPolicy.cleanPodPolicy (the Training Operator's
semantics; a PyTorchJob defaults to None): All deletes every pod, Running
the pods still running (the finished master stays), None keeps them; a
deleted pod has no log (`kubectl logs` then finds no resources). Deleting
the job deletes its pods (owner references). Jobs live in $FAKE_KUBECTL_STATE;
every call is appended to calls.jsonl, every manifest applied to
applied.jsonl. FAKE_KUBECTL_MODE=pending leaves jobs running forever (the interrupt tests), =fail makes them fail.
FAKE_KUBECTL_FAIL=apply refuses the job as a quota would (nothing created), =delete fails every delete (the
job stays). FAKE_KUBECTL_GET_FLAKY=N: the first N `get` calls fail, alternately with an error and with a
truncated answer (an API server blip)."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "launch"))
import validators as V  # noqa: E402

STATE = os.environ["FAKE_KUBECTL_STATE"]
JOBS = os.path.join(STATE, "jobs.json")

# name → takes a value? (short forms mapped to long). Global flags first.
GLOBAL = {"namespace": True, "n": "namespace", "context": True, "kubeconfig": True, "cluster": True,
          "user": True, "request-timeout": True, "server": True, "s": "server", "token": True, "v": True,
          "insecure-skip-tls-verify": False, "as": True, "as-group": True}
FLAGS = {
    "apply": {"filename": True, "f": "filename", "recursive": False, "R": "recursive", "kustomize": True,
              "k": "kustomize", "dry-run": True, "server-side": False, "force-conflicts": False,
              "field-manager": True, "validate": True, "output": True, "o": "output", "prune": False,
              "selector": True, "l": "selector", "overwrite": False, "force": False, "grace-period": True,
              "timeout": True, "wait": False, "all": False, "cascade": True, "record": False,
              "show-managed-fields": False, "template": True, "allow-missing-template-keys": False},
    "get": {"output": True, "o": "output", "selector": True, "l": "selector", "watch": False, "w": "watch",
            "watch-only": False, "all-namespaces": False, "A": "all-namespaces", "ignore-not-found": False,
            "field-selector": True, "label-columns": True, "L": "label-columns", "show-labels": False,
            "sort-by": True, "chunk-size": True, "no-headers": False, "raw": True, "subresource": True,
            "template": True, "filename": True, "f": "filename", "recursive": False, "R": "recursive",
            "kustomize": True, "k": "kustomize", "show-kind": False, "output-watch-events": False,
            "allow-missing-template-keys": False, "show-managed-fields": False},
    "logs": {"follow": False, "f": "follow", "container": True, "c": "container", "all-containers": False,
             "selector": True, "l": "selector", "previous": False, "p": "previous", "since": True,
             "since-time": True, "tail": True, "timestamps": False, "limit-bytes": True, "prefix": False,
             "max-log-requests": True, "pod-running-timeout": True, "ignore-errors": False,
             "insecure-skip-tls-verify-backend": False, "all-pods": False},
    "delete": {"filename": True, "f": "filename", "kustomize": True, "k": "kustomize", "recursive": False,
               "R": "recursive", "selector": True, "l": "selector", "all": False, "all-namespaces": False,
               "A": "all-namespaces", "field-selector": True, "cascade": True, "force": False,
               "grace-period": True, "ignore-not-found": False, "now": False, "output": True, "o": "output",
               "raw": True, "timeout": True, "wait": False, "interactive": False, "i": "interactive",
               "dry-run": True},
}


class UnknownFlag(Exception):
    pass


def parse(command, argv):
    """cobra/pflag style: --flag=value, --flag value, -f value, bool flags alone or =true|false."""
    table = dict(GLOBAL, **FLAGS[command])
    opts, args, i = {}, [], 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("-") and a != "-":
            name, eq, value = a.lstrip("-").partition("=")
            if name not in table:
                raise UnknownFlag(f"unknown {'shorthand ' if not a.startswith('--') else ''}flag: {a.split('=')[0]}")
            spec = table[name]
            if isinstance(spec, str):
                name, spec = spec, table[spec]
            if spec is True and not eq:
                i += 1
                if i >= len(argv):
                    raise UnknownFlag(f"flag needs an argument: {a}")
                value = argv[i]
            elif spec is False:
                if eq and value not in ("true", "false"):
                    raise UnknownFlag(f"invalid argument {value!r} for {a}")
                value = value != "false"
            opts.setdefault(name, []).append(value)
        else:
            args.append(a)
        i += 1
    return opts, args


def load():
    return json.load(open(JOBS)) if os.path.exists(JOBS) else {}


def save(jobs):
    json.dump(jobs, open(JOBS + ".tmp", "w"))
    os.replace(JOBS + ".tmp", JOBS)


def run_master(job):
    """Runs the Master's container command as the operator would start it."""
    pod = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    container = next(c for c in pod["containers"] if c["name"] == "pytorch")
    env = dict(os.environ)
    cenv = {e["name"]: e.get("value", "") for e in container.get("env", [])}
    env.update(cenv)
    nodes = sum(r.get("replicas", 1) for r in job["spec"]["pytorchReplicaSpecs"].values())
    env.update(PET_NNODES=str(nodes), PET_NPROC_PER_NODE=str(job["spec"].get("nprocPerNode", "auto")),
               PET_NODE_RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT="23456")
    command = [V.k8s_expand(w, cenv) for w in container["command"]]
    p = subprocess.run(command, capture_output=True, env=env, stdin=subprocess.DEVNULL, timeout=300)
    # a pod log has both streams, whatever bytes they hold (kept through jobs.json by surrogateescape)
    return (p.stdout + p.stderr).decode("utf-8", "surrogateescape"), p.returncode


def cmd_apply(opts, args):
    import yaml  # here: its import costs every other command of this process ~0.05 s
    jobs = load()
    for path in opts.get("filename", []):
        job = yaml.safe_load(open(path))
        with open(os.path.join(STATE, "applied.jsonl"), "a") as f:  # the tests read it: the runner removes its file
            f.write(json.dumps(job) + "\n")
        if job.get("apiVersion") != "kubeflow.org/v1" or job.get("kind") != "PyTorchJob":
            print(f'error: resource mapping not found for kind "{job.get("kind")}"', file=sys.stderr)
            return 1
        errors = V.check_pytorchjob_webhook(job) + (V.check_pytorchjob_crd(job) or [])
        for rtype, rspec in job.get("spec", {}).get("pytorchReplicaSpecs", {}).items():
            errors += V.check_pod_template(rtype, rspec["template"]["spec"], job["metadata"]["name"],
                                           rspec.get("replicas", 1))
        if errors:
            print('Error from server (Forbidden): admission webhook "validator.pytorchjob.training-operator.'
                  'kubeflow.org" denied the request: ' + "; ".join(errors), file=sys.stderr)
            return 1
        name = job["metadata"]["name"]
        if os.environ.get("FAKE_KUBECTL_FAIL") == "apply":
            print(f'Error from server (Forbidden): error when creating "{path}": pytorchjobs.kubeflow.org "{name}" is '
                  'forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=8', file=sys.stderr)
            return 1
        mode = os.environ.get("FAKE_KUBECTL_MODE", "")
        state = {"job": job, "conditions": [{"type": "Created", "status": "True"}], "log": ""}
        failed = {"type": "Failed", "status": "True", "reason": "PyTorchJobFailed",
                  "message": f"PyTorchJob default/{name} is failed because 1 Master replica(s) failed."}
        if mode == "fail":
            state["conditions"].append(failed)
        elif mode != "pending":
            state["log"], rc = run_master(job)
            state["conditions"].append({"type": "Succeeded", "status": "True"} if rc == 0 else failed)
            # the job ended: the operator cleans up its pods now
            if job["spec"].get("runPolicy", {}).get("cleanPodPolicy", "None") == "All":
                state["log"] = None
        jobs[name] = state
        print(f"pytorchjob.kubeflow.org/{name} created")
    save(jobs)
    return 0


def resource_name(args):
    if len(args) == 2 and args[0] in ("pytorchjob", "pytorchjobs", "pytorchjobs.kubeflow.org"):
        return args[1]
    if len(args) == 1 and args[0].startswith("pytorchjob/"):
        return args[0].split("/", 1)[1]
    raise UnknownFlag(f"expected pytorchjob NAME, got {args}")


def cmd_get(opts, args):
    name = resource_name(args)
    flaky = int(os.environ.get("FAKE_KUBECTL_GET_FLAKY", "0"))
    gets = sum(1 for line in open(os.path.join(STATE, "calls.jsonl")) if json.loads(line)[:1] == ["get"])
    if gets <= flaky:  # this call is already in calls.jsonl
        if gets % 2:
            print("Unable to connect to the server: net/http: TLS handshake timeout", file=sys.stderr)
            return 1
        print('{"apiVersion": "kubeflow.org/v1", "kind": "PyTor')
        return 0
    jobs = load()
    if name not in jobs:
        print(f'Error from server (NotFound): pytorchjobs.kubeflow.org "{name}" not found', file=sys.stderr)
        return 1
    if opts.get("output", [""])[-1] != "json":
        raise UnknownFlag("this fake prints -o json only")
    print(json.dumps(dict(jobs[name]["job"], status={"conditions": jobs[name]["conditions"]})))
    return 0


def cmd_logs(opts, args):
    selector = dict(kv.split("=", 1) for kv in opts.get("selector", [""])[-1].split(",") if kv)
    want = {"training.kubeflow.org/job-name", "training.kubeflow.org/replica-type",
            "training.kubeflow.org/replica-index"}
    if set(selector) != want or selector["training.kubeflow.org/replica-type"] != "master" \
            or selector["training.kubeflow.org/replica-index"] != "0" or opts.get("container") != ["pytorch"]:
        print(f"error: this fake serves the master pod's pytorch container only, not {selector}", file=sys.stderr)
        return 1
    job = load().get(selector["training.kubeflow.org/job-name"])
    if job is None or job["log"] is None:  # no job, or its pods were cleaned up
        print("No resources found in default namespace.", file=sys.stderr)
        return 0
    sys.stdout.buffer.write(job["log"].encode("utf-8", "surrogateescape"))
    return 0


def cmd_delete(opts, args):
    name = resource_name(args)
    if os.environ.get("FAKE_KUBECTL_FAIL") == "delete":
        print("Error from server (InternalError): simulated failure to delete", file=sys.stderr)
        return 1
    jobs = load()
    if jobs.pop(name, None) is None and not opts.get("ignore-not-found"):
        print(f'Error from server (NotFound): pytorchjobs.kubeflow.org "{name}" not found', file=sys.stderr)
        return 1
    save(jobs)
    print(f'pytorchjob.kubeflow.org "{name}" deleted')
    return 0


def main():
    argv = sys.argv[1:]
    with open(os.path.join(STATE, "calls.jsonl"), "a") as f:
        f.write(json.dumps(argv) + "\n")
    # global flags may come before the command
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 1 if "=" in argv[i] or GLOBAL.get(argv[i].lstrip("-")) is False else 2
    if i >= len(argv) or argv[i] not in FLAGS:
        print(f"error: unknown command {argv[i] if i < len(argv) else ''!r} for \"kubectl\"", file=sys.stderr)
        return 1
    command = argv[i]
    try:
        opts, args = parse(command, argv[:i] + argv[i + 1:])
        return {"apply": cmd_apply, "get": cmd_get, "logs": cmd_logs, "delete": cmd_delete}[command](opts, args)
    except UnknownFlag as e:
        print(f"error: {e}\nSee 'kubectl {command} --help' for usage.", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
