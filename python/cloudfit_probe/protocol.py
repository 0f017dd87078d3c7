"""The exec probe protocol's two ends as seen from the script
(docs/exec-protocol.md): the run configuration cloudfit puts in the
environment, and the channel for the JSON lines it reads from stdout.

Only the protocol's lines reach the real standard output: while the probe
runs, file descriptor 1 points at standard error, so a print() in the
user's training code, a warning from a library or a C extension's output
cannot break the protocol. Every line is written with allow_nan=False: a
NaN or Infinity never reaches cloudfit (it becomes an `error` event)."""
import json
import os
import sys

DEFAULTS = {"CLOUDFIT_LOCAL_BATCH": 32, "CLOUDFIT_MICRO_BATCHES": 1, "CLOUDFIT_STEPS": 10,
            "CLOUDFIT_WARMUP_STEPS": 2, "CLOUDFIT_SEED": 1}


class ProbeError(Exception):
    """A run that cannot go on; its text becomes the `error` event."""


def active():
    """True when cloudfit started this process (CLOUDFIT_LOCAL_BATCH is set)."""
    return bool(os.environ.get("CLOUDFIT_LOCAL_BATCH"))


class Config:
    """The run cloudfit asked for (defaults when run by hand)."""

    def __init__(self, environ=None):
        env = os.environ if environ is None else environ
        values = {}
        for name, default in DEFAULTS.items():
            text = env.get(name, "")
            if text == "":
                values[name] = default
                continue
            try:
                values[name] = int(text)
            except ValueError:
                raise ProbeError("%s: expected an integer, got %r" % (name, text)) from None
        self.local_batch = values["CLOUDFIT_LOCAL_BATCH"]
        self.micro_batches = values["CLOUDFIT_MICRO_BATCHES"]
        self.steps = values["CLOUDFIT_STEPS"]
        self.warmup_steps = values["CLOUDFIT_WARMUP_STEPS"]
        self.seed = values["CLOUDFIT_SEED"]
        if self.local_batch < 1 or self.micro_batches < 1 or self.steps < 0 or self.warmup_steps < 0:
            raise ProbeError("CLOUDFIT_LOCAL_BATCH and CLOUDFIT_MICRO_BATCHES must be ≥ 1, CLOUDFIT_STEPS and "
                             "CLOUDFIT_WARMUP_STEPS ≥ 0 (got %d, %d, %d, %d)" % (
                                 self.local_batch, self.micro_batches, self.steps, self.warmup_steps))


def _normal(value):
    """A subnormal double (|x| < 2.2e-308, which json.dumps writes as e.g.
    1e-320) as 0.0: cloudfit reads numbers as normal doubles or 0 and
    refuses the line otherwise; lists of them likewise."""
    if isinstance(value, float) and value != 0.0 and abs(value) < sys.float_info.min:
        return 0.0
    if isinstance(value, (list, tuple)):
        return [_normal(v) for v in value]
    return value


class Channel:
    """The protocol's stdout. `speaks` is False on the workers of a
    data-parallel run other than rank 0: they stay silent. close() gives
    file descriptor 1 back."""

    def __init__(self, speaks=True):
        sys.stdout.flush()
        sys.stderr.flush()
        self._fd = os.dup(1)
        os.dup2(2, 1)
        self._out = os.fdopen(os.dup(self._fd), "w", buffering=1) if speaks else None

    def emit(self, event, **fields):
        if self._out is None:
            return
        fields = {"event": event, **{k: _normal(v) for k, v in fields.items()}}
        try:
            line = json.dumps(fields, allow_nan=False)
        except ValueError:
            line = json.dumps({"event": "error", "message": "cloudfit_probe: a non-finite number in the %r event "
                               "(%s)" % (event, ", ".join(sorted(fields)))})
        self._out.write(line + "\n")
        self._out.flush()

    def error(self, message):
        self.emit("error", message=str(message))

    def close(self):
        if self._out is not None:
            self._out.close()
            self._out = None
        if self._fd is not None:
            sys.stdout.flush()
            os.dup2(self._fd, 1)
            os.close(self._fd)
            self._fd = None


def log(message):
    """A line for the user on standard error (cloudfit keeps the last 2 KiB)."""
    sys.stderr.write("cloudfit_probe: %s\n" % message)
    sys.stderr.flush()
