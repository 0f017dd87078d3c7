"""Shared parts of the exec runners in this folder (skypilot_probe.py,
k8s_probe.py): the launcher's GPU names, a teardown that runs however the
runner ends, and a watchdog for the one ending no handler sees.

cloudfit runs an exec runner in a process group of its own and, on a
timeout, a protocol error or a stop signal, stops that group: SIGTERM (the
runner's handler tears down), then SIGKILL after CLOUDFIT_STOP_GRACE_S
(default 30 s; docs/exec-protocol.md), when no handler runs. So before
anything is created, the runner starts a watchdog in a new session (not in
that group) that waits for the runner to disappear and, unless the runner
said it cleaned up, runs the teardown command itself. cloudfit is the
subreaper of what it starts, so it ends the watchdog too once the runner is
gone (SIGTERM: tear down unless done, then exit); if cloudfit itself is
SIGKILLed the watchdog outlives it and still tears down. A launcher-side safety net (SkyPilot autodown after idle
minutes, the PyTorchJob's activeDeadlineSeconds) covers a dead machine.
Standard library only."""
import csv
import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def log(*parts):
    try:
        print("runner:", *parts, file=sys.stderr, flush=True)
    except (BrokenPipeError, OSError):  # cloudfit is gone; the teardown goes on
        pass


def launcher_row(cloud, instance_type, gpu):
    """The row of data/launch_accelerators.csv (the table `recommend --emit`
    uses) for a catalog VM: skypilot_accelerator, k8s_gpu_resource, cpu_arch
    (kubernetes.io/arch), attached ("1": the GPUs are attached to a host that
    has none of its own, GCP N1) and gke_accelerator (GKE's GPU label)."""
    path = os.environ.get("CLOUDFIT_LAUNCH_ACCELERATORS",
                          os.path.join(HERE, "..", "..", "data", "launch_accelerators.csv"))
    rows = list(csv.DictReader(open(path)))
    for want_type in (instance_type, "*"):
        for r in rows:
            if (r["cloud"], r["instance_type"], r["cloudfit_gpu"]) == (cloud, want_type, gpu):
                return r
    raise SystemExit(f"runner: no launcher name for GPU {gpu} on {cloud} {instance_type} in {path}")


class Teardown:
    """Runs `command` exactly once: on return, exception, SIGINT, SIGTERM,
    SIGHUP, a closed stdout (cloudfit gone), or — through the watchdog —
    after a SIGKILL of the runner."""

    def __init__(self, command, state_dir):
        self.command = command
        self.marker = os.path.join(state_dir, "torn-down")
        self.child = None  # the launcher command running now, stopped first on a signal
        self.done = False

    def start_watchdog(self):
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the watchdog: a new session, so cloudfit's killpg misses it
            try:
                os.setsid()
                devnull = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):  # cloudfit waits for EOF on our pipes: hold none of them
                    os.dup2(devnull, fd)
                # cloudfit is the subreaper of everything it starts: once the
                # runner is gone it sends this watchdog SIGTERM (then SIGKILL
                # after CLOUDFIT_STOP_GRACE_S). SIGTERM means: tear down now
                # unless the runner already did.
                stop = []
                for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                    signal.signal(sig, lambda signum, frame: stop.append(signum))
                while not stop:
                    try:
                        os.kill(parent, 0)
                    except ProcessLookupError:
                        break
                    time.sleep(0.5)
                for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                    signal.signal(sig, signal.SIG_IGN)
                if not os.path.exists(self.marker):
                    with open(self.marker + ".log", "a") as out:
                        subprocess.run(self.command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                       timeout=600)
            finally:
                os._exit(0)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self._on_signal)
        # cloudfit interrupted (Ctrl-C reaches its process group, not ours):
        # when the parent goes away, stop as on SIGTERM.
        original_parent = os.getppid()

        def watch_parent():
            while os.getppid() == original_parent:
                time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=watch_parent, daemon=True).start()

    def _on_signal(self, signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    def run(self):
        if self.done:
            return
        self.done = True
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # finish the teardown
        if self.child and self.child.poll() is None:
            self.child.send_signal(signal.SIGINT)
            try:
                self.child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.child.kill()
                self.child.wait()
        log("tearing down:", " ".join(self.command))
        # Its output goes to a file: stderr may be a pipe nobody reads any more.
        with open(self.marker + ".log", "a") as out:
            p = subprocess.run(self.command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        if p.returncode == 0:
            open(self.marker, "w").close()
        else:
            log(f"teardown exited with {p.returncode}; the watchdog tries again when this runner ends")


def relay(stream, is_protocol_line):
    """Copies the protocol's lines of `stream` to stdout (flushed each), the
    rest to stderr. Raises BrokenPipeError when cloudfit went away."""
    for raw in stream:
        line = raw.rstrip("\n")
        kept = is_protocol_line(line)
        if kept is not None:
            sys.stdout.write(kept + "\n")
            sys.stdout.flush()
        else:
            sys.stderr.write(line + "\n")


def run_streaming(teardown, argv, is_protocol_line=None, env=None):
    """Runs a launcher command; its output goes to stderr, or through relay()."""
    log("$", " ".join(argv))
    teardown.child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, env=env)
    try:
        if is_protocol_line:
            relay(teardown.child.stdout, is_protocol_line)
        else:
            for line in teardown.child.stdout:
                sys.stderr.write(line)
        return teardown.child.wait()
    finally:
        if teardown.child.poll() is not None:
            teardown.child = None
