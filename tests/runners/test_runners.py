#!/usr/bin/python3
"""The exec runners of examples/runners/ against fake launchers that check
their arguments against the real CLIs' options (fake_sky.py,
fake_kubectl.py): a probe measured through each, alone and from `cloudfit
profile --runner`; torchrun's arguments parsed by torch 1.13; and no VM or
job left behind after a launch failure, a job failure, SIGINT, and a
SIGKILL of the runner's process group (what cloudfit does on a timeout);
a byte that is not UTF-8 in the launcher's output, a launcher that is
missing, settings that are not numbers, and the runners' state folders
removed once the teardown is done.
Usage: test_runners.py CLOUDFIT_BINARY SOURCE_DIR"""
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "launch"))
import validators as V  # noqa: E402

BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.join(SRC, "tests", "runners")
TMP = pyharness.temp_dir(prefix="cloudfit-runners-")
SKY_RUNNER = os.path.join(SRC, "examples", "runners", "skypilot_probe.py")
K8S_RUNNER = os.path.join(SRC, "examples", "runners", "k8s_probe.py")
PROBE = os.path.join(HERE, "fake_probe.py")
PARSER = V.torch_parser()
SKIPPED = []

SKY_ARGS = ["--cloud", "aws", "--region", "us-east-1", "--instance-type", "g4dn.12xlarge", "--gpu", "T4",
            "--gpus-per-node", "4", "--nodes", "2"]
K8S_ARGS = ["--cloud", "azure", "--instance-type", "Standard_ND96isr_MI300X_v5", "--gpu", "MI300X",
            "--gpus-per-node", "8", "--nodes", "2"]


def world(**extra):
    """A fresh bin folder (sky, kubectl, torchrun fakes first on PATH) and state folders."""
    root = tempfile.mkdtemp(dir=TMP)
    bindir = os.path.join(root, "bin")
    os.makedirs(bindir)
    for name, target in (("sky", os.path.join(HERE, "fake_sky.py")), ("kubectl", os.path.join(HERE, "fake_kubectl.py")),
                         ("torchrun", os.path.join(SRC, "tests", "launch", "fake_torchrun.py"))):
        with open(os.path.join(bindir, name), "w") as f:
            f.write(f"#!/bin/sh\nexec /usr/bin/python3 {shlex.quote(target)} \"$@\"\n")
        os.chmod(os.path.join(bindir, name), 0o755)
    for d in ("sky", "kubectl", "tmp"):
        os.makedirs(os.path.join(root, d))
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"], HOME=root, TMPDIR=os.path.join(root, "tmp"),
               XDG_DATA_HOME=os.path.join(root, "xdg"), NO_COLOR="1",
               FAKE_SKY_STATE=os.path.join(root, "sky"), FAKE_KUBECTL_STATE=os.path.join(root, "kubectl"),
               FAKE_TORCHRUN_LOG=os.path.join(root, "torchrun.jsonl"), FAKE_TORCHRUN_EXEC="1",
               CLOUDFIT_PROBE_COMMAND=f"{PROBE} --tag 'two words'", CLOUDFIT_K8S_IMAGE="example.invalid/probe:1",
               CLOUDFIT_K8S_POLL_S="0.1", CLOUDFIT_SKY_WORKDIR=root,
               CLOUDFIT_LOCAL_BATCH="32", CLOUDFIT_STEPS="4", CLOUDFIT_WARMUP_STEPS="2", CLOUDFIT_SEED="7")
    for k in [k for k in env if k.startswith(("CI_", "GITHUB_"))]:
        del env[k]
    env.update({k: str(v) for k, v in extra.items()})
    return root, env


def leftovers(root):
    """Clusters and jobs the fakes still hold."""
    out = []
    for path in (os.path.join(root, "sky", "clusters.json"), os.path.join(root, "kubectl", "jobs.json")):
        if os.path.exists(path):
            out += list(json.load(open(path)))
    return out


def state_dirs(root, wait_s=10):
    """The runners' state folders left in the world's TMPDIR (cloudfit-sky-*, cloudfit-k8s-*),
    after up to `wait_s` seconds for a watchdog to finish."""
    deadline = time.time() + wait_s
    while True:
        left = sorted(d for d in os.listdir(os.path.join(root, "tmp")) if d.startswith("cloudfit-"))
        if not left or time.time() > deadline:
            return left
        time.sleep(0.1)


def applied(root):
    """The manifests `kubectl apply` was given, in order (the runner removes its copy)."""
    path = os.path.join(root, "kubectl", "applied.jsonl")
    return [json.loads(line) for line in open(path)] if os.path.exists(path) else []


def calls(root, which):
    path = os.path.join(root, which, "calls.jsonl")
    return [json.loads(line) for line in open(path)] if os.path.exists(path) else []


def calls_so_far(root, which):
    """calls() while the launcher may be writing: a line not yet complete is left out."""
    path = os.path.join(root, which, "calls.jsonl")
    return [line for line in open(path) if line.endswith("\n")] if os.path.exists(path) else []


def run_runner(runner, args, env, timeout=120):
    return subprocess.run(["/usr/bin/python3", runner, *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def check_protocol(stdout, batch=32, steps=4, warm=2):
    lines = [json.loads(line) for line in stdout.splitlines()]
    assert [x["event"] for x in lines] == ["device"] + ["step"] * (warm + steps) + ["done"], lines
    assert all(x["samples"] == batch for x in lines if x["event"] == "step")
    return lines


def check_torchrun_calls(root, nodes, nproc):
    records = [json.loads(line) for line in open(os.path.join(root, "torchrun.jsonl"))]
    assert records, "torchrun was not run"
    for r in records:
        if PARSER is None:
            SKIPPED.append("torch")
            continue
        args = V.parse_torchrun(PARSER, r["argv"])
        assert [args["training_script"], *args["training_script_args"]] == [PROBE, "--tag", "two words"], args
        if "--nnodes=" + str(nodes) in r["argv"]:  # SkyPilot passes flags; the operator passes PET_* instead
            assert args["nproc_per_node"] == str(nproc) and args["master_addr"] == "127.0.0.1", args
        else:
            assert r["env"]["PET_NNODES"] == str(nodes) and r["env"]["PET_NPROC_PER_NODE"] == str(nproc), r
    return records


# ---- SkyPilot -----------------------------------------------------------------------------------

def test_skypilot_runner_measures_and_tears_down():
    root, env = world()
    p = run_runner(SKY_RUNNER, SKY_ARGS, env)
    assert p.returncode == 0, p.stderr
    check_protocol(p.stdout)
    assert "fake probe: starting" in p.stderr or "Launching" in p.stderr, p.stderr
    check_torchrun_calls(root, 2, 4)
    c = calls(root, "sky")
    assert [x[0] for x in c] == ["launch", "exec", "down"], c
    launch = c[0]
    for flag, value in (("--instance-type", "g4dn.12xlarge"), ("--num-nodes", "2"), ("--infra", "aws/us-east-1")):
        assert launch[launch.index(flag) + 1] == value, launch
    assert "--down" in launch and "-i" in launch and "-y" in launch and "--gpus" not in launch, launch
    ex = c[1]
    assert ex[ex.index("--gpus") + 1] == "T4:4" and ex[ex.index("--num-nodes") + 1] == "2", ex
    assert leftovers(root) == [], leftovers(root)
    assert state_dirs(root, 0) == [], state_dirs(root, 0)  # removed before the runner exits


def test_skypilot_runner_accelerator_name_is_skypilots():
    root, env = world()
    args = ["--cloud", "gcp", "--region", "us-central1", "--instance-type", "a2-highgpu-1g", "--gpu", "A100-40GB",
            "--gpus-per-node", "1", "--nodes", "1"]
    p = run_runner(SKY_RUNNER, args, env)
    assert p.returncode == 0, p.stderr
    ex = calls(root, "sky")[1]
    assert ex[ex.index("--gpus") + 1] == "A100:1", ex


def test_skypilot_runner_attaches_gpus_to_a_gcp_n1_host():
    """An N1 host has no GPU of its own: `sky launch` must ask for the attached ones, or the
    cluster comes up without a GPU and `sky exec --gpus` finds none (the old runner's failure)."""
    root, env = world()
    args = ["--cloud", "gcp", "--region", "asia-east1", "--instance-type", "n1-highmem-8", "--gpu", "T4",
            "--gpus-per-node", "1", "--nodes", "1"]
    p = run_runner(SKY_RUNNER, args, env)
    assert p.returncode == 0, p.stderr
    check_protocol(p.stdout)
    launch, ex = calls(root, "sky")[:2]
    assert launch[0] == "launch" and launch[launch.index("--gpus") + 1] == "T4:1", launch
    assert ex[ex.index("--gpus") + 1] == "T4:1" and leftovers(root) == [], (ex, leftovers(root))
    # A type that comes with its GPUs is launched whole, without --gpus (A2: SkyPilot infers A100:1).
    root, env = world()
    args = ["--cloud", "gcp", "--region", "us-central1", "--instance-type", "a2-highgpu-1g", "--gpu", "A100-40GB",
            "--gpus-per-node", "1", "--nodes", "1"]
    assert run_runner(SKY_RUNNER, args, env).returncode == 0
    assert "--gpus" not in calls(root, "sky")[0], calls(root, "sky")[0]


def test_fake_sky_n1_without_gpus_has_none():
    """What the fake decides (so the test above can fail): an N1 host launched by its type
    alone has no GPU, and `sky exec --gpus` on it fails."""
    root, env = world()
    task = os.path.join(root, "t.yaml")
    with open(task, "w") as f:
        json.dump({"name": "x", "run": "echo hi"}, f)
    p = subprocess.run(["sky", "launch", "-y", "-c", "cf-n1", "--infra", "gcp/asia-east1", "--instance-type",
                        "n1-highmem-8", task], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    p = subprocess.run(["sky", "exec", "cf-n1", "--gpus", "T4:1", task], capture_output=True, text=True, env=env)
    assert p.returncode != 0 and "no GPU" in p.stderr, (p.returncode, p.stderr)


def test_skypilot_launch_failure_tears_down():
    root, env = world(FAKE_SKY_FAIL="launch")
    p = run_runner(SKY_RUNNER, SKY_ARGS, env)
    assert p.returncode != 0 and [json.loads(x)["event"] for x in p.stdout.splitlines()] == ["error"], \
        (p.returncode, p.stdout)
    assert [x[0] for x in calls(root, "sky")] == ["launch", "down"] and leftovers(root) == []
    assert state_dirs(root, 0) == [], state_dirs(root, 0)


def test_skypilot_job_failure_tears_down():
    root, env = world(FAKE_SKY_FAIL="exec")
    p = run_runner(SKY_RUNNER, SKY_ARGS, env)
    assert p.returncode != 0, p.returncode
    assert [x[0] for x in calls(root, "sky")] == ["launch", "exec", "down"] and leftovers(root) == []


def error_events(stdout):
    return [json.loads(line) for line in stdout.splitlines()]


def test_a_failed_launch_or_job_is_named_after_the_teardown():
    """A failed `sky launch` / `sky exec` / `kubectl apply` / PyTorchJob: cloudfit quoted the runner's last
    stderr line, always "runner: tearing down: …", and the launcher's reason was lost. Now the cause — the
    command, its exit status and its last line, or the job's condition and the master's last log line —
    is the last line on stderr and the protocol's error event, after the teardown."""
    cases = [(SKY_RUNNER, SKY_ARGS, {"FAKE_SKY_FAIL": "launch"},
              "sky launch exited with 1: sky.exceptions.CommandError: Command setup failed with return code 1"),
             (SKY_RUNNER, SKY_ARGS, {"FAKE_SKY_FAIL": "exec"},
              "sky exec exited with 100: (task, pid=4242) Traceback: simulated job failure"),
             (K8S_RUNNER, K8S_ARGS, {"FAKE_KUBECTL_FAIL": "apply"},
              "kubectl apply exited with 1: Error from server (Forbidden): error when creating"),
             (K8S_RUNNER, K8S_ARGS, {"FAKE_PROBE_MODE": "fail"},
              "failed (PyTorchJobFailed; PyTorchJob default/cf-probe-")]
    for runner, args, extra, want in cases:
        root, env = world(**extra)
        p = run_runner(runner, args, env)
        lines = p.stderr.splitlines()
        assert p.returncode == 1 and want in lines[-1] and lines[-1].startswith("runner: "), (extra, p.stderr[-1500:])
        assert any("tearing down" in x for x in lines[:-1]), (extra, p.stderr[-1500:])
        assert error_events(p.stdout) == [{"event": "error", "message": lines[-1]}], (extra, p.stdout)
        assert leftovers(root) == [] and state_dirs(root, 0) == [], (extra, leftovers(root))
        if extra.get("FAKE_PROBE_MODE") == "fail":
            assert lines[-1].endswith("the master's last log line: fake probe: simulated CUDA error"), lines[-1]
    # through cloudfit: its message gives the cause, not the teardown
    spec = profile_through(None)
    for runner, template_args, extra, want in (
            (SKY_RUNNER, "--cloud {cloud} --region {region}", {"FAKE_SKY_FAIL": "launch"},
             "the script reported an error: runner: sky launch exited with 1: sky.exceptions.CommandError"),
            (K8S_RUNNER, "--cloud {cloud}", {"FAKE_KUBECTL_FAIL": "apply"},
             "the script reported an error: runner: kubectl apply exited with 1: Error from server (Forbidden)")):
        root, env = world(**extra)
        template = (f"exec:/usr/bin/python3 {runner} {template_args} --instance-type {{instance_type}} --gpu {{gpu}} "
                    "--gpus-per-node {gpus_per_node} --nodes {nodes}")
        p = subprocess.run([BIN, "profile", spec, "--runner", template, "--gpu", "T4", "--instance-type",
                            "g4dn.12xlarge", "--probe-steps", "5", "--db", os.path.join(root, "h.db")],
                           capture_output=True, text=True, env=env, timeout=300)
        message = [x for x in p.stderr.splitlines() if x.startswith("cloudfit:")]
        assert p.returncode == 6 and len(message) == 1 and want in message[0], (p.returncode, p.stderr[-2000:])
        assert "tearing down" not in message[0] and leftovers(root) == [], (message, leftovers(root))


def interrupted(runner, args, env, root, how):
    """Starts the runner, waits until the launcher holds something, then stops it."""
    p = subprocess.Popen(["/usr/bin/python3", runner, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env, start_new_session=True)
    deadline = time.time() + 60
    while not leftovers(root) and time.time() < deadline:
        time.sleep(0.1)
    assert leftovers(root), "the runner never launched anything"
    # stopped while the job runs: once the launcher's command after the launch (sky exec, kubectl get) has
    # started, not after a fixed 0.5 s
    launcher = "sky" if runner == SKY_RUNNER else "kubectl"
    while len(calls_so_far(root, launcher)) < 2 and time.time() < deadline:
        time.sleep(0.02)
    assert len(calls_so_far(root, launcher)) >= 2, calls_so_far(root, launcher)
    if how == "SIGINT":
        p.send_signal(signal.SIGINT)
    else:  # cloudfit's timeout: SIGKILL to the whole process group
        os.killpg(p.pid, signal.SIGKILL)
    p.communicate(timeout=60)
    deadline = time.time() + 30
    while leftovers(root) and time.time() < deadline:
        time.sleep(0.2)
    return p.returncode


def test_skypilot_sigint_tears_down():
    root, env = world(FAKE_PROBE_MODE="hang")
    rc = interrupted(SKY_RUNNER, SKY_ARGS, env, root, "SIGINT")
    assert rc != 0 and leftovers(root) == [], (rc, leftovers(root))
    assert calls(root, "sky")[-1][0] == "down"


def test_skypilot_sigkill_of_the_group_tears_down():
    root, env = world(FAKE_PROBE_MODE="hang")
    rc = interrupted(SKY_RUNNER, SKY_ARGS, env, root, "SIGKILL")
    assert rc == -signal.SIGKILL and leftovers(root) == [], (rc, leftovers(root))
    assert state_dirs(root) == [], state_dirs(root)  # the watchdog tore down, then removed it


def test_skypilot_failed_teardown_keeps_and_names_the_state():
    """When `sky down` fails the state folder stays (with the teardown's output) and the runner says
    where and what to run; the watchdog tries again once the runner is gone."""
    root, env = world(FAKE_SKY_FAIL="down")
    p = run_runner(SKY_RUNNER, SKY_ARGS, env)
    assert p.returncode == 1, p.stderr  # the leak fails the run: cloudfit says so (test below)
    check_protocol(p.stdout)  # the measurement was relayed; no event after `done`
    kept = os.path.join(root, "tmp", state_dirs(root, 0)[0])
    assert f"state is kept in {kept}" in p.stderr and "sky down -y cf-probe-" in p.stderr, p.stderr
    # the watchdog's second try fails too: its `sky down` appends its output to torn-down.log (waited for,
    # not a fixed 1.5 s), then the watchdog exits without a third
    log = os.path.join(kept, "torn-down.log")
    deadline = time.time() + 30
    while time.time() < deadline and not (os.path.exists(log) and
                                          open(log).read().count("simulated failure to terminate") >= 2):
        time.sleep(0.05)
    time.sleep(0.3)  # time for a third try, which must not come
    assert [x[0] for x in calls(root, "sky")].count("down") == 2, calls(root, "sky")
    assert os.path.exists(log) and not os.path.exists(os.path.join(kept, "torn-down"))
    assert open(log).read().count("simulated failure to terminate") == 2, open(log).read()


def test_a_failed_teardown_is_the_runners_last_word_and_fails_the_run():
    """A good probe whose teardown failed exited 0: cloudfit stored the profile and said nothing while the
    clusters (jobs) stayed up, the runner's "run 'sky down …' yourself" swallowed with its stderr. Now the
    runner exits 1 with that line last (the exec protocol fails a run that exits non-zero even after `done`
    and has no warning event), so cloudfit stops with it before launching more; a failed probe whose
    teardown failed too names both in the error event."""
    for runner, args, extra, command in ((SKY_RUNNER, SKY_ARGS, {"FAKE_SKY_FAIL": "down"}, "'sky down -y cf-probe-"),
                                         (K8S_RUNNER, K8S_ARGS, {"FAKE_KUBECTL_FAIL": "delete"},
                                          "'kubectl delete pytorchjob cf-probe-")):
        root, env = world(**extra)
        p = run_runner(runner, args, env)
        last = p.stderr.splitlines()[-1]
        assert p.returncode == 1 and last.startswith("runner: teardown failed: " + command), (runner, p.stderr[-1500:])
        assert "may still be running: run " + command in last and "state is kept in" in last, last
        check_protocol(p.stdout)
        assert leftovers(root) != [], (runner, "the fake tore down after all")
    # a failed launch, then a failed teardown: both in the error event
    root, env = world(FAKE_KUBECTL_MODE="fail", FAKE_KUBECTL_FAIL="delete")
    p = run_runner(K8S_RUNNER, K8S_ARGS, env)
    events = error_events(p.stdout)
    assert p.returncode == 1 and len(events) == 1 and events[0]["event"] == "error", p.stdout
    assert "failed (PyTorchJobFailed" in events[0]["message"] and \
        "; and teardown failed: 'kubectl delete pytorchjob cf-probe-" in events[0]["message"], events
    # through cloudfit: exit 6, the command to run in its message, nothing stored, no further launches
    spec = profile_through(None)
    root, env = world(FAKE_SKY_FAIL="down")
    template = (f"exec:/usr/bin/python3 {SKY_RUNNER} --cloud {{cloud}} --region {{region}} --instance-type "
                "{instance_type} --gpu {gpu} --gpus-per-node {gpus_per_node} --nodes {nodes}")
    p = subprocess.run([BIN, "profile", spec, "--runner", template, "--gpu", "T4", "--instance-type", "g4dn.12xlarge",
                        "--probe-steps", "5", "--db", os.path.join(root, "h.db")], capture_output=True, text=True,
                       env=env, timeout=300)
    message = [x for x in p.stderr.splitlines() if x.startswith("cloudfit:")]
    assert p.returncode == 6 and len(message) == 1, (p.returncode, p.stderr[-2000:])
    assert "runner: teardown failed: 'sky down -y cf-probe-" in message[0] and "yourself" in message[0], message
    assert [x[0] for x in calls(root, "sky")].count("launch") <= 2, calls(root, "sky")  # the run and its one retry


def test_fake_sky_refuses_what_sky_refuses():
    """The fake is strict, so the runner tests can fail."""
    root, env = world()
    for argv in (["launch", "-y", "-c", "ok", "--nodes", "2", "x.yaml"],        # no such option
                 ["launch", "-y", "-c", "ok", "--num-node", "2", "x.yaml"],     # no abbreviations
                 ["down", "--force", "ok"]):
        p = subprocess.run(["sky", *argv], capture_output=True, text=True, env=env)
        assert p.returncode == 2 and "Error" in p.stderr, (argv, p.returncode, p.stderr)
    task = os.path.join(root, "t.yaml")
    json.dump({"name": "t", "run": "true"}, open(task, "w"))
    for argv in (["launch", "-y", "-c", "9lives", task],                              # cluster name rule
                 ["launch", "-y", "-c", "ok", "--infra", "nowhere/x", task],           # infra pattern
                 ["launch", "-y", "-c", "ok", "--infra", "aws/us-east-1", "--instance-type", "p4d.24xlarge",
                  "--gpus", "A100-40GB:8", task]):                                    # not SkyPilot's name
        p = subprocess.run(["sky", *argv], capture_output=True, text=True, env=env)
        assert p.returncode == 1 and "ValueError" in p.stderr, (argv, p.returncode, p.stderr)


# ---- Kubernetes ---------------------------------------------------------------------------------

def test_k8s_runner_measures_and_deletes():
    root, env = world()
    p = run_runner(K8S_RUNNER, K8S_ARGS, env)
    assert p.returncode == 0, p.stderr
    check_protocol(p.stdout)
    assert "fake probe: starting" in p.stderr, p.stderr  # the log's non-protocol line went to stderr
    check_torchrun_calls(root, 2, 8)
    c = calls(root, "kubectl")
    assert [x[0] for x in c][:2] == ["apply", "get"] and c[-2][0] == "logs" and c[-1][0] == "delete", c
    job = applied(root)[0]
    limits = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"amd.com/gpu": 8}, limits
    assert leftovers(root) == [], leftovers(root)
    assert state_dirs(root, 0) == [], state_dirs(root, 0)


def test_k8s_runner_reads_the_log_before_the_pods_go():
    """The pods stay until the job is deleted (cleanPodPolicy None), the log is read before the
    delete; with the old cleanPodPolicy All the fake operator removes the pods when the job ends
    and no measurement comes back."""
    root, env = world()
    p = run_runner(K8S_RUNNER, K8S_ARGS, env)
    assert p.returncode == 0, p.stderr
    check_protocol(p.stdout)
    c = calls(root, "kubectl")
    job = applied(root)[0]
    assert job["spec"]["runPolicy"]["cleanPodPolicy"] == "None", job["spec"]["runPolicy"]
    order = [x[0] for x in c]
    assert order.index("logs") < order.index("delete"), order
    # the same job with the old policy: the log is gone when the runner asks for it
    job["spec"]["runPolicy"]["cleanPodPolicy"] = "All"
    job["metadata"]["name"] = "cf-old-policy"
    old = os.path.join(root, "old.json")
    json.dump(job, open(old, "w"))
    assert subprocess.run(["kubectl", "apply", "-f", old], capture_output=True, env=env).returncode == 0
    selector = ("training.kubeflow.org/job-name=cf-old-policy,training.kubeflow.org/replica-type=master,"
                "training.kubeflow.org/replica-index=0")
    p = subprocess.run(["kubectl", "logs", "-l", selector, "-c", "pytorch"], capture_output=True, text=True, env=env)
    assert p.stdout == "" and "No resources found" in p.stderr, (p.stdout[:300], p.stderr)


def test_k8s_runner_node_selector_per_cloud():
    """Only labels the cloud's Kubernetes sets: the architecture everywhere, the instance type
    on EKS/GKE/AKS, none on Lambda (CLOUDFIT_K8S_NODE_SELECTOR instead), GKE's accelerator label
    for GPUs attached to an N1 host."""
    def selector(args, **extra):
        root, env = world(**extra)
        p = run_runner(K8S_RUNNER, args, env)
        assert p.returncode == 0, p.stderr
        check_protocol(p.stdout)
        job = applied(root)[0]
        return job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["nodeSelector"], p.stderr
    sel, _ = selector(K8S_ARGS)
    assert sel == {"kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "Standard_ND96isr_MI300X_v5"}, sel
    gh200 = ["--cloud", "lambda", "--instance-type", "gpu_1x_gh200", "--gpu", "GH200", "--gpus-per-node", "1",
             "--nodes", "1"]
    sel, err = selector(gh200)
    assert sel == {"kubernetes.io/arch": "arm64"} and "CLOUDFIT_K8S_NODE_SELECTOR" in err, (sel, err)
    sel, _ = selector(gh200, CLOUDFIT_K8S_NODE_SELECTOR="example.com/pool=gh200")
    assert sel == {"kubernetes.io/arch": "arm64", "example.com/pool": "gh200"}, sel
    n1 = ["--cloud", "gcp", "--instance-type", "n1-highmem-8", "--gpu", "T4", "--gpus-per-node", "2", "--nodes", "1"]
    sel, _ = selector(n1)
    assert sel == {"kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "n1-highmem-8",
                   "cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}, sel


def test_k8s_job_failure_deletes():
    root, env = world(FAKE_PROBE_MODE="fail")
    p = run_runner(K8S_RUNNER, K8S_ARGS, env)
    assert p.returncode != 0 and leftovers(root) == [], (p.returncode, leftovers(root))
    assert calls(root, "kubectl")[-1][0] == "delete"


def test_k8s_a_failed_status_poll_is_tried_again():
    """One failed or garbled `kubectl get pytorchjob` counted as the job failing (the probe's measurement
    lost to an API server blip); now the runner tries again, up to 3 times in a row, and the measurement
    comes through; 3 in a row end it with the last cause named."""
    root, env = world(FAKE_KUBECTL_GET_FLAKY="2")
    p = run_runner(K8S_RUNNER, K8S_ARGS, env)
    assert p.returncode == 0, p.stderr[-2000:]
    check_protocol(p.stdout)
    assert "TLS handshake timeout; trying again (1 of 3)" in p.stderr and "printed no JSON object" in p.stderr, \
        p.stderr[-2000:]
    assert leftovers(root) == [], leftovers(root)
    root, env = world(FAKE_KUBECTL_GET_FLAKY="3")
    p = run_runner(K8S_RUNNER, K8S_ARGS, env)
    events = error_events(p.stdout)
    assert p.returncode == 1 and len(events) == 1 and "TLS handshake timeout" in events[0]["message"], p.stdout
    assert leftovers(root) == [], leftovers(root)


def test_k8s_rejected_job_deletes_nothing_left():
    root, env = world(CLOUDFIT_K8S_IMAGE="")
    p = run_runner(K8S_RUNNER, K8S_ARGS, env)
    assert p.returncode != 0 and calls(root, "kubectl") == [], p.stderr  # refused before applying


def test_k8s_sigint_deletes():
    root, env = world(FAKE_KUBECTL_MODE="pending")
    rc = interrupted(K8S_RUNNER, K8S_ARGS, env, root, "SIGINT")
    assert rc != 0 and leftovers(root) == [], (rc, leftovers(root))


def test_k8s_sigkill_of_the_group_deletes():
    root, env = world(FAKE_KUBECTL_MODE="pending")
    rc = interrupted(K8S_RUNNER, K8S_ARGS, env, root, "SIGKILL")
    assert rc == -signal.SIGKILL and leftovers(root) == [], (rc, leftovers(root))
    assert state_dirs(root) == [], state_dirs(root)


def test_fake_kubectl_refuses_what_kubectl_refuses():
    root, env = world()
    for argv in (["apply", "--file", "x.json"], ["logs", "--selectors", "a=b"], ["delete", "pytorchjob", "x",
                                                                                   "--ignore-notfound"]):
        p = subprocess.run(["kubectl", *argv], capture_output=True, text=True, env=env)
        assert p.returncode == 1 and "unknown" in p.stderr, (argv, p.stderr)
    bad = os.path.join(root, "bad.json")  # the old single-node spot shape: elasticPolicy without Worker
    json.dump({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "ok"},
               "spec": {"elasticPolicy": {"minReplicas": 1, "maxReplicas": 1}, "pytorchReplicaSpecs": {"Master": {
                   "replicas": 1, "template": {"spec": {"containers": [{"name": "pytorch", "image": "x"}]}}}}}},
              open(bad, "w"))
    p = subprocess.run(["kubectl", "apply", "-f", bad], capture_output=True, text=True, env=env)
    assert p.returncode == 1 and "denied" in p.stderr, p.stderr


# ---- both: what the launcher prints, a missing launcher, bad settings -----------------------------

def test_a_byte_that_is_not_utf8_in_the_launchers_output_passes():
    """A Latin-1 byte in the probe's log (through `sky exec` / `kubectl logs`) used to end the runner
    with a UnicodeDecodeError and lose the measurement; now the line goes to stderr as it was and the
    protocol lines to stdout."""
    for runner, args in ((SKY_RUNNER, SKY_ARGS), (K8S_RUNNER, K8S_ARGS)):
        root, env = world(FAKE_PROBE_MODE="latin1")
        p = subprocess.run(["/usr/bin/python3", runner, *args], capture_output=True, env=env, timeout=120)
        assert p.returncode == 0, (runner, p.stderr.decode(errors="replace")[-2000:])
        check_protocol(p.stdout.decode())
        assert b"fake probe: loading caf\xe9 dataset\n" in p.stderr, (runner, p.stderr[-2000:])
        assert leftovers(root) == [] and state_dirs(root, 0) == [], (runner, leftovers(root), state_dirs(root, 0))


def test_a_missing_launcher_is_one_line_and_an_error_event():
    """SKY / KUBECTL naming a program that does not exist: one line on stderr naming the program and
    the variable, the protocol's error event on stdout, exit 1, no traceback, no teardown run, no state
    folder left; through cloudfit, its message and exit 6."""
    for runner, args, var in ((SKY_RUNNER, SKY_ARGS, "SKY"), (K8S_RUNNER, K8S_ARGS, "KUBECTL")):
        root, env = world(**{var: "/nonexistent/launcher"})
        p = run_runner(runner, args, env)
        want = "cannot run '/nonexistent/launcher' (from %s): No such file or directory" % var
        assert p.returncode == 1 and "Traceback" not in p.stderr, (runner, p.returncode, p.stderr)
        assert p.stderr.splitlines() == ["runner: " + want], (runner, p.stderr)
        assert [json.loads(line) for line in p.stdout.splitlines()] == [{"event": "error",
                                                                          "message": "runner: " + want}], p.stdout
        assert state_dirs(root) == [], (runner, state_dirs(root))
    # unset: the default name, looked up on PATH (here without it)
    root, env = world(PATH="/nonexistent")
    p = run_runner(SKY_RUNNER, SKY_ARGS, env)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert "cannot run 'sky': No such file or directory (SKY is unset" in p.stderr, p.stderr
    # from cloudfit
    spec = profile_through(None)
    root, env = world(SKY="/nonexistent/sky")
    template = (f"exec:/usr/bin/python3 {SKY_RUNNER} --cloud {{cloud}} --region {{region}} --instance-type "
                "{instance_type} --gpu {gpu} --gpus-per-node {gpus_per_node} --nodes {nodes}")
    p = subprocess.run([BIN, "profile", spec, "--runner", template, "--gpu", "T4", "--instance-type", "g4dn.12xlarge",
                        "--probe-steps", "5", "--db", os.path.join(root, "h.db")], capture_output=True, text=True,
                       env=env, timeout=300)
    assert p.returncode == 6, (p.returncode, p.stderr[-2000:])
    assert ("the script reported an error: runner: cannot run '/nonexistent/sky' (from SKY): No such file or "
            "directory") in p.stderr, p.stderr[-2000:]
    assert state_dirs(root) == [], state_dirs(root)


def test_probe_command_is_the_same_words_in_both_runners():
    """CLOUDFIT_PROBE_COMMAND is split as a POSIX shell splits words with nothing expanded (the README): the
    SkyPilot run block `eval`ed it, expanding $HOME and globs and running what followed a `;` on the node,
    while the Kubernetes runner split it with shlex. Now both pass torchrun the same words, shlex.split's,
    and nothing in the value runs."""
    words = None
    side = os.path.join(tempfile.mkdtemp(dir=TMP), "SIDE_EFFECT")
    for runner, args in ((SKY_RUNNER, SKY_ARGS), (K8S_RUNNER, K8S_ARGS)):
        root, env = world()
        for name in ("a.csv", "b.csv"):
            open(os.path.join(root, name), "w").close()
        command = (f"{PROBE} --out $HOME/run --files *.csv --tag 'two words' \"it's\" '' `id` "
                   f"$(touch {side}); touch {side}")
        env["CLOUDFIT_PROBE_COMMAND"] = command
        p = subprocess.run(["/usr/bin/python3", runner, *args], capture_output=True, text=True, env=env, cwd=root,
                           timeout=120)
        assert p.returncode == 0, (runner, p.stderr[-2000:])
        check_protocol(p.stdout)
        argv = [json.loads(line)["argv"] for line in open(os.path.join(root, "torchrun.jsonl"))]
        got = {tuple(a[a.index(PROBE):]) for a in argv}
        assert got == {tuple(shlex.split(command))}, (runner, got)
        assert not os.path.exists(side), (runner, "a command in CLOUDFIT_PROBE_COMMAND ran")
        words = words or got
        assert got == words, (runner, got, words)


def test_bad_settings_are_named_not_tracebacks():
    """Settings that are not numbers, an unterminated quote, zero nodes or GPUs: a message naming the
    setting (argparse's for the options), no traceback, nothing launched, no state folder."""
    cases = [(K8S_RUNNER, K8S_ARGS, {"CLOUDFIT_K8S_DEADLINE_S": "1h"}, "CLOUDFIT_K8S_DEADLINE_S='1h'", 1),
             (K8S_RUNNER, K8S_ARGS, {"CLOUDFIT_K8S_DEADLINE_S": "0"}, "CLOUDFIT_K8S_DEADLINE_S='0'", 1),
             (K8S_RUNNER, K8S_ARGS, {"CLOUDFIT_K8S_POLL_S": "fast"}, "CLOUDFIT_K8S_POLL_S='fast'", 1),
             (K8S_RUNNER, K8S_ARGS, {"CLOUDFIT_K8S_POLL_S": "nan"}, "CLOUDFIT_K8S_POLL_S='nan'", 1),
             (K8S_RUNNER, K8S_ARGS, {"CLOUDFIT_PROBE_COMMAND": "probe.py --tag 'two words"},
              "CLOUDFIT_PROBE_COMMAND=\"probe.py --tag 'two words\": No closing quotation", 1),
             (SKY_RUNNER, SKY_ARGS, {"CLOUDFIT_PROBE_COMMAND": "probe.py --tag 'two words"},
              "CLOUDFIT_PROBE_COMMAND=\"probe.py --tag 'two words\": No closing quotation", 1),
             (SKY_RUNNER, SKY_ARGS, {"CLOUDFIT_SKY_IDLE_MINUTES": "ten"}, "CLOUDFIT_SKY_IDLE_MINUTES='ten'", 1)]
    for runner, base in ((SKY_RUNNER, SKY_ARGS), (K8S_RUNNER, K8S_ARGS)):
        for option in ("--nodes", "--gpus-per-node"):
            args = list(base)
            args[args.index(option) + 1] = "0"
            cases.append((runner, args, {}, f"argument {option}: expected a positive integer, got '0'", 2))
    for runner, args, extra, want, code in cases:
        root, env = world(**extra)
        p = run_runner(runner, args, env)
        assert p.returncode == code and want in p.stderr and "Traceback" not in p.stderr, (extra, args, p.stderr)
        if code == 1:
            assert json.loads(p.stdout)["event"] == "error" and want in json.loads(p.stdout)["message"], p.stdout
        assert calls(root, "sky") == [] and calls(root, "kubectl") == [] and state_dirs(root, 0) == [], extra


# ---- from cloudfit -------------------------------------------------------------------------------

def profile_through(runner_args):
    spec = os.path.join(TMP, "fake-t4.json")
    json.dump({"name": "fake-t4", "model": {"parameters": 25557032}, "data": {"samples": 1281167},
               "training": {"epochs": 10, "batch": 256, "lr": 0.1},
               "profile": {"noise_scale": 4000, "local_batches": [16, 32, 64]},
               "search": {"objective": "cost", "deadline_hours": 3, "clouds": ["aws"], "max_nodes": 4}},
              open(spec, "w"))
    return spec


def test_cloudfit_profile_through_each_runner():
    """`cloudfit profile --runner exec:...` with each template: light profile and the 2-node probe."""
    spec = profile_through(None)
    for runner, template_args in (
            (SKY_RUNNER, "--cloud {cloud} --region {region} --instance-type {instance_type} --gpu {gpu} "
                         "--gpus-per-node {gpus_per_node} --nodes {nodes}"),
            (K8S_RUNNER, "--cloud {cloud} --instance-type {instance_type} --gpu {gpu} "
                         "--gpus-per-node {gpus_per_node} --nodes {nodes}")):
        root, env = world()
        template = f"exec:/usr/bin/python3 {runner} {template_args}"
        p = subprocess.run([BIN, "profile", spec, "--runner", template, "--gpu", "T4", "--instance-type",
                            "g4dn.12xlarge", "--probe-steps", "5", "-f", "json", "--db", os.path.join(root, "h.db")],
                           capture_output=True, text=True, env=env, timeout=600)
        assert p.returncode == 0, (runner, p.stderr[-3000:])
        doc = json.loads(p.stdout)
        shapes = sorted({(r["nodes"], r["gpus_per_node"]) for r in doc["runner"]["runs"]})
        assert shapes == [(1, 1), (1, 4), (2, 1)], shapes
        assert doc["runner"]["probe_status"] == "measured", doc["runner"]
        for r in doc["runner"]["runs"]:  # fake_probe.py's formula, through launcher and torchrun
            want = 0.02 + 0.002 * r["local_batch"] + (0.08 + 0.01 * r["nodes"] if r["nodes"] > 1 else 0)
            assert abs(r["step_time_s"] - want) < 1e-6, (runner, r)
        assert leftovers(root) == [], (runner, leftovers(root))
        assert state_dirs(root) == [], (runner, state_dirs(root))  # one per probe, each removed


def test_cloudfit_interrupted_or_timed_out_leaves_nothing():
    """Ctrl-C on cloudfit (the runner's parent goes away) and cloudfit's own
    timeout (SIGKILL of the runner's group) both end with the VM torn down."""
    spec = profile_through(None)
    template = (f"exec:/usr/bin/python3 {SKY_RUNNER} --cloud {{cloud}} --region {{region}} --instance-type "
                "{instance_type} --gpu {gpu} --gpus-per-node {gpus_per_node} --nodes {nodes}")
    base = [BIN, "profile", spec, "--runner", template, "--gpu", "T4", "--instance-type", "g4dn.12xlarge",
            "--probe-steps", "5"]
    # cloudfit's timeout: 2 s of silence, then SIGKILL to the runner's process group (twice: one retry)
    root, env = world(FAKE_PROBE_MODE="hang")
    p = subprocess.run([*base, "--timeout", "2", "--db", os.path.join(root, "h.db")], capture_output=True,
                       text=True, env=env, timeout=300)
    assert p.returncode == 6 and "timed out" in p.stderr, (p.returncode, p.stderr[-1500:])  # docs/profiler.md: a hang is 6
    deadline = time.time() + 30
    while leftovers(root) and time.time() < deadline:
        time.sleep(0.2)
    assert leftovers(root) == [] and [x[0] for x in calls(root, "sky")].count("down") >= 2, calls(root, "sky")
    # Ctrl-C: SIGINT reaches cloudfit's process group, not the runner's
    root, env = world(FAKE_PROBE_MODE="hang")
    cf = subprocess.Popen([*base, "--timeout", "300", "--db", os.path.join(root, "h.db")], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    deadline = time.time() + 60
    while not leftovers(root) and time.time() < deadline:
        time.sleep(0.1)
    assert leftovers(root), "nothing was launched"
    os.killpg(cf.pid, signal.SIGINT)
    cf.communicate(timeout=60)
    deadline = time.time() + 30
    while leftovers(root) and time.time() < deadline:
        time.sleep(0.2)
    assert leftovers(root) == [], leftovers(root)


def report_skips():
    if "torch" in SKIPPED:
        print("SKIPPED: torch is not importable here: torchrun arguments were recorded, not parsed")


if __name__ == "__main__":
    sys.exit(pyharness.run(dict(globals()), cleanup=report_skips))
