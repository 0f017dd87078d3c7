#!/usr/bin/env python3
"""Writes pytorchjob.v1.schema.json, the part of the PyTorchJob CRD that the
launch-spec tests need, from the Training Operator's CRD file.

    git -C training-operator show v1.9.0:manifests/base/crds/kubeflow.org_pytorchjobs.yaml > crd.yaml
    python3 tests/vendor/kubeflow/transcribe.py crd.yaml > tests/vendor/kubeflow/pytorchjob.v1.schema.json

What is kept (README.md beside this file): the `v1` openAPIV3Schema in full
(types, formats, enums, `required`, every property name, int-or-string,
preserve-unknown-fields, nullable) along the paths cloudfit writes; one
level further every property name with its type only, so an unknown or
misspelt field next to them is still refused; nothing below that, and no
descriptions or list/map annotations.
"""
import json
import sys

import yaml

# Paths cloudfit writes ("*" = a value of a map, "[]" = a list item): kept in
# full, with their ancestors.
R = ("spec", "pytorchReplicaSpecs", "*")
POD = R + ("template", "spec")
CONTAINER = POD + ("containers", "[]")
FULL = [
    ("apiVersion",), ("kind",), ("metadata",),
    ("spec", "nprocPerNode"), ("spec", "elasticPolicy"), ("spec", "runPolicy"),
    R + ("replicas",), R + ("restartPolicy",), R + ("template", "metadata"),
    POD + ("nodeSelector",), POD + ("tolerations",),
    CONTAINER + ("name",), CONTAINER + ("image",), CONTAINER + ("imagePullPolicy",),
    CONTAINER + ("command",), CONTAINER + ("args",), CONTAINER + ("workingDir",),
    CONTAINER + ("env",), CONTAINER + ("resources",),
]
# Inside a kept path, but never written (HPA metric specs): type only.
SHALLOW = [("spec", "elasticPolicy", "metrics")]
KEYS = ("type", "format", "enum", "required", "nullable", "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields", "minimum", "maximum", "pattern")


def related(path):
    return any(path[:len(f)] == f or f[:len(path)] == path for f in FULL)


def shallow(node):
    return {k: node[k] for k in ("type", "nullable", "x-kubernetes-int-or-string",
                                  "x-kubernetes-preserve-unknown-fields") if k in node}


def prune(node, path):
    if path in SHALLOW or not related(path):
        return shallow(node)
    out = {k: node[k] for k in KEYS if k in node}
    if "properties" in node:
        out["properties"] = {k: prune(v, path + (k,)) for k, v in sorted(node["properties"].items())}
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = prune(node["additionalProperties"], path + ("*",))
    elif "additionalProperties" in node:
        out["additionalProperties"] = node["additionalProperties"]
    if "items" in node:
        out["items"] = prune(node["items"], path + ("[]",))
    for k in ("anyOf", "allOf", "oneOf"):
        if k in node:
            out[k] = [prune(s, path) for s in node[k]]
    return out


def main():
    crd = yaml.safe_load(open(sys.argv[1]))
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    schema = prune(version["schema"]["openAPIV3Schema"], ())
    json.dump({"$comment": "transcribed by tests/vendor/kubeflow/transcribe.py; see README.md", **schema},
              sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
