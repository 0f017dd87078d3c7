"""cloudfit_probe.run(): the user's model, loss and data through the exec
probe protocol (docs/exec-protocol.md, docs/profiler.md).

One step = k micro-batches of CLOUDFIT_LOCAL_BATCH samples, gradients
summed, divided by k, one optimizer update. With k > 1 (cloudfit's noise
run) the step also reports |g_i|², the squared norm of each micro-batch's
gradient, and |mean g|², without holding k gradient copies: .grad keeps
the running sum and one snapshot of it, so g_i = .grad after backward i −
.grad before it (one extra copy of the gradients, freed after the step).
Norms are summed in float64, unscaled by the GradScaler's scale (fp16).

fp16: a step whose gradients overflow is what a GradScaler skips while it
lowers its scale; here, in the noise run, the same micro-batches are run
again at the lower scale (at most `max_rescales` times) so every reported
step has finite norms. A non-finite norm that remains (or any without a
scaler) is an `error` event naming the step and micro-batch — never NaN or
Infinity on stdout. Running out of memory is the `oom` event.

Data parallel (torch.distributed initialised, e.g. under torchrun): rank 0
speaks, the others stay silent. Timing runs (k = 1) are ordinary steps
(DistributedDataParallel all-reduces in backward), one micro-batch per
worker, `samples` = W·b. In the noise run micro-batch j runs on worker
j mod W under no_sync(), the gradients are all-reduced once per step, and
`micro_sqnorms` are the workers' own micro-batch norms, gathered: with
k = W, exactly the per-worker norms of the protocol's data-parallel form."""
import contextlib
import math
import time
import traceback

import torch

from . import precision as prec
from .host import cpu_name, memory_gib
from .batches import MicroBatches, to_device
from .protocol import Channel, Config, ProbeError, log


def _is_oom(e):
    if isinstance(e, MemoryError):
        return True
    oom = getattr(torch.cuda, "OutOfMemoryError", None)
    if oom is not None and isinstance(e, oom):
        return True
    return isinstance(e, RuntimeError) and "out of memory" in str(e).lower()


class _Workers:
    def __init__(self):
        dist = torch.distributed
        self.on = dist.is_available() and dist.is_initialized()
        self.rank = dist.get_rank() if self.on else 0
        self.world = dist.get_world_size() if self.on else 1


def _device_event(ch, device, world, precision, memory_format):
    common = dict(gpus=world, precision=precision, memory_format=memory_format)
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        ch.emit("device", name=torch.cuda.get_device_name(device), memory_gib=round(props.total_memory / 2**30, 2),
                type="gpu", **common)
    else:
        ch.emit("device", name="%s (CPU, PyTorch %s, %d threads)" % (
            cpu_name(), torch.__version__.split("+")[0], torch.get_num_threads()), memory_gib=round(memory_gib(), 1),
            type="cpu", **common)


class _Stepper:
    def __init__(self, model, loss_fn, optimizer, precision, device, workers, scaler, max_rescales):
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer
        self.precision, self.device, self.workers = precision, device, workers
        self.scaler, self.max_rescales = scaler, max_rescales
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.ddp = isinstance(model, torch.nn.parallel.DistributedDataParallel)

    def _sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def _loss(self, batch):
        with prec.autocast(self.precision, self.device):
            if isinstance(self.loss_fn, torch.nn.Module):  # a criterion: loss_fn(model(inputs), targets)
                if not isinstance(batch, (list, tuple)) or len(batch) < 2:
                    raise ProbeError("loss_fn is a criterion (%s): each batch must be (inputs, targets); pass "
                                     "loss_fn(model, batch) for other batches" % type(self.loss_fn).__name__)
                return self.loss_fn(self.model(batch[0]), batch[1])
            return self.loss_fn(self.model, batch)

    def _sq_since(self, prev):
        """Σ (.grad − prev)² over the parameters (|.grad|² without prev),
        float64, on the device. prev is overwritten (prev − .grad, in place:
        no temporary the size of a gradient); _snapshot refills it. Each
        tensor's norm is taken in its own precision (float32 gradients:
        a relative error near 1e-7), the sum in float64."""
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        for i, p in enumerate(self.params):
            g = p.grad
            if g is None:
                continue
            if prev is not None and prev[i] is not None:
                g = prev[i].sub_(g)
            total += torch.linalg.vector_norm(g).double() ** 2
        return total

    def _snapshot(self, prev):
        """The running sum of the gradients, kept for the next micro-batch:
        the one extra copy of the gradients this needs."""
        if prev is None:
            return [None if p.grad is None else p.grad.detach().clone() for p in self.params]
        for i, p in enumerate(self.params):
            if p.grad is not None:
                if prev[i] is None:
                    prev[i] = p.grad.detach().clone()
                else:
                    prev[i].copy_(p.grad)
        return prev

    def _all_reduce_grads(self):
        for p in self.params:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
            torch.distributed.all_reduce(p.grad)

    def _gather(self, local_sq, k):
        """The k micro-batch norms in micro-batch order (j on worker j mod W)."""
        w = self.workers.world
        if w == 1:
            return local_sq[:k]
        m = (k + w - 1) // w
        padded = torch.full((m,), float("nan"), dtype=torch.float64, device=local_sq.device)
        padded[:local_sq.numel()] = local_sq
        parts = [torch.empty_like(padded) for _ in range(w)]
        torch.distributed.all_gather(parts, padded)
        return torch.stack([parts[j % w][j // w] for j in range(k)])

    def _attempt(self, micro, k, noise):
        """One try at the step. Returns (micro norms, mean norm, loss) or
        None after an overflow that the GradScaler skipped (try again)."""
        self.optimizer.zero_grad(set_to_none=True)
        local_sq = torch.zeros(len(micro), dtype=torch.float64, device=self.device)
        loss_sum = torch.zeros((), dtype=torch.float64, device=self.device)
        prev = None
        no_sync = self.model.no_sync if self.ddp and noise else contextlib.nullcontext
        for j, batch in enumerate(micro):
            with no_sync():
                loss = self._loss(batch)
                (self.scaler.scale(loss) if self.scaler is not None else loss).backward()
            loss_sum += loss.detach().double()
            if noise:
                with torch.no_grad():
                    local_sq[j] = self._sq_since(prev)
                    if j < len(micro) - 1:
                        prev = self._snapshot(prev)
        del prev
        if not noise:
            if self.workers.world > 1 and not self.ddp:
                with torch.no_grad():
                    self._all_reduce_grads()
                    for p in self.params:
                        p.grad.div_(self.workers.world)
            if self.scaler is not None:
                self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                self.optimizer.step()
            return None, None, loss_sum / len(micro)
        with torch.no_grad():
            if self.workers.world > 1:
                self._all_reduce_grads()
            inv_scale2 = 1.0
            if self.scaler is not None:
                inv_scale2 = 1.0 / float(self.scaler.get_scale()) ** 2
                self.scaler.unscale_(self.optimizer)
            for p in self.params:
                if p.grad is not None:
                    p.grad.div_(k)
            norms = self._gather(local_sq, k) * inv_scale2
            mean = self._sq_since(None)
            values = norms.tolist() + [float(mean)]
        if all(math.isfinite(v) for v in values):
            if self.scaler is not None:
                self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                self.optimizer.step()
            return values[:-1], values[-1], loss_sum / len(micro)
        self.bad = next(i for i, v in enumerate(values) if not math.isfinite(v)), values
        if self.scaler is None:
            return False
        self.scaler.step(self.optimizer)  # skipped: unscale_ saw the overflow
        self.scaler.update()              # and the scale goes down
        return None

    def step(self, step_number, micro, k, noise):
        for attempt in range(self.max_rescales + 1):
            self._sync()
            t0 = time.perf_counter()
            result = self._attempt(micro, k, noise)
            self._sync()
            elapsed = time.perf_counter() - t0
            if result:
                norms, mean, loss = result
                return max(elapsed, 1e-9), norms, mean, float(loss)
            if result is False:
                break
        where, values = self.bad
        what = "the mean gradient's" if where == len(values) - 1 else "micro-batch %d's gradient's" % (where + 1)
        if self.scaler is None:
            why = ("a non-finite gradient: in fp16 use a GradScaler (precision='fp16' brings one) or bf16; else "
                   "the loss diverged (learning rate?)")
        else:
            why = "still after %d loss-scale reductions (scale now %g): the loss itself overflows or diverged" % (
                self.max_rescales, float(self.scaler.get_scale()))
        raise ProbeError("step %d: %s squared norm is %s: %s" % (step_number, what, values[where], why))


def run(model, loss_fn, batches, optimizer=None, precision="auto", *, scaler=None, channels_last=None, device=None,
        max_rescales=30):
    """Profiles `model` for cloudfit: the run described by the CLOUDFIT_*
    environment (defaults when run by hand), reported on stdout as the exec
    protocol's JSON lines. Returns the exit status (0, or 1 after an error
    event): `sys.exit(cloudfit_probe.run(...))`.

    model      an nn.Module on its device (DistributedDataParallel too)
    loss_fn    a criterion module (nn.CrossEntropyLoss(): loss_fn(model(x), y)
               for batches (x, y)), or any function loss_fn(model, batch)
               returning the mean loss of the batch
    batches    a map-style Dataset, a DataLoader over one, a function
               batches(batch_size) returning an iterable of batches, or an
               iterable of batches of CLOUDFIT_LOCAL_BATCH samples
    optimizer  your optimizer; None: the weights are not changed (an SGD
               update with learning rate 0 keeps the step's shape)
    precision  "fp32", "tf32", "fp16" (autocast + GradScaler), "bf16"
               (autocast), or "auto" (bf16 on a GPU that has it, else fp16;
               fp32 on a CPU)
    scaler     your GradScaler for fp16 (default: a new one)
    channels_last  4-D inputs channels-last (5-D ones channels_last_3d for a
               model stored so); None: when the model's convolution
               weights are (model.to(memory_format=...))
    device     where batches go; default: the model's parameters' device
    """
    workers = _Workers()
    ch = Channel(speaks=workers.rank == 0)
    try:
        return _run(ch, workers, model, loss_fn, batches, optimizer, precision, scaler, channels_last, device,
                    max_rescales)
    except ProbeError as e:
        log(str(e))
        ch.error(e)
        return 1
    except Exception as e:  # noqa: BLE001 — every failure must reach cloudfit as an event
        if _is_oom(e):
            log("out of memory: %s" % str(e).splitlines()[0] if str(e) else "out of memory")
            ch.emit("oom")
            return 0
        traceback.print_exc()
        ch.error("%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
        return 1
    finally:
        ch.close()


def _run(ch, workers, model, loss_fn, batches, optimizer, precision, scaler, channels_last, device, max_rescales):
    cfg = Config()
    if device is None:
        device = next((p.device for p in model.parameters()), torch.device("cpu"))
    device = torch.device(device)
    precision = prec.resolve(precision, device)
    inner = model.module if isinstance(model, torch.nn.parallel.DistributedDataParallel) else model
    # What the device event says the run trained in: a Conv3d model stored
    # channels_last_3d was reported "contiguous", and recommend then
    # compared that with a spec's model.memory_format channels_last_3d.
    stored = prec.model_memory_format(inner)
    if channels_last is None:
        memory_format = stored
    elif channels_last:
        memory_format = "channels_last_3d" if stored == "channels_last_3d" else "channels_last"
    else:
        memory_format = "contiguous"
    if precision == "fp16" and scaler is None:
        scaler = prec.grad_scaler()
    if optimizer is None:
        optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.0)
        log("no optimizer given: the weights stay as they are (each step ends with an SGD update at lr 0)")
    torch.manual_seed(cfg.seed)
    _device_event(ch, device, workers.world, precision, memory_format)
    k = cfg.micro_batches
    noise = k > 1
    local = len(range(workers.rank, k, workers.world)) if noise else 1
    log("PyTorch %s on %s, %s, %s; %d micro-batch(es) of %d per step%s, %d warm-up + %d steps" % (
        torch.__version__.split("+")[0], device, precision, memory_format, k if noise else workers.world,
        cfg.local_batch, " over %d workers" % workers.world if workers.world > 1 else "", cfg.warmup_steps,
        cfg.steps))
    stream = MicroBatches(batches, cfg.local_batch, cfg.seed, workers.rank, workers.world)
    stepper = _Stepper(model, loss_fn, optimizer, precision, device, workers, scaler, max_rescales)
    model.train()
    for step in range(1, cfg.warmup_steps + cfg.steps + 1):
        micro = [to_device(stream.next(), device, memory_format) for _ in range(local)]
        time_s, norms, mean, loss = stepper.step(step, micro, k, noise)
        event = dict(step=step, time_s=time_s, samples=cfg.local_batch * (k if noise else workers.world))
        if math.isfinite(loss):
            event["loss"] = loss
        if noise:
            event.update(micro_sqnorms=norms, mean_sqnorm=mean)
        ch.emit("step", **event)
    ch.emit("done")
    return 0
