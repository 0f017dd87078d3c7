"""A local stand-in for the three public pricing APIs, for tests only.

Serves tests/fixtures/pricing/ on 127.0.0.1 (an ephemeral port) with the
same paths as the real endpoints, gzip when the client asks for it, and
fault injection per request path:

    server.faults["/api/retail/prices"] = {"kind": "429", "times": 1}

kinds: 429 (with Retry-After: 1), 500, drop (connection closed mid-body),
truncate (a complete HTTP response whose JSON is cut short), slow (no
answer before the client's timeout), stall (headers and the first 64 bytes
of the body, then nothing for server.stall_s while the connection stays open),
trickle (the whole body in small pieces spread over server.trickle_s:
slow but steady), loop (pagination points back at the same page), bomb (a
gzip body of 64 KiB that inflates to 65 MiB: one byte over the client's
64 MiB limit for a JSON page, plus 1 MiB), redirect (302 to server.redirect_to), huge (the first
"retailPrice" written as 1e400, past any double). "times"
= how many requests get the fault (default: all).

server.gcp_shuffle = SEED serves the GCP SKU list in a shuffled order
(every SKU of all pages, dealt back into pages of the same sizes), so a
client that picks SKUs by order gets different answers per seed. The GCP
services listing comes in two pages (Compute Engine on the second).
Lambda's /api/v1/instance-types answers only HTTP Basic auth with
server.lambda_key as user name (401 with Lambda's error object otherwise).
The AWS spot feed is sent with a Last-Modified header (server.spot_last_modified).
Every request is logged in server.log as (path, query, headers)."""
import base64
import gzip
import http.server
import json
import os
import random
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures", "pricing")


def fixture(*parts):
    with open(os.path.join(FIXTURES, *parts), "rb") as f:
        return f.read()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def route(self, path, query):
        """Returns (status, body) for the fixture that answers this request."""
        if path == "/api/retail/prices":
            flt = query.get("$filter", [""])[0]
            if "armRegionName eq 'eastus'" not in flt or "serviceName eq 'Virtual Machines'" not in flt:
                return 200, fixture("azure", "retail_prices_empty.json")
            if query.get("$skip", [""])[0] == "1000":
                return 200, fixture("azure", "retail_prices_eastus_page2.json")
            return 200, fixture("azure", "retail_prices_eastus_page1.json")
        aws = {
            "/offers/v1.0/aws/index.json": "offers_index.json",
            "/offers/v1.0/aws/AmazonEC2/current/region_index.json": "ec2_region_index.json",
            "/offers/v1.0/aws/AmazonEC2/20260720134430/us-east-1/index.json": "ec2_us-east-1_index_excerpt.json",
            "/spot.json": "spot_price_feed.json",
            "/spot.js": "spot_price_feed.js",
        }
        for region in ("us-east-1", "us-east-2", "us-west-2"):  # one offer file per region (make_offer_files.py)
            aws["/offers/v1.0/aws/AmazonEC2/20260720134430/%s/index.csv" % region] = "ec2_%s_index.csv" % region
        if path in aws:
            return 200, fixture("aws", aws[path])
        if path.startswith("/v1/services"):
            if not query.get("key", [""])[0]:
                return 403, fixture("gcp", "error_api_key_missing.json")
            if path == "/v1/services":
                page2 = query.get("pageToken", [""])[0] == "FIXTURE-SERVICES-PAGE-2-TOKEN"
                return 200, fixture("gcp", "services_page2.json" if page2 else "services.json")
            if path == "/v1/services/6F81-5844-456A/skus":
                token = query.get("pageToken", [""])[0]
                page = {"FIXTURE-PAGE-2-TOKEN": 2, "FIXTURE-PAGE-3-TOKEN": 3}.get(token, 1)
                if self.server.gcp_shuffle is not None:
                    return 200, self.shuffled_skus(page)
                return 200, fixture("gcp", "compute_skus_page%d.json" % page)
        if path == "/api/v1/instance-types":
            want = "Basic " + base64.b64encode((self.server.lambda_key + ":").encode()).decode()
            if self.headers.get("Authorization", "") != want:
                return 401, fixture("lambda", "error_invalid_api_key.json")
            return 200, fixture("lambda", "instance_types.json")
        return 404, b'{"error": "not found"}'

    def shuffled_skus(self, page):
        pages = [json.loads(fixture("gcp", "compute_skus_page%d.json" % p)) for p in (1, 2, 3)]
        skus = [s for doc in pages for s in doc["skus"]]
        random.Random(self.server.gcp_shuffle).shuffle(skus)
        start = sum(len(doc["skus"]) for doc in pages[:page - 1])
        doc = pages[page - 1]
        doc["skus"] = skus[start:start + len(doc["skus"])]
        return json.dumps(doc, indent=1).encode()

    def fault_for(self, path):
        for prefix, fault in self.server.faults.items():
            if path.startswith(prefix) and fault.get("times", 1 << 30) > 0:
                fault["times"] = fault.get("times", 1 << 30) - 1
                return fault["kind"]
        return None

    def send(self, status, body, extra=(), length=None):
        gz = "gzip" in self.headers.get("Accept-Encoding", "") and status == 200
        if gz:
            body = gzip.compress(body)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if gz:
            self.send_header("Content-Encoding", "gzip")
        for k, v in extra:
            self.send_header(k, v)
        if self.path.split("?")[0] in ("/spot.json", "/spot.js") and self.server.spot_last_modified and status == 200:
            self.send_header("Last-Modified", self.server.spot_last_modified)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        return body

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        self.server.log.append((url.path, query, dict(self.headers)))
        status, body = self.route(url.path, query)
        kind = self.fault_for(url.path)
        if kind == "429":
            self.wfile.write(self.send(429, b'{"error": "slow down"}', [("Retry-After", "1")]))
        elif kind == "500":
            self.wfile.write(self.send(500, b'{"error": "internal"}'))
        elif kind == "slow":
            time.sleep(self.server.slow_s)
            try:
                self.wfile.write(self.send(status, body))
            except OSError:
                pass
        elif kind == "drop":
            full = self.send(status, body)
            self.wfile.write(full[: len(full) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
        elif kind == "stall":
            full = self.send(status, body)
            self.wfile.write(full[:64])  # a little of the body (libcurl averages speed over a few seconds)
            self.wfile.flush()
            time.sleep(self.server.stall_s)
            self.close_connection = True
        elif kind == "trickle":
            full = self.send(status, body)
            pieces = 20
            step = (len(full) + pieces - 1) // pieces
            for i in range(0, len(full), step):
                self.wfile.write(full[i:i + step])
                self.wfile.flush()
                time.sleep(self.server.trickle_s / pieces)
        elif kind == "bomb":
            inflated = b"{" + b" " * ((65 << 20) - 2) + b"}"
            packed = gzip.compress(inflated, compresslevel=9)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(packed)))
            self.end_headers()
            try:
                self.wfile.write(packed)
            except OSError:  # the client gave up once it saw too much
                pass
        elif kind == "redirect":
            self.wfile.write(self.send(302, b"", [("Location", self.server.redirect_to)]))
        elif kind == "truncate":
            self.wfile.write(self.send(status, body[: len(body) // 2]))
        elif kind == "huge":
            text = body.decode()
            at = text.index('"retailPrice":') + len('"retailPrice":')
            end = at + len(text[at:]) - len(text[at:].lstrip(" 0123456789.eE+-"))
            self.wfile.write(self.send(status, (text[:at] + " 1e400" + text[end:]).encode()))
        elif kind == "loop":
            text = body.decode()
            if url.path == "/api/retail/prices":
                # page 2 links back to itself
                text = fixture("azure", "retail_prices_eastus_page2.json").decode().replace(
                    '"NextPageLink": null',
                    '"NextPageLink": "https://prices.azure.com:443/api/retail/prices?api-version=2023-01-01-preview'
                    '&$filter=serviceName eq \'Virtual Machines\' and armRegionName eq \'eastus\'&$skip=1000"')
            else:
                text = text.replace('"nextPageToken": ""', '"nextPageToken": "FIXTURE-PAGE-2-TOKEN"')
            self.wfile.write(self.send(200, text.encode()))
        else:
            self.wfile.write(self.send(status, body))


class FixtureServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.faults = {}
        self.log = []
        self.slow_s = 3.0
        self.stall_s = 4.0
        self.trickle_s = 3.0
        self.gcp_shuffle = None
        self.redirect_to = "http://10.1.2.3/prices"
        self.lambda_key = "fixture-lambda-key"
        self.spot_last_modified = "Mon, 16 Nov 2026 09:12:00 GMT"  # RFC 9110 IMF-fixdate
        # serve_forever looks for shutdown() every poll_interval: its default of
        # 0.5 s made every `with FixtureServer()` half a second longer on exit
        # (about 30 s of the file's 42). The requests are served at once anyway.
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.server_address[1]

    def env(self):
        """Environment that points cloudfit's fetchers here, with fast retries."""
        return {
            "CLOUDFIT_AZURE_PRICES_URL": self.url + "/api/retail/prices",
            "CLOUDFIT_AWS_PRICES_URL": self.url,
            "CLOUDFIT_AWS_SPOT_URL": self.url + "/spot.json",
            "CLOUDFIT_GCP_BILLING_URL": self.url,
            "CLOUDFIT_GCP_API_KEY": "fixture-key",
            "CLOUDFIT_LAMBDA_API_URL": self.url,
            "CLOUDFIT_LAMBDA_API_KEY": self.lambda_key,
            "CLOUDFIT_HTTP_RETRY_BASE_MS": "20",
            "CLOUDFIT_HTTP_RETRIES": "2",
            # a stall is fewer than 200 bytes/s for 1 s; no whole-transfer timeout
            "CLOUDFIT_HTTP_LOW_SPEED_BPS": "200",
            "CLOUDFIT_HTTP_LOW_SPEED_TIME_S": "1",
            "CLOUDFIT_HTTP_CONNECT_TIMEOUT_S": "1",
        }

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()
