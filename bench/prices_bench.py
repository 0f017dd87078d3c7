#!/usr/bin/python3
"""Wall time of `cloudfit prices update` against the local fixture server
(4 clouds: AWS offer files and spot feed, Azure listings for every catalog
region, GCP services and SKU pages, Lambda's instance types) and the extra cost of
reading the newest snapshot in `recommend` instead of the embedded catalog.
Fixture-sized answers: this measures cloudfit's own overhead (HTTP on
loopback, parsing, merging, validation, the SQLite transaction), not the
public APIs, which could not be reached from this machine.
Usage: bench/prices_bench.py BUILD_DIR [RUNS]"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "pricing"))
from fixture_server import FixtureServer  # noqa: E402

build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 15
binary = os.path.join(build, "cli", "cloudfit")
spec = os.path.join(HERE, "latency-spec.json")
tmp = tempfile.mkdtemp(prefix="cloudfit-bench-")


def timed(args, env):
    t0 = time.perf_counter()
    subprocess.run([binary, *args], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t0) * 1000


def median_ms(args, env):
    timed(args, env)
    return statistics.median(timed(args, env) for _ in range(runs))


with FixtureServer() as server:
    env = dict(os.environ, HOME=tmp, **server.env())
    db = os.path.join(tmp, "bench.db")
    update = median_ms(["prices", "update", "-q", "--db", db], env)
    requests = len(server.log) // (runs + 1)
snap = median_ms(["recommend", "--no-history", "-q", "--db", db, spec], env)
embedded = median_ms(["recommend", "--no-history", "-q", "--db", os.path.join(tmp, "none.db"), spec], env)
print(f"prices update, fixtures on 127.0.0.1, {requests} requests per update: median {update:.1f} ms ({runs} runs)")
print(f"recommend with the newest snapshot: median {snap:.1f} ms; with the embedded catalog: median {embedded:.1f} ms")
