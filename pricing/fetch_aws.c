/* AWS Price List bulk API (no auth) and the public spot price feed.
 *
 *   {base}/offers/v1.0/aws/index.json            offer index → AmazonEC2 region index URL
 *   {base}{currentRegionIndexUrl}                 region index → each region's offer file
 *   {base}{currentVersionUrl with .csv}           the offer file of each region the update needs
 *                                                 (never the global one), STREAMED through libcsv:
 *                                                 a real region file is 0.45-3 GB
 *   {spot}                                         spot.json (or JSONP spot.js), optional
 *
 * Columns are found by header name, compared without case and without
 * spaces, '_', '-' and '/' ("operation" = "Operation", "Pre Installed S/W"
 * = "preInstalledSw"), against the alias set below: the real file spells
 * `usageType` and `operation` in lower case and the rest in Title Case.
 *
 * Kept offer rows: TermType OnDemand, Unit Hrs, Product Family "Compute
 * Instance" or "Compute Instance (bare metal)", Operating System Linux,
 * Pre Installed S/W NA, CapacityStatus Used, License Model "No License
 * required", operation RunInstances, Tenancy Shared, Currency USD, and when
 * the columns exist: Location Type "AWS Region", the file's Region Code,
 * MarketOption OnDemand, usageType [PREFIX-]BoxUsage:TYPE. A bare-metal type
 * is priced from its own Shared row like any other (its $0 Host row is the
 * dedicated-host listing, not a price). A row that passes with a zero price
 * is not a price; two kept rows that disagree leave the type unpriced. Both
 * are counted in the notes. */
#include <csv.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "price_source.h"
#include "cloudfit/common/clock.h"
#include "cloudfit/common/number.h"

enum { MAX_FIELDS = 160, MAX_OFFER_BYTES_PER_FIELD = 4096 };

enum {
    C_TERM, C_UNIT, C_PRICE, C_CURRENCY, C_FAMILY, C_TYPE, C_TENANCY, C_OS, C_LICENSE, C_OPERATION, C_CAPACITY,
    C_PREINSTALLED, C_REGION, C_LOCATION_TYPE, C_MARKET, C_USAGE, N_COLS
};
enum { FIRST_OPTIONAL = C_REGION };
/* Accepted spellings of each column (compared as by column_key). The first
 * is the real file's spelling and the one messages use. */
static const char *const COLUMN_ALIASES[N_COLS][3] = {
    {"TermType", "Term Type", NULL},
    {"Unit", NULL, NULL},
    {"PricePerUnit", "Price Per Unit", NULL},
    {"Currency", NULL, NULL},
    {"Product Family", "productFamily", NULL},
    {"Instance Type", "instanceType", NULL},
    {"Tenancy", NULL, NULL},
    {"Operating System", "operatingSystem", NULL},
    {"License Model", "licenseModel", NULL},
    {"operation", NULL, NULL},
    {"CapacityStatus", NULL, NULL},
    {"Pre Installed S/W", "preInstalledSw", "Pre Installed Software"},
    {"Region Code", "regionCode", NULL},
    {"Location Type", "locationType", NULL},
    {"MarketOption", "Market Option", NULL},
    {"usageType", "Usage Type", NULL},
};

/* Lower case without ' ', '_', '-', '/': the comparison key of a column name. */
static void column_key(const char *name, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < cap; p++)
        if (*p != ' ' && *p != '_' && *p != '-' && *p != '/')
            out[n++] = (char)tolower((unsigned char)*p);
    out[n] = '\0';
}

typedef struct {
    const cf_fetch_ctx *ctx;
    const char *region;
    const char *what;
    cf_price_list *out;
    size_t start_n;                /* out->n when the transfer began (rolled back on retry) */
    struct csv_parser parser;
    int parser_ready;
    char *fields[MAX_FIELDS];
    size_t n_fields;
    int col[N_COLS];
    int have_header;
    long record;
    int failed;
    size_t zero_prices;            /* kept rows priced 0: not a price */
    cf_price_list conflicts;       /* types whose kept rows disagree */
} offer_stream;

static void clear_fields(offer_stream *s)
{
    for (size_t i = 0; i < s->n_fields; i++)
        free(s->fields[i]);
    s->n_fields = 0;
}

static void on_field(void *text, size_t len, void *data)
{
    offer_stream *s = data;
    if (s->failed || s->n_fields == MAX_FIELDS)
        return;
    if (len > MAX_OFFER_BYTES_PER_FIELD)
        len = MAX_OFFER_BYTES_PER_FIELD;
    char *copy = malloc(len + 1);
    if (!copy) {
        s->failed = 1;
        cf_error_set(CF_ERR_NOMEM, "out of memory reading %s", s->what);
        return;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    s->fields[s->n_fields++] = copy;
}

static const char *field(const offer_stream *s, int c)
{
    int i = s->col[c];
    return i >= 0 && (size_t)i < s->n_fields ? s->fields[i] : "";
}

static void take_header(offer_stream *s)
{
    char key[96], want[96];
    for (int c = 0; c < N_COLS; c++) {
        s->col[c] = -1;
        for (size_t i = 0; i < s->n_fields; i++) {
            column_key(s->fields[i], key, sizeof key);
            int match = 0;
            for (int a = 0; a < 3 && COLUMN_ALIASES[c][a] && !match; a++) {
                column_key(COLUMN_ALIASES[c][a], want, sizeof want);
                match = strcmp(key, want) == 0;
            }
            if (!match)
                continue;
            if (s->col[c] >= 0) {
                s->failed = 1;
                cf_error_set(CF_ERR_NETWORK, "%s: header columns %d ('%s') and %zu ('%s') both name '%s'", s->what,
                             s->col[c] + 1, s->fields[s->col[c]], i + 1, s->fields[i], COLUMN_ALIASES[c][0]);
                return;
            }
            s->col[c] = (int)i;
        }
        if (s->col[c] < 0 && c < FIRST_OPTIONAL) {
            s->failed = 1;
            cf_error_set(CF_ERR_NETWORK, "%s: the offer file has no column '%s' (header on record %ld; names are "
                         "matched ignoring case, spaces, '_', '-' and '/')", s->what, COLUMN_ALIASES[c][0],
                         s->record);
            cf_error_hint("the offer file format changed: see the column aliases in docs/pricing.md");
            return;
        }
    }
    s->have_header = 1;
}

static int is(const offer_stream *s, int c, const char *value)
{
    return strcasecmp(field(s, c), value) == 0;
}

/* usageType of a Shared on-demand instance hour: [PREFIX-]BoxUsage:TYPE
 * (HostBoxUsage, DedicatedUsage, UnusedBox, Reservation are other things). */
static int box_usage(const char *usage, const char *type)
{
    const char *colon = strchr(usage, ':');
    if (!colon || strcmp(colon + 1, type) != 0)
        return 0;
    size_t n = (size_t)(colon - usage);
    return n >= 8 && strncmp(colon - 8, "BoxUsage", 8) == 0 && (n == 8 || colon[-9] == '-');
}

static void take_row(offer_stream *s)
{
    if (!is(s, C_TERM, "OnDemand") || !is(s, C_UNIT, "Hrs"))
        return;
    const char *family = field(s, C_FAMILY);
    if (strcasecmp(family, "Compute Instance (bare metal)") != 0 && strcasecmp(family, "Compute Instance") != 0)
        return;
    if (!is(s, C_OS, "Linux") || !is(s, C_PREINSTALLED, "NA") || !is(s, C_CAPACITY, "Used") ||
        !is(s, C_LICENSE, "No License required") || !is(s, C_OPERATION, "RunInstances") || !is(s, C_CURRENCY, "USD") ||
        !is(s, C_TENANCY, "Shared"))
        return;
    if (s->col[C_LOCATION_TYPE] >= 0 && !is(s, C_LOCATION_TYPE, "AWS Region"))
        return;
    if (s->col[C_MARKET] >= 0 && *field(s, C_MARKET) && !is(s, C_MARKET, "OnDemand"))
        return;
    const char *type = field(s, C_TYPE);
    if (!cf_fetch_knows_type(s->ctx, type))
        return;
    if (s->col[C_USAGE] >= 0 && !box_usage(field(s, C_USAGE), type))
        return;
    const char *region = *field(s, C_REGION) ? field(s, C_REGION) : s->region;
    if (strcmp(region, s->region) != 0)
        return;
    double price = 0;
    cf_number_result r = cf_number_double(field(s, C_PRICE), -HUGE_VAL, HUGE_VAL, &price);
    if (r != CF_NUMBER_OK || price < 0) { /* the one number parser: no hex, inf, nan or spaces */
        s->failed = 1;
        cf_error_set(CF_ERR_NETWORK, "%s: record %ld: PricePerUnit '%s' is not a price (%s)", s->what, s->record,
                     field(s, C_PRICE), r != CF_NUMBER_OK ? cf_number_why(r) : "negative");
        return;
    }
    if (!(price > 0)) {
        s->zero_prices++;
        return;
    }
    cf_price_quote *q = cf_fetch_quote_slot(s->out, "aws", region, type, "", 0);
    if (!q) {
        s->failed = 1;
        return;
    }
    if (!q->has_ondemand) {
        q->has_ondemand = 1;
        q->price_ondemand_usd_per_hr = price;
    } else if (q->price_ondemand_usd_per_hr != price && !cf_fetch_quote_slot(&s->conflicts, "aws", region, type, "", 0)) {
        s->failed = 1;
    }
}

static void on_record(int terminator, void *data)
{
    (void)terminator;
    offer_stream *s = data;
    s->record++;
    if (!s->failed) {
        /* Metadata lines ("FormatVersion","v1.0" ...) come before the header. */
        if (!s->have_header) {
            if (s->n_fields > 0 && strcasecmp(s->fields[0], "SKU") == 0)
                take_header(s);
        } else {
            take_row(s);
        }
    }
    clear_fields(s);
}

static void stream_reset(void *data)
{
    offer_stream *s = data;
    if (s->parser_ready)
        csv_free(&s->parser);
    s->parser_ready = csv_init(&s->parser, CSV_APPEND_NULL) == 0;
    clear_fields(s);
    s->out->n = s->start_n;
    s->conflicts.n = 0;
    s->zero_prices = 0;
    s->have_header = 0;
    s->record = 0;
    s->failed = !s->parser_ready;
}

static int stream_write(void *data, const char *bytes, size_t len)
{
    offer_stream *s = data;
    if (csv_parse(&s->parser, bytes, len, on_field, on_record, s) != len && !s->failed) {
        s->failed = 1;
        cf_error_set(CF_ERR_NETWORK, "%s: malformed CSV near record %ld: %s", s->what, s->record,
                     csv_strerror(csv_error(&s->parser)));
    }
    return s->failed;
}

static cf_status stream_offer(const cf_fetch_ctx *ctx, const char *region, const char *url, cf_price_list *out)
{
    char what[96];
    snprintf(what, sizeof what, "aws %s offer file", region);
    offer_stream s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    s.region = region;
    s.what = what;
    s.out = out;
    s.start_n = out->n;
    cf_http_sink sink = {stream_write, stream_reset, &s};
    cf_error_clear();
    cf_status st = cf_http_get(ctx->http, url, what, &sink, NULL);
    if (st == CF_OK) {
        csv_fini(&s.parser, on_field, on_record, &s);
        if (s.failed)
            st = cf_error_status();
        else if (!s.have_header) {
            char shown[1024];
            cf_http_redact(url, shown, sizeof shown);
            st = cf_error_set(CF_ERR_NETWORK, "%s: no header row (\"SKU\",...) in %s: truncated or not an offer file",
                              what, shown);
        }
    }
    /* Kept rows that disagree: the price is not known, so the type is not
     * re-priced (and the note says so) rather than picking one by order. */
    for (size_t i = 0; st == CF_OK && i < s.conflicts.n; i++) {
        const cf_price_quote *c = &s.conflicts.items[i];
        for (size_t k = s.start_n; k < out->n; k++)
            if (strcmp(out->items[k].instance_type, c->instance_type) == 0) {
                out->items[k] = out->items[--out->n];
                break;
            }
        cf_buf_printf(ctx->notes, "aws %s: %s has several Shared Linux on-demand prices; not re-priced\n", region,
                      c->instance_type);
    }
    if (st == CF_OK && s.zero_prices)
        cf_buf_printf(ctx->notes, "aws %s: %zu on-demand rows priced 0 ignored (not a price)\n", region,
                      s.zero_prices);
    if (st == CF_OK && out->n == s.start_n)
        cf_buf_printf(ctx->notes, "aws %s: the offer file has no usable price for the catalog's types\n", region);
    if (st != CF_OK)
        out->n = s.start_n;
    if (s.parser_ready)
        csv_free(&s.parser);
    clear_fields(&s);
    cf_price_list_free(&s.conflicts);
    return st;
}

static const char *str_at(const cJSON *obj, const char *a, const char *b, const char *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    if (c)
        v = cJSON_GetObjectItemCaseSensitive(v, c);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The spot feed names the old regions in a legacy scheme. */
static const char *spot_region_code(const char *name)
{
    static const char *const map[][2] = {
        {"us-east", "us-east-1"},       {"us-west", "us-west-1"},          {"eu-ireland", "eu-west-1"},
        {"apac-sin", "ap-southeast-1"}, {"apac-syd", "ap-southeast-2"},    {"apac-tokyo", "ap-northeast-1"},
        {"eu-central", "eu-central-1"}, {"sa-east", "sa-east-1"},          {"us-east-2", "us-east-2"},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strcmp(name, map[i][0]) == 0)
            return map[i][1];
    return name;
}

static void take_spot_sizes(const cf_fetch_ctx *ctx, const char *region, const cJSON *sizes, const char *date,
                            cf_price_list *out, cf_price_list *seen, cf_price_list *conflicts)
{
    const cJSON *size;
    cJSON_ArrayForEach(size, sizes)
    {
        const char *type = str_at(size, "size", NULL, NULL);
        if (!cf_fetch_knows_type(ctx, type))
            continue;
        const cJSON *col;
        cJSON_ArrayForEach(col, cJSON_GetObjectItemCaseSensitive(size, "valueColumns"))
        {
            const char *name = str_at(col, "name", NULL, NULL);
            const char *usd = str_at(col, "prices", "USD", NULL);
            if (!name || strcmp(name, "linux") != 0 || !usd)
                continue;
            double price = 0;
            if (cf_number_double(usd, 0, HUGE_VAL, &price) != CF_NUMBER_OK || !(price > 0))
                continue; /* "N/A*": not offered there (nor is a price that is no decimal number above 0) */
            /* one region quoted twice (a legacy name and its code) at different prices: not known */
            if (cf_fetch_check_price(seen, conflicts, region, type, price) < 0)
                continue;
            cf_price_quote *q = cf_fetch_quote_slot(out, "aws", region, type, "", 0);
            if (q && !q->has_spot) {
                q->has_spot = 1;
                q->price_spot_usd_per_hr = price;
                snprintf(q->spot_date, sizeof q->spot_date, "%s", date);
            }
        }
    }
}

/* The spot feed is undocumented: when it is missing or malformed the
 * on-demand prices still count, and the note says so. Its body carries no
 * date; its prices are dated by the feed's Last-Modified header (when the
 * file was published), else by the fetch. It quotes one price per region
 * and type (not per zone): stored as observed, regional. */
static void fetch_spot(const cf_fetch_ctx *ctx, cf_price_list *out)
{
    const char *url = getenv("CLOUDFIT_AWS_SPOT_URL");
    if (!url || !*url)
        url = "https://website.spot.ec2.aws.a2z.com/spot.json";
    cJSON *doc = NULL;
    long long modified = -1;
    cf_http_config http = *ctx->http;
    http.last_modified = &modified;
    cf_fetch_ctx dated = *ctx;
    dated.http = &http;
    char date[11] = "";
    if (cf_fetch_json(&dated, url, "aws spot feed", &doc) != CF_OK) {
        cf_buf_printf(ctx->notes, "aws: spot feed not used (%s); spot prices stay as they were\n", cf_error_message());
        cf_error_clear();
        return;
    }
    time_t published = (time_t)modified;
    struct tm tm;
    /* A date the catalog stores (2000-2099) and not after the fetch (a
     * price cannot be newer than the answer that quoted it; a server clock
     * ahead of ours would date it tomorrow); any other Last-Modified (year
     * 12000, 1994) dates nothing: the fetch does, as with none (it failed
     * the whole update, every cloud's prices) */
    long long fetched = 0;
    if (!ctx->fetched_at || cf_iso8601_epoch(ctx->fetched_at, &fetched) != CF_OK) {
        cf_error_clear();
        fetched = (long long)time(NULL);
    }
    int usable = modified > 0 && modified <= fetched && gmtime_r(&published, &tm) &&
                 tm.tm_year + 1900 >= 2000 && tm.tm_year + 1900 <= 2099 &&
                 strftime(date, sizeof date, "%Y-%m-%d", &tm) == 10;
    if (!usable) {
        date[0] = '\0';
        if (modified > 0)
            cf_buf_printf(ctx->notes, "aws: the spot feed's Last-Modified date is not one to trust (%lld s since "
                          "1970); its prices are dated by the fetch\n", modified);
        else
            cf_buf_printf(ctx->notes, "aws: the spot feed sent no Last-Modified date; its prices are dated by the "
                          "fetch\n");
    }
    const cJSON *regions = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "config"), "regions");
    const cJSON *r;
    cf_price_list seen = {0}, conflicts = {0};
    cJSON_ArrayForEach(r, regions)
    {
        const char *name = str_at(r, "region", NULL, NULL);
        if (!name || !cf_fetch_wants_region(ctx, spot_region_code(name)))
            continue;
        const cJSON *group;
        cJSON_ArrayForEach(group, cJSON_GetObjectItemCaseSensitive(r, "instanceTypes"))
            take_spot_sizes(ctx, spot_region_code(name), cJSON_GetObjectItemCaseSensitive(group, "sizes"), date, out,
                            &seen, &conflicts);
    }
    cf_fetch_drop_conflicts(out, 0, &conflicts, 1);
    for (size_t i = 0; i < conflicts.n; i++)
        cf_buf_printf(ctx->notes, "aws %s: the spot feed quotes %s at different prices (%g and %g $/h); its spot "
                      "price stays as it was\n", conflicts.items[i].region, conflicts.items[i].instance_type,
                      conflicts.items[i].price_ondemand_usd_per_hr, conflicts.items[i].price_spot_usd_per_hr);
    cf_price_list_free(&seen);
    cf_price_list_free(&conflicts);
    cJSON_Delete(doc);
}

static cf_status fetch_aws(const cf_fetch_ctx *ctx, cf_price_list *out)
{
    char url[2048];
    snprintf(url, sizeof url, "%s/offers/v1.0/aws/index.json", ctx->base_url);
    cJSON *offers = NULL, *regions = NULL;
    cf_status st = cf_fetch_json(ctx, url, "aws offer index", &offers);
    if (st != CF_OK)
        return st;
    const char *region_index = str_at(offers, "offers", "AmazonEC2", "currentRegionIndexUrl");
    if (!region_index || region_index[0] != '/') {
        cJSON_Delete(offers);
    {
        char shown[1024];
        cf_http_redact(url, shown, sizeof shown);
        return cf_error_set(CF_ERR_NETWORK, "aws offer index %s: no offers.AmazonEC2.currentRegionIndexUrl", shown);
    }
    }
    snprintf(url, sizeof url, "%s%s", ctx->base_url, region_index);
    cJSON_Delete(offers);
    if ((st = cf_fetch_json(ctx, url, "aws EC2 region index", &regions)) != CF_OK)
        return st;
    cf_buf missing = CF_BUF_INIT;
    size_t n_missing = 0;
    for (size_t i = 0; i < ctx->n_regions && st == CF_OK; i++) {
        const char *version = str_at(regions, "regions", ctx->regions[i], "currentVersionUrl");
        size_t len = version ? strlen(version) : 0;
        if (!version || len < 5 || strcmp(version + len - 5, ".json") != 0 || version[0] != '/') {
            cf_buf_printf(&missing, "%s%s", n_missing++ ? ", " : "", ctx->regions[i]);
            continue;
        }
        /* Only the regions the catalog offers (or --region asks for), one
         * file each; the same file as CSV streams row by row, unlike one
         * huge JSON object. */
        snprintf(url, sizeof url, "%s%.*s.csv", ctx->base_url, (int)(len - 5), version);
        st = stream_offer(ctx, ctx->regions[i], url, out);
    }
    /* The offer files are the source of on-demand prices: files that
     * answered but priced nothing fail the cloud (the spot feed alone is
     * no update). */
    size_t n_priced = 0;
    for (size_t i = 0; st == CF_OK && i < out->n; i++)
        n_priced += out->items[i].has_ondemand;
    if (st == CF_OK && n_priced == 0 && n_missing < ctx->n_regions) {
        st = cf_error_set(CF_ERR_NETWORK, "aws: the update yielded no usable prices (the API answered, but no item "
                          "passed the filters for the catalog's machines in %zu region%s)", ctx->n_regions - n_missing,
                          ctx->n_regions - n_missing == 1 ? "" : "s");
        cf_error_hint("the previous prices stay in use; check the notes above and the offer files' rows");
    } else if (st == CF_OK && n_priced == 0) {
        /* No region in the index (an index without its "regions" object
         * lands here too): no offer file was read, and the spot feed alone
         * is no update. */
        char shown[1024];
        cf_http_redact(url, shown, sizeof shown);
        st = cf_error_set(CF_ERR_NETWORK, "aws: the update yielded no usable prices (none of the %zu region%s "
                          "asked for is in the EC2 region index %s: no offer file was read)", ctx->n_regions,
                          ctx->n_regions == 1 ? "" : "s", shown);
        cf_error_hint("the previous prices stay in use; the index lists each region under "
                      "regions.REGION.currentVersionUrl");
    }
    if (n_missing)
        cf_buf_printf(ctx->notes, "aws: %zu region%s not in the EC2 region index (%s); their prices stay as they were\n",
                      n_missing, n_missing == 1 ? " is" : "s are", cf_buf_cstr(&missing));
    cf_buf_free(&missing);
    cJSON_Delete(regions);
    if (st == CF_OK)
        fetch_spot(ctx, out);
    return st;
}

const cf_price_source cf_price_source_aws = {
    .cloud = "aws",
    .url_env = "CLOUDFIT_AWS_PRICES_URL",
    .default_url = "https://pricing.us-east-1.amazonaws.com",
    .label = "AWS Price List bulk API",
    .spot_label = "AWS spot feed (one price per region)",
    .spot_kind = CF_PRICE_OBSERVED,
    .spot_regional = 1,
    .fetch = fetch_aws,
};
