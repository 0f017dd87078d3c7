"""cloudfit_probe: profile your own PyTorch model for cloudfit.

    import cloudfit_probe
    if cloudfit_probe.active():   # started by `cloudfit profile --backend exec`
        sys.exit(cloudfit_probe.run(model, loss_fn, train_set, optimizer, precision="bf16"))

run() speaks cloudfit's exec probe protocol (docs/exec-protocol.md): step
times with the device synchronised, per-micro-batch gradient squared norms
for the noise scale (fp32, TF32, fp16 with a GradScaler, bf16; one extra
gradient copy, not k), out-of-memory as `oom`, non-finite norms as an
`error` event, DistributedDataParallel. `python3 -m cloudfit_probe.vision`
profiles a torchvision model on synthetic data. Needs only PyTorch."""
from .protocol import ProbeError, active


def run(model, loss_fn, batches, optimizer=None, precision="auto", **options):
    """Profiles `model` for cloudfit; see cloudfit_probe.probe.run. Imported
    on first use, so `import cloudfit_probe` and active() need no PyTorch."""
    from .probe import run as probe_run
    return probe_run(model, loss_fn, batches, optimizer, precision, **options)


__version__ = "0.1.0"
__all__ = ["run", "active", "ProbeError", "__version__"]
