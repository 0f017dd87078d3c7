#!/usr/bin/python3
"""Checks that `cloudfit recommend --spot allow` picks a (machine, region) that
can be launched, for every example spec, against the availability tables.

    scripts/catalog/check_launchable.py CLOUDFIT_BINARY [AVAILABILITY_DIR]

AVAILABILITY_DIR holds gcp_availability.csv and aws_gpu_regions.csv: the
tree's data/ by default (what the test suite uses), or the shared catalog
folder they were copied from (/work/shared/data/catalog) for an independent
check. GCP: the chosen machine type (or, for N1 hosts, the attached GPU and
count) must have a row for the region; AWS: the type must be offered in a
regular zone of the region. Azure and Lambda have no availability table and
are reported as not checked. Prints one line per example; exit 1 when a
choice is not launchable."""
import csv
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", ".."))


def load(directory):
    with open(os.path.join(directory, "gcp_availability.csv"), newline="") as f:
        gcp = list(csv.DictReader(f))
    with open(os.path.join(directory, "aws_gpu_regions.csv"), newline="") as f:
        aws = list(csv.DictReader(f))
    return gcp, aws


def launchable(chosen, gcp, aws):
    """(True/False/None, why): None = no availability table for the cloud."""
    cloud, region, itype = chosen["cloud"], chosen["region"], chosen["instance_type"]
    if cloud == "gcp":
        if itype.startswith("n1-"):
            hit = [r for r in gcp if r["kind"] == "accelerator" and r["name"] == chosen["gpu"]
                   and r["gpu_count"] == str(chosen["gpus_per_node"]) and r["region"] == region]
        else:
            hit = [r for r in gcp if r["kind"] == "instance" and r["name"] == itype and r["region"] == region]
        return (True, "zones " + hit[0]["zones"]) if hit else (False, "not in gcp_availability.csv")
    if cloud == "aws":
        zones = [r["zone"] for r in aws if r["instance_type"] == itype and r["region"] == region
                 and re.fullmatch(r"[a-z]+[0-9]+-az[0-9]+", r["zone"])]
        return (True, "zones " + " ".join(sorted(zones))) if zones else (False, "not in aws_gpu_regions.csv")
    return None, "no availability table for %s" % cloud


def main():
    binary = sys.argv[1]
    directory = sys.argv[2] if len(sys.argv) > 2 else os.path.join(SRC, "data")
    gcp, aws = load(directory)
    home = tempfile.mkdtemp(prefix="cloudfit-launchable-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLOUDFIT_")}
    env.update(HOME=home, XDG_DATA_HOME=os.path.join(home, "xdg"))
    bad = 0
    for spec in sorted(glob.glob(os.path.join(SRC, "examples", "*.json"))):
        p = subprocess.run([binary, "recommend", "--no-history", "--spot", "allow", "-f", "json", spec],
                           capture_output=True, text=True, env=env)
        if p.returncode != 0:
            print("%-28s recommend failed (%d): %s" % (os.path.basename(spec), p.returncode, p.stderr.strip()))
            bad += 1
            continue
        chosen = json.loads(p.stdout)["chosen"]
        ok, why = launchable(chosen, gcp, aws)
        bad += ok is False
        print("%-28s %s/%s %s%s: %s (%s)" % (os.path.basename(spec), chosen["cloud"], chosen["region"],
                                            chosen["instance_type"], " spot" if chosen["spot"] else "",
                                            {True: "launchable", False: "NOT LAUNCHABLE", None: "not checked"}[ok],
                                            why))
    print("availability tables from %s" % directory)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
