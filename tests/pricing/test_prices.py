#!/usr/bin/python3
"""End-to-end tests of `cloudfit prices` and `prices update` against a local
stand-in for the pricing APIs (fixture_server.py, 127.0.0.1 only), with
fault injection; the database is checked after every update.
Usage: test_prices.py CLOUDFIT_BINARY SOURCE_DIR"""
import csv
import email.utils
import hashlib
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_server import FixtureServer  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = sys.argv[1], sys.argv[2]
EXAMPLE = os.path.join(SRC, "examples", "resnet50-imagenet.json")
TMP = pyharness.temp_dir(prefix="cloudfit-prices-")
EPOCH = 1795000000  # 2026-11-18
BASE_ENV = {k: v for k, v in os.environ.items() if not k.startswith("CLOUDFIT_")}
BASE_ENV.update(HOME=TMP, XDG_DATA_HOME=os.path.join(TMP, "xdg"), SOURCE_DATE_EPOCH=str(EPOCH))
_n = [0]

# tests/fixtures/pricing/README.md: the prices a correct update must produce
EXPECTED = {
    ("azure", "eastus", "Standard_ND96isr_H100_v5"): (98.32, 18.169536),
    ("azure", "eastus", "Standard_NC24ads_A100_v4"): (3.673, 0.746721),
    ("azure", "eastus", "Standard_NC40ads_H100_v5"): (6.98, 2.192418),
    ("azure", "eastus", "Standard_NC4as_T4_v3"): (0.526, 0.204246),
    ("azure", "eastus", "Standard_ND96amsr_A100_v4"): (32.77, 8.5202),
    ("azure", "eastus", "Standard_NC6s_v3"): (3.06, 0.565488),      # not the non-primary meter's 3.366
    ("azure", "eastus", "Standard_NC48ads_A100_v4"): (7.346, 1.493442),  # "spot" = on-demand kept out
}
EXPECTED_GCP = {  # (instance, gpu, count) in us-central1
    ("n1-highmem-8", "V100", 1): (2.953212, 1.41276),
    ("n1-highmem-8", "T4", 2): (1.173212, 0.50356),
    ("n1-highmem-4", "T4", 1): (0.586606, 0.25178),
    # the list price, not the DWS Defined Duration SKU listed before it (2.353)
    ("a2-highgpu-1g", "A100-40GB", 1): (3.673385, None),  # no A2 spot SKU in the fixture
}
# The AWS spot feed fixture (aws/spot_price_feed.json): linux prices per region.
AWS_SPOT_FEED = {
    "us-east-1": {"g4dn.xlarge": 0.1894, "g5.xlarge": 0.4125, "g6.xlarge": 0.4104, "g6e.xlarge": 0.7816,
                  "p4d.24xlarge": 7.2460, "p5.48xlarge": 26.4192},
    "us-west-2": {"g4dn.xlarge": 0.1894, "g5.xlarge": 0.3722, "g6.xlarge": 0.4265, "g6e.xlarge": 0.9305,
                  "p4d.24xlarge": 10.3201, "p5.48xlarge": 29.7216},
}
AWS_FIXTURE_REGIONS = ("us-east-1", "us-east-2", "us-west-2")  # the offer files make_offer_files.py writes
# illustrative prices on rows that must be filtered out
LEAKS = [102.736, 0.71, 19.664, 516788.0, 3.306, 2.6077, 1.8732, 63.872, 56.6528, 60.544, 57.04, 36.3264,
         1.848362, 0.0384, 51.5, 3.366, 250000.0, 0.096,
         3.94, 3.41]  # Azure NC24ads A100 v4: an older price (effective 2024-04-01) and one effective after the fetch
# The AWS spot feed's Last-Modified (fixture_server.py): the date of its prices
SPOT_FEED_DATE = "2026-11-16"


def gcp_skus():
    """The fixture SKUs' list prices by description (per hour; Local SSD per GiB-month)."""
    out = {}
    for page in (1, 2, 3):
        with open(os.path.join(SRC, "tests", "fixtures", "pricing", "gcp", "compute_skus_page%d.json" % page)) as f:
            for sku in json.load(f)["skus"]:
                up = sku["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"]
                out[sku["description"]] = float(up["units"]) + up["nanos"] / 1e9
    return out


def expected_gcp_accelerators():
    """GCP accelerator-optimized machines in us-central1 priced from the fixture SKUs by the billing rules of
    docs/pricing.md (vCPUs × core + GiB × RAM + GPUs × GPU + bundled Local SSD GiB × rate / 730), written out
    once more: {(type, gpu, count): (on-demand or None, spot or None)}; None = the catalog's price stays."""
    k = gcp_skus()
    ssd, ssd_spot = k["SSD backed Local Storage running in Americas"] / 730, \
        k["SSD backed Local Storage attached to Spot Preemptible VMs running in Americas"] / 730
    a3 = (k["A3 Instance Core running in Americas"], k["A3 Instance Ram running in Americas"])
    a3s = (k["Spot Preemptible A3 Instance Core running in Americas"], k["Spot Preemptible A3 Instance Ram running in Americas"])
    a2 = (k["A2 Instance Core running in Americas"], k["A2 Instance Ram running in Americas"])
    out = {}
    for r in catalog_rows():
        if r["cloud"] != "gcp" or r["region"] != "us-central1":
            continue
        t, n, v, m = r["instance_type"], int(r["gpu_count"]), float(r["vcpus"]), float(r["memory_gib"])
        od = spot = None
        if t.startswith("a3-highgpu-"):
            od = v * a3[0] + m * a3[1] + n * k["Nvidia H100 80GB GPU running in Americas"] + n * 750 * ssd
            spot = v * a3s[0] + m * a3s[1] + n * k["Nvidia H100 80GB GPU attached to Spot Preemptible VMs running in "
                                                   "Americas"] + n * 750 * ssd_spot
        elif t.startswith("a3-ultragpu-"):
            od = v * a3[0] + m * a3[1] + n * k["Nvidia H200 141GB GPU running in Americas"]
        elif t.startswith("a4-highgpu-"):
            od = n * k["Nvidia B200 (1 gpu slice) running in Americas"]
        elif t.startswith("a2-ultragpu-"):
            od = v * a2[0] + m * a2[1] + n * k["Nvidia Tesla A100 80GB GPU running in Americas"] + n * 375 * ssd
        else:
            continue
        if not r["price_ondemand_usd_per_hour"]:
            od = None  # sold as spot or flex-start only: no on-demand price is taken
        out[(t, r["gpu_model"], n)] = (None if od is None else round(od, 6), None if spot is None else round(spot, 6))
    return out


def lambda_api():
    with open(os.path.join(SRC, "tests", "fixtures", "pricing", "lambda", "instance_types.json")) as f:
        return {t: e["instance_type"]["price_cents_per_hour"] / 100 for t, e in json.load(f)["data"].items()}


def catalog_rows():
    with open(os.path.join(SRC, "data", "gpu_vms.csv"), newline="") as f:
        return list(csv.DictReader(f))


def expected_aws(factor=3.0):
    """What the AWS update must produce, from the catalog and the fixtures: every catalog type of the fixture's
    regions re-priced at the offer file's price (the catalog's, make_offer_files.py), spot from the feed when
    it is within the change limit of the previous spot and below on-demand, else the previous spot."""
    out = {}
    for r in catalog_rows():
        if r["cloud"] != "aws" or r["region"] not in AWS_FIXTURE_REGIONS or not r["price_ondemand_usd_per_hour"]:
            continue
        od = float(r["price_ondemand_usd_per_hour"])
        prev = float(r["price_spot_usd_per_hour"]) if r["price_spot_usd_per_hour"] else None
        spot, kind = prev, "observed" if prev else None
        feed = AWS_SPOT_FEED.get(r["region"], {}).get(r["instance_type"])
        if feed is not None and feed < od and (prev is None or prev / factor <= feed <= prev * factor):
            spot, kind = feed, "observed-regional"
        out[("aws", r["region"], r["instance_type"])] = (od, spot, kind)
    return out


def new_db():
    _n[0] += 1
    return os.path.join(TMP, "h%d.db" % _n[0])


def run(*args, env=None, timeout=60):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=env or BASE_ENV, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def env_for(server, **extra):
    e = dict(BASE_ENV)
    e.update(server.env())
    e.update({k: str(v) for k, v in extra.items()})
    return e


def snapshots(db):
    if not os.path.exists(db):  # an update that stored nothing leaves no new database
        return []
    with sqlite3.connect(db) as con:
        return con.execute("SELECT id, sources, row_count, content_hash, vms_csv FROM price_snapshots ORDER BY id").fetchall()


def refreshed(db, snap_id):
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT cloud, region, instance_type, gpu_model, gpu_count, price_ondemand_usd_per_hr,"
                           " price_spot_usd_per_hr FROM price_snapshot_rows WHERE snapshot_id = ?", (snap_id,)).fetchall()
    return rows


def catalog_in_use(db):
    rc, out, err = run("recommend", "--db", db, "--no-history", "-f", "json", EXAMPLE)
    assert rc == 0, err
    return json.loads(out)["catalog"]


def good_update(server, db, *args):
    rc, out, err = run("prices", "update", "--db", db, *args, env=env_for(server))
    assert rc == 0, (out, err)
    return out, err


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


# ---- happy path ---------------------------------------------------------------

def test_update_from_fixtures_gives_exact_prices():
    db = new_db()
    with FixtureServer() as s:
        out, err = good_update(s, db)
        log = list(s.log)
    snaps = snapshots(db)
    assert len(snaps) == 1, snaps
    sid, sources, row_count, content_hash, vms_csv = snaps[0]
    assert sources == "aws,azure,gcp,lambda", sources
    assert row_count == len(catalog_rows()) and content_hash == hashlib.sha256(vms_csv.encode()).hexdigest()
    rows = refreshed(db, sid)
    by_key = {(c, r, t): (od, sp) for c, r, t, g, n, od, sp in rows if c not in ("gcp", "lambda")}
    want = dict(EXPECTED)
    want.update({k: (od, spot) for k, (od, spot, kind) in expected_aws().items()})
    for key, (od, spot) in want.items():
        assert key in by_key, (key, sorted(by_key))
        got_od, got_spot = by_key[key]
        assert close(got_od, od), (key, got_od, od)
        assert (got_spot is None) if spot is None else close(got_spot, spot), (key, got_spot, spot)
    assert len(by_key) == len(want), sorted(set(by_key) - set(want))
    # the metal type is priced from its own Shared row, never the $0 Host row listed before it
    assert close(by_key[("aws", "us-west-2", "g4dn.metal")][0], 7.824)
    gcp = {(t, g, n): (od, sp) for c, r, t, g, n, od, sp in rows if c == "gcp" and r == "us-central1"}
    for key, (od, spot) in EXPECTED_GCP.items():
        assert key in gcp, (key, sorted(gcp))
        assert close(gcp[key][0], od), (key, gcp[key], od)
        if spot is not None:
            assert close(gcp[key][1], spot), (key, gcp[key], spot)
    # nothing that must be filtered out leaked into the stored catalog; every refreshed price says so
    stored = list(csv.DictReader(io.StringIO(vms_csv)))
    date = "2026-11-18"
    for row in stored:
        for col in ("price_ondemand_usd_per_hour", "price_spot_usd_per_hour"):
            if row[col] and "fetched" in row["source"]:
                assert float(row[col]) not in LEAKS, row
    by_row = {(r["cloud"], r["region"], r["instance_type"]): r for r in stored}
    catalog = {(r["cloud"], r["region"], r["instance_type"]): r for r in catalog_rows()}
    for key, (od, spot, kind) in expected_aws().items():
        r = by_row[key]
        assert r["ondemand_kind"] == "listed" and r["ondemand_date"] == date, r
        assert r["source"].startswith("aws:AWS Price List bulk API fetched 2026-11-18"), r
        if kind == "observed-regional":  # the feed: one price per region, dated by its Last-Modified
            assert r["spot_kind"] == "observed-regional" and r["spot_date"] == SPOT_FEED_DATE, r
            assert r["spot_source"].startswith("aws:AWS spot feed (one price per region) fetched 2026-11-18"), r
        elif kind == "observed":  # the catalog's observed spot, kept with its (missing) date and its source
            assert r["spot_kind"] == "observed" and r["spot_date"] == "", r
            assert r["spot_source"] == catalog[key]["source"], r
    nc6 = by_row[("azure", "eastus", "Standard_NC6s_v3")]
    assert nc6["spot_kind"] == "listed" and nc6["spot_date"] == date and nc6["ondemand_date"] == date, nc6
    # Azure duplicates: the price with the latest effectiveStartDate not after the fetch, not the first listed
    assert float(by_row[("azure", "eastus", "Standard_NC24ads_A100_v4")]["price_ondemand_usd_per_hour"]) == 3.673
    assert "azure eastus: 1 older price of the same meter left out" in err, err
    assert "azure eastus: 1 price effective after this fetch left out" in err, err
    # GCP accelerator-optimized machines (A2 Ultra, A3, A4) priced from their SKUs, with the Local SSD they bundle
    gcp_rows = {(r["instance_type"], r["gpu_model"], int(r["gpu_count"])): r for r in stored
                if r["cloud"] == "gcp" and r["region"] == "us-central1"}
    accel = expected_gcp_accelerators()
    assert {t for t, g, n in accel} >= {"a3-highgpu-8g", "a3-highgpu-1g", "a3-ultragpu-8g", "a4-highgpu-8g",
                                        "a2-ultragpu-1g"}, accel
    for key, (od, spot) in accel.items():
        r, old = gcp_rows[key], catalog[("gcp", "us-central1", key[0])]
        if od is None:
            assert r["price_ondemand_usd_per_hour"] == old["price_ondemand_usd_per_hour"], r
        else:
            assert close(float(r["price_ondemand_usd_per_hour"]), od) and r["ondemand_date"] == date, (key, r, od)
            assert float(r["price_ondemand_usd_per_hour"]) != float(old["price_ondemand_usd_per_hour"]), r
            assert r["source"].startswith("gcp:GCP Cloud Billing Catalog API fetched"), r
        if spot is None:  # no spot SKU of that GPU: the catalog's spot price stays, with its own source
            assert r["price_spot_usd_per_hour"] == old["price_spot_usd_per_hour"] and r["spot_date"] == old["spot_date"]
            assert r["spot_source"] == old["source"], r
        else:
            assert close(float(r["price_spot_usd_per_hour"]), spot) and r["spot_date"] == date, (key, r, spot)
    # Lambda: every type in every catalog region at the API's price
    api = lambda_api()
    lam = [r for r in stored if r["cloud"] == "lambda"]
    assert len(lam) == 115 and {r["region"] for r in lam} == {"us-east-1", "us-west-1", "us-south-1",
                                                               "europe-central-1", "asia-northeast-1"}
    for r in lam:
        assert close(float(r["price_ondemand_usd_per_hour"]), api[r["instance_type"]]), r
        assert r["ondemand_date"] == date and r["source"].startswith("lambda:Lambda Cloud API instance-types"), r
    assert float([r for r in lam if r["instance_type"] == "gpu_1x_gh200"][0]["price_ondemand_usd_per_hour"]) == 1.49
    assert "lambda: 1 instance type the catalog does not offer ignored" in err, err
    # the GCP services listing is read whole: Compute Engine is on its second page
    services = [q for p, q, h in log if p == "/v1/services"]
    assert len(services) == 2 and services[1].get("pageToken") == ["FIXTURE-SERVICES-PAGE-2-TOKEN"], services
    skus = [q.get("pageToken", [""])[0] for p, q, h in log if p == "/v1/services/6F81-5844-456A/skus"]
    assert skus == ["", "FIXTURE-PAGE-2-TOKEN", "FIXTURE-PAGE-3-TOKEN"], skus
    # Lambda is asked with HTTP Basic auth, the key as user name; the key is never printed
    lam_heads = [h for p, q, h in log if p == "/api/v1/instance-types"]
    assert len(lam_heads) == 1 and lam_heads[0].get("Authorization", "").startswith("Basic "), lam_heads
    assert "fixture-lambda-key" not in out + err
    # the client: percent-encoded OData filter, followed NextPageLink to our base URL, gzip, user agent
    azure = [q for p, q, h in log if p == "/api/retail/prices" and "'eastus'" in q.get("$filter", [""])[0]]
    assert len(azure) == 2 and azure[1].get("$skip") == ["1000"], azure
    heads = [h for p, q, h in log]
    assert all(h.get("User-Agent", "").startswith("cloudfit/") for h in heads), heads[0]
    assert all("gzip" in h.get("Accept-Encoding", "") for h in heads)
    # AWS: one offer file per region the catalog offers and the index lists, streamed as CSV; never a global file
    offer_files = sorted(p for p, q, h in log if p.startswith("/offers/v1.0/aws/AmazonEC2/2026"))
    assert offer_files == ["/offers/v1.0/aws/AmazonEC2/20260720134430/%s/index.csv" % r
                           for r in AWS_FIXTURE_REGIONS], offer_files
    assert "regions are not in the EC2 region index" in err, err
    assert "stored snapshot-1" in out
    # a spot price equal to on-demand is no spot price
    assert "Standard_NC48ads_A100_v4 (2×A100-80GB-PCIE): spot price 7.346 equals the on-demand price" in err, err


def test_recommend_and_prices_use_the_snapshot():
    db = new_db()
    with FixtureServer() as s:
        good_update(s, db, "--cloud", "azure", "--region", "eastus")
    cat = catalog_in_use(db)
    assert cat["source"] == "snapshot" and cat["snapshot"] == "snapshot-1", cat
    # the snapshot is new, but most prices in use are not: its age is theirs (2026-05-20 at 2026-11-18)
    assert cat["fetched_at"].startswith("2026-11-18") and cat["age_days"] == 182 and cat["too_old"], cat
    assert cat["prices_in_use"]["oldest_date"] == "2026-05-20" and cat["prices_in_use"]["newest_date"] == "2026-11-18"
    rc, out, err = run("recommend", "--db", db, "--no-history", EXAMPLE)
    assert rc == 0 and "catalog: snapshot-1 fetched 2026-11-18" in out and "the oldest 182 days old" in out, out
    rc, out, err = run("prices", "T4:1", "--cloud", "azure", "--region", "eastus", "--db", db, "-f", "json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["catalog"]["snapshot"] == "snapshot-1"
    offer = [o for o in doc["offers"] if o["instance_type"] == "Standard_NC4as_T4_v3"][0]
    assert offer["usd_per_hour"] == 0.526 and offer["spot_usd_per_hour"] == 0.204246, offer
    assert "Azure Retail Prices API fetched" in offer["source"], offer


def test_update_takes_cloud_names_in_any_case():
    """`prices --cloud LAMBDA` worked (names ignore case) but `prices update --cloud LAMBDA` was refused with
    "cannot update prices of cloud 'LAMBDA'", a message naming no option. The update takes it as lambda; a name
    that is no cloud is a usage error naming --cloud."""
    db = new_db()
    with FixtureServer() as s:
        out, err = good_update(s, db, "--cloud", "LAMBDA")
        assert [row[1] for row in snapshots(db)] == ["lambda"], snapshots(db)
        assert "LAMBDA" not in out + err, (out, err)
        rc, out, err = run("prices", "update", "--db", new_db(), "--cloud", "lamda", env=env_for(s))
    assert rc == 2 and "cloudfit: option '--cloud': unknown cloud 'lamda'" in err and "hint:" in err, (rc, err)

def test_one_row_update_keeps_the_age_of_the_oldest_price():
    """Issue 32: an update that refreshes a few rows does not make the catalog new. Its age is that of the
    oldest price the result depends on, and the warning names the stale clouds."""
    db = new_db()
    with FixtureServer() as s:
        good_update(s, db, "--cloud", "azure", "--region", "eastus")
    # every Azure offer in eastus: 7 refreshed, the others still of 2026-05-20
    rc, out, err = run("recommend", "--db", db, "--no-history", "--cloud", "azure", "--region", "eastus", EXAMPLE)
    assert rc == 0, err
    assert "warning: prices in use (snapshot-1) are up to 182 days old, more than 30 days: azure 16 offers (prices " \
           "of 2026-05-20)" in err, err
    assert "prices in use of 2026-05-20 to 2026-11-18, the oldest 182 days old" in out, out
    assert "note: prices in use are up to 182 days old (limit 30): azure 16 offers (prices of 2026-05-20)" in out, out
    # the one offer whose prices are all fresh: 0 days, no warning; 40 days later, 40
    args = ("prices", "H100:8", "--cloud", "azure", "--region", "eastus", "--db", db, "-f", "json")
    rc, out, err = run(*args)
    cat = json.loads(out)["catalog"]
    assert rc == 0 and err == "" and cat["age_days"] == 0 and not cat["too_old"], (err, cat)
    later = dict(BASE_ENV, SOURCE_DATE_EPOCH=str(EPOCH + 40 * 86400))
    rc, out, err = run(*args, env=later)
    cat = json.loads(out)["catalog"]
    assert cat["age_days"] == 40 and cat["too_old"] and cat["max_age_days"] == 30, cat
    assert "are up to 40 days old, more than 30 days: azure 1 offer (prices of 2026-11-18)" in err, err
    rc, out, err = run(*args, "--max-catalog-age-days", "60", env=later)
    assert rc == 0 and "days old" not in err, err
    # the chosen offer's own price date and age are shown
    rc, out, err = run("recommend", "--db", db, "--no-history", "--cloud", "azure", "--region", "eastus", "-f", "json",
                       EXAMPLE)
    chosen = json.loads(out)["chosen"]
    assert chosen["price"]["age_days"] == (0 if chosen["price"]["date"] == "2026-11-18" else 182), chosen["price"]


def test_age_at_the_limit_is_not_over_it():
    """Prices of 2026-05-20 at 2026-06-19 12:00 UTC are 30 whole days old: the limit of 30 used to be compared
    with 30.5 days, so the warning said 'up to 30 days old, more than 30 days' (too_old, age_days 30) in the
    afternoon and nothing in the morning. Whole days now, as they are shown; 31 days is over."""
    args = ("prices", "H100:8", "--cloud", "azure", "--region", "eastus", "-f", "json")
    noon = 1781870400  # 2026-06-19T12:00:00Z
    for epoch, age, too_old in ((noon, 30, False), (noon + 43200, 31, True)):
        rc, out, err = run(*args, env=dict(BASE_ENV, SOURCE_DATE_EPOCH=str(epoch)))
        cat = json.loads(out)["catalog"]
        assert rc == 0 and cat["age_days"] == age and cat["too_old"] == too_old, (epoch, cat)
        assert cat["prices_in_use"]["clouds"][0]["stale_offers"] == (1 if too_old else 0), cat
        assert ("are up to %d days old, more than 30 days" % age in err) == too_old, err


# ---- faults: recover, or fail clearly and keep the previous snapshot -----------

def fault_case(path, kind, times=None, args=("--cloud", "azure", "--region", "eastus"), extra=None, slow_s=None):
    """A good snapshot first, then an update with the fault; returns (rc, err, db, before, after, elapsed)."""
    db = new_db()
    with FixtureServer() as s:
        good_update(s, db, *args)
        before = snapshots(db)
        s.faults[path] = {"kind": kind} if times is None else {"kind": kind, "times": times}
        if slow_s:
            s.slow_s = slow_s
        t0 = time.monotonic()
        rc, out, err = run("prices", "update", "--db", db, *args, env=env_for(s, **(extra or {})))
        elapsed = time.monotonic() - t0
    return rc, err, db, before, snapshots(db), elapsed


def assert_kept(rc, err, db, before, after, *needles):
    assert rc == 1, (rc, err)  # a failed fetch (docs/exit-codes.md): not a crash, bad input or a usage error
    for n in needles:
        assert n in err, (n, err)
    assert after == before, "the stored snapshots changed after a failed update"
    assert catalog_in_use(db)["snapshot"] == "snapshot-1"
    assert "nothing stored; the catalog in use is still snapshot-1" in err, err


def test_429_with_retry_after_recovers():
    rc, err, db, before, after, elapsed = fault_case("/api/retail/prices", "429", times=1)
    assert rc == 0, err
    assert len(after) == 2 and elapsed >= 0.9, (len(after), elapsed)  # waited for Retry-After: 1
    assert "HTTP 429, retrying in 1.0 s" in err, err


def test_500_once_recovers():
    rc, err, db, before, after, elapsed = fault_case("/offers/v1.0/aws/AmazonEC2/20260720134430", "500", times=1,
                                                     args=("--cloud", "aws"))
    assert rc == 0 and len(after) == 2, err
    assert refreshed(db, 2) == refreshed(db, 1)


def test_dropped_connection_once_recovers():
    rc, err, db, before, after, elapsed = fault_case("/api/retail/prices", "drop", times=1)
    assert rc == 0 and len(after) == 2, err


def test_500_always_fails_and_keeps_snapshot():
    rc, err, db, before, after, _ = fault_case("/api/retail/prices", "500")
    assert_kept(rc, err, db, before, after, "azure eastus page 1", "HTTP 500 (gave up after 2 retries)")


def test_500_without_retries_says_none_was_made():
    """CLOUDFIT_HTTP_RETRIES=0: one GET, and the message claimed 'gave up after retries'."""
    rc, err, db, before, after, _ = fault_case("/api/retail/prices", "500", extra={"CLOUDFIT_HTTP_RETRIES": 0})
    assert_kept(rc, err, db, before, after, "HTTP 500 (not retried: CLOUDFIT_HTTP_RETRIES=0)")
    assert "gave up" not in err, err


def test_dropped_connection_always_fails_on_streamed_offer_file():
    rc, err, db, before, after, _ = fault_case("/offers/v1.0/aws/AmazonEC2/20260720134430", "drop",
                                               args=("--cloud", "aws"))
    assert_kept(rc, err, db, before, after, "aws us-east-1 offer file")


def test_truncated_json_fails_and_keeps_snapshot():
    rc, err, db, before, after, _ = fault_case("/api/retail/prices", "truncate")
    assert_kept(rc, err, db, before, after, "is not valid JSON", "got end of input): truncated")


def test_a_price_past_any_double_is_not_called_truncated():
    """A price of 1e400 was "not valid JSON (...: number out of range '1e400'): truncated or corrupt": the reason
    was right, the guess after it wrong. Only an answer that ends early is called truncated."""
    rc, err, db, before, after, _ = fault_case("/api/retail/prices", "huge")
    assert_kept(rc, err, db, before, after, "is not valid JSON", "number out of range '1e400'")
    assert "truncated" not in err and "corrupt" not in err, err


def test_slow_response_times_out():
    rc, err, db, before, after, elapsed = fault_case("/api/retail/prices", "slow", slow_s=2.5,
                                                     extra={"CLOUDFIT_HTTP_RETRIES": 1})
    assert_kept(rc, err, db, before, after, "the transfer stalled: fewer than 200 bytes/s for 1 s")
    assert elapsed < 10, elapsed


AWS_ONE = ("--cloud", "aws", "--region", "us-east-1")


def test_stalled_offer_stream_fails_and_keeps_snapshot():
    """The low-speed limit: headers and a third of the offer file, then nothing; given up after the 1 s window."""
    rc, err, db, before, after, elapsed = fault_case("/offers/v1.0/aws/AmazonEC2/20260720134430", "stall",
                                                     args=AWS_ONE, extra={"CLOUDFIT_HTTP_RETRIES": 1})
    assert_kept(rc, err, db, before, after, "aws us-east-1 offer file", "the transfer stalled",
                "CLOUDFIT_HTTP_LOW_SPEED_BPS")
    assert elapsed < 12, elapsed  # 2 attempts × ~1 s window, not the 4 s the server stays silent


def test_slow_but_steady_stream_is_not_cut():
    """No whole-transfer timeout: an offer file that trickles in over 3 s (above the low-speed limit) is read."""
    db = new_db()
    with FixtureServer() as s:
        s.faults["/offers/v1.0/aws/AmazonEC2/20260720134430"] = {"kind": "trickle"}
        t0 = time.monotonic()
        rc, out, err = run("prices", "update", "--db", db, *AWS_ONE, env=env_for(s, CLOUDFIT_HTTP_RETRIES=0))
        elapsed = time.monotonic() - t0
    assert rc == 0, err
    assert elapsed >= 2.5, elapsed
    rows = {r[2]: r for r in refreshed(db, 1)}
    assert close(rows["p5.48xlarge"][5], 55.04), rows["p5.48xlarge"]


def strip_kept_aws_rows(text):
    """An offer file with only the rows a client must skip: make_offer_files.py numbers those SKUs from 900."""
    out = []
    for line in text.splitlines(keepends=True):
        m = re.match(r'"FX\d\dR(\d{8})"', line)
        if not m or int(m.group(1)) >= 900:
            out.append(line)
    return "".join(out)


def patched(server, fn):
    """Serve every fixture through fn(path, text) -> text."""
    real_route = server.RequestHandlerClass.route

    def route(self, path, query):
        status, body = real_route(self, path, query)
        return status, fn(path, body.decode()).encode()
    server.RequestHandlerClass.route = route
    return real_route


def test_no_usable_prices_fails_and_keeps_snapshot():
    """An answer without a usable price is a failure: nothing stored, the catalog in use and its age unchanged."""
    for cloud, args, edit, needle in [
        ("aws", AWS_ONE, lambda p, t: strip_kept_aws_rows(t) if p.endswith("index.csv") else t,
         "aws: the update yielded no usable prices (the API answered, but no item passed the filters"),
        ("azure", ("--cloud", "azure", "--region", "eastus"),
         lambda p, t: t.replace('"type": "Consumption"', '"type": "DevTestConsumption"'),
         "azure: the update yielded no usable prices"),
    ]:
        db = new_db()
        with FixtureServer() as s:
            good_update(s, db, *args)
            before = snapshots(db)
            cat_before = catalog_in_use(db)
            real = patched(s, edit)
            try:
                later = env_for(s)
                later["SOURCE_DATE_EPOCH"] = str(EPOCH + 5 * 86400)
                rc, out, err = run("prices", "update", "--db", db, *args, env=later)
            finally:
                s.RequestHandlerClass.route = real
        assert_kept(rc, err, db, before, snapshots(db), needle)
        later_env = dict(BASE_ENV, SOURCE_DATE_EPOCH=str(EPOCH + 5 * 86400))
        rc, out, _ = run("recommend", "--db", db, "--no-history", "-f", "json", EXAMPLE, env=later_env)
        cat = json.loads(out)["catalog"]
        # the same snapshot, its prices 5 days older: nothing new passed for fresh
        assert cat["fetched_at"] == cat_before["fetched_at"] and cat["age_days"] == cat_before["age_days"] + 5, cat
        assert cat["prices_in_use"]["newest_date"] == "2026-11-18", (cloud, cat)


def test_offer_file_columns_by_alias_any_case():
    """Header names are matched without case and spacing against the alias set; a missing one is a clear error."""
    def respell(p, t):
        if not p.endswith("index.csv"):
            return t
        head, sep, rest = t.partition('"SKU",')
        rest = rest.replace('"operation"', '"Operation"', 1).replace('"Product Family"', '"productFamily"', 1)
        rest = rest.replace('"TermType"', '"TERMTYPE"', 1).replace('"Pre Installed S/W"', '"preInstalledSw"', 1)
        return head + sep + rest

    def drop_operation(p, t):
        return t.replace('"operation"', '"op"', 1) if p.endswith("index.csv") else t
    db = new_db()
    with FixtureServer() as s:
        real = patched(s, respell)
        try:
            rc, out, err = run("prices", "update", "--db", db, *AWS_ONE, env=env_for(s))
            s.RequestHandlerClass.route = real
            patched(s, drop_operation)
            rc2, out2, err2 = run("prices", "update", "--db", db, *AWS_ONE, env=env_for(s))
        finally:
            s.RequestHandlerClass.route = real
    assert rc == 0, err
    assert close({r[2]: r for r in refreshed(db, 1)}["p5.48xlarge"][5], 55.04)
    assert rc2 != 0 and "aws us-east-1 offer file: the offer file has no column 'operation'" in err2, err2
    assert len(snapshots(db)) == 1


def test_gcp_list_price_whatever_the_sku_order():
    """A shuffled SKU list with a DWS Defined Duration SKU: the list price is chosen every time."""
    seen_dws_first = False
    for seed in range(6):
        db = new_db()
        with FixtureServer() as s:
            s.gcp_shuffle = seed
            rc, out, err = run("prices", "update", "--db", db, "--cloud", "gcp", "--region", "us-central1",
                               env=env_for(s))
        assert rc == 0, err
        gcp = {(t, g, n): (od, sp) for c, r, t, g, n, od, sp in refreshed(db, 1) if r == "us-central1"}
        for key, (od, spot) in EXPECTED_GCP.items():
            assert close(gcp[key][0], od), (seed, key, gcp[key])
        assert "gcp: ignored 2 SKUs for priced parts that are not list prices (e.g. 'Nvidia " in err, err
        # the order really changed: in some seeds the DWS SKU comes before the list-price SKU
        with FixtureServer() as s2:
            s2.gcp_shuffle = seed
            ids = []
            for tok in ("", "&pageToken=FIXTURE-PAGE-2-TOKEN", "&pageToken=FIXTURE-PAGE-3-TOKEN"):
                url = s2.url + "/v1/services/6F81-5844-456A/skus?key=k" + tok
                ids += [x["skuId"] for x in json.loads(urllib.request.urlopen(url).read())["skus"]]
        seen_dws_first |= ids.index("2E27-4F9A-7C10") < ids.index("2E27-4F9A-7C0C")
    assert seen_dws_first


def test_azure_currency_and_primary_meter():
    db = new_db()
    with FixtureServer() as s:
        good_update(s, db, "--cloud", "azure", "--region", "eastus")
        before = snapshots(db)
        real = patched(s, lambda p, t: t.replace('"currencyCode": "USD"', '"currencyCode": "EUR"', 1))
        try:
            rc, out, err = run("prices", "update", "--db", db, "--cloud", "azure", "--region", "eastus",
                               env=env_for(s))
        finally:
            s.RequestHandlerClass.route = real
    assert_kept(rc, err, db, before, snapshots(db), "item for 'Standard_ND96isr_H100_v5' is priced in 'EUR', not USD")


def test_prices_are_decimal_numbers():
    """Price text goes through the one number parser: a hex float (0x1.1p-1) was stored as 0.53125, 'nan' counted
    as "priced 0", and an Azure retailPrice that is a string was exit 3 where every other malformed answer is 1."""
    linux_p5 = '"Hrs","55.0400000000","USD",,,,,"Compute Instance","AmazonEC2","US East (N. Virginia)","AWS Region",' \
               '"p5.48xlarge","Yes","GPU instance","192",,,"2048 GiB",,,,,,,,,,,"Shared",,"Linux","No License required"'
    for cloud, args, edit, needle in [
        ("aws", AWS_ONE, lambda p, t: t.replace(linux_p5, linux_p5.replace("55.0400000000", "0x1.1p-1"), 1),
         "PricePerUnit '0x1.1p-1' is not a price"),
        ("aws", AWS_ONE, lambda p, t: t.replace(linux_p5, linux_p5.replace("55.0400000000", "nan"), 1),
         "PricePerUnit 'nan' is not a price"),
        ("azure", ("--cloud", "azure", "--region", "eastus"),
         lambda p, t: t.replace('"retailPrice": 98.32', '"retailPrice": "98.32"', 1),
         "item for 'Standard_ND96isr_H100_v5' has no numeric retailPrice"),
    ]:
        db = new_db()
        with FixtureServer() as s:
            good_update(s, db, *args)
            before = snapshots(db)
            real = patched(s, edit)
            try:
                rc, out, err = run("prices", "update", "--db", db, *args, env=env_for(s))
            finally:
                s.RequestHandlerClass.route = real
        assert rc == 1, (cloud, rc, err)
        assert_kept(rc, err, db, before, snapshots(db), needle)


def test_pagination_loop_fails_loudly():
    rc, err, db, before, after, _ = fault_case("/api/retail/prices", "loop")
    assert_kept(rc, err, db, before, after, "pagination loop")
    rc, err, db, before, after, _ = fault_case("/v1/services/6F81-5844-456A/skus", "loop",
                                               args=("--cloud", "gcp"))
    assert_kept(rc, err, db, before, after, "gcp: pagination loop")


def test_page_cap_is_a_failure_not_truncation():
    rc, err, db, before, after, _ = fault_case("/nothing", "500", extra={"CLOUDFIT_MAX_PAGES": 1})
    assert_kept(rc, err, db, before, after, "more than 1 pages")


def test_one_cloud_failing_does_not_block_the_others():
    db = new_db()
    with FixtureServer() as s:
        s.faults["/api/retail/prices"] = {"kind": "500"}
        rc, out, err = run("prices", "update", "--db", db, "--region", "eastus", "--region", "us-east-1",
                           env=env_for(s))
    assert rc == 1, (rc, err)  # a failure is reported in the exit code...
    assert "azure not updated" in err and "stored snapshot-1" in out, (out, err)
    snaps = snapshots(db)  # ...but the clouds that answered are stored; azure rows stay as they were
    assert len(snaps) == 1 and snaps[0][1] == "aws,lambda", snaps  # lambda's us-east-1
    assert not [r for r in refreshed(db, 1) if r[0] == "azure"]


def test_snapshot_from_the_future_does_not_shadow_later_updates():
    """An update run while the clock was 10 days ahead stores a snapshot fetched 'in the future'. It used to
    stay the newest by fetch time, so every later update (with a right clock) was stored and never used, and
    its prices read as 0 days old. Now the later snapshot is in use, and prices dated after today are named."""
    db = new_db()
    ahead = dict(BASE_ENV, SOURCE_DATE_EPOCH=str(EPOCH + 10 * 86400))
    with FixtureServer() as s:
        rc, out, err = run("prices", "update", "--db", db, "--cloud", "azure", "--region", "eastus",
                           env=dict(env_for(s), SOURCE_DATE_EPOCH=str(EPOCH + 10 * 86400)))
        assert rc == 0 and "stored snapshot-1" in out, (out, err)
        rc, out, err = run("prices", "H100:8", "--cloud", "azure", "--region", "eastus", "--db", db)
        assert rc == 0 and "snapshot-1 fetched 2026-11-28" in out, out
        assert "warning: the catalog in use (snapshot-1) has prices dated up to 2026-11-28, after today " \
               "(2026-11-18): the clock was ahead when they were fetched, or is behind now" in err, err
        out, err = good_update(s, db, "--cloud", "lambda")
        assert "stored snapshot-2" in out, out
    assert catalog_in_use(db)["snapshot"] == "snapshot-2"
    rc, out, err = run("prices", "--cloud", "lambda", "--db", db)
    assert rc == 0 and "catalog: snapshot-2 fetched 2026-11-18" in out and "lambda 115 offers" not in err, (out, err)
    # once the clock reaches it, the snapshot fetched last is the newest again
    assert catalog_in_use_env(db, dict(ahead, SOURCE_DATE_EPOCH=str(EPOCH + 11 * 86400)))["snapshot"] == "snapshot-1"


def catalog_in_use_env(db, env):
    rc, out, err = run("recommend", "--db", db, "--no-history", "-f", "json", EXAMPLE, env=env)
    assert rc == 0, err
    return json.loads(out)["catalog"]


def update_with(edit, *args):
    """`prices update ARGS` into a new database against fixtures changed by edit(path, text)."""
    db = new_db()
    with FixtureServer() as s:
        real = patched(s, edit)
        try:
            rc, out, err = run("prices", "update", "--db", db, *args, env=env_for(s))
        finally:
            s.RequestHandlerClass.route = real
    return rc, out, err, db


def test_zero_priced_gpu_part_keeps_the_previous_price():
    """Issue 32: a GPU SKU that quotes 0 would price n1 + T4 at the host's price alone; it is not a price. The
    T4 rows keep their previous price and the warning names the SKU."""
    rc, out, err, db = update_with(lambda p, t: t.replace('"units": "0",\n                  "nanos": 350000000',
                                                          '"units": "0",\n                  "nanos": 0'),
                                   "--cloud", "gcp", "--region", "us-central1")
    assert rc == 0, err
    assert ("gcp: SKU 2E27-4F9A-7C05 'Nvidia Tesla T4 GPU running in Americas' quotes 0 $/h: not a price; T4 GPUs "
            "are not re-priced in us-central1") in err, err
    stored = {(r["instance_type"], r["gpu_model"], r["gpu_count"]): r
              for r in csv.DictReader(io.StringIO(snapshots(db)[0][4]))
              if r["cloud"] == "gcp" and r["region"] == "us-central1"}
    old = {(r["instance_type"], r["gpu_model"], r["gpu_count"]): r for r in catalog_rows()
           if r["cloud"] == "gcp" and r["region"] == "us-central1"}
    t4 = stored[("n1-highmem-4", "T4", "1")]
    assert t4["price_ondemand_usd_per_hour"] == old[("n1-highmem-4", "T4", "1")]["price_ondemand_usd_per_hour"], t4
    assert t4["ondemand_date"] != "2026-11-18" and "fetched" not in t4["source"], t4
    # the T4's spot SKU was fine: the spot price is refreshed, with its own source
    assert close(float(t4["price_spot_usd_per_hour"]), 0.25178) and "fetched" in t4["spot_source"], t4
    v100 = stored[("n1-highmem-8", "V100", "1")]  # other GPUs are priced as usual
    assert close(float(v100["price_ondemand_usd_per_hour"]), 2.953212), v100


def test_azure_duplicates_by_effective_date_in_any_order():
    """The price in effect is the one with the latest effectiveStartDate not after the fetch, wherever it is
    listed; two prices of one date that disagree leave the size unpriced."""
    def older_last(p, t):  # the current NC24ads price listed before its older duplicate
        doc = json.loads(t)
        items = doc.get("Items", [])
        idx = [i for i, it in enumerate(items) if it.get("retailPrice") == 3.94]
        if idx:
            items.append(items.pop(idx[0]))
        return json.dumps(doc)

    def same_date(p, t):
        return t.replace('"effectiveStartDate": "2024-04-01T00:00:00Z"', '"effectiveStartDate": "2026-05-01T00:00:00Z"')

    for edit, want in ((older_last, 3.673), (same_date, None)):
        rc, out, err, db = update_with(edit, "--cloud", "azure", "--region", "eastus")
        assert rc == 0, err
        row = [r for r in csv.DictReader(io.StringIO(snapshots(db)[0][4]))
               if r["region"] == "eastus" and r["instance_type"] == "Standard_NC24ads_A100_v4"][0]
        if want:
            assert float(row["price_ondemand_usd_per_hour"]) == want and row["ondemand_date"] == "2026-11-18", row
        else:
            assert "Standard_NC24ads_A100_v4 has several on-demand prices effective from 2026-05-01T00:00:00Z; not " \
                   "re-priced" in err, err
            assert row["ondemand_date"] == "2026-05-20" and float(row["price_ondemand_usd_per_hour"]) != 3.94, row


def test_lambda_key_and_answers():
    """Lambda: the key travels as HTTP Basic auth; a refused key fails Lambda only, the previous prices stay;
    a price that is not a positive whole number of cents is not taken."""
    db = new_db()
    with FixtureServer() as s:
        e = env_for(s, CLOUDFIT_LAMBDA_API_KEY="wrong-key")
        rc, out, err = run("prices", "update", "--db", db, "--cloud", "lambda", env=e)
        assert rc == 1 and "lambda instance types: GET" in err and "HTTP 401" in err and "check the API key" in err, err
        assert "wrong-key" not in err and not snapshots(db), err
        real = patched(s, lambda p, t: t.replace('"price_cents_per_hour": 149', '"price_cents_per_hour": 0')
                       .replace('"price_cents_per_hour": 75', '"price_cents_per_hour": 74.5'))
        try:
            good_update(s, db, "--cloud", "lambda", "--region", "us-west-1")
        finally:
            s.RequestHandlerClass.route = real
        rc, out, err = run("prices", "update", "--db", db, "--cloud", "lambda", "--region", "us-west-1",
                           env=env_for(s))
    rows = {r["instance_type"]: r for r in csv.DictReader(io.StringIO(snapshots(db)[0][4]))
            if r["cloud"] == "lambda" and r["region"] == "us-west-1"}
    assert rows["gpu_1x_gh200"]["price_ondemand_usd_per_hour"] == "2.29", rows["gpu_1x_gh200"]  # kept
    assert rows["gpu_1x_a10"]["price_ondemand_usd_per_hour"] == "1.29", rows["gpu_1x_a10"]       # kept
    assert rows["gpu_8x_h100_sxm5"]["price_ondemand_usd_per_hour"] == "23.92", rows["gpu_8x_h100_sxm5"]
    # the unpatched answer: the other regions are untouched by --region
    assert snapshots(db)[1][1] == "lambda"


def test_spot_feed_without_last_modified_is_dated_by_the_fetch():
    db = new_db()
    with FixtureServer() as s:
        s.spot_last_modified = None
        out, err = good_update(s, db, *AWS_ONE)
    assert "aws: the spot feed sent no Last-Modified date; its prices are dated by the fetch" in err, err
    row = [r for r in csv.DictReader(io.StringIO(snapshots(db)[0][4]))
           if r["region"] == "us-east-1" and r["instance_type"] == "p5.48xlarge"][0]
    assert row["spot_kind"] == "observed-regional" and row["spot_date"] == "2026-11-18", row


def test_spot_feed_with_an_untrustworthy_last_modified_is_dated_by_the_fetch():
    """A Last-Modified the catalog cannot store (RFC 9110's own 1994 example, the year 12000, a date after the
    fetch) failed the whole update with exit 3 ("column 'spot_date': expected a date"), every cloud's prices
    with it. A Last-Modified 20 hours after the fetch (a server clock ahead) used to date the spot prices the
    next day, after their fetch: a day later than the machine's clock only was refused."""
    ahead = email.utils.formatdate(EPOCH + 20 * 3600, usegmt=True)  # 2026-11-19, the fetch is of 2026-11-18
    for stamp in ("Sun, 06 Nov 1994 08:49:37 GMT", "Mon, 01 Jan 12000 00:00:00 GMT", "Fri, 01 Jan 2100 00:00:00 GMT",
                  ahead):
        db = new_db()
        with FixtureServer() as s:
            s.spot_last_modified = stamp
            out, err = good_update(s, db, *AWS_ONE)
        assert "its prices are dated by the fetch" in err, (stamp, err)
        row = [r for r in csv.DictReader(io.StringIO(snapshots(db)[0][4]))
               if r["region"] == "us-east-1" and r["instance_type"] == "p5.48xlarge"][0]
        assert row["spot_kind"] == "observed-regional" and row["spot_date"] == "2026-11-18", (stamp, row)


def examples():
    d = os.path.join(SRC, "examples")
    return [os.path.join(d, n) for n in sorted(os.listdir(d)) if n.endswith(".json")]


def test_equal_prices_go_to_the_preferred_region_never_the_alphabet():
    """Issue 32: Lambda lists one price in five regions. A tie goes to the user's preferred region (--prefer-region,
    the config file, --region's order), else to the documented default list (us-east-1 first for Lambda), never
    to the first region by name (asia-northeast-1)."""
    picks = []
    for spec in examples():
        rc, out, err = run("recommend", "--no-history", "-f", "json", "--cloud", "lambda", spec)
        assert rc == 0, (spec, err)
        doc = json.loads(out)
        for c in [doc["chosen"]] + doc["alternatives"]:
            picks.append(c["region"])
        rc, out, err = run("recommend", "--no-history", "-f", "json", "--cloud", "lambda",
                           "--prefer-region", "us-south-1", spec)
        assert rc == 0 and json.loads(out)["chosen"]["region"] == "us-south-1", (spec, err)
        # --region's order is a preference too
        rc, out, err = run("recommend", "--no-history", "-f", "json", "--cloud", "lambda",
                           "--region", "us-west-1", "--region", "asia-northeast-1", spec)
        assert rc == 0 and json.loads(out)["chosen"]["region"] == "us-west-1", (spec, err)
    assert picks and set(picks) == {"us-east-1"}, picks
    # every example, every cloud: no chosen offer has a cheaper-or-equal twin in a more preferred region
    config = write("prefer.json", {"prefer-region": ["europe-central-1"]})
    rc, out, err = run("recommend", "--no-history", "-f", "json", "--cloud", "lambda", EXAMPLE,
                       env=dict(BASE_ENV, CLOUDFIT_CONFIG=config))
    assert rc == 0 and json.loads(out)["chosen"]["region"] == "europe-central-1", err
    # prices lists equal prices in the same order
    rc, out, err = run("prices", "A10", "--cloud", "lambda", "-f", "json")
    assert [o["region"] for o in json.loads(out)["offers"]][:2] == ["us-east-1", "us-west-1"], out


def test_unknown_preferred_region_is_a_usage_error():
    """--prefer-region us-wst-1 (a typo) was accepted silently by prices and recommend, and the config file's
    prefer-region too: the preference was dropped without a word, while --region us-wst-1 is a usage error with a
    did-you-mean. It is checked against every cloud's regions (a config list serves every --cloud)."""
    for args in (("prices", "H100:8", "--cloud", "lambda"), ("recommend", "--no-history", "--cloud", "lambda", EXAMPLE)):
        rc, out, err = run(*args, "--prefer-region", "us-wst-1")
        assert rc == 2, (args, rc, err)
        assert "option '--prefer-region': unknown region 'us-wst-1'" in err, err
        assert "hint: did you mean 'us-west-1'?" in err, err
    config = write("prefer-typo.json", {"prefer-region": ["europe-west4", "us-wst-1"]})
    rc, out, err = run("prices", "H100:8", "--cloud", "lambda", env=dict(BASE_ENV, CLOUDFIT_CONFIG=config))
    assert rc == 2 and "prefer-typo.json" in err and "unknown region 'us-wst-1'" in err, (rc, err)
    # a known region of another cloud than --cloud's is a preference for that cloud, not an error
    rc, out, err = run("prices", "H100:8", "--cloud", "lambda", "--prefer-region", "europe-west4")
    assert rc == 0, err


def test_prices_take_the_long_names_tools_print():
    """`prices 'NVIDIA RTX PRO 6000 Blackwell Server Edition'` (nvidia-smi's name of a GPU the catalog sells,
    44 characters) was "expected GPU or GPU:N": the name had to fit 31 characters. `AMD Instinct MI300X VF`
    (amd-smi and torch on Azure's ND MI300X v5) was an unknown GPU."""
    for name, model in (("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000"),
                        ("NVIDIA RTX PRO 6000 Blackwell Server Edition:8", "RTX-PRO-6000"),
                        ("AMD Instinct MI300X VF", "MI300X")):
        rc, out, err = run("prices", name, "-q", "-f", "json")
        assert rc == 0, (name, rc, err)
        offers = json.loads(out)["offers"]
        assert offers and {o["gpu"] for o in offers} == {model}, (name, offers[:1])


def test_restricted_regions_left_out_unless_asked():
    """Azure regions that need an access request are not offered by default; the option, or naming the region,
    offers them, and the chosen offer then says what it needs."""
    rc, out, err = run("prices", "T4:1", "--cloud", "azure", "-f", "json")
    assert rc == 0 and "australiacentral2" not in {o["region"] for o in json.loads(out)["offers"]}, out
    rc, out, err = run("prices", "T4:1", "--cloud", "azure", "-f", "json", "--include-restricted-regions")
    assert rc == 0 and "australiacentral2" in {o["region"] for o in json.loads(out)["offers"]}, out
    rc, out, err = run("prices", "T4:1", "--cloud", "azure", "--region", "australiacentral2", "-f", "json")
    assert rc == 0 and {o["region"] for o in json.loads(out)["offers"]} == {"australiacentral2"}, out
    rc, out, err = run("recommend", "--no-history", "-f", "json", "--cloud", "azure", EXAMPLE)
    doc = json.loads(out)
    assert rc == 0 and doc["catalog"]["prices_in_use"]["restricted_left_out"] == 11, doc["catalog"]
    rc, out, err = run("recommend", "--no-history", "--cloud", "azure", EXAMPLE)
    assert "11 offers in regions that need an access request left out (--include-restricted-regions" in out, out
    rc, out, err = run("recommend", "--no-history", "--cloud", "azure", "--region", "germanynorth", EXAMPLE)
    assert rc == 0 and "azure/germanynorth" in out and "the region needs an access request" in out, out


def test_every_example_names_the_availability_of_the_chosen_offer():
    """Issue 32: where a cloud has no availability table, the output says so for the chosen offer."""
    for spec in examples():
        for cloud in (None, "lambda", "azure", "gcp", "aws"):
            extra = ("--cloud", cloud) if cloud else ()
            rc, out, err = run("recommend", "--no-history", *extra, spec)
            if rc == 4:  # nothing of that cloud meets the constraints
                continue
            assert rc == 0, (spec, cloud, err)
            chosen = re.search(r"^Why (\w+)/(\S+) (\S+)", out, re.M)
            c, region, itype = chosen.groups()
            if c in ("lambda", "azure"):
                assert "  - availability not known for %s/%s %s: " % (c, region, itype) in out, out
            else:
                assert re.search(r"^  - availability: launchable in \d+ zones? \(", out, re.M), out
            rc, out, err = run("recommend", "--no-history", "-f", "json", *extra, spec)
            avail = json.loads(out)["chosen"]["availability"]
            assert avail["table"] == (c in ("aws", "gcp")) and avail["note"], avail


# ---- GCP key, validation, HTTPS ---------------------------------------------------

def test_gcp_without_key_skips_gcp_only():
    db = new_db()
    with FixtureServer() as s:
        e = env_for(s)
        del e["CLOUDFIT_GCP_API_KEY"]
        rc, out, err = run("prices", "update", "--db", db, env=e)
        assert rc == 0, err
        assert "gcp skipped: gcp: no API key" in err and "CLOUDFIT_GCP_API_KEY" in err, err
        assert snapshots(db)[0][1] == "aws,azure,lambda"
        rc, out, err = run("prices", "update", "--db", db, "--cloud", "gcp", env=e)
        assert rc == 6 and "no API key" in err, (rc, err)  # unavailable (docs/exit-codes.md), not a failed fetch
        assert len(snapshots(db)) == 1


def test_nonsense_prices_are_kept_out():
    db = new_db()
    with FixtureServer() as s:
        good_update(s, db, "--cloud", "azure", "--region", "eastus")
        real_route = s.RequestHandlerClass.route

        def bad_route(self, path, query):
            status, body = real_route(self, path, query)
            text = body.decode().replace('"retailPrice": 98.32', '"retailPrice": 983.2')  # 10x jump
            text = text.replace('"retailPrice": 0.526', '"retailPrice": -1.0')          # negative
            text = text.replace('"retailPrice": 0.746721', '"retailPrice": 5.0')        # spot above on-demand
            return status, text.encode()
        s.RequestHandlerClass.route = bad_route
        try:
            rc, out, err = run("prices", "update", "--db", db, "--cloud", "azure", "--region", "eastus", env=env_for(s))
            rc2, out2, err2 = run("prices", "update", "--db", db, "--cloud", "azure", "--region", "eastus",
                                  "--max-price-change", "20", env=env_for(s))
        finally:
            s.RequestHandlerClass.route = real_route
    assert rc == 0, err
    assert "Standard_ND96isr_H100_v5 (8×H100): on-demand price moved from 98.32 to 983.2 (more than 3×); kept out" in err, err
    assert "Standard_NC4as_T4_v3 (1×T4): on-demand price -1 is not a positive price; kept out" in err, err
    assert "spot price 5 is above the on-demand price 3.673; kept out" in err, err
    rows = {r[2]: r for r in refreshed(db, 2)}
    assert "Standard_NC4as_T4_v3" in rows and rows["Standard_NC4as_T4_v3"][5] == 0.526  # spot refreshed, od kept
    assert rows["Standard_NC24ads_A100_v4"][6] == 0.746721  # previous spot kept
    prices = {row["instance_type"]: row for row in csv.DictReader(io.StringIO(snapshots(db)[1][4]))
              if row["cloud"] == "azure" and row["region"] == "eastus"}
    assert float(prices["Standard_ND96isr_H100_v5"]["price_ondemand_usd_per_hour"]) == 98.32
    assert rc2 == 0 and "moved from 98.32" not in err2, err2
    assert refreshed(db, 3) and [r for r in refreshed(db, 3) if r[2] == "Standard_ND96isr_H100_v5"][0][5] == 983.2


def test_https_required_except_loopback():
    db = new_db()
    e = dict(BASE_ENV, CLOUDFIT_AZURE_PRICES_URL="http://prices.example.com/api/retail/prices")
    rc, out, err = run("prices", "update", "--db", db, "--cloud", "azure", env=e)
    assert rc == 2 and "only https:// (or http:// to 127.0.0.1) is allowed" in err, (rc, err)  # a bad setting
    e = dict(BASE_ENV, CLOUDFIT_AZURE_PRICES_URL="http://127.0.0.1:1/api/retail/prices", CLOUDFIT_HTTP_RETRIES="0")
    rc, out, err = run("prices", "update", "--db", db, "--cloud", "azure", "--region", "eastus", env=e)
    assert rc == 1 and ("Could not connect" in err or "Failed to connect" in err), (rc, err)
    rc, out, err = run("prices", "update", "--db", db, "--cloud", "lambda")  # no key
    assert rc == 6 and "lambda: no API key" in err and "CLOUDFIT_LAMBDA_API_KEY" in err, (rc, err)
    # an update that stored nothing leaves no new history behind (it left an empty, migrated one), and keeps
    # one that was there (here: made by a recommendation)
    assert not os.path.exists(db) and not os.path.exists(db + "-wal"), os.listdir(TMP)
    rc, out, err = run("recommend", "--db", db, "-q", os.path.join(SRC, "examples", "mlp-synthetic.json"))
    assert rc == 0 and os.path.exists(db), err
    rc, out, err = run("prices", "update", "--db", db, "--cloud", "lambda")
    assert rc == 6 and os.path.exists(db), (rc, err)
    rc, out, err = run("prices", "update", "--db", db, "--cloud", "oracle")
    assert rc == 2 and "option '--cloud': unknown cloud 'oracle'" in err, err


# ---- offline views ------------------------------------------------------------------

def test_prices_offline_from_embedded():
    rc, out, err = run("prices", "H100", "--max-catalog-age-days", "999")
    assert rc == 0 and err == "", err
    assert "p5.48xlarge" in out and "Standard_ND96isr_H100_v5" in out and "embedded; prices in use of 2026-05-20" in out, out
    rc, out, err = run("prices", "A100:8", "--spot", "--format", "json")
    assert rc == 0, err
    doc = json.loads(out)
    offers = doc["offers"]
    assert doc["catalog"]["source"] == "embedded" and offers
    assert all(o["gpus"] == 8 and o["gpu"].startswith("A100") and o["spot_usd_per_hour"] for o in offers)
    spots = [o["spot_usd_per_hour"] for o in offers]
    assert spots == sorted(spots)
    rc, out, err = run("prices", "--format", "csv", "--cloud", "aws")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rc == 0 and rows and all(r["cloud"] == "aws" for r in rows), out
    h100 = [r for r in rows if r["gpu"] == "H100"][0]
    assert float(h100["cheapest_usd_per_gpu_hr"]) > 0 and "8" in h100["gpu_counts"]
    rc, out, err = run("prices", "--format", "json")
    assert rc == 0 and {g["cloud"] for g in json.loads(out)["gpus"]} == {"aws", "azure", "gcp", "lambda"}


def test_csv_guards_formulas_from_a_snapshot():
    """Text in a stored snapshot comes from outside: a cell that starts like a
    formula is exported with a leading apostrophe, in both CSV views."""
    db = new_db()
    rc, out, err = run("recommend", "--db", db, "-q", os.path.join(SRC, "examples", "mlp-synthetic.json"))
    assert rc == 0, err  # the database, with cloudfit's tables
    rows = catalog_rows()
    header = list(rows[0].keys())
    for r in rows:
        if r["cloud"] == "lambda" and r["instance_type"] == "gpu_1x_a10":
            r["instance_type"] = '=HYPERLINK("x")'
    buf = io.StringIO()
    w = csv.DictWriter(buf, header, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    text = buf.getvalue()
    with sqlite3.connect(db) as con:
        con.execute("INSERT INTO price_snapshots (fetched_at, sources, base, row_count, content_hash, status, vms_csv,"
                    " report) VALUES ('2026-11-18T00:00:00Z', 'lambda', 'embedded', ?, ?, 'good', ?, '')",
                    (len(rows), hashlib.sha256(text.encode()).hexdigest(), text))
    rc, out, err = run("prices", "A10", "--cloud", "lambda", "--db", db, "-f", "csv")
    offers = list(csv.DictReader(io.StringIO(out)))
    assert rc == 0 and offers and {o["instance_type"] for o in offers} == {"'=HYPERLINK(\"x\")"}, (rc, out, err)
    rc, out, err = run("prices", "--cloud", "lambda", "--db", db, "-f", "csv")
    a10 = [g for g in csv.DictReader(io.StringIO(out)) if g["gpu"] == "A10"]
    assert rc == 0 and a10[0]["cheapest_instance"] == "'=HYPERLINK(\"x\")", (rc, out, err)


def test_prices_every_aws_region_and_spot_kinds():
    """Issue 14: other AWS regions are offered; every spot price says whether it is observed, listed or estimated."""
    rc, out, err = run("prices", "H100", "--cloud", "aws", "--region", "us-west-2", "-f", "json")
    assert rc == 0, err
    offers = json.loads(out)["offers"]
    assert {o["instance_type"] for o in offers} >= {"p5.48xlarge"}, offers
    assert all(o["region"] == "us-west-2" and o["zones"].startswith("usw2-") for o in offers), offers
    rc, table, err = run("prices", "H100", "--cloud", "aws", "--region", "us-west-2")
    assert rc == 0 and "p5.48xlarge" in table, (table, err)

    in_file = {(r["cloud"], r["region"], r["instance_type"]): r for r in catalog_rows()}
    for gpu in ("A100:8", "A10G:8"):
        rc, out, err = run("prices", gpu, "--spot", "-f", "json")
        assert rc == 0, err
        kinds = set()
        for o in json.loads(out)["offers"]:
            row = in_file[(o["cloud"], o["region"], o["instance_type"])]
            if o["cloud"] == "aws":
                want = "observed" if row["price_spot_usd_per_hour"] else "estimated"
            else:
                want = "listed"
            assert o["spot_kind"] == want, (o, row)
            assert o["spot_estimated"] == (want == "estimated")
            if want == "estimated":
                assert o["spot_origin"].startswith("estimated: on-demand × (1 − ") and o["spot_date"] == "2025-06-28", o
                assert o["interruptions_source"].startswith("AWS Spot Advisor band"), o
            if o["cloud"] in ("gcp", "azure"):
                assert o["interruptions_source"].startswith("default"), o
            kinds.add(want)
        rc, table, err = run("prices", gpu, "--spot")
        assert rc == 0, err
        for kind in kinds:
            assert " %s" % kind in table, (kind, table)
        assert "estimated = AWS on-demand × (1 − Spot Instance Advisor average savings)" in table
    # the one AWS A10G:8 offer without an observed spot price is an advisor estimate, and shown as one
    assert "estimated 2025-06-28" in table and "observed (undated)" in table, table


def test_examples_pick_launchable_offers():
    """recommend --spot allow on every example picks a (machine, region) of the availability tables."""
    p = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "scripts", "catalog", "check_launchable.py"), BIN],
                       capture_output=True, text=True, env=BASE_ENV, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    checked = [line for line in p.stdout.splitlines() if ": launchable (zones " in line]
    assert checked, p.stdout
    assert "NOT LAUNCHABLE" not in p.stdout


def test_prices_usage_errors():
    rc, out, err = run("prices", "H1OO")
    assert rc == 3 and "H1OO" in err and "hint:" in err, err
    rc, out, err = run("prices", "H100:x")
    assert rc == 2 and "positive integer" in err, err
    rc, out, err = run("prices", "--format", "xml")
    assert rc == 2, err
    rc, out, err = run("prices", "H100:3")
    assert rc == 4 and "no offer of H100 with 3" in err, err
    # An unknown cloud or region is a usage error naming the option, as recommend's (it was exit 3, unnamed)
    for args, text in ((("--cloud", "oracle"), "option '--cloud': unknown cloud 'oracle'"),
                       (("--region", "nowhere"), "option '--region': unknown region 'nowhere'")):
        rc, out, err = run("prices", *args, "H100")
        assert rc == 2 and text in err and out == "", (args, rc, err)
    # prices update checks them the same way, before it opens the history (an unknown region was exit 6)
    fresh = os.path.join(TMP, "never-made.db")
    rc, out, err = run("prices", "update", "--db", fresh, "--region", "mars-1")
    assert rc == 2 and "option '--region': unknown region 'mars-1'" in err and not os.path.exists(fresh), (rc, err)
    # A factor of 1 or less keeps out every change: refused, not silently replaced by the default 3.
    db = new_db()
    for factor in ("1", "0.5"):
        rc, out, err = run("prices", "update", "--db", db, "--cloud", "azure", "--max-price-change", factor)
        assert rc == 2 and "option '--max-price-change' expects a factor above 1" in err and "got '%s'" % factor in err, err


# ---- overrides ------------------------------------------------------------------------

def write(name, obj):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def test_price_overrides_change_prices_and_are_reported():
    ov = write("ov.json", {"discounts": [{"cloud": "lambda", "percent": 50, "note": "negotiated"}],
                           "instances": [{"cloud": "aws", "region": "us-east-1", "instance_type": "p5.48xlarge",
                                          "price_ondemand_usd_per_hr": 40.0, "note": "1-year reservation"}]})
    rc, out, err = run("prices", "H100:8", "--cloud", "aws", "--price-overrides", ov, "-f", "json")
    assert rc == 0, err
    p5 = [o for o in json.loads(out)["offers"] if o["instance_type"] == "p5.48xlarge"][0]
    assert p5["usd_per_hour"] == 40.0 and p5["price_override_rule"] == 2, p5
    db = new_db()
    rc, out, err = run("recommend", "--db", db, "-f", "json", "--price-overrides", ov, EXAMPLE)
    assert rc == 0, err
    doc = json.loads(out)
    po = doc["catalog"]["price_overrides"]
    assert po["file"] == ov and po["rules"][0]["rows_matched"] == 115 and po["rules"][1]["rows_matched"] == 1, po
    chosen = doc["chosen"]
    if chosen["cloud"] == "lambda":
        assert po["chosen_price_rule"] == 1
    rc, base, err = run("recommend", "--no-history", "-f", "json", EXAMPLE)
    assert json.loads(base)["chosen"]["total_usd"] > chosen["total_usd"]  # half-price Lambda is cheaper
    rc, out, err = run("recommend", "--no-history", "--price-overrides", ov, EXAMPLE)
    assert "price overrides from %s: 2 rules changed 116 catalog rows" % ov in out, out
    # stored snapshots never hold overridden prices: overrides are applied in memory only
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT count(*) FROM price_snapshots").fetchone()[0] == 0


def test_recommend_credits_an_override_only_with_the_price_the_plan_pays():
    """An on-demand-only discount matched the chosen spot plan's VM and was named as the source of its price (JSON
    chosen_price_rule 1, "the chosen VM's price comes from override discounts[0]") though the plan paid the
    catalog's spot price. Now the rule of the price the plan pays is named: none for that spot plan; the rule for an
    on-demand plan, in the table, JSON and markdown alike."""
    ov = write("od_only.json", {"discounts": [{"cloud": "aws", "percent": 10, "applies_to": "ondemand",
                                               "note": "EDP on-demand"}]})
    common = ("recommend", "--no-history", "--cloud", "aws", "--deadline-hours", "200", "--price-overrides", ov)
    rc, out, err = run(*common, "--spot", "only", "-f", "json", EXAMPLE)
    assert rc == 0, err
    doc = json.loads(out)
    po = doc["catalog"]["price_overrides"]
    assert doc["chosen"]["spot"] and doc["chosen"]["price"]["kind"] != "given", doc["chosen"]
    assert po["chosen_price_rule"] is None and "chosen_fallback_price_rule" not in po, po
    for fmt in ("table", "markdown"):
        rc, out, err = run(*common, "--spot", "only", "-f", fmt, EXAMPLE)
        assert rc == 0 and "price overrides from" in out, (fmt, err)
        assert "comes from override" not in out, (fmt, out)
    rc, out, err = run(*common, "--spot", "never", "-f", "json", EXAMPLE)
    assert rc == 0, err
    assert json.loads(out)["catalog"]["price_overrides"]["chosen_price_rule"] == 1, out
    for fmt in ("table", "markdown"):
        rc, out, err = run(*common, "--spot", "never", "-f", fmt, EXAMPLE)
        assert "on-demand price comes from override discounts" in out.replace("\\", ""), (fmt, out)


def test_an_instance_rule_price_says_it_is_given():
    """An instance rule's price used to keep the catalog price's kind and date: the user's $40 reservation read
    'listed, 2026-07-20 (N days old)' and counted towards the age warning; a spot price given to an offer
    without one had no kind ('-') and counted as undated. Now it is 'given', with no date and no age."""
    ov = write("given.json", {"instances": [
        {"cloud": "aws", "region": "us-east-1", "instance_type": "p5.48xlarge", "price_ondemand_usd_per_hr": 40.0},
        {"cloud": "lambda", "region": "us-east-1", "instance_type": "gpu_8x_h100_sxm5", "price_spot_usd_per_hr": 10.0}]})
    rc, out, err = run("prices", "H100:8", "--cloud", "aws", "--region", "us-east-1", "--price-overrides", ov, "-f",
                       "json")
    p5 = json.loads(out)["offers"][0]
    assert rc == 0 and p5["usd_per_hour"] == 40.0 and p5["ondemand_kind"] == "given", p5
    assert p5["ondemand_date"] is None and p5["ondemand_origin"] == "given in the price overrides, not from the " \
        "catalog", p5
    assert p5["spot_kind"] == "observed", p5  # the other price stays the catalog's
    rc, out, err = run("prices", "H100:8", "--cloud", "aws", "--region", "us-east-1", "--price-overrides", ov, "-f",
                       "csv")
    row = list(csv.DictReader(io.StringIO(out)))[0]
    assert row["ondemand_kind"] == "given" and row["ondemand_date"] == "", row
    rc, out, err = run("prices", "H100:8", "--cloud", "lambda", "--region", "us-east-1", "--price-overrides", ov)
    line = [ln for ln in out.splitlines() if "gpu_8x_h100_sxm5" in ln][0]
    assert rc == 0 and line.split()[-3:] == ["given", "15%/mo", "default"], line
    assert "undated" not in out and "undated" not in err, (out, err)
    rc, out, err = run("recommend", "--no-history", "--cloud", "aws", "--region", "us-east-1", "--gpu", "H100",
                       "--price-overrides", ov, "-f", "json", EXAMPLE)
    doc = json.loads(out)
    assert rc == 0 and doc["chosen"]["instance_type"] == "p5.48xlarge", doc["chosen"]
    assert doc["chosen"]["price"] == {"kind": "given", "date": None, "origin": "given in the price overrides, not "
                                      "from the catalog", "age_days": None}, doc["chosen"]["price"]
    assert doc["catalog"]["prices_in_use"]["offers"] == 2, doc["catalog"]  # p5.4xlarge's list price still counts


def test_ondemand_discount_below_spot_leaves_the_spot_price_out():
    """A 60 % discount on GCP A100 on-demand (the docs' "CUD-like deal" shape) left a2-highgpu-1g at 1.469 $/h
    on demand and 1.928 $/h spot, silently: prices --spot and recommend took a spot price above on-demand for a
    discount. The same prices as an instance rule are an error (exit 3, the user stated them); from a discount
    the spot price is left out, as `prices update` keeps out a spot price that is no discount, with a warning
    naming the rule, how many offers and one of them."""
    cud = write("cud.json", {"discounts": [{"cloud": "gcp", "gpu": "A100-40GB", "percent": 60,
                                            "applies_to": "ondemand", "note": "3y CUD"}]})
    rc, out, err = run("prices", "A100-40GB:1", "--cloud", "gcp", "--region", "us-central1", "--price-overrides",
                       cud, "-f", "json")
    assert rc == 0, err
    a2 = [o for o in json.loads(out)["offers"] if o["instance_type"] == "a2-highgpu-1g"][0]
    assert close(a2["usd_per_hour"], 1.469354) and a2.get("spot_usd_per_hour") is None, a2
    assert re.search(r"warning: %s: discounts\[0\] leaves the spot price of \d+ offers at or above the on-demand "
                     r"price \(gcp/\S+ a2-highgpu-1g: spot \$[\d.]+/h, on-demand \$[\d.]+/h" % re.escape(cud), err), err
    rc, out, err = run("prices", "A100-40GB:1", "--cloud", "gcp", "--price-overrides", cud, "-f", "csv")
    rows = [r for r in csv.DictReader(io.StringIO(out)) if r["spot_usd_per_hour"]]
    assert rc == 0 and all(float(r["spot_usd_per_hour"]) < float(r["usd_per_hour"]) for r in rows), rows
    rc, out, err = run("recommend", "--no-history", "-f", "json", "--cloud", "gcp", "--gpu", "A100-40GB",
                       "--price-overrides", cud, EXAMPLE)
    assert rc in (0, 4), err
    if rc == 0:
        rule = json.loads(out)["catalog"]["price_overrides"]["rules"][0]
        assert rule["spot_prices_left_out"] >= 1, rule
    # the same on-demand price as an instance rule stays an error: those are prices the user stated
    inst = write("inst.json", {"instances": [{"cloud": "gcp", "region": "us-central1", "instance_type":
                                              "a2-highgpu-1g", "price_ondemand_usd_per_hr": 1.469354}]})
    rc, out, err = run("prices", "A100-40GB:1", "--cloud", "gcp", "--price-overrides", inst)
    assert rc == 3 and "makes the spot price of gcp/us-central1 a2-highgpu-1g" in err, (rc, err)

def test_bad_override_files():
    cases = [
        ({"discounts": [{"cloud": "aws", "percnt": 5}]}, "discounts[0].percnt: unknown key"),
        ({"discounts": [{"cloud": "aws", "percent": 150}]}, "discounts[0].percent: expected a number > 0 and < 100"),
        ({"instances": [{"cloud": "aws", "instance_type": "p5.48xlarg", "price_ondemand_usd_per_hr": 1}]},
         "instances[0]: no catalog row matches aws p5.48xlarg"),
        ({"instances": [{"cloud": "aws", "instance_type": "p5.48xlarge"}]}, "needs 'price_ondemand_usd_per_hr'"),
        ({"rebates": []}, "rebates: unknown key"),
        ("{\n\"discounts\": [\n", ":3:1: invalid JSON"),
        ('{"discounts": [{"cloud": "aws", "percent": 5, "percent": 50}]}', "discounts[0].percent: duplicate key"),
        # two rules for one offer's price: the later one used to win silently
        ({"instances": [{"cloud": "aws", "region": "us-east-1", "instance_type": "p5.48xlarge",
                         "price_ondemand_usd_per_hr": 40},
                        {"cloud": "AWS", "region": "us-east-1", "instance_type": "p5.48xlarge",
                         "price_ondemand_usd_per_hr": 45, "price_spot_usd_per_hr": 20}]},
         "instances[1]: gives the on-demand price of aws/us-east-1 p5.48xlarge again (instances[0] gives it)"),
        # the same, where the later rule names no region: it covers us-east-1 too, and its $60 used to win
        ({"instances": [{"cloud": "aws", "region": "us-east-1", "instance_type": "p5.48xlarge",
                         "price_ondemand_usd_per_hr": 50},
                        {"cloud": "aws", "instance_type": "p5.48xlarge", "price_ondemand_usd_per_hr": 60}]},
         "instances[1]: gives the on-demand price of aws/us-east-1 p5.48xlarge again (instances[0] gives it)"),
        # and where one names the GPU and the other does not (gcp n1 hosts carry several GPUs)
        ({"instances": [{"cloud": "gcp", "region": "us-central1", "instance_type": "n1-highmem-8", "gpu": "T4",
                         "price_spot_usd_per_hr": 0.4},
                        {"cloud": "gcp", "region": "us-central1", "instance_type": "n1-highmem-8",
                         "price_spot_usd_per_hr": 0.5}]},
         "instances[1]: gives the spot price of gcp/us-central1 n1-highmem-8 T4 again (instances[0] gives it)"),
    ]
    for i, (body, needle) in enumerate(cases):
        path = write("bad%d.json" % i, body)
        rc, out, err = run("recommend", "--no-history", "--price-overrides", path, EXAMPLE)
        assert rc == 3 and path in err and needle in err, (needle, err)
    # an override's "gpu" reads GPU names as every GPU filter does ("Tesla T4" is T4; it matched no row), and a
    # rule whose GPU matches nothing says so, not only the VM
    tool = write("tool.json", {"instances": [{"cloud": "gcp", "region": "us-central1", "instance_type": "n1-highmem-8",
                                              "gpu": "Tesla T4", "price_ondemand_usd_per_hr": 1.0}],
                               "discounts": [{"gpu": "NVIDIA H100 80GB HBM3", "percent": 50}]})
    rc, out, err = run("prices", "--cloud", "gcp", "--region", "us-central1", "--gpu", "T4:2", "--gpu", "H100",
                       "--price-overrides", tool, "-f", "json")
    assert rc == 0 and "matches no catalog row" not in err, err
    cheapest = {g["gpu"]: g for g in json.loads(out)["gpus"]}
    assert cheapest["T4"]["price_override_rule"] == 2, cheapest["T4"]
    assert cheapest["H100"]["price_override_rule"] == 1, cheapest["H100"]
    k80 = write("k80.json", {"instances": [{"cloud": "gcp", "region": "us-central1", "instance_type": "n1-highmem-8",
                                            "gpu": "K80", "price_ondemand_usd_per_hr": 1.0}]})
    rc, out, err = run("prices", "T4", "--price-overrides", k80)
    assert rc == 3 and "instances[0]: no catalog row matches gcp/us-central1 n1-highmem-8 with GPU 'K80'" in err, err
    # one rule for the on-demand price and one for the spot price of an offer do not contradict each other
    split = write("split.json", {"instances": [
        {"cloud": "aws", "region": "us-east-1", "instance_type": "p5.48xlarge", "price_ondemand_usd_per_hr": 40},
        {"cloud": "aws", "region": "us-east-1", "instance_type": "p5.48xlarge", "price_spot_usd_per_hr": 20}]})
    rc, out, err = run("prices", "H100:8", "--cloud", "aws", "--region", "us-east-1", "--price-overrides", split,
                       "-f", "json")
    p5 = json.loads(out)["offers"][0]
    assert rc == 0 and (p5["usd_per_hour"], p5["spot_usd_per_hour"]) == (40, 20), (err, p5)


def test_aws_region_index_without_regions_fails():
    """A region index without its "regions" object (a renamed key) left every region "not in the EC2 region
    index": no offer file was read, yet the spot feed alone passed for an AWS update (exit 0, a snapshot).
    The spot feed alone is no update: AWS fails, nothing is stored."""
    def renamed(p, t):
        return t.replace('"regions"', '"Regions"') if p.endswith("region_index.json") else t
    for args in (("--cloud", "aws"), AWS_ONE):
        rc, out, err, db = update_with(renamed, *args)
        n = 1 if "--region" in args else 23
        assert rc == 1, (rc, out, err)
        assert ("aws not updated: aws: the update yielded no usable prices (none of the %d region%s asked for is in "
                "the EC2 region index http://127.0.0.1:" % (n, "" if n == 1 else "s")) in err, err
        assert snapshots(db) == [], snapshots(db)


def test_azure_page_without_next_page_link_fails():
    """A page without NextPageLink (missing or renamed) ended the listing there: a truncated price list stored
    as good. The API always sends it (null on the last page); without it the page is malformed."""
    def renamed(p, t):  # on eastus page 1, which links to page 2
        return t.replace('"NextPageLink": "', '"nextPageLink": "')

    def missing(p, t):
        doc = json.loads(t)
        if doc.get("NextPageLink"):
            doc.pop("NextPageLink")
        return json.dumps(doc)
    for edit in (renamed, missing):
        rc, out, err, db = update_with(edit, "--cloud", "azure", "--region", "eastus")
        assert rc == 1 and "azure eastus page 1: response has no 'NextPageLink' (a URL, or null on the last page)" \
            in err, (rc, out, err)
        assert snapshots(db) == [], snapshots(db)


def test_a_price_quoted_twice_at_different_prices_is_not_known():
    """Lambda listing one type twice at different prices stored whichever came last, and the AWS spot feed
    quoting one region twice (its legacy name and its code) the first, both without a word. As for Azure
    meters, offer-file rows and GCP SKUs, a price an answer contradicts is not known: the row keeps its
    previous price, in either order, and a note names it; an equal repeat is no conflict."""
    def lambda_twice(cents):
        def edit(p, t):
            if not p.endswith("/instance-types"):
                return t
            doc = json.loads(t)
            again = json.loads(json.dumps(doc["data"]["gpu_1x_a10"]))
            again["instance_type"]["price_cents_per_hour"] = cents
            doc["data"] = dict([("gpu_1x_a10_again", again)] + list(doc["data"].items()))
            return json.dumps(doc)
        return edit
    old = [r for r in catalog_rows() if r["cloud"] == "lambda" and r["instance_type"] == "gpu_1x_a10"]
    for cents, want in ((200, None), (75, 0.75)):  # the API's price is 75 cents
        rc, out, err, db = update_with(lambda_twice(cents), "--cloud", "lambda")
        assert rc == 0, err
        rows = [r for r in csv.DictReader(io.StringIO(snapshots(db)[0][4]))
                if r["cloud"] == "lambda" and r["instance_type"] == "gpu_1x_a10"]
        assert len(rows) == len(old) == 5, rows
        if want is None:
            assert "lambda: gpu_1x_a10 is listed at different prices (2 and 0.75 $/h); it keeps its previous price" \
                in err, err
            assert [r["price_ondemand_usd_per_hour"] for r in rows] == [r["price_ondemand_usd_per_hour"] for r in old]
            assert all(r["ondemand_date"] != "2026-11-18" for r in rows), rows
            assert "lambda  updated       110      110" in out, out
        else:
            assert "different prices" not in err and all(float(r["price_ondemand_usd_per_hour"]) == want for r in rows)
            assert "of the catalog's 23 types listed" in err, err  # a repeat counts once

    def spot_twice(p, t):
        if not p.endswith("/spot.json"):
            return t
        doc = json.loads(t)
        doc["config"]["regions"].append({"region": "us-east-1", "instanceTypes": [{"type": "gpu", "sizes": [
            {"size": "g5.xlarge", "valueColumns": [{"name": "linux", "prices": {"USD": "0.3000"}}]},
            {"size": "p5.48xlarge", "valueColumns": [{"name": "linux", "prices": {"USD": "26.4192"}}]}]}]})
        return json.dumps(doc)
    rc, out, err, db = update_with(spot_twice, *AWS_ONE)
    assert rc == 0, err
    assert "aws us-east-1: the spot feed quotes g5.xlarge at different prices (0.4125 and 0.3 $/h); its spot price " \
           "stays as it was" in err, err
    stored = {r["instance_type"]: r for r in csv.DictReader(io.StringIO(snapshots(db)[0][4]))
              if r["cloud"] == "aws" and r["region"] == "us-east-1"}
    cat = {r["instance_type"]: r for r in catalog_rows() if r["cloud"] == "aws" and r["region"] == "us-east-1"}
    g5 = stored["g5.xlarge"]
    assert g5["price_spot_usd_per_hour"] == cat["g5.xlarge"]["price_spot_usd_per_hour"], g5
    assert g5["spot_kind"] == cat["g5.xlarge"]["spot_kind"] and g5["ondemand_date"] == "2026-11-18", g5
    p5 = stored["p5.48xlarge"]  # quoted twice at one price: taken
    assert float(p5["price_spot_usd_per_hour"]) == 26.4192 and p5["spot_kind"] == "observed-regional", p5


def test_a_refused_redirect_is_named():
    """A redirect to plain http is refused (redirects go to https only), but the message blamed libcurl:
    'Protocol "http" not supported or disabled in libcurl'. It names the redirect and its target."""
    db = new_db()
    with FixtureServer() as s:
        s.faults = {"/api/v1/instance-types": {"kind": "redirect"}}
        s.redirect_to = "http://u:pw@10.1.2.3/prices?token=SECRET"
        rc, out, err = run("prices", "update", "--db", db, "--cloud", "lambda", env=env_for(s))
    assert rc == 1 and snapshots(db) == [], (rc, err)
    assert "lambda instance types: GET %s/api/v1/instance-types failed: the server redirected to " \
           "'http://***@10.1.2.3/prices?token=***', which is not https:// (redirects are followed to https only)" \
           % s.url in err, err
    assert "libcurl" not in err and "SECRET" not in err and "pw@" not in err, err


def main():
    return pyharness.run(globals())


if __name__ == "__main__":
    sys.exit(main())
