"""The launchers' own rules, for the launch-spec tests (tests/launch/).

Each check names where its rule comes from. The schemas are data files
under tests/vendor/ (README there: repository, commit, path):

* SkyPilot: tests/vendor/skypilot/{task,resources}.schema.json, transcribed
  from sky/utils/schemas.py; validated the way sky/utils/common_utils.py
  validate_schema() does (jsonschema Draft 7 extended with SkyPilot's
  case_insensitive_enum keyword, sky/utils/validator.py).
* Kubeflow Training Operator v1.9.0: the PyTorchJob CRD's v1 schema
  (manifests/base/crds/kubeflow.org_pytorchjobs.yaml, transcribed in
  tests/vendor/kubeflow/pytorchjob.v1.schema.json), with unknown fields
  refused as `kubectl apply
  --validate=strict` does; and the validating webhook's rules
  (pkg/webhooks/pytorch/pytorchjob_webhook.go, pkg/common/util/webhooks.go),
  reimplemented below, always.
* Kubernetes object rules the API server applies to the pod template
  (k8s.io/apimachinery/pkg/util/validation: DNS-1035/1123 labels, qualified
  names, label values; pkg/apis/core/validation: tolerations), and the
  kubelet's $(VAR) expansion of container commands
  (third_party/forked/golang/expansion/expand.go).
* torch 1.13's torchrun: torch.distributed.run.get_args_parser() itself.
"""
import json
import os
import re

# jsonschema and yaml are imported where they are used: they take ~0.15 s of
# CPU to import, and most calls of the fake launchers (sky down, kubectl get,
# logs, delete), each a new process, validate nothing.

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
VENDOR = os.path.join(TESTS, "vendor")


def vendor_path(*parts):
    """A vendored file: tests/vendor/..., else $CLOUDFIT_VENDOR_DIR/...; None when absent."""
    for root in (VENDOR, os.environ.get("CLOUDFIT_VENDOR_DIR", "")):
        if root and os.path.exists(os.path.join(root, *parts)):
            return os.path.join(root, *parts)
    return None


# ---- SkyPilot ------------------------------------------------------------------------

def _case_insensitive_enum(validator, enums, instance, schema):  # sky/utils/validator.py
    import jsonschema
    if isinstance(instance, str) and instance.lower() not in [e.lower() for e in enums]:
        yield jsonschema.ValidationError(f"{instance!r} is not one of {enums!r}")


def _case_sensitive_enum(validator, enums, instance, schema):
    import jsonschema
    if instance not in enums:
        yield jsonschema.ValidationError(f"{instance!r} is not one of {enums!r}")


_sky_validator = []


def SkyValidator(schema):  # noqa: N802 (was the class itself)
    """jsonschema's Draft 7 validator extended as SkyPilot's, for `schema`."""
    if not _sky_validator:
        import jsonschema
        _sky_validator.append(jsonschema.validators.extend(
            jsonschema.Draft7Validator,
            validators={"case_insensitive_enum": _case_insensitive_enum, "case_sensitive_enum": _case_sensitive_enum}))
    return _sky_validator[0](schema)

# sky/skylet/constants.py CLUSTER_NAME_VALID_REGEX (sky launch -c, sky jobs launch -n)
SKY_CLUSTER_NAME = re.compile(r"[a-zA-Z]([-_.a-zA-Z0-9]*[a-zA-Z0-9])?")
# sky/task.py _VALID_NAME_REGEX (the task's name:)
SKY_TASK_NAME = re.compile(r"[a-z0-9]+(?:[._-]{1,2}[a-z0-9]+)*")


def sky_schema(name):
    return json.load(open(os.path.join(VENDOR, "skypilot", f"{name}.schema.json")))


def check_skypilot_task(doc):
    """Errors (strings) of a SkyPilot task document, [] when it is valid."""
    errors = []
    for e in SkyValidator(sky_schema("task")).iter_errors({k: v for k, v in doc.items() if v is not None}):
        errors.append(f"task schema: {e.message} at {list(e.path)}")
    res = doc.get("resources")
    if isinstance(res, dict):
        for e in SkyValidator(sky_schema("resources")).iter_errors(res):
            errors.append(f"resources schema: {e.message} at {list(e.path)}")
    name = doc.get("name")
    if name is not None and not SKY_TASK_NAME.fullmatch(name):
        errors.append(f"task name {name!r} is not valid for sky/task.py")
    return errors


# ---- Kubernetes names ------------------------------------------------------------------

DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")  # IsEnvVarName


def is_dns1035(s):
    return len(s) <= 63 and bool(DNS1035.fullmatch(s))


def is_qualified_name(s):
    """IsQualifiedName: NAME or PREFIX/NAME; a "/" needs a prefix ("/x": "prefix part must be non-empty")."""
    prefix, slash, name = s.rpartition("/")
    if slash and (len(prefix) > 253 or not DNS1123_SUBDOMAIN.fullmatch(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(QUALIFIED_NAME.fullmatch(name))


def is_label_value(s):
    return len(s) <= 63 and bool(LABEL_VALUE.fullmatch(s))


def k8s_expand(text, env):
    """The kubelet's expansion of $(VAR) in command/args (expansion.Expand)."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "$" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "(":
                end = text.find(")", i + 2)
                if end >= 0:
                    name = text[i + 2:end]
                    out.append(env[name] if name in env else text[i:end + 1])
                    i = end + 1
                    continue
        out.append(text[i])
        i += 1
    return "".join(out)


# ---- PyTorchJob: the operator's webhook ------------------------------------------------

MANAGED_BY = {"kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue"}  # v1 constants


def check_pytorchjob_webhook(job):
    """validatePyTorchJob() of pytorchjob_webhook.go (v1.9.0), on create."""
    errors = []
    name = job.get("metadata", {}).get("name", "")
    if not is_dns1035(name):  # apimachineryvalidation.NameIsDNS1035Label
        errors.append(f"metadata.name {name!r} is not a DNS-1035 label")
    spec = job.get("spec", {})
    managed = spec.get("runPolicy", {}).get("managedBy")
    if managed is not None and managed not in MANAGED_BY:
        errors.append(f"spec.runPolicy.managedBy {managed!r} is not supported")
    rspecs = spec.get("pytorchReplicaSpecs")
    ep = spec.get("elasticPolicy")
    if ep is not None:
        if not rspecs or "Worker" not in rspecs:
            errors.append("spec.pytorchReplicaSpecs[Worker]: must be configured if elastic policy is used")
        if ep.get("nProcPerNode") is not None and spec.get("nprocPerNode") is not None:
            errors.append("spec.elasticPolicy.nProcPerNode: must not be used with spec.nprocPerNode")
    if rspecs is None:
        errors.append("spec.pytorchReplicaSpecs: must be required")
        return errors
    for rtype, rspec in rspecs.items():
        if rtype not in ("Master", "Worker"):
            errors.append(f"spec.pytorchReplicaSpecs[{rtype}]: not supported")
        containers = (rspec or {}).get("template", {}).get("spec", {}).get("containers") or []
        if not containers:
            errors.append(f"spec.pytorchReplicaSpecs[{rtype}].template.spec.containers: must be specified")
        for i, c in enumerate(containers):
            if not c.get("image"):
                errors.append(f"containers[{i}].image: must be required")
        if not any(c.get("name") == "pytorch" for c in containers):
            errors.append(f"{rtype}: must have at least one container with name pytorch")
        replicas = (rspec or {}).get("replicas")
        if rtype == "Master" and replicas != 1:
            errors.append(f"spec.pytorchReplicaSpecs[Master].replicas: must be 1")
        elif rtype != "Master" and replicas is not None and replicas < 1:
            errors.append(f"spec.pytorchReplicaSpecs[{rtype}].replicas: must be at least 1")
    return errors


def check_pod_template(rtype, pod, job_name, replicas):
    """API-server rules for the parts cloudfit writes into each pod template."""
    errors = []
    for i in range(replicas):  # the operator names each replica's pod and service <job>-<type>-<i>
        svc = f"{job_name}-{rtype.lower()}-{i}"
        if not is_dns1035(svc):
            errors.append(f"service name {svc!r} is not a DNS-1035 label")
            break
    for k, v in pod.get("nodeSelector", {}).items():
        if not is_qualified_name(k) or not isinstance(v, str) or not is_label_value(v):
            errors.append(f"nodeSelector {k!r}: {v!r} is not a label")
    for t in pod.get("tolerations", []):
        op = t.get("operator", "Equal")
        if op not in ("Equal", "Exists"):
            errors.append(f"toleration operator {op!r}")
        if op == "Equal" and not is_label_value(str(t.get("value", ""))):
            errors.append(f"toleration value {t.get('value')!r}")
        if op == "Exists" and t.get("value"):
            errors.append("toleration value must be empty with Exists")
        if "key" in t and not is_qualified_name(t["key"]):
            errors.append(f"toleration key {t['key']!r}")
        if t.get("effect", "") not in ("", "NoSchedule", "PreferNoSchedule", "NoExecute"):
            errors.append(f"toleration effect {t.get('effect')!r}")
    for c in pod.get("containers", []):
        if not (len(c.get("name", "")) <= 63 and DNS1123_LABEL.fullmatch(c.get("name", ""))):
            errors.append(f"container name {c.get('name')!r}")
        if not all(isinstance(w, str) for w in c.get("command", [])):
            errors.append("command words must be strings")
        for e in c.get("env", []):
            if not ENV_NAME.fullmatch(e.get("name", "")) or not isinstance(e.get("value", ""), str):
                errors.append(f"env {e!r}")
        for k, v in c.get("resources", {}).get("limits", {}).items():
            if not is_qualified_name(k):
                errors.append(f"resource name {k!r}")
    return errors


# ---- PyTorchJob: the CRD schema ------------------------------------------------------------

def _strict(schema):
    """OpenAPI v3 (CRD) → JSON schema that refuses unknown fields like
    `kubectl apply --validate=strict` (server-side field validation)."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items() if not k.startswith("x-kubernetes-") and k != "nullable"}
        if schema.get("x-kubernetes-int-or-string"):
            out.setdefault("anyOf", [{"type": "integer"}, {"type": "string"}])
        if (schema.get("type") == "object" and "properties" in schema and "additionalProperties" not in schema
                and not schema.get("x-kubernetes-preserve-unknown-fields")):
            out["additionalProperties"] = False
        if schema.get("nullable") and "type" in out:
            out["type"] = [out["type"], "null"]
        return out
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    return schema


_crd_cache = {}


def crd_schema():
    """The PyTorchJob v1 openAPIV3Schema: the transcription in
    tests/vendor/kubeflow/pytorchjob.v1.schema.json, else the CRD file itself
    when someone put it in tests/vendor/ or $CLOUDFIT_VENDOR_DIR; None when
    neither is there."""
    path = vendor_path("kubeflow", "pytorchjob.v1.schema.json")
    if path:
        return json.load(open(path))
    path = vendor_path("kubeflow", "kubeflow.org_pytorchjobs.yaml")
    if not path:
        return None
    import yaml
    crd = yaml.safe_load(open(path))
    return next(v for v in crd["spec"]["versions"] if v["name"] == "v1")["schema"]["openAPIV3Schema"]


def crd_validator():
    """A validator for PyTorchJob objects from the vendored CRD schema; None when absent."""
    if "v" not in _crd_cache:
        import jsonschema
        schema = crd_schema()
        _crd_cache["v"] = jsonschema.Draft7Validator(_strict(schema)) if schema is not None else None
    return _crd_cache["v"]


def check_pytorchjob_crd(job):
    v = crd_validator()
    if v is None:
        return None
    return [f"CRD schema: {e.message} at {list(e.path)}" for e in v.iter_errors(job)]


# ---- torchrun --------------------------------------------------------------------------------

def torch_parser():
    """torch.distributed.run's own parser, or None when torch cannot be imported."""
    try:
        from torch.distributed.run import get_args_parser
    except Exception:  # noqa: BLE001 (no torch here)
        return None
    return get_args_parser()


def parse_torchrun(parser, argv):
    """Parsed torchrun arguments (a dict); raises AssertionError on a flag torch refuses."""
    try:
        return vars(parser.parse_args(argv))
    except SystemExit as e:
        raise AssertionError(f"torch.distributed.run refuses {argv}: exit {e.code}") from None
