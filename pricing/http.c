/* HTTP GET with timeouts, bounded retries and backoff (see http.h). */
#include "http.h"

#include "curl_api.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cloudfit/common/proc.h"
#include "cloudfit/version.h"
#include "cloudfit/common/number.h"

static double env_double(const char *name, double fallback, double min, double max)
{
    const char *text = getenv(name);
    if (!text || !*text)
        return fallback;
    double v = 0;
    if (cf_number_double(text, min, max, &v) != CF_NUMBER_OK)
        return fallback;
    return v;
}

void cf_http_config_from_env(cf_http_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    /* No whole-transfer limit by default: a real AWS offer file is 0.45-3 GB.
     * A transfer is given up when it stalls (below the low-speed limit for
     * the whole window); CLOUDFIT_HTTP_TIMEOUT_S adds an overall cap. */
    cfg->timeout_s = env_double("CLOUDFIT_HTTP_TIMEOUT_S", 0, 0, 86400 * 7);
    cfg->low_speed_bps = env_double("CLOUDFIT_HTTP_LOW_SPEED_BPS", 1024, 1, 1e9);
    cfg->low_speed_time_s = env_double("CLOUDFIT_HTTP_LOW_SPEED_TIME_S", 60, 1, 86400);
    cfg->connect_timeout_s = env_double("CLOUDFIT_HTTP_CONNECT_TIMEOUT_S", 10, 0.1, 3600);
    cfg->retries = (int)env_double("CLOUDFIT_HTTP_RETRIES", 4, 0, 20);
    cfg->retry_base_ms = env_double("CLOUDFIT_HTTP_RETRY_BASE_MS", 500, 0, 600000);
    cfg->retry_after_max_s = env_double("CLOUDFIT_HTTP_RETRY_AFTER_MAX_S", 120, 0, 3600);
}

/* Loopback only by address (127.0.0.0/8, ::1) or the name libcurl itself
 * resolves to loopback ("localhost"); "127.0.0.1.example.com" is not. */
static int is_loopback(const char *host)
{
    struct in_addr v4;
    if (inet_pton(AF_INET, host, &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    return strcasecmp(host, "localhost") == 0 || strcmp(host, "::1") == 0 || strcmp(host, "[::1]") == 0;
}

cf_status cf_http_check_url(const char *url)
{
    const cf_curl_api *cu = cf_curl();
    if (!cu)
        return cf_error_status();
    CURLU *u = cu->url();
    if (!u)
        return cf_error_set(CF_ERR_NOMEM, "out of memory parsing a URL");
    char *scheme = NULL, *host = NULL;
    cf_status st = CF_OK;
    if (cu->url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME | CURLU_ALLOW_SPACE) != CURLUE_OK ||
        cu->url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        cu->url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
        char shown[1024];
        cf_http_redact(url, shown, sizeof shown);
        st = cf_error_set(CF_ERR_USAGE, "'%s' is not a valid URL", shown);
    } else if (strcasecmp(scheme, "https") != 0 && !(strcasecmp(scheme, "http") == 0 && is_loopback(host))) {
        char shown[1024];
        cf_http_redact(url, shown, sizeof shown);
        st = cf_error_set(CF_ERR_USAGE, "refusing to fetch '%s': only https:// (or http:// to 127.0.0.1) is allowed",
                          shown);
        cf_error_hint("price data must not travel unencrypted; use an https:// base URL");
    }
    cu->free(scheme);
    cu->free(host);
    cu->url_cleanup(u);
    return st;
}

typedef struct {
    const cf_http_sink *sink;
    int aborted;
    const cf_http_config *cfg;   /* for the transfer progress */
    const char *what;
} write_ctx;

/* libcurl calls this about once a second and on every chunk: a stop
 * signal (SIGINT, SIGTERM, SIGHUP) aborts the transfer; otherwise the
 * caller, if it asked, gets the byte count (total 0 when the server sends
 * no length). */
static int on_progress(void *data, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)ultotal;
    (void)ulnow;
    if (cf_interrupted())
        return 1;
    write_ctx *w = data;
    if (w->cfg->transfer && dlnow > 0)
        w->cfg->transfer(w->cfg->transfer_data, (double)dlnow, (double)dltotal, "bytes", w->what);
    return 0;
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    write_ctx *w = userdata;
    size_t len = size * nmemb;
    if (w->sink->write(w->sink->data, ptr, len) != 0) {
        w->aborted = 1;
        return 0;
    }
    return len;
}

static void sleep_ms(double ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {(time_t)(ms / 1000), (long)((ms - 1000.0 * (double)(time_t)(ms / 1000)) * 1e6)};
    while (nanosleep(&ts, &ts) != 0 && !cf_interrupted()) {
    }
}

/* Transport errors worth another try: the peer went away, the transfer was
 * cut or timed out. DNS or TLS failures are not transient enough. */
static int transient_curl_error(CURLcode rc)
{
    return rc == CURLE_COULDNT_CONNECT || rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_PARTIAL_FILE ||
           rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR || rc == CURLE_GOT_NOTHING ||
           rc == CURLE_HTTP2 || rc == CURLE_HTTP2_STREAM;
}

static int transient_status(long status) { return status == 429 || (status >= 500 && status <= 599); }

static void progress(const cf_http_config *cfg, const char *fmt, ...) CF_PRINTF(2, 3);
static void progress(const cf_http_config *cfg, const char *fmt, ...)
{
    if (!cfg->progress)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    cfg->progress(cfg->progress_data, line);
}

static CURL *make_handle(const cf_curl_api *cu, const cf_http_config *cfg, const char *url, write_ctx *w,
                         char *errbuf)
{
    CURL *h = cu->easy_init();
    if (!h)
        return NULL;
    cu->easy_setopt(h, CURLOPT_URL, url);
    cu->easy_setopt(h, CURLOPT_USERAGENT, "cloudfit/" CF_VERSION " (+https://github.com/cloudfit; libcurl)");
    cu->easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");     /* every encoding libcurl can decode (gzip, deflate) */
    cu->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https,http"); /* http only reaches here for loopback */
    cu->easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    cu->easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "https");
    cu->easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
    cu->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    cu->easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(cfg->connect_timeout_s * 1000));
    if (cfg->timeout_s > 0)
        cu->easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(cfg->timeout_s * 1000));
    cu->easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, (long)cfg->low_speed_bps);
    cu->easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)cfg->low_speed_time_s);
    cu->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    cu->easy_setopt(h, CURLOPT_WRITEDATA, w);
    cu->easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    cu->easy_setopt(h, CURLOPT_FAILONERROR, 0L);
    cu->easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    cu->easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    cu->easy_setopt(h, CURLOPT_XFERINFODATA, w);
    /* Every remote host is verified: the certificate chain against the
     * system's CAs (or CLOUDFIT_CA_BUNDLE) and the name against the URL. */
    cu->easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    cu->easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    const char *ca = getenv("CLOUDFIT_CA_BUNDLE");
    if (ca && *ca)
        cu->easy_setopt(h, CURLOPT_CAINFO, ca);
    if (cfg->basic_auth_user) {
        cu->easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        cu->easy_setopt(h, CURLOPT_USERNAME, cfg->basic_auth_user);
        cu->easy_setopt(h, CURLOPT_PASSWORD, "");
    }
    if (cfg->last_modified)
        cu->easy_setopt(h, CURLOPT_FILETIME, 1L); /* HTTP: the Last-Modified header */
    return h;
}

/* Backoff before retry `attempt` (1-based): base × 2^(attempt-1), with
 * jitter in [50 %, 100 %] so many clients do not retry in step, or the
 * server's Retry-After when it is longer (capped). */
static double backoff_ms(const cf_http_config *cfg, int attempt, long retry_after_s, unsigned *seed)
{
    double exp_ms = cfg->retry_base_ms * (double)(1u << (attempt - 1 < 10 ? attempt - 1 : 10));
    double jitter = 0.5 + 0.5 * ((double)rand_r(seed) / (double)RAND_MAX);
    double ms = exp_ms * jitter;
    if (retry_after_s > 0) {
        double ra_ms = 1000.0 * (retry_after_s < cfg->retry_after_max_s ? (double)retry_after_s : cfg->retry_after_max_s);
        if (ra_ms > ms)
            ms = ra_ms;
    }
    return ms;
}

static cf_status check_ca_bundle(void)
{
    const char *ca = getenv("CLOUDFIT_CA_BUNDLE");
    if (!ca || !*ca)
        return CF_OK;
    struct stat st;
    if (stat(ca, &st) != 0 || !S_ISREG(st.st_mode) || access(ca, R_OK) != 0) {
        cf_error_set(CF_ERR_USAGE, "CLOUDFIT_CA_BUNDLE: cannot read '%s'", ca);
        cf_error_hint("set it to a file of PEM CA certificates, or unset it to use the system's CAs");
        return CF_ERR_USAGE;
    }
    return CF_OK;
}

cf_status cf_http_get(const cf_http_config *cfg, const char *url, const char *what, const cf_http_sink *sink,
                      long *out_http_status)
{
    cf_status st = cf_http_check_url(url);
    if (st == CF_OK)
        st = check_ca_bundle();
    if (st == CF_OK)
        st = cf_interrupt_check();
    if (st != CF_OK)
        return st;
    const cf_curl_api *cu = cf_curl(); /* loaded by cf_http_check_url */
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    int attempts = cfg->retries + 1;
    for (int attempt = 1; attempt <= attempts; attempt++) {
        char errbuf[CURL_ERROR_SIZE] = "";
        write_ctx w = {sink, 0, cfg, what};
        if (sink->reset)
            sink->reset(sink->data);
        CURL *h = make_handle(cu, cfg, url, &w, errbuf);
        if (!h)
            return cf_error_set(CF_ERR_NOMEM, "out of memory starting a transfer");
        progress(cfg, "fetching %s%s", what, attempt > 1 ? " (retry)" : "");
        CURLcode rc = cu->easy_perform(h);
        long status = 0;
        curl_off_t retry_after = 0;
        double connect_s = 0, total_s = 0;
        cu->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        cu->easy_getinfo(h, CURLINFO_CONNECT_TIME, &connect_s);
        cu->easy_getinfo(h, CURLINFO_TOTAL_TIME, &total_s);
        cu->easy_getinfo(h, CURLINFO_RETRY_AFTER, &retry_after);
        /* where a redirect led: a failure there is named by that URL, not
         * only by the one asked for (copied before the handle goes) */
        char *effective = NULL, redirected[1024] = "";
        cu->easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &effective);
        if (effective && strcmp(effective, url) != 0)
            cf_http_redact(effective, redirected, sizeof redirected);
        if (cfg->last_modified) {
            curl_off_t filetime = -1;
            cu->easy_getinfo(h, CURLINFO_FILETIME_T, &filetime);
            *cfg->last_modified = (long long)filetime;
        }
        cu->easy_cleanup(h);
        if (out_http_status)
            *out_http_status = status;
        if (w.aborted)
            return cf_error_status() != CF_OK ? cf_error_status()
                                              : cf_error_set(CF_ERR_NETWORK, "%s: response rejected", what);
        if (cf_interrupted())
            return cf_interrupt_check();
        int retry = 0;
        char reason[CURL_ERROR_SIZE + 800];
        int stalled = 0;
        if (rc != CURLE_OK) {
            const char *why = errbuf[0] ? errbuf : cu->easy_strerror(rc);
            /* A timeout after the connection was made and before the
             * overall cap (when there is one) is the low-speed limit's. */
            stalled = rc == CURLE_OPERATION_TIMEDOUT && connect_s > 0 &&
                      !(cfg->timeout_s > 0 && total_s >= cfg->timeout_s - 0.001);
            if (stalled)
                snprintf(reason, sizeof reason, "the transfer stalled: fewer than %.0f bytes/s for %.0f s (%s)",
                         cfg->low_speed_bps, cfg->low_speed_time_s, why);
            else if (rc == CURLE_UNSUPPORTED_PROTOCOL && redirected[0])
                /* REDIR_PROTOCOLS refused it: policy, not a libcurl without http */
                snprintf(reason, sizeof reason, "the server redirected to '%.500s', which is not https:// "
                         "(redirects are followed to https only)", redirected);
            else if (redirected[0])
                snprintf(reason, sizeof reason, "%s (redirected to '%.500s')", why, redirected);
            else
                snprintf(reason, sizeof reason, "%s", why);
            retry = transient_curl_error(rc);
        } else if (status < 200 || status > 299) {
            snprintf(reason, sizeof reason, "HTTP %ld", status);
            retry = transient_status(status);
        } else {
            return CF_OK;
        }
        if (!retry || attempt == attempts) {
            char shown[2048], gave_up[96] = "";
            cf_http_redact(url, shown, sizeof shown);
            /* what was tried: "after retries" with none made was untrue */
            if (retry && cfg->retries > 0)
                snprintf(gave_up, sizeof gave_up, " (gave up after %d retr%s)", cfg->retries,
                         cfg->retries == 1 ? "y" : "ies");
            else if (retry)
                snprintf(gave_up, sizeof gave_up, " (not retried: CLOUDFIT_HTTP_RETRIES=0)");
            cf_error_set(CF_ERR_NETWORK, "%s: GET %s failed: %s%s", what, shown, reason, gave_up);
            if (status == 401 || status == 403)
                cf_error_hint("the server refused the request: check the API key or credentials");
            else if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
                     rc == CURLE_SSL_CONNECT_ERROR)
                cf_error_hint("the server's TLS certificate could not be verified; nothing was fetched. For a "
                              "private mirror or a TLS-inspecting proxy, point CLOUDFIT_CA_BUNDLE at its CA "
                              "certificate (PEM)");
            else if (stalled)
                cf_error_hint("the server stopped sending; try again later (CLOUDFIT_HTTP_LOW_SPEED_BPS and "
                              "CLOUDFIT_HTTP_LOW_SPEED_TIME_S set the low-speed limit)");
            else if (retry)
                cf_error_hint("the pricing API is unreachable or overloaded; try again later "
                              "(CLOUDFIT_HTTP_RETRIES, CLOUDFIT_HTTP_LOW_SPEED_TIME_S tune this)");
            return CF_ERR_NETWORK;
        }
        double wait_ms = backoff_ms(cfg, attempt, (long)retry_after, &seed);
        progress(cfg, "%s: %s, retrying in %.1f s (attempt %d of %d)", what, reason, wait_ms / 1000, attempt + 1,
                 attempts);
        sleep_ms(wait_ms);
        if (cf_interrupted())
            return cf_interrupt_check();
    }
    return cf_error_set(CF_ERR_INTERNAL, "unreachable retry loop end");
}
