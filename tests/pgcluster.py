"""A throw-away PostgreSQL cluster for the tests (issue 28): initdb and
pg_ctl from Debian's `postgresql` package, on a Unix socket in a temporary
folder (no TCP port), run as an unprivileged user when the tests run as
root (the `postgres` system user, else `nobody`), torn down by stop().

Two roles: `cfadmin` (superuser, trusted on the socket: the tests' own
queries and CREATE DATABASE) and `alice`, password `secret`, checked with
SCRAM (what cloudfit connects as: a wrong password is refused, so the
redaction tests prove the password was really used). Each test gets a
database of its own, owned by alice (create_db).

find_bindir() is None when PostgreSQL's server is not installed: the
callers then report the PostgreSQL tests as skipped (ctest's
SKIP_RETURN_CODE 77), never as passed."""
import glob
import json
import os
import pwd
import shutil
import subprocess
import tempfile
import time

PASSWORD = "secret"
USER = "alice"
SKIP_RETURN_CODE = 77


def find_bindir():
    """The newest installed server's bin folder (Debian keeps it off PATH)."""
    if "CLOUDFIT_TEST_PG_BINDIR" in os.environ:  # a folder without initdb: as if not installed
        given = os.environ["CLOUDFIT_TEST_PG_BINDIR"]
        return given if os.path.exists(os.path.join(given, "initdb")) else None
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[-3]) if p.split("/")[-3].isdigit() else 0)
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


class Cluster:
    def __init__(self):
        self.bindir = find_bindir()
        if not self.bindir:
            raise RuntimeError("PostgreSQL's server (initdb, pg_ctl) is not installed")
        self.dir = tempfile.mkdtemp(prefix="cf-pg-")
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "data")
        self.socket_dir = self.dir
        self.port = 5432
        self.as_user = []
        if os.geteuid() == 0:  # the server refuses to run as root
            name = "postgres"
            try:
                pwd.getpwnam(name)
            except KeyError:
                name = "nobody"
            entry = pwd.getpwnam(name)
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
            self.as_user = ["runuser", "-u", name, "--"]
        self.psql = shutil.which("psql") or os.path.join(self.bindir, "psql")
        self.started = False
        self.n_dbs = 0
        t0 = time.monotonic()
        self._server("initdb", "-D", self.data, "-U", "cfadmin", "-A", "trust", "-E", "UTF8", "--no-sync",
                     "--locale=C.UTF-8")
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:
            f.write("local all cfadmin trust\nlocal all all scram-sha-256\n")
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"\nlisten_addresses = ''\nunix_socket_directories = '{self.socket_dir}'\nport = {self.port}\n"
                    "max_connections = 200\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")
        self._server("pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "server.log"), "-w", "-t", "60",
                     "start")
        self.started = True
        self.sql("postgres", f"CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'")
        self.startup_s = time.monotonic() - t0

    def _server(self, tool, *args):
        p = subprocess.run([*self.as_user, os.path.join(self.bindir, tool), *args], capture_output=True, text=True,
                           timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"{tool} failed ({p.returncode}): {p.stdout}{p.stderr}")

    def log(self):
        try:
            return open(os.path.join(self.dir, "server.log")).read()
        except OSError:
            return ""

    def sql(self, dbname, text, params=()):
        """Runs SQL as cfadmin; `?` placeholders are bound through psql's
        :'pN' variables (quoted by psql). Returns rows as tuples of JSON
        values (numbers, text, None) for a SELECT, else []."""
        names = []
        for i, _ in enumerate(params):
            names.append(f"p{i}")
        parts = text.split("?")
        assert len(parts) == len(params) + 1, (text, params)
        bound = parts[0] + "".join(f":'{n}'" + part for n, part in zip(names, parts[1:]))
        is_query = bound.lstrip().upper().startswith("SELECT")
        if is_query:
            bound = f"SELECT row_to_json(cf_row)::text FROM ({bound}) cf_row"
        cmd = [self.psql, "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-h", self.socket_dir, "-p",
               str(self.port), "-U", "cfadmin", "-d", dbname]
        for n, v in zip(names, params):
            cmd += ["-v", f"{n}={v}"]
        p = subprocess.run(cmd, input=bound + ";\n", capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"psql: {p.stderr}")
        if not is_query:
            return []
        rows = []
        for line in p.stdout.splitlines():
            if line.strip():
                pairs = json.loads(line, object_pairs_hook=list)
                rows.append(tuple(v for _, v in pairs))
        return rows

    def create_db(self, name):
        """A new database owned by alice; its URL with the password in it."""
        self.n_dbs += 1
        dbname = f"{name.replace('-', '_')}_{self.n_dbs}"
        self.sql("postgres", f"CREATE DATABASE {dbname} OWNER {USER}")
        return self.url(dbname)

    def url(self, dbname, password=PASSWORD, user=USER):
        auth = f"{user}:{password}@" if password is not None else f"{user}@"
        return f"postgresql://{auth}/{dbname}?host={self.socket_dir}&port={self.port}"

    @staticmethod
    def dbname(url):
        return url.split("/")[3].split("?")[0]

    def stop(self):
        if self.started:
            try:
                self._server("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
            except RuntimeError:
                pass
            self.started = False
        shutil.rmtree(self.dir, ignore_errors=True)
