"""SkyPilot's names for the GPUs of a catalog VM, from the vendored slice of
its catalog (tests/vendor/skypilot-catalog/, README there: sources and what
was kept). Used by test_launch_specs.py (the names cloudfit writes) and the
fake `sky` of the runner tests (which GPUs a launched cluster has)."""
import csv
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
VENDOR = os.path.join(os.path.dirname(HERE), "vendor", "skypilot-catalog")


def _rows(name):
    return list(csv.DictReader(open(os.path.join(VENDOR, name))))


AWS = _rows("aws_vms.csv")
LAMBDA = _rows("lambda_vms.csv")
GCP_FIXED = _rows("gcp_accelerator_instance_types.csv")
GCP_ATTACHED = _rows("gcp_attached_accelerators.csv")
AZURE_FAMILY_GPU = {r["Family"]: r["SkyPilotGpuName"] for r in _rows("azure_families.csv")}
AZURE_TYPE_FAMILY = {r["InstanceType"]: r["Family"] for r in _rows("azure_instance_families.csv")}


def _family(cloud, instance_type):
    """The rows that name the same GPU: an AWS family (text before '.'), a
    Lambda GPU type (the name without its gpu_Nx_ count)."""
    if cloud == "aws":
        return instance_type.split(".")[0]
    if cloud == "lambda":
        return re.sub(r"^gpu_\d+x_", "", instance_type)
    return instance_type


def fixed_gpus(cloud, instance_type, siblings=()):
    """(name, count, how) of the GPUs that come with the instance type, or
    None when the type carries none of its own (GCP N1: GPUs are attached).
    `how` says which rows decided: 'type' (that instance type's own row),
    'family' (another size of the same family) or 'sibling' (one of
    `siblings`, instance types with the same GPU in cloudfit's catalog).
    KeyError when the slice cannot say."""
    if cloud == "gcp":
        for r in GCP_FIXED:
            if r["InstanceType"] == instance_type:
                return r["AcceleratorName"], int(r["AcceleratorCount"]), "type"
        return None
    if cloud == "azure":
        family = AZURE_TYPE_FAMILY[instance_type]
        return AZURE_FAMILY_GPU[family], None, "type"
    rows = AWS if cloud == "aws" else LAMBDA if cloud == "lambda" else []
    for r in rows:
        if r["InstanceType"] == instance_type:
            return r["AcceleratorName"], int(float(r["AcceleratorCount"])), "type"
    for r in rows:
        if _family(cloud, r["InstanceType"]) == _family(cloud, instance_type):
            return r["AcceleratorName"], None, "family"
    for r in rows:
        if r["InstanceType"] in siblings:
            return r["AcceleratorName"], None, "sibling"
    raise KeyError(f"{cloud} {instance_type} is not in the vendored SkyPilot catalog slice")


def attachable(cloud, name, count):
    """Whether SkyPilot attaches `count` GPUs named `name` to a host (GCP N1)."""
    return cloud == "gcp" and any(r["AcceleratorName"] == name and int(r["AcceleratorCount"]) == count
                                  for r in GCP_ATTACHED)


def attachable_names(cloud):
    return sorted({r["AcceleratorName"] for r in GCP_ATTACHED}) if cloud == "gcp" else []
