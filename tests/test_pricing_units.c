/* Unit tests of the pricing module around live updates: URL policy and
 * redaction of the HTTP client, catalog CSV round trip (how snapshots are
 * stored), price overrides, and cf_prices_update's failure contract.
 * Network behaviour against a server is tested end to end in
 * tests/pricing/test_prices.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/pricing.h"
#include "cloudfit/pricing/overrides.h"
#include "cloudfit/pricing/update.h"
#include "http.h"

static void test_url_policy(void **state)
{
    (void)state;
    assert_int_equal(cf_http_check_url("https://prices.azure.com/api/retail/prices"), CF_OK);
    assert_int_equal(cf_http_check_url("http://127.0.0.1:8080/x"), CF_OK);
    assert_int_equal(cf_http_check_url("http://localhost/x"), CF_OK);
    assert_int_equal(cf_http_check_url("http://[::1]:9/x"), CF_OK);
    assert_int_equal(cf_http_check_url("http://prices.azure.com/api"), CF_ERR_USAGE);
    assert_non_null(strstr(cf_error_message(), "only https://"));
    assert_int_equal(cf_http_check_url("http://127.0.0.1.evil.example/x"), CF_ERR_USAGE);
    assert_int_equal(cf_http_check_url("ftp://127.0.0.1/x"), CF_ERR_USAGE);
}

static void test_redact_and_encode(void **state)
{
    (void)state;
    char out[256];
    cf_http_redact("https://x/v1/services?key=SECRET123&pageSize=5", out, sizeof out);
    assert_string_equal(out, "https://x/v1/services?key=***&pageSize=5");
    cf_http_redact("https://x/skus?currencyCode=USD&key=SECRET", out, sizeof out);
    assert_string_equal(out, "https://x/skus?currencyCode=USD&key=***");
    cf_http_redact("https://x/?monkey=1", out, sizeof out); /* only a whole 'key' parameter */
    assert_string_equal(out, "https://x/?monkey=1");
    cf_buf b = CF_BUF_INIT;
    cf_url_encode_query("https://h/p?$filter=serviceName eq 'Virtual Machines'&$skip=1000", &b);
    assert_string_equal(cf_buf_cstr(&b), "https://h/p?$filter=serviceName%20eq%20%27Virtual%20Machines%27&$skip=1000");
    cf_buf_free(&b);
    /* a value from an answer (GCP's page token): nothing in it may end the
     * value or the URL ("a b" gave curl "URL using bad/illegal format") */
    cf_url_encode_value("a b&c=d#e/f~g.h_i-j\xc3\xa9", &b);
    assert_string_equal(cf_buf_cstr(&b), "a%20b%26c%3Dd%23e%2Ff~g.h_i-j%C3%A9");
    cf_buf_free(&b);
}

static void test_csv_round_trip(void **state)
{
    (void)state;
    cf_catalog a, b;
    assert_int_equal(cf_catalog_load_embedded(&a), CF_OK);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(cf_catalog_write_vms_csv(&a, &text, &len), CF_OK);
    assert_int_equal(cf_catalog_load_with_vms(text, len, "round-trip", &b), CF_OK);
    assert_int_equal(a.n_vms, b.n_vms);
    size_t estimated = 0;
    for (size_t i = 0; i < a.n_vms; i++) {
        const cf_vm *x = &a.vms[i], *y = &b.vms[i];
        assert_string_equal(x->instance_type, y->instance_type);
        assert_string_equal(x->region, y->region);
        assert_true(x->price_ondemand_usd_per_hr == y->price_ondemand_usd_per_hr);
        assert_true(x->price_spot_usd_per_hr == y->price_spot_usd_per_hr);
        /* advisor estimates are re-derived on load, not frozen as prices */
        assert_int_equal(x->spot_price_estimated, y->spot_price_estimated);
        estimated += y->spot_price_estimated;
        assert_string_equal(a.sources[x->source_index], b.sources[y->source_index]);
    }
    assert_true(estimated > 0);
    assert_string_equal(a.data_date, b.data_date);
    free(text);
    cf_catalog_free(&a);
    cf_catalog_free(&b);
}

/* A snapshot stored by an older cloudfit (no zones or kind columns) loads,
 * and its offers where a machine cannot be launched are left out (issue 14). */
static void test_old_snapshot_keeps_launchable_rows(void **state)
{
    (void)state;
    const char *old =
        "cloud,region,instance_type,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,network_gbps,"
        "price_ondemand_usd_per_hour,price_spot_usd_per_hour,source\n"
        "gcp,us-central1,a2-highgpu-1g,A100-40GB,1,40,12,85,24,3.673385,1.92802,gcp:x 2026-07-30\n"
        "gcp,europe-north1,g2-standard-4,L4,1,24,4,16,10,0.7,0.2,gcp:x 2026-07-30\n"
        "aws,us-east-1,p2.xlarge,K80,1,12,4,61,1.25,0.9,,aws:x 2026-07-20\n"
        "lambda,us-east-1,gpu_1x_h100_pcie,H100-PCIE,1,80,26,200,,2.49,,lambda:x 2026-05-20\n";
    cf_catalog cat;
    assert_int_equal(cf_catalog_load_with_vms(old, strlen(old), "old-snapshot", &cat), CF_OK);
    /* g2-standard-4 does not launch in europe-north1, p2 is gone: 2 left out */
    assert_int_equal(cat.n_vms, 2);
    assert_int_equal(cat.n_not_launchable, 2);
    assert_string_equal(cat.vms[0].instance_type, "a2-highgpu-1g");
    assert_true(cat.vms[0].zones[0] != '\0'); /* from the embedded row */
    assert_int_equal(cat.vms[0].ondemand_kind, CF_PRICE_LISTED);
    assert_string_equal(cat.vms[0].ondemand_date, "2026-07-30");
    assert_string_equal(cat.vms[1].cloud, "lambda");
    assert_string_equal(cat.data_date, "2026-07-30");
    assert_string_equal(cat.oldest_date, "2026-05-20");
    cf_catalog_free(&cat);
}

static const char OVERRIDES[] =
    "{\"discounts\": [{\"cloud\": \"lambda\", \"percent\": 50},"
    "                 {\"cloud\": \"lambda\", \"gpu\": \"h100\", \"percent\": 10, \"applies_to\": \"ondemand\"}],"
    " \"instances\": [{\"cloud\": \"aws\", \"region\": \"us-east-1\", \"instance_type\": \"p5.48xlarge\","
    "                  \"price_ondemand_usd_per_hr\": 40, \"price_spot_usd_per_hr\": 20, \"note\": \"RI\"}]}";

static const cf_vm *find(const cf_catalog *c, const char *cloud, const char *region, const char *type)
{
    for (size_t i = 0; i < c->n_vms; i++)
        if (!strcmp(c->vms[i].cloud, cloud) && !strcmp(c->vms[i].region, region) &&
            !strcmp(c->vms[i].instance_type, type))
            return &c->vms[i];
    return NULL;
}

static void test_overrides_apply(void **state)
{
    (void)state;
    cf_catalog cat;
    assert_int_equal(cf_catalog_load_embedded(&cat), CF_OK);
    double h100 = find(&cat, "lambda", "us-east-1", "gpu_1x_h100_sxm5")->price_ondemand_usd_per_hr;
    double a10 = find(&cat, "lambda", "us-east-1", "gpu_1x_a10")->price_ondemand_usd_per_hr;
    cf_price_overrides ov;
    assert_int_equal(cf_price_overrides_parse(OVERRIDES, strlen(OVERRIDES), "ov.json", &ov), CF_OK);
    assert_int_equal(ov.n, 3);
    int *rules = calloc(cat.n_vms, sizeof *rules);
    assert_int_equal(cf_price_overrides_apply(&ov, &cat, rules), CF_OK);
    const cf_vm *p5 = find(&cat, "aws", "us-east-1", "p5.48xlarge");
    assert_true(p5->price_ondemand_usd_per_hr == 40 && p5->price_spot_usd_per_hr == 20 && !p5->spot_price_estimated);
    assert_int_equal(rules[p5 - cat.vms], 3);
    /* discounts compound: 50 % then 10 % on H100 on-demand */
    assert_float_equal(find(&cat, "lambda", "us-east-1", "gpu_1x_h100_sxm5")->price_ondemand_usd_per_hr,
                       h100 * 0.5 * 0.9, 1e-9);
    assert_float_equal(find(&cat, "lambda", "us-east-1", "gpu_1x_a10")->price_ondemand_usd_per_hr, a10 * 0.5, 1e-9);
    assert_int_equal(ov.items[2].rows_matched, 1);
    cf_price_overrides_free(&ov);
    /* a note is shown in one line of the explanation: a line end in it made a line of its own */
    static const char noted[] = "{\"discounts\": [{\"cloud\": \"lambda\", \"percent\": 5,"
                                " \"note\": \"EDP\\n  - budget approved\"}]}";
    assert_int_equal(cf_price_overrides_parse(noted, strlen(noted), "ov.json", &ov), CF_OK);
    assert_string_equal(ov.items[0].note, "EDP\\n  - budget approved");
    cf_price_overrides_free(&ov);
    free(rules);
    cf_catalog_free(&cat);
}

/* A discount on on-demand only (a committed-use deal) that brings on-demand
 * below the spot price: the spot price is no discount any more and is left
 * out, counted on the rule (it was kept, spot 31 % above on-demand, while
 * an instance rule giving the same prices is an error). */
static void test_ondemand_discount_below_spot_leaves_spot_out(void **state)
{
    (void)state;
    cf_catalog cat;
    assert_int_equal(cf_catalog_load_embedded(&cat), CF_OK);
    const cf_vm *a2 = find(&cat, "gcp", "us-central1", "a2-highgpu-1g");
    double od = a2->price_ondemand_usd_per_hr, spot = a2->price_spot_usd_per_hr;
    assert_true(spot > 0 && spot > od * 0.4 && spot < od); /* a 60 % discount puts on-demand below spot */
    static const char cud[] = "{\"discounts\": [{\"cloud\": \"gcp\", \"gpu\": \"A100-40GB\", \"percent\": 60,"
                              " \"applies_to\": \"ondemand\"}, {\"cloud\": \"lambda\", \"percent\": 10}]}";
    cf_price_overrides ov;
    assert_int_equal(cf_price_overrides_parse(cud, strlen(cud), "cud.json", &ov), CF_OK);
    int *rules = calloc(cat.n_vms, sizeof *rules);
    assert_int_equal(cf_price_overrides_apply(&ov, &cat, rules), CF_OK);
    a2 = find(&cat, "gcp", "us-central1", "a2-highgpu-1g");
    assert_float_equal(a2->price_ondemand_usd_per_hr, od * 0.4, 1e-9);
    assert_true(a2->price_spot_usd_per_hr == 0 && a2->spot_kind == CF_PRICE_NONE);
    assert_true(ov.items[0].spot_left_out >= 1);
    assert_non_null(strstr(ov.items[0].spot_left_out_example, "gcp/"));
    assert_int_equal(ov.items[1].spot_left_out, 0);
    for (size_t i = 0; i < cat.n_vms; i++) /* no row anywhere is left with spot at or above on-demand */
        assert_false(cat.vms[i].price_ondemand_usd_per_hr > 0 &&
                     cat.vms[i].price_spot_usd_per_hr >= cat.vms[i].price_ondemand_usd_per_hr);
    cf_price_overrides_free(&ov);
    free(rules);
    cf_catalog_free(&cat);
}

/* Each price names the rule that last changed it: an on-demand-only
 * discount is not the spot price's rule, nor is an instance rule that gives
 * the on-demand price only (the row's rule is the last that matched). */
static void test_overrides_rules_per_price(void **state)
{
    (void)state;
    cf_catalog cat;
    assert_int_equal(cf_catalog_load_embedded(&cat), CF_OK);
    static const char text[] =
        "{\"discounts\": [{\"cloud\": \"aws\", \"percent\": 12},"
        "                 {\"cloud\": \"aws\", \"gpu\": \"T4\", \"percent\": 10, \"applies_to\": \"ondemand\"}],"
        " \"instances\": [{\"cloud\": \"aws\", \"region\": \"us-east-1\", \"instance_type\": \"p4d.24xlarge\","
        "                  \"price_ondemand_usd_per_hr\": 10}]}";
    cf_price_overrides ov;
    assert_int_equal(cf_price_overrides_parse(text, strlen(text), "ov.json", &ov), CF_OK);
    int *rows = calloc(cat.n_vms, sizeof *rows), *prices = calloc(2 * cat.n_vms, sizeof *prices);
    assert_int_equal(cf_price_overrides_apply_rules(&ov, &cat, rows, prices), CF_OK);
    size_t p4d = (size_t)(find(&cat, "aws", "us-east-1", "p4d.24xlarge") - cat.vms);
    assert_int_equal(rows[p4d], 3);
    assert_int_equal(prices[2 * p4d], 3);     /* the instance rule's on-demand price */
    assert_int_equal(prices[2 * p4d + 1], 1); /* the 12 % discount's spot price */
    size_t t4 = (size_t)(find(&cat, "aws", "us-east-1", "g4dn.xlarge") - cat.vms);
    assert_true(cat.vms[t4].price_spot_usd_per_hr > 0);
    assert_int_equal(rows[t4], 2);
    assert_int_equal(prices[2 * t4], 2);
    assert_int_equal(prices[2 * t4 + 1], 1); /* not the on-demand-only discount */
    const cf_vm *lambda = find(&cat, "lambda", "us-east-1", "gpu_1x_a10");
    assert_int_equal(prices[2 * (size_t)(lambda - cat.vms)], 0);
    for (size_t i = 0; i < cat.n_vms; i++) /* a price the row has not got is no rule's */
        assert_false(prices[2 * i + 1] && !(cat.vms[i].price_spot_usd_per_hr > 0));
    cf_price_overrides_free(&ov);
    free(prices);
    free(rows);
    cf_catalog_free(&cat);
}

static void test_overrides_errors_leave_catalog_alone(void **state)
{
    (void)state;
    cf_catalog cat;
    assert_int_equal(cf_catalog_load_embedded(&cat), CF_OK);
    double before = find(&cat, "lambda", "us-east-1", "gpu_1x_a10")->price_ondemand_usd_per_hr;
    static const char bad_spot[] =
        "{\"discounts\": [{\"cloud\": \"lambda\", \"percent\": 20}],"
        " \"instances\": [{\"cloud\": \"azure\", \"region\": \"eastus\", \"instance_type\": \"Standard_NC6s_v3\","
        " \"price_spot_usd_per_hr\": 50}]}";
    cf_price_overrides ov;
    assert_int_equal(cf_price_overrides_parse(bad_spot, strlen(bad_spot), "ov.json", &ov), CF_OK);
    assert_int_equal(cf_price_overrides_apply(&ov, &cat, NULL), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "instances[0]: makes the spot price"));
    assert_true(find(&cat, "lambda", "us-east-1", "gpu_1x_a10")->price_ondemand_usd_per_hr == before);
    cf_price_overrides_free(&ov);
    static const char wrong_type[] = "{\"discounts\": [{\"cloud\": 5, \"percent\": 20}]}";
    assert_int_equal(cf_price_overrides_parse(wrong_type, strlen(wrong_type), "ov.json", &ov), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "ov.json: discounts[0].cloud: expected a non-empty string");
    /* a bad note is named for what is wrong with it, not as an unknown key */
    static const char note_number[] = "{\"discounts\": [{\"cloud\": \"aws\", \"percent\": 20, \"note\": 5}]}";
    assert_int_equal(cf_price_overrides_parse(note_number, strlen(note_number), "ov.json", &ov), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "ov.json: discounts[0].note: expected a non-empty string");
    char long_note[300];
    snprintf(long_note, sizeof long_note,
             "{\"instances\": [{\"cloud\": \"aws\", \"instance_type\": \"p5.48xlarge\","
             " \"price_ondemand_usd_per_hr\": 40, \"note\": \"%0128d\"}]}", 0);
    assert_int_equal(cf_price_overrides_parse(long_note, strlen(long_note), "ov.json", &ov), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "ov.json: instances[0].note: is too long (at most 127 bytes)");
    cf_catalog_free(&cat);
}

static void test_update_failure_contract(void **state)
{
    (void)state;
    cf_catalog cat;
    assert_int_equal(cf_catalog_load_embedded(&cat), CF_OK);
    cf_price_update_result res;
    const char *unknown[] = {"oracle"};
    cf_price_update_options o = {.clouds = unknown, .n_clouds = 1, .fetched_at = "2026-11-21T00:00:00Z"};
    assert_int_equal(cf_prices_update(&cat, &o, &res), CF_ERR_USAGE);
    cf_price_update_result_free(&res);
    /* Lambda's API needs a key: asked for by name, its absence is an error */
    unsetenv("CLOUDFIT_LAMBDA_API_KEY");
    const char *lambda[] = {"lambda"};
    o = (cf_price_update_options){.clouds = lambda, .n_clouds = 1, .clouds_explicit = 1,
                                  .fetched_at = "2026-11-21T00:00:00Z"};
    assert_int_equal(cf_prices_update(&cat, &o, &res), CF_ERR_UNAVAILABLE);
    assert_non_null(strstr(cf_error_message(), "lambda: no API key"));
    assert_null(res.vms_csv);
    cf_price_update_result_free(&res);
    /* Nothing listens on port 1: the cloud fails, nothing is produced. */
    setenv("CLOUDFIT_AZURE_PRICES_URL", "http://127.0.0.1:1/api/retail/prices", 1);
    setenv("CLOUDFIT_HTTP_RETRIES", "1", 1);
    setenv("CLOUDFIT_HTTP_RETRY_BASE_MS", "1", 1);
    const char *azure[] = {"azure"};
    const char *region[] = {"eastus"};
    o = (cf_price_update_options){.clouds = azure, .n_clouds = 1, .regions = region, .n_regions = 1,
                                  .clouds_explicit = 1, .fetched_at = "2026-11-21T00:00:00Z"};
    assert_int_equal(cf_prices_update(&cat, &o, &res), CF_ERR_NETWORK);
    assert_null(res.vms_csv);
    assert_int_equal(res.n_clouds, 1);
    assert_int_equal(res.clouds[0].outcome, CF_CLOUD_FAILED);
    assert_non_null(strstr(res.clouds[0].message, "azure eastus page 1"));
    /* the message says what was tried: one retry; with retries off, none
     * (it said "gave up after retries" when no retry was made) */
    if (!strstr(res.clouds[0].message, "(gave up after 1 retry)"))
        fail_msg("message: %s", res.clouds[0].message);
    cf_price_update_result_free(&res);
    setenv("CLOUDFIT_HTTP_RETRIES", "0", 1);
    assert_int_equal(cf_prices_update(&cat, &o, &res), CF_ERR_NETWORK);
    assert_int_equal(res.clouds[0].outcome, CF_CLOUD_FAILED);
    if (!strstr(res.clouds[0].message, "(not retried: CLOUDFIT_HTTP_RETRIES=0)") ||
        strstr(res.clouds[0].message, "gave up"))
        fail_msg("message: %s", res.clouds[0].message);
    cf_price_update_result_free(&res);
    setenv("CLOUDFIT_HTTP_RETRIES", "1", 1);
    /* GCP without a key: skipped when not asked for by name. */
    unsetenv("CLOUDFIT_GCP_API_KEY");
    const char *gcp[] = {"gcp"};
    o = (cf_price_update_options){.clouds = gcp, .n_clouds = 1, .fetched_at = "2026-11-21T00:00:00Z"};
    assert_int_equal(cf_prices_update(&cat, &o, &res), CF_ERR_UNAVAILABLE);
    assert_int_equal(res.clouds[0].outcome, CF_CLOUD_SKIPPED);
    assert_non_null(strstr(res.clouds[0].hint, "CLOUDFIT_GCP_API_KEY"));
    cf_price_update_result_free(&res);
    cf_catalog_free(&cat);
}

/* prices update takes cloud names in any case, as the filters do ("LAMBDA"
 * was refused by the update and accepted by the check before it). */
static void test_update_clouds_ignore_case(void **state)
{
    (void)state;
    const char *const good[] = {"LAMBDA", "Aws", "gcp", "AZURE"};
    assert_int_equal(cf_prices_update_check_clouds(good, 4), CF_OK);
    const char *const bad[] = {"lambda", "oracle"};
    assert_int_equal(cf_prices_update_check_clouds(bad, 2), CF_ERR_USAGE);
    assert_non_null(strstr(cf_error_message(), "'oracle'"));
    assert_non_null(strstr(cf_error_hint_text(), "aws, azure, gcp and lambda"));
    cf_error_clear();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_policy),
        cmocka_unit_test(test_update_clouds_ignore_case),
        cmocka_unit_test(test_redact_and_encode),
        cmocka_unit_test(test_csv_round_trip),
        cmocka_unit_test(test_old_snapshot_keeps_launchable_rows),
        cmocka_unit_test(test_overrides_apply),
        cmocka_unit_test(test_ondemand_discount_below_spot_leaves_spot_out),
        cmocka_unit_test(test_overrides_rules_per_price),
        cmocka_unit_test(test_overrides_errors_leave_catalog_alone),
        cmocka_unit_test(test_update_failure_contract),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
