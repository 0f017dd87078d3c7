"""python3 -m cloudfit_probe.vision --model resnet50 [--image-size 224]
[--channels-last] [--precision bf16]: a torchvision classification model
trained on SYNTHETIC data through the exec probe protocol — a quick look at
a model's step times, memory ceiling and a noise scale before wiring the
helper into your own training loop. The images are Gaussian noise made on
the device; each label is the class a fixed random linear "teacher" picks
from the image's 4×4 average-pooled colours, so there is something to
learn and the gradient has a signal. Its noise scale is this synthetic
task's, not your data's: use the command for a first throughput profile,
and measure B_noise on real data with cloudfit_probe.run() in your script.
Needs torchvision."""
import argparse
import sys

from .protocol import Channel, log


def _parse(argv):
    p = argparse.ArgumentParser(prog="python3 -m cloudfit_probe.vision", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="resnet50", help="a torchvision.models classifier (resnet18, resnet50, "
                   "vit_b_16, ...); default resnet50")
    p.add_argument("--image-size", type=int, default=224, help="square input side in pixels (default 224)")
    p.add_argument("--num-classes", type=int, default=1000, help="classifier outputs (default 1000)")
    p.add_argument("--channels-last", action="store_true", help="model and inputs in channels-last memory format")
    p.add_argument("--precision", default="auto", choices=["auto", "fp32", "tf32", "fp16", "bf16"],
                   help="default auto: bf16 on a GPU that has it, else fp16; fp32 on a CPU")
    p.add_argument("--device", default=None, help="cuda, cuda:1 or cpu (default: cuda when there is one)")
    p.add_argument("--lr", type=float, default=0.1, help="SGD learning rate (momentum 0.9; default 0.1)")
    p.add_argument("--threads", type=int, default=0, help="CPU threads (0 = PyTorch's default)")
    return p.parse_args(argv)


class SyntheticImages:
    """Batches of `batch_size` images and teacher labels, made on the device
    from a seeded generator (data generation is not timed)."""

    def __init__(self, torch, device, image_size, classes, seed):
        self.torch, self.device, self.size, self.classes = torch, device, image_size, classes
        self.generator = torch.Generator(device=device)
        self.generator.manual_seed(seed)
        self.teacher = torch.randn(3 * 4 * 4, classes, device=device, generator=self.generator)

    def __call__(self, batch_size):
        torch = self.torch
        while True:
            x = torch.randn(batch_size, 3, self.size, self.size, device=self.device, generator=self.generator)
            pooled = torch.nn.functional.adaptive_avg_pool2d(x, 4).flatten(1)
            yield x, (pooled @ self.teacher).argmax(dim=1)


def main(argv=None):
    args = _parse(sys.argv[1:] if argv is None else argv)
    try:
        import torch
        import torchvision
    except ImportError as e:
        ch = Channel()
        ch.error("cloudfit_probe.vision needs PyTorch and torchvision (%s)" % e)
        ch.close()
        return 3
    from . import run
    from .protocol import Config, ProbeError

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    build = getattr(torchvision.models, args.model, None)
    if build is None or not callable(build):
        ch = Channel()
        ch.error("torchvision %s has no model %r" % (torchvision.__version__, args.model))
        ch.close()
        return 2
    try:
        seed = Config().seed
    except ProbeError as e:
        ch = Channel()
        ch.error(e)
        ch.close()
        return 2
    torch.manual_seed(seed)  # the same initial weights in every run of a profile
    model = build(num_classes=args.num_classes).to(device)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
    log("%s (torchvision %s) on SYNTHETIC %dx%d images (noise, teacher labels), %d classes" % (
        args.model, torchvision.__version__, args.image_size, args.image_size, args.num_classes))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    data = SyntheticImages(torch, device, args.image_size, args.num_classes, seed + 1)
    return run(model, torch.nn.CrossEntropyLoss(), data, optimizer, precision=args.precision,
               channels_last=args.channels_last)


if __name__ == "__main__":
    sys.exit(main())
