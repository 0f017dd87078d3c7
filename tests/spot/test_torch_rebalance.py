#!/usr/bin/python3
"""The PyTorch example of dynamic batching (examples/elastic/torch_rebalance.py)
reaches balance: two CPU worker processes, the second 3× slower per sample,
driven by `cloudfit rebalance`. Skipped (exit 77, with a message) where
python3-torch is not installed. Usage: test_torch_rebalance.py CLOUDFIT_BINARY SOURCE_DIR"""
import json
import os
import subprocess
import sys

BIN, SRC = sys.argv[1], sys.argv[2]

try:
    import torch  # noqa: F401
except ImportError:
    print("SKIPPED: python3-torch is not installed (apt-get install python3-torch): the PyTorch example of "
          "`cloudfit rebalance` was not run")
    sys.exit(77)

p = subprocess.run([sys.executable, os.path.join(SRC, "examples", "elastic", "torch_rebalance.py"), "--cloudfit", BIN],
                   capture_output=True, text=True, timeout=540)
print(p.stdout[-3000:], p.stderr[-2000:])
summary = json.loads(p.stdout.strip().splitlines()[-1])
assert summary["summary"] and summary["first_spread"] > 0.5, summary   # it started unbalanced (≥ 1.5×)
assert summary["balanced"] and p.returncode == 0, summary              # and ended balanced (within --tolerance)
print("1 passed, 0 failed")
