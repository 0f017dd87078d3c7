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
Once torn down, the runner stops the watchdog and removes its state folder.
A launcher that cannot be started, a setting that cannot be used, and a
launcher command or job that fails are a RunnerError: after the teardown,
one line on stderr and the protocol's error event naming the cause (the
launcher's exit status and its last line), exit 1, so cloudfit's message
says why the probe failed, not that a teardown ran.
Standard library only."""
import argparse
import csv
import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


# The protocol's events that end a run: nothing may follow them (an
# `error` event after `done` is a protocol error, not the runner's message).
ENDING_EVENTS = ("done", "error", "oom")
# Whether one of them was relayed to cloudfit (relay()).
_relayed = {"ended": False}


def log(*parts):
    try:
        print("runner:", *parts, file=sys.stderr, flush=True)
    except (BrokenPipeError, OSError):  # cloudfit is gone; the teardown goes on
        pass


class RunnerError(Exception):
    """A setting or launcher this runner cannot work with; main() reports
    it once (report_error) and exits 1."""


def report_error(message):
    """One line on stderr, then the exec protocol's `error` event on stdout
    (docs/exec-protocol.md), so cloudfit stops with this message rather
    than a bare exit status. Call it last: cloudfit stops the runner's
    process group as soon as it reads the event. After the probe's own
    last event (done, error, oom) nothing may follow on stdout: the line on
    stderr is then the last word, which cloudfit quotes with the runner's
    exit status."""
    log(message)
    if _relayed["ended"]:
        return
    try:
        sys.stdout.write(json.dumps({"event": "error", "message": "runner: " + message}) + "\n")
        sys.stdout.flush()
    except (BrokenPipeError, OSError):
        pass


def positive_int(text):
    """argparse type for --nodes and --gpus-per-node."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def run_main(parser, probe):
    """The runners' main(): the VM shape's arguments ({gpu}, {gpus_per_node},
    {nodes}) added to `parser`, then probe(args); a RunnerError is reported
    after the teardown, so the error event is the last line cloudfit reads.
    Returns the exit status."""
    parser.add_argument("--gpu", required=True, help="cloudfit's GPU key ({gpu})")
    parser.add_argument("--gpus-per-node", type=positive_int, required=True)
    parser.add_argument("--nodes", type=positive_int, required=True)
    args = parser.parse_args()
    try:
        return probe(args)
    except RunnerError as e:
        report_error(str(e))
        return 1


def env_number(name, default, kind=float, minimum=0.0):
    """The number in environment variable `name` (`default` when unset or
    empty): finite, at least `minimum`; RunnerError naming it otherwise."""
    text = os.environ.get(name, "") or default
    what = "an integer" if kind is int else "a number"
    try:
        value = kind(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < minimum:
        raise RunnerError(f"{name}={text!r}: expected {what} of at least {minimum:g} (default {default})")
    return value


def probe_words(probe_command):
    """CLOUDFIT_PROBE_COMMAND as words, split as a POSIX shell splits a
    command line (quotes group words, a backslash escapes) with nothing
    expanded: no $VAR, no glob, and `;` or `|` are characters of a word.
    Both runners pass the probe exactly these words (the SkyPilot run block
    splits with the same shlex.split on the node). RunnerError for an
    unterminated quote or no word at all."""
    try:
        words = shlex.split(probe_command)
    except ValueError as e:  # an unterminated quote or a trailing backslash
        raise RunnerError(f"CLOUDFIT_PROBE_COMMAND={probe_command!r}: {e} (it is split like a POSIX shell "
                          "splits words)") from None
    if not words:
        raise RunnerError("CLOUDFIT_PROBE_COMMAND holds no word: set it to the probe script and its arguments")
    return words


def launcher_program(var, default):
    """The launcher program: environment variable `var`, else `default` (looked up on PATH)."""
    return os.environ.get(var) or default


def cannot_run(program, var, error):
    """The message for a launcher that could not be started (an OSError of Popen)."""
    why = error.strerror or str(error)
    if os.environ.get(var):
        return f"cannot run {program!r} (from {var}): {why}"
    return (f"cannot run {program!r}: {why} ({var} is unset, so {program!r} was looked up on PATH; "
            f"set {var} to the program's path)")


def launcher_row(cloud, instance_type, gpu):
    """The row of data/launch_accelerators.csv (the table `recommend --emit`
    uses) for a catalog VM: skypilot_accelerator, k8s_gpu_resource, cpu_arch
    (kubernetes.io/arch), attached ("1": the GPUs are attached to a host that
    has none of its own, GCP N1) and gke_accelerator (GKE's GPU label)."""
    path = os.environ.get("CLOUDFIT_LAUNCH_ACCELERATORS",
                          os.path.join(HERE, "..", "..", "data", "launch_accelerators.csv"))
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise RunnerError(f"cannot read {path} (CLOUDFIT_LAUNCH_ACCELERATORS): {e.strerror}") from None
    for want_type in (instance_type, "*"):
        for r in rows:
            if (r["cloud"], r["instance_type"], r["cloudfit_gpu"]) == (cloud, want_type, gpu):
                return r
    raise RunnerError(f"no launcher name for GPU {gpu} on {cloud} {instance_type} in {path}")


class Teardown:
    """Runs `command` exactly once: on return, exception, SIGINT, SIGTERM,
    SIGHUP, a closed stdout (cloudfit gone), or — through the watchdog —
    after a SIGKILL of the runner. Once it succeeded (or nothing was ever
    launched) the watchdog is stopped and `state_dir` removed; when it
    failed, `state_dir` stays (the teardown's output is in torn-down.log
    there) and the watchdog tries again when the runner ends. `program_var`
    is the environment variable that chose the launcher (for messages),
    `what` what the command removes ("cluster cf-probe-…"). A failed
    teardown is kept in `failure` for outcome(): the runner then exits 1
    whatever the probe measured, its last line saying what to run, so
    cloudfit reports the run as failed instead of storing it in silence
    while paid machines stay up."""

    def __init__(self, command, state_dir, program_var, what="what was launched"):
        self.command = command
        self.state_dir = state_dir
        self.program_var = program_var
        self.what = what
        self.failure = None  # the teardown's failure, for outcome()
        self.marker = os.path.join(state_dir, "torn-down")
        self.child = None  # the launcher command running now, stopped first on a signal
        self.launched = False  # a launcher command started: something may exist to tear down
        self.watchdog = None  # its pid
        self.done = False
        self.last_output = ""  # the last line the latest launcher command printed (not a protocol line)

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
                # unless the runner already did (the runner itself sends it
                # once it did, so the watchdog exits and the state goes).
                stop = []
                for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                    signal.signal(sig, lambda signum, frame: stop.append(signum))
                while not stop:
                    try:
                        os.kill(parent, 0)
                    except ProcessLookupError:
                        break
                    time.sleep(0.2)
                for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                    signal.signal(sig, signal.SIG_IGN)
                torn_down = os.path.exists(self.marker)
                if not torn_down:
                    with open(self.marker + ".log", "a") as out:
                        torn_down = subprocess.run(self.command, stdin=subprocess.DEVNULL, stdout=out,
                                                   stderr=subprocess.STDOUT, timeout=600).returncode == 0
                if torn_down:
                    shutil.rmtree(self.state_dir, ignore_errors=True)
            finally:
                os._exit(0)
        self.watchdog = pid
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
        if not self.launched:  # no launcher command started: nothing exists to tear down
            open(self.marker, "w").close()
            self._release()
            return
        log("tearing down:", " ".join(self.command))
        command = shlex.join(self.command)
        # Its output goes to a file: stderr may be a pipe nobody reads any more.
        try:
            with open(self.marker + ".log", "a") as out:
                p = subprocess.run(self.command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
            failure = f"'{command}' exited with {p.returncode}" if p.returncode != 0 else None
        except OSError as e:
            failure = (cannot_run(self.command[0], self.program_var, e) if e.filename == self.command[0]
                       else f"'{command}': {e}")
        if failure is None:
            open(self.marker, "w").close()
            self._release()
        else:
            # the command to run comes first: cloudfit quotes this line, cut at 300 characters
            self.failure = (f"teardown failed: {failure}; {self.what} may still be running: run '{command}' "
                            f"yourself (the watchdog tries once more when this runner ends; its state is kept in "
                            f"{self.state_dir}, the teardown's output in torn-down.log)")
            log(self.failure)

    def outcome(self, rc, failure):
        """The probe's end, after run(): a failure (a launcher command or the
        job that failed, a RunnerError) is raised again as a RunnerError for
        run_main to report as the last line and the error event, with the
        teardown's failure when it failed too. A failed teardown after a good
        probe is the last line too, and exit 1: the exec protocol fails a run
        that exits non-zero, even after `done`, and has no warning event (an
        event after `done` is a protocol error), so the failed run is how
        cloudfit shows the leak; it stops there instead of launching more
        clusters that may stay up as well. Else `rc`."""
        if failure:
            raise RunnerError(failure + (f"; and {self.failure}" if self.failure else ""))
        if self.failure:
            if rc in (130, 141):  # stopped, or cloudfit gone: the line was written
                return rc
            report_error(self.failure)  # after `done`: the line only (it was logged; once more, last)
            return 1
        return rc

    def _release(self):
        """After a teardown: stops the watchdog, waits for it, removes the state."""
        if self.watchdog:
            try:
                os.kill(self.watchdog, signal.SIGTERM)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + 10
            while True:
                try:
                    if os.waitpid(self.watchdog, os.WNOHANG)[0]:
                        break
                except ChildProcessError:
                    break
                if time.monotonic() > deadline:
                    log(f"the watchdog (pid {self.watchdog}) has not exited; its state is kept in {self.state_dir}")
                    return
                time.sleep(0.02)
            self.watchdog = None
        shutil.rmtree(self.state_dir, ignore_errors=True)


def _write(stream, text):
    """Writes `text` (decoded with surrogateescape) as the bytes it was read
    as, so a launcher's stray non-UTF-8 byte passes through unchanged."""
    stream.flush()
    stream.buffer.write(text.encode("utf-8", "surrogateescape"))
    stream.buffer.flush()


def _ends_protocol(line):
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("event") in ENDING_EVENTS


def relay(stream, is_protocol_line, teardown=None):
    """Copies the protocol's lines of `stream` to stdout (flushed each), the
    rest to stderr (the last of those kept in teardown.last_output, for a
    failure's message). Raises BrokenPipeError when cloudfit went away."""
    for raw in stream:
        line = raw.rstrip("\n")
        kept = is_protocol_line(line) if is_protocol_line else None
        if kept is not None:
            _write(sys.stdout, kept + "\n")
            _relayed["ended"] = _relayed["ended"] or _ends_protocol(kept)
        else:
            _write(sys.stderr, line + "\n")
            if teardown is not None and line.strip():
                teardown.last_output = line.strip()


def failed(what, rc, teardown):
    """The message of a launcher command that exited with `rc`: the command
    and the last line it printed (the launcher's own reason)."""
    last = teardown.last_output
    return f"{what} exited with {rc}" + (f": {last}" if last else "")


def run_streaming(teardown, argv, is_protocol_line=None, env=None):
    """Runs a launcher command; its output goes to stderr, or through relay().
    Its output is decoded with surrogateescape: a byte that is not UTF-8 (a
    log line in another encoding) goes through as it was instead of failing
    the run. A launcher that cannot be started raises RunnerError."""
    try:
        teardown.child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, encoding="utf-8", errors="surrogateescape",
                                          env=env)
    except OSError as e:
        raise RunnerError(cannot_run(argv[0], teardown.program_var, e)) from None
    teardown.launched = True
    teardown.last_output = ""
    log("$", " ".join(argv))
    try:
        relay(teardown.child.stdout, is_protocol_line, teardown)
        return teardown.child.wait()
    finally:
        if teardown.child.poll() is not None:
            teardown.child = None
