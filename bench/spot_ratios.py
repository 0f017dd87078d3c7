#!/usr/bin/python3
"""The gain rule's statistical progress per dollar over the fixed rule's, `cloudfit simulate` on every shipped spot
trace (examples/spot-traces/index.csv) for the ResNet-50 plan, by trace size (1, 4 and 16 requested VMs), hold and
shrink together; and the sentence of docs/spot.md that quotes them, between the markers
<!-- spot-ratios:begin --> and <!-- spot-ratios:end -->.

Usage: bench/spot_ratios.py BUILD_DIR            print per trace and the summary (BUILD_DIR or the cloudfit binary)
       bench/spot_ratios.py BUILD_DIR --write    also rewrite the docs sentence
       bench/spot_ratios.py BUILD_DIR --check    exit 1 when the docs sentence is not what the build gives
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
DOC = os.path.join(SRC, "docs", "spot.md")
BEGIN, END = "<!-- spot-ratios:begin -->", "<!-- spot-ratios:end -->"
SIZES = ((1, "the single-VM traces"), (4, "the 4-node ones"), (16, "the 16-node ones"))


def clean_env(home):
    """The environment of a user with no history and no configuration: the default history (a profile or a
    recorded run stored there moves the plan) and a config file would otherwise decide the figures — this check
    failed after a session's own runs had filled ~/.local/share/cloudfit/history.db."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLOUDFIT_")}
    env.update(HOME=home, XDG_DATA_HOME=os.path.join(home, "data"), XDG_CONFIG_HOME=os.path.join(home, "config"))
    return env


def ratios(binary):
    """{nodes requested: [gain/fixed per (trace, batch policy)]}, printing each trace."""
    with tempfile.TemporaryDirectory(prefix="cloudfit-spot-ratios-") as home:
        return ratios_in(binary, clean_env(home))


def ratios_in(binary, env):
    out = {}
    with open(os.path.join(SRC, "examples", "spot-traces", "index.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        path = os.path.join(SRC, "examples", "spot-traces", row["file"])
        p = subprocess.run([binary, "simulate", os.path.join(SRC, "examples", "resnet50-imagenet.json"), "--trace", path,
                            "-f", "json", "--max-catalog-age-days", "100000"], capture_output=True, text=True, env=env)
        if p.returncode != 0:
            sys.exit(f"spot_ratios: simulate {row['file']} failed: {p.stderr.strip()}")
        r = {(x["batch"], x["rule"]): x["progress_per_usd"] for x in json.loads(p.stdout)["rules"]}
        cells = []
        for batch in ("hold", "shrink"):
            gain, fixed = r[(batch, "gain")], r[(batch, "fixed")]
            if fixed > 0:
                out.setdefault(int(row["nodes_requested"]), []).append(gain / fixed)
            cells.append(f"{batch} " + ("fixed never ends" if fixed == 0 else f"{gain / fixed:.3f}"))
        print(f"  {row['file']:<55} {'; '.join(cells)}")
    return out


def span(values):
    lo, hi = f"{min(values):.2f}", f"{max(values):.2f}"
    return lo if lo == hi else f"{lo}–{hi}"


def sentence(by_size):
    parts = [f"{span(by_size[n])} on {words}" for n, words in SIZES if n in by_size]
    return ", ".join(parts)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    given = os.path.abspath(sys.argv[1])   # a build directory or the cloudfit binary itself
    binary = given if os.path.isfile(given) else os.path.join(given, "cli", "cloudfit")
    mode = sys.argv[2] if len(sys.argv) > 2 else ""
    text = sentence(ratios(binary))
    print("gain / fixed, M0-samples per dollar:", text)
    if not mode:
        return 0
    with open(DOC, encoding="utf-8") as f:
        doc = f.read()
    if BEGIN not in doc or END not in doc:
        sys.exit(f"spot_ratios: {DOC}: the markers {BEGIN} … {END} are missing")
    head, rest = doc.split(BEGIN, 1)
    now, tail = rest.split(END, 1)
    if mode == "--check":
        if now != text:
            print(f"docs/spot.md says '{now}', the build gives '{text}': run bench/spot_ratios.py BUILD --write")
            return 1
        print("docs/spot.md is up to date")
        return 0
    if mode == "--write":
        tmp = DOC + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(head + BEGIN + text + END + tail)
        os.replace(tmp, DOC)
        print("docs/spot.md rewritten")
        return 0
    sys.exit(f"spot_ratios: unknown mode {mode} (--write or --check)")


if __name__ == "__main__":
    sys.exit(main())
