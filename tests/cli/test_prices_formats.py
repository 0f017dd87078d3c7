#!/usr/bin/python3
"""`cloudfit prices` in its three formats: the CSV (read with python's csv
module) carries the same values as the JSON, field for field, offer for
offer and row for row of the per-GPU summary.
Usage: test_prices_formats.py CLOUDFIT_BINARY SOURCE_DIR"""
import csv
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TMP = pyharness.temp_dir(prefix="cloudfit-prices-")
ENV = pyharness.clean_env(TMP)


def run(*args):
    p = subprocess.run([BIN, "prices", *args], capture_output=True, text=True, env=ENV, timeout=60)
    assert p.returncode == 0, (args, p.returncode, p.stderr)
    return p.stdout


def fails(*args, env=ENV):
    p = subprocess.run([BIN, "prices", *args], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode != 0, (args, p.stdout[:300])
    return p.returncode, p.stderr


def both(*args):
    return json.loads(run(*args, "-f", "json")), list(csv.DictReader(io.StringIO(run(*args, "-f", "csv"))))


def same_number(j, c):
    return (j is None and c == "") or (j is not None and c != "" and float(c) == j)


def test_offer_prices_in_csv_are_the_json_values():
    doc, rows = both("A100")
    offers = doc["offers"]
    assert len(offers) == len(rows) > 0
    for o, r in zip(offers, rows):
        for key in ("usd_per_hour", "spot_usd_per_hour", "gpu_memory_gib", "memory_gib", "network_gbps"):
            assert same_number(o[key], r[key]), (o["instance_type"], o["region"], key, o[key], r[key])


def test_summary_prices_in_csv_are_the_json_values():
    doc, rows = both()
    assert len(doc["gpus"]) == len(rows) > 0
    for g, r in zip(doc["gpus"], rows):
        for key in ("cheapest_usd_per_gpu_hr", "cheapest_spot_usd_per_gpu_hr"):
            assert same_number(g.get(key), r[key]), (g["gpu"], g["cloud"], key, g.get(key), r[key])


def test_summary_marks_overridden_prices_as_the_offers_do():
    """The offers of one GPU marked an overridden price ('*', '* price from FILE', JSON price_override_rule);
    the summary showed the same price with no mark, as if it were the catalog's."""
    path = os.path.join(TMP, "ov.json")
    with open(path, "w") as f:
        json.dump({"instances": [{"cloud": "aws", "region": "us-east-1", "instance_type": "g4dn.xlarge",
                                  "price_ondemand_usd_per_hr": 0.3, "price_spot_usd_per_hr": 0.05}]}, f)
    args = ("--cloud", "aws", "--price-overrides", path, "-q")
    offers = json.loads(run("T4", *args, "-f", "json"))["offers"]
    assert [o["price_override_rule"] for o in offers if "price_override_rule" in o] == [1]
    t4 = [g for g in json.loads(run(*args, "-f", "json"))["gpus"] if g["gpu"] == "T4"][0]
    assert t4["cheapest_usd_per_gpu_hr"] == 0.3 and t4["price_override_rule"] == 1, t4
    assert t4["cheapest_spot_usd_per_gpu_hr"] == 0.05 and t4["spot_price_override_rule"] == 1, t4
    v100 = [g for g in json.loads(run(*args, "-f", "json"))["gpus"] if g["gpu"] == "V100"][0]
    assert "price_override_rule" not in v100 and "spot_price_override_rule" not in v100, v100
    table = run(*args)
    row = [line for line in table.splitlines() if line.startswith("T4 ")][0]
    assert "0.3 *" in row and "0.05 *" in row, row
    assert "* price from " + path in table, table
    assert "* price from" not in run("--cloud", "aws", "-q")


def test_csv_names_the_override_rule_as_json_does():
    """The table marked an overridden price with '*' and the JSON named its rule (price_override_rule,
    spot_price_override_rule), but the CSV had no such column: a negotiated price read as the catalog's."""
    path = os.path.join(TMP, "ov-csv.json")
    with open(path, "w") as f:
        json.dump({"discounts": [{"cloud": "aws", "gpu": "V100", "percent": 10, "note": "EDP, \"2026\""}],
                   "instances": [{"cloud": "aws", "region": "us-east-1", "instance_type": "g4dn.xlarge",
                                  "price_ondemand_usd_per_hr": 0.3, "price_spot_usd_per_hr": 0.05}]}, f)
    args = ("--cloud", "aws", "--price-overrides", path, "-q")
    for what in (("T4",), ("V100",), ()):
        doc, rows = both(*what, *args)
        items = doc["offers"] if what else doc["gpus"]
        keys = ("price_override_rule",) if what else ("price_override_rule", "spot_price_override_rule")
        assert len(items) == len(rows) > 0
        for o, r in zip(items, rows):
            for key in keys:
                assert r[key] == (str(o[key]) if key in o else ""), (what, key, o, r)
        marked = [r[keys[0]] != "" for r in rows]
        # V100: the discount priced every aws row; T4 and the summary: some rows the catalog's
        assert all(marked) if what == ("V100",) else any(marked) and not all(marked), (what, marked)
    # without the file: the columns are there, empty
    for what in (("T4",), ()):
        rows = list(csv.DictReader(io.StringIO(run(*what, "--cloud", "aws", "-q", "-f", "csv"))))
        assert rows and "price_override_rule" in rows[0], rows[0]
        assert all(r["price_override_rule"] == "" and r.get("spot_price_override_rule", "") == "" for r in rows)
    # the summary's T4 row: the instance rule (2), both prices; V100: the discount (1)
    _, rows = both(*args)
    t4 = [r for r in rows if r["gpu"] == "T4"][0]
    v100 = [r for r in rows if r["gpu"] == "V100"][0]
    assert (t4["price_override_rule"], t4["spot_price_override_rule"]) == ("2", "2"), t4
    assert (v100["price_override_rule"], v100["spot_price_override_rule"]) == ("1", "1"), v100


def test_summary_credits_each_price_to_the_rule_that_changed_it():
    """One rule number was kept per catalog row: an on-demand-only discount marked the cheapest spot price, which
    it had not changed ('0.088 (obs.) *', spot_price_override_rule 1), and an instance rule giving only the
    on-demand price was named for a spot price an earlier discount had set."""
    path = os.path.join(TMP, "ov-per-price.json")
    with open(path, "w") as f:
        json.dump({"discounts": [{"cloud": "aws", "gpu": "T4", "percent": 10, "applies_to": "ondemand"},
                                 {"cloud": "aws", "gpu": "A100-40GB", "percent": 12}],
                   "instances": [{"cloud": "aws", "region": "us-east-1", "instance_type": "p4d.24xlarge",
                                  "price_ondemand_usd_per_hr": 10.0}]}, f)
    args = ("--cloud", "aws", "--gpu", "T4", "--gpu", "A100-40GB", "-q")
    plain = {g["gpu"]: g for g in json.loads(run(*args, "-f", "json"))["gpus"]}
    doc, rows = both(*args, "--price-overrides", path)
    got = {g["gpu"]: g for g in doc["gpus"]}
    t4, a100 = got["T4"], got["A100-40GB"]
    assert t4["cheapest_spot_usd_per_gpu_hr"] == plain["T4"]["cheapest_spot_usd_per_gpu_hr"], t4  # untouched
    assert t4.get("price_override_rule") == 1 and "spot_price_override_rule" not in t4, t4
    assert a100.get("price_override_rule") == 3 and a100.get("spot_price_override_rule") == 2, a100
    csv_rows = {r["gpu"]: r for r in rows}
    assert (csv_rows["T4"]["price_override_rule"], csv_rows["T4"]["spot_price_override_rule"]) == ("1", "")
    assert (csv_rows["A100-40GB"]["price_override_rule"], csv_rows["A100-40GB"]["spot_price_override_rule"]) == \
        ("3", "2")
    row = [line for line in run(*args, "--price-overrides", path).splitlines() if line.startswith("T4 ")][0]
    assert row.count("*") == 1 and "(obs.) *" not in row, row


def test_csv_names_the_gpu_and_the_spot_kind_as_table_and_json_do():
    doc, rows = both("A100")
    assert {o["gpu"] for o in doc["offers"]} == {r["gpu"] for r in rows}
    assert len({r["gpu"] for r in rows}) > 1  # a family: the count alone cannot say which model
    assert all(o["gpu"] == r["gpu"] for o, r in zip(doc["offers"], rows))
    doc, rows = both()
    for g, r in zip(doc["gpus"], rows):
        assert r["cheapest_spot_kind"] == (g.get("cheapest_spot_kind") or ""), (g, r)
        assert r["spot_estimated"] == ("" if "spot_estimated" not in g else str(int(g["spot_estimated"]))), (g, r)


def test_gpu_option_is_the_gpu_argument_in_every_format():
    """prices --gpu "NVIDIA A100-SXM4-40GB" printed "note: 'prices' has no option --gpu; ignored" and the whole
    summary (exit 0), and a configuration file's "gpu" did nothing to prices, though docs/config.md said it says
    where prices runs. One --gpu is the GPU argument (the same resolver: a tool's spelling, a family, GPU:N);
    several cut the summary to those GPUs, in the table, JSON and CSV alike."""
    for fmt in ("table", "json", "csv"):
        for gpu in ("NVIDIA A100-SXM4-40GB", "A100:8", "A100"):
            assert run("--gpu", gpu, "-q", "-f", fmt) == run(gpu, "-q", "-f", fmt), (gpu, fmt)
    # several: the summary of those, every format the same rows
    doc, rows = both("--gpu", "A100-40GB", "--gpu", "Tesla T4", "-q")
    assert {g["gpu"] for g in doc["gpus"]} == {"A100-40GB", "T4"}, doc["gpus"]
    assert [(g["gpu"], g["cloud"]) for g in doc["gpus"]] == [(r["gpu"], r["cloud"]) for r in rows]
    table = run("--gpu", "A100-40GB", "--gpu", "Tesla T4", "-q")
    firsts = {line.split()[0] for line in table.splitlines()[1:] if line and not line.startswith(" ")}
    assert {"A100-40GB", "T4"} <= firsts and "H100" not in firsts and "V100" not in firsts, table
    # a family and GPU:N in the list: only those counts of that entry
    doc, _ = both("--gpu", "A100:8", "--gpu", "T4", "-q")
    a100 = [g for g in doc["gpus"] if g["gpu"].startswith("A100")]
    assert len(a100) > 1 and all(g["gpu_counts"] == [8] for g in a100), a100
    # an unknown GPU: the argument's error, message, hint and exit code
    for args in (("--gpu", "Z9"), ("--gpu", "T4", "--gpu", "Z9")):
        assert fails(*args) == fails("Z9"), args
    assert fails("--gpu", "A100:x") == fails("A100:x")
    # the argument and --gpu: the same GPU is fine, two are a usage error
    assert run("A100-40GB", "--gpu", "NVIDIA A100-SXM4-40GB", "-q") == run("A100-40GB", "-q")
    rc, err = fails("A100", "--gpu", "T4")
    assert rc == 2 and "'A100'" in err and "'T4'" in err and "different GPUs" in err, err
    # the configuration file's "gpu" (top level or prices'): as --gpu; the argument replaces it
    cfg = os.path.join(TMP, "gpu-config.json")
    for doc_ in ({"gpu": "T4"}, {"prices": {"gpu": "T4"}}):
        with open(cfg, "w") as f:
            json.dump(doc_, f)
        p = subprocess.run([BIN, "prices", "-q"], capture_output=True, text=True, timeout=60,
                           env=dict(ENV, CLOUDFIT_CONFIG=cfg))
        assert p.returncode == 0 and p.stdout == run("T4", "-q"), (doc_, p.stderr)
        p = subprocess.run([BIN, "prices", "V100", "-q"], capture_output=True, text=True, timeout=60,
                           env=dict(ENV, CLOUDFIT_CONFIG=cfg))
        assert p.returncode == 0 and p.stdout == run("V100", "-q"), (doc_, p.stderr)


def test_filters_that_leave_no_offer_together_say_so_in_every_format():
    """--cloud lambda --spot (Lambda sells no spot VM) printed an empty summary, exit 0; T4 --cloud lambda said
    only "no offer of T4 matches", naming no filter."""
    for args in (("--cloud", "lambda", "--spot"), ("T4", "--cloud", "lambda")):
        for fmt in ("table", "json", "csv"):
            rc, err = fails(*args, "-f", fmt)
            assert rc == 4 and "passes the filters together (clouds lambda" in err, (args, fmt, rc, err)
            assert "offers without the cloud filter" in err, err


if __name__ == "__main__":
    sys.exit(pyharness.run(dict(globals())))
