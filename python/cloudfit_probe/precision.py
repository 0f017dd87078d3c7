"""How a step computes: the precision (fp32, tf32, fp16, bf16; "auto") and
the memory format (contiguous, channels_last, channels_last_3d), resolved once per run and
reported in the `device` event. Works with PyTorch 1.12 and 2.x."""
import contextlib

import torch

from .protocol import ProbeError

PRECISIONS = ("auto", "fp32", "tf32", "fp16", "bf16")


def _set_tf32(allowed):
    if torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = allowed
        torch.backends.cudnn.allow_tf32 = allowed


def _bf16_on_cuda():
    check = getattr(torch.cuda, "is_bf16_supported", None)
    return bool(check and check())


def resolve(precision, device):
    """The precision a run uses on `device` ("auto": bf16 where the GPU has
    it, else fp16 with a GradScaler; fp32 on a CPU). Sets the TF32 switches
    process-wide: PyTorch's cuDNN allows TF32 by default, so "fp32" turns it
    off to be what it says."""
    if precision not in PRECISIONS:
        raise ProbeError("precision %r: expected one of %s" % (precision, ", ".join(PRECISIONS)))
    cuda = device.type == "cuda"
    if precision == "auto":
        precision = ("bf16" if _bf16_on_cuda() else "fp16") if cuda else "fp32"
    if precision in ("tf32", "fp16") and not cuda:
        raise ProbeError("precision %s needs a CUDA device (this run is on %s); use fp32 or bf16" % (precision,
                                                                                                   device.type))
    if precision == "bf16" and cuda and not _bf16_on_cuda():
        raise ProbeError("precision bf16: this GPU (%s) has no bfloat16 support; use fp16 (with a GradScaler) or "
                         "fp32" % torch.cuda.get_device_name(device))
    if cuda:
        _set_tf32(precision == "tf32")
    return precision


def autocast(precision, device):
    """The forward pass's context: autocast to fp16/bf16, or nothing."""
    if precision not in ("fp16", "bf16"):
        return contextlib.nullcontext()
    dtype = torch.float16 if precision == "fp16" else torch.bfloat16
    return torch.autocast(device_type=device.type, dtype=dtype)


def grad_scaler():
    """A fresh CUDA GradScaler (torch.amp in 2.3+, torch.cuda.amp before)."""
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, "GradScaler"):
        try:
            return amp.GradScaler("cuda")
        except TypeError:
            pass
    return torch.cuda.amp.GradScaler()


def model_memory_format(model):
    """How the model's convolution weights are stored: "channels_last" when
    a 4-D one is (model.to(memory_format=torch.channels_last)),
    "channels_last_3d" when a 5-D one is (a Conv3d model moved with
    torch.channels_last_3d), else "contiguous"."""
    for p in model.parameters():
        if p.is_contiguous():
            continue
        if p.dim() == 4 and p.is_contiguous(memory_format=torch.channels_last):
            return "channels_last"
        if p.dim() == 5 and p.is_contiguous(memory_format=torch.channels_last_3d):
            return "channels_last_3d"
    return "contiguous"
