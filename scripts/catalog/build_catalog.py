#!/usr/bin/python3
"""Builds data/gpu_vms.csv, the embedded VM catalog, from the project's
shared catalog folder (a dev-time step: cloudfit never reads that folder at
run time or in its tests; commit this script's output).

    scripts/catalog/build_catalog.py [SHARED_CATALOG_DIR] [DATA_DIR]

defaults: /work/shared/data/catalog and the data/ folder of this tree.

Inputs (see SHARED_CATALOG_DIR/README.md for their sources):
  gpu_vms.csv           priced offers (AWS us-east-1, GCP, Azure, Lambda)
  gcp_availability.csv  where each GCP machine / attached GPU can be launched
  aws_gpu_regions.csv   every AWS GPU type in every region and zone, with the
                        region's on-demand price and the observed spot price
                        per zone
  aws_spot_advisor.csv, gpus.csv   copied unchanged

Rules (docs/catalog.md, "How the embedded catalog is built"):
  * An offer exists only where it can be launched. GCP: a machine type
    (a2-/a3-/a4-/g2-/g4-) needs a `gcp_availability.csv` instance row for its
    region; an N1 host with attached GPUs needs the accelerator row (GPU,
    count, region). AWS: the (type, region) must be in `aws_gpu_regions.csv`
    with at least one regular availability zone (local zones such as
    usw2-lax1-az1 need an opt-in and are a different place; they are not
    counted). Zones are carried in the `zones` column.
  * GCP a3-highgpu-1g/2g/4g can only be had as spot or flex-start: their
    on-demand price is dropped; the spot price stays.
  * AWS: every (type, region) of `aws_gpu_regions.csv` whose type the
    catalog has a shape for (GPU model and memory, vCPUs, RAM, network from
    the us-east-1 rows). On-demand: us-east-1 from Karpenter (2026-07-20,
    equal to the SkyPilot value for every type), other regions SkyPilot's
    regional price. Spot: the lowest OBSERVED spot price over the regular
    zones; a zone whose "spot" price is not below on-demand had no discount
    on offer and is not a spot price. Types without a row there (g3, p2:
    retired; g7: not in that snapshot) are dropped.
  * Azure: fractional-GPU sizes (NC8ads/NC16ads_A10_v4 = 1/3 and 2/3 of an
    A10) are dropped; a spot price equal to (or above) on-demand is not a
    spot price and is dropped.
  * Every price gets a kind (listed | observed) and a date (YYYY-MM-DD, or
    empty when the source does not record one).
A summary of what was kept and dropped goes to data/catalog_build_report.txt.
"""
import collections
import csv
import io
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/catalog"
DATA = sys.argv[2] if len(sys.argv) > 2 else os.path.normpath(os.path.join(HERE, "..", "..", "data"))

COLUMNS = ["cloud", "region", "zones", "instance_type", "gpu_model", "gpu_count", "gpu_memory_gib", "vcpus",
           "memory_gib", "network_gbps", "price_ondemand_usd_per_hour", "ondemand_kind", "ondemand_date",
           "price_spot_usd_per_hour", "spot_kind", "spot_date", "source"]

# Dates of the priced sources (shared catalog README, "Sources and snapshot dates").
DATE_BY_SOURCE_PREFIX = [
    ("aws:karpenter-provider-aws@1d92708", "2026-07-20"),
    ("gcp:Cyclenerd/google-cloud-pricing-cost-calculator", "2026-07-30"),
    ("gcp:anycloud-sh/catalog@62ff0a9", "2026-05-20"),
    ("azure:anycloud-sh/catalog@62ff0a9", "2026-05-20"),
    ("lambda:anycloud-sh/catalog@62ff0a9", "2026-05-20"),
]
SKYPILOT_AWS = "skypilot-catalog v8/aws@00148f2"
SKYPILOT_GCP = "skypilot-catalog v8/gcp@006059e"
SPOT_OR_FLEX_ONLY = {"a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"}
AZURE_FRACTIONAL = {"Standard_NC8ads_A10_v4": "1/3 of an A10", "Standard_NC16ads_A10_v4": "2/3 of an A10"}


def read(name):
    with open(os.path.join(SRC, name), newline="") as f:
        return list(csv.DictReader(f))


def price_date(source):
    for prefix, date in DATE_BY_SOURCE_PREFIX:
        if source.startswith(prefix):
            return date
    raise SystemExit("no date known for source %r" % source)


def num(text):
    return float(text) if text not in ("", None) else None


def fmt(x):
    """Prices as the sources wrote them, without float noise."""
    return "" if x is None else ("%.6f" % x).rstrip("0").rstrip(".")


def regular_zone(zone):
    # use1-az1 is a zone of the region; usw2-lax1-az1 is a local zone.
    return re.fullmatch(r"[a-z]+[0-9]+-az[0-9]+", zone) is not None


report = []


def note(line):
    report.append(line)


def spot_ok(od, spot):
    return spot is not None and spot > 0 and (od is None or spot < od)


def gcp_rows(vms, avail):
    inst = {(r["name"], r["region"]): r["zones"] for r in avail if r["kind"] == "instance"}
    acc = {(r["name"], r["gpu_count"], r["region"]): r["zones"] for r in avail if r["kind"] == "accelerator"}
    out, kept, dropped = [], collections.Counter(), collections.Counter()
    for r in vms:
        t = r["instance_type"]
        family = "n1+" + r["gpu_model"] if t.startswith("n1-") else t.rsplit("-", 1)[0]
        key = (r["gpu_model"], r["gpu_count"], r["region"]) if t.startswith("n1-") else (t, r["region"])
        zones = (acc if t.startswith("n1-") else inst).get(key)
        if zones is None:
            dropped[family] += 1
            continue
        date = price_date(r["source"])
        od, spot = num(r["price_ondemand_usd_per_hour"]), num(r["price_spot_usd_per_hour"])
        if t in SPOT_OR_FLEX_ONLY:
            od = None
        if not spot_ok(od, spot):
            spot = None
        if od is None and spot is None:
            dropped[family + " (no launchable price)"] += 1
            continue
        kept[family] += 1
        out.append(dict(r, zones=zones, price_ondemand_usd_per_hour=fmt(od), ondemand_kind="listed" if od else "",
                        ondemand_date=date if od else "", price_spot_usd_per_hour=fmt(spot),
                        spot_kind="listed" if spot else "", spot_date=date if spot else "",
                        source=r["source"] + "; zones: " + SKYPILOT_GCP))
    note("GCP: %d offers kept, %d dropped (not launchable in that region per gcp_availability.csv)"
         % (sum(kept.values()), sum(dropped.values())))
    for fam in sorted(set(kept) | set(dropped)):
        note("  %-28s kept %4d  dropped %4d" % (fam, kept[fam], dropped[fam]))
    note("  a3-highgpu-1g/2g/4g: spot or flex-start only, on-demand price dropped (%d rows)"
         % sum(1 for r in out if r["instance_type"] in SPOT_OR_FLEX_ONLY))
    return out


def aws_rows(vms, regions):
    shapes = {r["instance_type"]: r for r in vms}
    by_key = collections.defaultdict(list)
    for r in regions:
        by_key[(r["instance_type"], r["region"])].append(r)
    out = []
    missing_types = sorted(set(shapes) - {t for t, _ in by_key})
    note("AWS: types with no row in aws_gpu_regions.csv, dropped: %s" % ", ".join(missing_types))
    unknown = sorted({t for t, _ in by_key} - set(shapes))
    note("AWS: types in aws_gpu_regions.csv without a catalog shape (left out, see catalog caveats): %s"
         % ", ".join(unknown))
    observed = estimated_later = no_discount = local_only = 0
    for (t, region), zrows in sorted(by_key.items()):
        if t not in shapes:
            continue
        shape = shapes[t]
        regular = [z for z in zrows if regular_zone(z["zone"])]
        if not regular:
            local_only += 1
            continue
        ods = {num(z["price_ondemand_usd_per_hour"]) for z in regular} - {None}
        if len(ods) > 1:
            raise SystemExit("%s %s: several on-demand prices %s" % (t, region, ods))
        if region == "us-east-1":
            od = num(shape["price_ondemand_usd_per_hour"])
            od_source = shape["source"]
            od_date = "2026-07-20"
            if ods and abs(ods.pop() - od) > 1e-6:
                raise SystemExit("%s us-east-1: Karpenter %s differs from SkyPilot" % (t, od))
        else:
            od = ods.pop() if ods else None
            od_source = "aws:%s (on-demand; date not recorded); shape: karpenter-provider-aws@1d92708 %s" % (
                SKYPILOT_AWS, shape["source"].split(" + ", 1)[1])
            od_date = ""
        spots = [num(z["price_spot_usd_per_hour"]) for z in regular]
        discounted = [s for s in spots if spot_ok(od, s)]
        no_discount += sum(1 for s in spots if s is not None and not spot_ok(od, s))
        spot = min(discounted) if discounted else None
        if spot is not None:
            observed += 1
        else:
            estimated_later += 1
        if od is None and spot is None:
            continue
        zones = " ".join(sorted(z["zone"] for z in regular))
        out.append(dict(shape, region=region, zones=zones, price_ondemand_usd_per_hour=fmt(od),
                        ondemand_kind="listed" if od else "", ondemand_date=od_date if od else "",
                        price_spot_usd_per_hour=fmt(spot), spot_kind="observed" if spot else "", spot_date="",
                        source=od_source + "; zones, observed spot: %s" % SKYPILOT_AWS))
    note("AWS: %d offers in %d regions; observed spot on %d, none on %d (the loader estimates those from the "
         "Spot Advisor where it lists them); %d zone prices at or above on-demand were not counted as spot; "
         "%d (type, region) pairs only in local zones left out"
         % (len(out), len({r["region"] for r in out}), observed, estimated_later, no_discount, local_only))
    return out


def azure_rows(vms):
    out = []
    dropped = collections.Counter()
    spot_dropped = collections.Counter()
    for r in vms:
        if r["instance_type"] in AZURE_FRACTIONAL:
            dropped[r["instance_type"]] += 1
            continue
        od, spot = num(r["price_ondemand_usd_per_hour"]), num(r["price_spot_usd_per_hour"])
        if spot is not None and not spot_ok(od, spot):
            spot_dropped[r["instance_type"]] += 1
            spot = None
        date = price_date(r["source"])
        out.append(dict(r, zones="", price_ondemand_usd_per_hour=fmt(od), ondemand_kind="listed",
                        ondemand_date=date, price_spot_usd_per_hour=fmt(spot), spot_kind="listed" if spot else "",
                        spot_date=date if spot else ""))
    for t, n in sorted(dropped.items()):
        note("Azure: %s is %s, not a whole GPU: %d rows dropped" % (t, AZURE_FRACTIONAL[t], n))
    for t, n in sorted(spot_dropped.items()):
        note("Azure: %s: spot price not below on-demand in %d regions: spot dropped (no discount is not a spot "
             "price)" % (t, n))
    return out


def plain_rows(vms):
    out = []
    for r in vms:
        od, spot = num(r["price_ondemand_usd_per_hour"]), num(r["price_spot_usd_per_hour"])
        date = price_date(r["source"])
        out.append(dict(r, zones="", price_ondemand_usd_per_hour=fmt(od), ondemand_kind="listed", ondemand_date=date,
                        price_spot_usd_per_hour=fmt(spot), spot_kind="listed" if spot else "",
                        spot_date=date if spot else ""))
    return out


def main():
    vms = read("gpu_vms.csv")
    by_cloud = collections.defaultdict(list)
    for r in vms:
        by_cloud[r["cloud"]].append(r)
    rows = (aws_rows(by_cloud["aws"], read("aws_gpu_regions.csv")) + gcp_rows(by_cloud["gcp"], read("gcp_availability.csv"))
            + azure_rows(by_cloud["azure"]) + plain_rows(by_cloud["lambda"]))
    keys = set()
    for r in rows:
        k = (r["cloud"], r["region"], r["instance_type"], r["gpu_model"], r["gpu_count"])
        if k in keys:
            raise SystemExit("duplicate key %s" % (k,))
        keys.add(k)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    with open(os.path.join(DATA, "gpu_vms.csv"), "w", newline="") as f:
        f.write(buf.getvalue())
    # The availability tables travel with the catalog (byte copies) so the tests can check every embedded offer
    # against them without reading the shared folder.
    for name in ("gcp_availability.csv", "aws_gpu_regions.csv", "aws_spot_advisor.csv", "gpus.csv"):
        shutil.copyfile(os.path.join(SRC, name), os.path.join(DATA, name))
    # GPUs cloudfit adds to the shared table (data/gpus_added.csv, each with its source): appended unless the
    # shared table has them by now.
    with open(os.path.join(DATA, "gpus.csv")) as f:
        have = {r["gpu_model"] for r in csv.DictReader(f)}
    with open(os.path.join(DATA, "gpus_added.csv")) as f:
        added = [line for line in f.read().splitlines()[1:] if line and line.split(",")[0] not in have]
    if added:
        with open(os.path.join(DATA, "gpus.csv"), "a") as f:
            f.write("\n".join(added) + "\n")
    counts = collections.Counter(r["cloud"] for r in rows)
    note("gpu_vms.csv: %d offers (%s)" % (len(rows), ", ".join("%s %d" % (c, counts[c]) for c in
                                                               ("aws", "gcp", "azure", "lambda"))))
    with open(os.path.join(DATA, "catalog_build_report.txt"), "w") as f:
        f.write("# written by scripts/catalog/build_catalog.py; inputs: the shared catalog folder\n")
        f.write("\n".join(report) + "\n")
    print("\n".join(report))


if __name__ == "__main__":
    main()
