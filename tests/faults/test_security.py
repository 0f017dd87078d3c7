#!/usr/bin/python3
"""Security (docs/reliability.md): commands run without a shell, each
value one argv word (spec paths and command words with ; $(...) backticks
newlines quotes); the environment passed explicitly (cloudfit's secrets
not passed on); HTTPS verified for every host (a self-signed server fails
unless CLOUDFIT_CA_BUNDLE names its CA); API keys and URL credentials never
in the database, --out-file, progress lines, logs or messages, after
failures too. (Runner templates: tests/test_exec_injection.c.)
Usage: test_security.py CLOUDFIT_BINARY SOURCE_DIR"""
import glob
import json
import os
import shutil
import ssl
import subprocess
import sys

from fhelp import BIN, ENV, PY, SRC, Skip, example, main, run, run_bytes, tmp, write

sys.path.insert(0, os.path.join(SRC, "tests", "pricing"))
from fixture_server import FixtureServer  # noqa: E402

ARGV_PROBE = r'''
import json, os, sys
with open(os.environ["ARGV_OUT"], "w") as f:
    json.dump({"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}, f)
w, n = int(os.environ["CLOUDFIT_WARMUP_STEPS"]), int(os.environ["CLOUDFIT_STEPS"])
print(json.dumps({"event": "device", "name": "NVIDIA A100-SXM4-40GB", "memory_gib": 40}), flush=True)
for i in range(w + n):
    print(json.dumps({"event": "step", "step": i + 1, "time_s": 0.01,
                      "samples": int(os.environ["CLOUDFIT_LOCAL_BATCH"]) * int(os.environ["CLOUDFIT_MICRO_BATCHES"])}), flush=True)
print(json.dumps({"event": "done"}), flush=True)
'''
EVIL = ["; touch PWNED1", "$(touch PWNED2)", "`touch PWNED3`", "a\nb", "it's \"quoted\"", "*", "$HOME", " "]


def test_spec_command_and_paths_are_never_interpreted():
    folder = os.path.join(tmp(), "we ird; $(touch PWNED4) `touch PWNED5`")
    os.makedirs(folder)
    probe = os.path.join(folder, "probe $(x).py")
    with open(probe, "w") as f:
        f.write(ARGV_PROBE)
    spec = os.path.join(folder, "model;`x`.json")
    with open(spec, "w") as f:
        json.dump({"name": "inject", "model": {"parameters": 1000000}, "data": {"samples": 10000},
                   "training": {"epochs": 1, "batch": 32, "lr": 0.1},
                   "profile": {"backend": "exec", "command": [PY, probe, *EVIL], "local_batches": [8],
                               "steps": 3}}, f)
    out_json = os.path.join(folder, "argv.json")
    env = dict(ENV, ARGV_OUT=out_json, CLOUDFIT_GCP_API_KEY="GCPK3Y-SECRET",
               CLOUDFIT_AZURE_PRICES_URL="https://user:s3cretPW@example.invalid/x", MY_TRAINING_SETTING="kept",
               CLOUDFIT_DB="postgresql://ci:s3cretDB@db.invalid/cloudfit")  # --db wins; the probe must not see it
    rc, out, err = run("profile", "--db", os.path.join(folder, "h.db"), spec, env=env, cwd=folder)
    assert rc == 0, err
    seen = json.load(open(out_json))
    assert seen["argv"] == EVIL, seen["argv"]  # sys.argv[0] is the probe itself
    assert not glob.glob(os.path.join(folder, "PWNED*")) and not glob.glob("PWNED*")
    # the environment, explicitly: the run's variables, the user's, not cloudfit's secrets
    e = seen["env"]
    assert e["CLOUDFIT_LOCAL_BATCH"].isdigit() and e["CLOUDFIT_STEPS"].isdigit() and e["MY_TRAINING_SETTING"] == "kept"
    assert "CLOUDFIT_GCP_API_KEY" not in e and "CLOUDFIT_AZURE_PRICES_URL" not in e, sorted(e)
    assert "CLOUDFIT_DB" not in e and not any("s3cretDB" in v for v in e.values()), sorted(e)


def self_signed(folder):
    key, cert = os.path.join(folder, "key.pem"), os.path.join(folder, "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return key, cert


class TLSServer(FixtureServer):
    def __init__(self, cert, key):
        super().__init__()
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.socket = ctx.wrap_socket(self.socket, server_side=True)

    @property
    def url(self):
        return "https://127.0.0.1:%d" % self.server_address[1]


def test_https_verified_unless_the_ca_is_given():
    if not shutil.which("openssl"):
        raise Skip("no openssl command to make a certificate")
    folder = tmp()
    key, cert = self_signed(folder)
    with TLSServer(cert, key) as server:
        base = dict(ENV, **server.env())
        for cloud, region in (("azure", "eastus"), ("gcp", "us-central1")):
            db = os.path.join(folder, cloud + ".db")
            requests_before = len(server.log)
            rc, out, err = run("prices", "update", "--db", db, "--cloud", cloud, "--region", region, env=base)
            assert rc == 1 and "certificate" in err and "CLOUDFIT_CA_BUNDLE" in err, (cloud, rc, err)
            assert len(server.log) == requests_before, "a request got through an unverified connection"
            rc, out, err = run("prices", "update", "--db", db, "--cloud", cloud, "--region", region,
                               env=dict(base, CLOUDFIT_CA_BUNDLE=cert))
            assert rc == 0, (cloud, rc, err)
        rc, out, err = run("prices", "update", "--db", os.path.join(folder, "x.db"), "--cloud", "azure",
                           env=dict(base, CLOUDFIT_CA_BUNDLE=os.path.join(folder, "missing.pem")))
        assert rc == 2 and "CLOUDFIT_CA_BUNDLE: cannot read" in err, (rc, err)


SECRETS = (b"s3cretPW", b"GCPK3Y-SECRET", b"T0KEN-SECRET")


def assert_no_secret(where, data):
    for s in SECRETS:
        assert s not in data, (where, s, data[max(0, data.find(s) - 200):data.find(s) + 200])


def test_secrets_never_written_even_after_failures():
    folder = tmp()
    db = os.path.join(folder, "h.db")
    with FixtureServer() as server:
        e = server.env()
        port_url = server.url.replace("http://", "http://user:s3cretPW@")
        env = dict(ENV, **e)
        env.update(CLOUDFIT_AZURE_PRICES_URL=port_url + "/api/retail/prices",
                   CLOUDFIT_AWS_PRICES_URL=port_url, CLOUDFIT_GCP_BILLING_URL=port_url,
                   CLOUDFIT_AWS_SPOT_URL=port_url + "/spot.json?token=T0KEN-SECRET",
                   CLOUDFIT_GCP_API_KEY="GCPK3Y-SECRET", CLOUDFIT_HTTP_RETRIES="1")
        outputs = []
        # a good update, then failures of every kind
        outputs.append(run_bytes("prices", "update", "--db", db, env=env))
        assert outputs[-1][0] == 0, outputs[-1][2]
        for path in ("/api/retail/prices", "/v1/services", "/offers/v1.0/aws/index.json", "/spot.json"):
            for kind in ("500", "truncate"):
                server.faults = {path: {"kind": kind}}
                outputs.append(run_bytes("prices", "update", "--db", db, env=env))
        server.faults = {}
        env_bad = dict(env, CLOUDFIT_AZURE_PRICES_URL="ftp://user:s3cretPW@127.0.0.1/x?key=GCPK3Y-SECRET")
        outputs.append(run_bytes("prices", "update", "--db", db, "--cloud", "azure", env=env_bad))
        assert outputs[-1][0] == 2, outputs[-1][2]
        out_file = os.path.join(folder, "rec.json")
        outputs.append(run_bytes("recommend", "--db", db, "-f", "json", "--out-file", out_file,
                                 example("resnet18-cifar10.json"), env=env))
        outputs.append(run_bytes("prices", "--db", db, "-f", "json", env=env))
        outputs.append(run_bytes("history", "--db", db, "-f", "json", env=env))
    for i, (rc, out, err) in enumerate(outputs):
        assert_no_secret("stdout %d" % i, out)
        assert_no_secret("stderr %d" % i, err)
    assert any(b"***@" in err for rc, out, err in outputs), "the redacted URL is shown"
    for path in glob.glob(db + "*") + [out_file]:
        with open(path, "rb") as f:
            assert_no_secret(path, f.read())


def loaded_libraries(path):
    """The NEEDED sonames of an ELF file (readelf -d)."""
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def test_libraries_are_never_searched_in_the_working_directory():
    # An empty or relative RPATH/RUNPATH entry makes the dynamic loader look
    # in the working directory first: running cloudfit in a folder with a
    # planted libsqlite3.so.0 would run that file's code.
    cc = shutil.which("cc") or shutil.which("gcc")
    if not shutil.which("readelf") or not cc:
        raise AssertionError("readelf and a C compiler are needed (binutils, gcc)")
    binaries = [BIN] + glob.glob(os.path.join(os.path.dirname(os.path.dirname(BIN)), "cuda_probe", "*.so"))
    for path in binaries:
        out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if "(RPATH)" in line or "(RUNPATH)" in line:
                entries = line.split("[", 1)[1].rstrip("]").split(":")
                bad = [e for e in entries if not (e.startswith("/") or e.startswith("$ORIGIN"))]
                assert not bad, "%s: search path %r has an empty or relative entry %r" % (path, entries, bad)
    # Behaviour, not only the ELF header: a folder whose files carry the
    # names of every library cloudfit needs (empty shared objects: were one
    # loaded, the missing symbols would stop the run).
    folder = tmp()
    source = os.path.join(folder, "planted.c")
    with open(source, "w") as f:
        f.write("int planted_library;\n")
    names = loaded_libraries(BIN)
    assert "libsqlite3.so.0" in names and "libcjson.so.1" in names, names
    for name in names:
        if not name.startswith(("libc.so", "libm.so")):
            subprocess.run([cc, "-shared", "-fPIC", "-o", os.path.join(folder, name), source], check=True)
    rc, out, err = run("version", cwd=folder)
    assert rc == 0 and out.startswith("cloudfit "), "run in a folder of planted libraries: %d %s" % (rc, err)
    # where the loader is told to look, the planted files are taken (the check can fail)
    rc, out, err = run("version", env=dict(ENV, LD_LIBRARY_PATH=folder), cwd=folder)
    assert rc != 0 and "symbol" in err, "the planted libraries were not even taken from LD_LIBRARY_PATH: %s" % err

if __name__ == "__main__":
    main(dict(globals()))
