#!/usr/bin/python3
"""The helper's quick command on a real torchvision model (issue 29):
`python3 -m cloudfit_probe.vision --model resnet18 --image-size 32` through
`cloudfit profile --backend exec`, in fp32 and in bf16 autocast on the CPU:
three batch sizes timed, a finite noise scale, the precision and memory
format stored and shown. Skipped without PyTorch or torchvision.
Usage: test_probe_helper_vision.py CLOUDFIT_BINARY SOURCE_DIR"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from helper_common import PYTHON, main, profile, require, spec_file  # noqa: E402

require("torchvision", "python3-torchvision")


def check(precision, channels_last):
    command = [PYTHON, "-m", "cloudfit_probe.vision", "--model", "resnet18", "--image-size", "32", "--num-classes",
               "10", "--lr", "0.01", "--precision", precision] + (["--channels-last"] if channels_last else [])
    name = "resnet18-" + precision
    spec = spec_file(name, command, 16, batches=(2, 4, 8),
                     model={"parameters": 11181642, "flops_per_sample": 3.3e9})
    rc, out, err = profile(spec, "exec", "--noise-steps", "6", "--noise-micro-batches", "4")
    assert rc == 0, err
    prof = json.loads(out)
    points = [(p["local_batch"], p["step_time_s"]) for p in prof["points"]]
    noise = prof["noise"]
    print(f"  resnet18 32x32 {precision}{' channels_last' if channels_last else ''} on {prof['device']['name']}: "
          f"steps {points}, B_noise {noise.get('b_noise')} ({noise.get('micro_batches')} × {noise.get('local_batch')})")
    assert [b for b, _ in points] == [2, 4, 8] and all(t > 0 for _, t in points), points
    assert math.isfinite(noise.get("b_noise", math.nan)) and noise["b_noise"] > 0, noise
    assert noise["micro_batches"] == 4 and noise["local_batch"] == 4, noise
    assert prof["precision"] == precision, prof
    assert prof["memory_format"] == ("channels_last" if channels_last else "contiguous"), prof
    assert prof["device"]["is_gpu"] is False


def test_resnet18_fp32():
    check("fp32", False)


def test_resnet18_bf16_channels_last():
    check("bf16", True)


if __name__ == "__main__":
    sys.exit(main(globals()))
