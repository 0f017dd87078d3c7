#!/usr/bin/python3
"""End-to-end tests: what recommend says the inter-node network rests on
(issue 25's honesty about extrapolation), on a spec whose profile is given
inline (profile.gpus.T4: compute_s and sync_s.inter_node_gbps, the rate of
the 2-node × 1-GPU probe, docs/spec.md).
- A plan on more than 2 nodes is extrapolated: the table's note "N nodes,
  but the network was measured on at most 2" and JSON
  network_measured_max_nodes, as for a fitted probe (there were none, and
  the explanation claimed "fitted from multi-node measurements").
- A GPU type carried over from that profile says where its rate comes
  from, not "a measurement on a 0 Gbit/s NIC".
- Without sync_s on Lambda (a NIC the catalog does not give) the network
  is a guess whose step interval spans the catalog's NICs: the table, the
  markdown comment and the JSON (explanation.network) all say so.
Usage: test_network_text.py CLOUDFIT_BINARY SOURCE_DIR"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = sys.argv[1], sys.argv[2]
TMP = pyharness.temp_dir(prefix="cloudfit-network-text-")
ENV = pyharness.clean_env(TMP)
SPEC = os.path.join(TMP, "inline.json")
with open(SPEC, "w") as f:
    json.dump({"name": "inline",
               "model": {"parameters": 25557032, "gradient_bytes": 4, "precision": "fp16",
                         "flops_per_sample": 24.6e9},
               "data": {"samples": 1281167},
               "training": {"epochs": 90, "batch": 256, "lr": 0.1, "optimizer": "momentum"},
               "profile": {"noise_scale": 8000,
                           "gpus": {"T4": {"compute_s": {"alpha": 0.02, "beta": 0.0065}, "max_local_batch": 256,
                                           "sync_s": {"inter_node_gbps": 5}}}},
               "search": {"objective": "time", "deadline_hours": 200, "budget_usd": 5000, "max_nodes": 16}}, f)


NOSYNC = os.path.join(TMP, "nosync.json")
with open(SPEC) as f:
    nosync = json.load(f)
del nosync["profile"]["gpus"]["T4"]["sync_s"]
nosync["name"] = "nosync"
with open(NOSYNC, "w") as f:
    json.dump(nosync, f)


def recommend(*args, spec=SPEC):
    p = subprocess.run([BIN, "recommend", "--no-history", "-q", *args, spec], capture_output=True, text=True,
                       env=ENV, timeout=120, cwd=TMP)
    assert p.returncode == 0, (args, p.returncode, p.stderr)
    return p.stdout


def test_inline_rate_is_measured_on_two_nodes():
    doc = json.loads(recommend("--gpu", "T4", "-f", "json"))
    chosen = doc["chosen"]
    assert chosen["nodes"] > 2, chosen["nodes"]
    assert chosen["network_measured_max_nodes"] == 2, chosen.get("network_measured_max_nodes")
    t4 = [g for g in doc["explanation"]["gpus"] if g["gpu"] == "T4"][0]
    assert "sync_s.inter_node_gbps" in (t4["network_note"] or ""), t4["network_note"]
    table = recommend("--gpu", "T4")
    assert f"note: {chosen['nodes']} nodes, but the network was measured on at most 2" in table, table
    assert "multi-node measurements" not in table, table
    markdown = recommend("--gpu", "T4", "-f", "markdown")
    assert "but the network was measured on at most 2" in markdown, markdown


def test_carried_rate_names_no_zero_nic():
    table = recommend("--gpu", "L4")
    line = [x for x in table.splitlines() if x.startswith("  - network:")][0]
    assert "0 Gbit/s NIC" not in line.replace("50 Gbit/s NIC", ""), line
    assert "carried as is from T4's profile" in line, line


def test_unknown_nic_guess_is_said_in_every_format():
    doc = json.loads(recommend("--cloud", "lambda", "-f", "json", spec=NOSYNC))
    chosen = doc["chosen"]
    assert chosen["nodes"] > 1 and chosen["provenance"]["network"] == "default", chosen
    net = doc["explanation"]["network"]
    assert net["provenance"] == "default" and net["nic_gbps"] is None, net
    assert net["interval_spans_gbps"] == [2.5, 6400], net
    table = recommend("--cloud", "lambda", spec=NOSYNC)
    line = [x for x in table.splitlines() if x.startswith("  - network:")][0]
    assert line == "  - network: " + net["note"], (line, net["note"])
    assert "the NIC is unknown, so the step's 80% interval spans the catalog's NICs, 2.5 to 6400 Gbit/s" in line, line
    markdown = recommend("--cloud", "lambda", "-f", "markdown", spec=NOSYNC)
    assert "- network: " in markdown and "spans the catalog's NICs, 2.5 to 6400 Gbit/s" in markdown, markdown
    # a measured rate on a known NIC: no span
    net = json.loads(recommend("--gpu", "T4", "-f", "json"))["explanation"]["network"]
    assert net["interval_spans_gbps"] is None and net["provenance"] != "default", net


def test_markdown_step_has_the_tables_interval():
    """The step's 80% interval (0.107–1.833 s on the guessed NIC: what the guess costs) is in the table's Why and
    was left out of the markdown's step line."""
    import re
    table = recommend("--cloud", "lambda", spec=NOSYNC)
    markdown = recommend("--cloud", "lambda", "-f", "markdown", spec=NOSYNC)
    want = re.search(r"^  - step ([\d.]+) s \(80%: ([\d.]+–[\d.]+)\)", table, re.M)
    assert want, table
    got = re.search(r"^- step ([\d.]+) s \(80%: ([\d.]+–[\d.]+); compute", markdown, re.M)
    assert got and got.groups() == want.groups(), (want.groups(), markdown)


def main():
    return pyharness.run(globals())


if __name__ == "__main__":
    sys.exit(main())
