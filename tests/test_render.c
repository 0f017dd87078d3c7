/* Tests of the render module called directly on hand-built result structs
 * (no catalog, no database, no subprocess): the prices summary table, the
 * history list as JSON (docs/history.md), a validate report's JSON, the CI
 * gates and the catalog object of a document, a profile as text and as the
 * measurements CSV. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/escape.h"
#include "cloudfit/render.h"
#include "cloudfit/render/emit_common.h"
#include "cloudfit/render/history_report.h"
#include "cloudfit/render/prices_report.h"
#include "cloudfit/render/profile_report.h"
#include "cloudfit/render/render_catalog.h"
#include "cloudfit/render/validate_report.h"

/* The line of `text` that starts at its `index`-th newline (0 = first),
 * copied into `out` without the newline. */
static const char *line_of(const char *text, int index, char *out, size_t n)
{
    const char *p = text;
    for (int i = 0; i < index && p; i++) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    if (!p)
        return NULL;
    size_t len = strcspn(p, "\n");
    if (len >= n)
        len = n - 1;
    memcpy(out, p, len);
    out[len] = '\0';
    return out;
}

static size_t n_children(const cJSON *o)
{
    size_t n = 0;
    for (const cJSON *c = o ? o->child : NULL; c; c = c->next)
        n++;
    return n;
}

/* ---- prices: the summary table ---------------------------------------------- */

static void embedded_source(cf_catalog_source *src)
{
    memset(src, 0, sizeof *src);
    snprintf(src->catalog.name, sizeof src->catalog.name, "embedded");
    snprintf(src->catalog.data_date, sizeof src->catalog.data_date, "2026-07-30");
    snprintf(src->catalog.oldest_date, sizeof src->catalog.oldest_date, "2026-05-20");
    snprintf(src->source, sizeof src->source, "embedded");
    snprintf(src->snapshot, sizeof src->snapshot, "embedded");
    snprintf(src->fetched_at, sizeof src->fetched_at, "2026-07-30");
    src->age_days = 3.6;
    src->max_age_days = 30;
    snprintf(src->in_use.oldest_date, sizeof src->in_use.oldest_date, "2026-05-20");
    snprintf(src->in_use.newest_date, sizeof src->in_use.newest_date, "2026-07-30");
}

static void test_prices_summary_table(void **state)
{
    (void)state;
    cf_catalog_source src;
    embedded_source(&src);
    cf_vm p4d = {.cloud = "aws", .region = "us-east-1", .instance_type = "p4d.24xlarge", .gpu_model = "A100-40GB",
                 .gpu_count = 8};
    cf_vm spot_only = {.cloud = "gcp", .region = "us-central1", .instance_type = "a2-highgpu-1g",
                       .gpu_model = "A100-40GB", .gpu_count = 1};
    cf_gpu_cloud_prices rows[] = {
        {.gpu = "A100-40GB", .cloud = "aws", .gpu_counts_mask = (1u << 1) | (1u << 8), .n_offers = 2,
         .cheapest_usd_per_gpu_hr = 4.0963, .cheapest = &p4d, .cheapest_kind = CF_PRICE_LISTED,
         .cheapest_spot_usd_per_gpu_hr = 1.5, .cheapest_spot = &p4d, .cheapest_spot_kind = CF_PRICE_OBSERVED},
        /* same GPU: its name is not repeated; no on-demand offer */
        {.gpu = "A100-40GB", .cloud = "gcp", .gpu_counts_mask = 1u << 1, .gpu_counts_32_plus = 1, .n_offers = 1,
         .cheapest_spot_usd_per_gpu_hr = 1.1, .cheapest_spot = &spot_only, .cheapest_spot_kind = CF_PRICE_LISTED},
    };
    cf_prices_summary_report r = {.source = &src, .rows = rows, .n_rows = 2, .n_offers = 3};
    cf_buf b = CF_BUF_INIT;
    cf_prices_summary_table(&r, &b);
    assert_false(cf_buf_failed(&b));
    const char *s = cf_buf_cstr(&b);
    char line[512];
    /* columns as wide as their widest cell, two spaces apart; prices right-aligned */
    assert_non_null(line_of(s, 0, line, sizeof line));
    assert_string_equal(line, "GPU        CLOUD  GPUS/VM  $/GPU-HR  SPOT $/GPU-HR  CHEAPEST (ON-DEMAND)");
    assert_non_null(line_of(s, 1, line, sizeof line));
    assert_string_equal(line, "A100-40GB  aws    1, 8        4.096     1.5 (obs.)  p4d.24xlarge us-east-1");
    assert_non_null(line_of(s, 2, line, sizeof line));
    assert_string_equal(line, "           gcp    1, 32+          -            1.1  - (spot or flex-start only)");
    assert_non_null(line_of(s, 4, line, sizeof line));
    assert_string_equal(line, "catalog: embedded; prices in use of 2026-05-20 to 2026-07-30, the oldest 3 days old; "
                              "3 offers. 'cloudfit prices GPU' lists every offer of one GPU.");
    cf_buf_free(&b);
}

/* ---- counts of one are singular ---------------------------------------------- */

/* "1 offers", "1 prices kept out", "copied 1 recommendations (1 were there
 * already)": a count of one takes the singular. */
static void test_counts_of_one_are_singular(void **state)
{
    (void)state;
    cf_buf b = CF_BUF_INIT;
    cf_history_copy_counts one = {1, 1, 1, 1, 1, 1, 1, 0, 0};
    cf_history_migrate_text(&one, "a.db", "b.db", &b);
    assert_string_equal(cf_buf_cstr(&b), "copied 1 recommendation (1 was there already), 1 spec, 1 measurement, "
                                         "1 profile, 1 price snapshot and 1 search run\nfrom a.db\nto   b.db\n");
    cf_buf_free(&b);
    cf_history_copy_counts two = {2, 2, 0, 2, 2, 2, 2, 0, 0};
    cf_history_migrate_text(&two, "a.db", "b.db", &b);
    assert_non_null(strstr(cf_buf_cstr(&b), "copied 2 recommendations (0 were there already), 2 specs, "
                                            "2 measurements, 2 profiles, 2 price snapshots and 2 search runs"));
    cf_buf_free(&b);
    /* profiles that replaced an older one, or were older than the destination's, are said */
    cf_history_copy_counts replaced = {0, 0, 0, 0, 1, 0, 0, 1, 0};
    cf_history_migrate_text(&replaced, "a.db", "b.db", &b);
    assert_non_null(strstr(cf_buf_cstr(&b), ", 1 profile (1 replacing an older one), 0 price snapshots"));
    cf_buf_free(&b);
    cf_history_copy_counts older = {0, 0, 0, 0, 0, 0, 0, 0, 2};
    cf_history_migrate_text(&older, "a.db", "b.db", &b);
    assert_non_null(strstr(cf_buf_cstr(&b), ", 0 profiles (2 not copied: older than the destination's), 0 price"));
    cf_buf_free(&b);
    cf_price_update_result res = {.n_clouds = 0, .n_rows = 1, .n_rejected = 1};
    cf_prices_update_report u = {.result = &res, .snapshot_id = 3, .fetched_at = "2026-11-18T00:00:00Z",
                                 .db_path = "h.db"};
    cf_prices_update_table(&u, &b);
    assert_non_null(strstr(cf_buf_cstr(&b), "stored snapshot-3: 1 row, 1 price kept out, fetched"));
    cf_buf_free(&b);
    res.n_rows = 2, res.n_rejected = 0;
    cf_prices_update_table(&u, &b);
    assert_non_null(strstr(cf_buf_cstr(&b), "stored snapshot-3: 2 rows, 0 prices kept out, fetched"));
    cf_buf_free(&b);
}

/* ---- a configuration as JSON: what the limits were held to ------------------- */

/* The deadline and budget are checked at full precision; the JSON must
 * not round the figures they were checked on past the limits (4 digits put
 * a plan held at 16.0759 h under a 16.076 h deadline at 16.08 h, and a CI
 * gate reading the document failed it). */
static void test_config_json_keeps_limits(void **state)
{
    (void)state;
    cf_vm vm = {.cloud = "aws", .region = "eu-south-1", .instance_type = "g6e.2xlarge", .gpu_model = "L40S",
                .price_ondemand_usd_per_hr = 2.24};
    cf_config c;
    memset(&c, 0, sizeof c);
    c.vm = &vm;
    c.nodes = c.gpus_per_node = c.accumulation = 1;
    c.local_batch = 384;
    c.global_batch = 384;
    c.hours = 0.758;
    c.hours_p10 = 0.4234;
    c.hours_p90 = 16.0759;
    c.hours_at_confidence = 16.0759;
    c.usd_at_confidence = 1634.5491;
    cJSON *o = cf_config_json(&c);
    assert_non_null(o);
    assert_true(cJSON_GetObjectItem(o, "hours_at_confidence")->valuedouble <= 16.076);
    assert_true(cJSON_GetObjectItem(o, "hours_p90")->valuedouble <= 16.076);
    assert_true(cJSON_GetObjectItem(o, "total_usd_at_confidence")->valuedouble <= 1634.55);
    cJSON_Delete(o);
}

/* ---- history: the list as JSON ------------------------------------------------ */

static void history_row(cf_history_row *row, long long id, const char *branch)
{
    memset(row, 0, sizeof *row);
    row->id = id;
    snprintf(row->created_at, sizeof row->created_at, "2026-11-2%lldT10:00:00Z", id);
    snprintf(row->tool_version, sizeof row->tool_version, "0.1.0");
    snprintf(row->spec_hash, sizeof row->spec_hash, "%064d", 7);
    snprintf(row->spec_name, sizeof row->spec_name, "resnet50-imagenet");
    snprintf(row->objective, sizeof row->objective, "cost");
    snprintf(row->catalog_name, sizeof row->catalog_name, "embedded");
    snprintf(row->catalog_date, sizeof row->catalog_date, "2026-07-30");
    row->chosen = (cf_history_config){.rank = 1, .cloud = "lambda", .region = "asia-northeast-1",
                                      .instance_type = "gpu_1x_gh200", .gpu = "GH200", .gpus_per_node = 1,
                                      .nodes = 2, .local_batch = 768, .accumulation = 1, .global_batch = 1536,
                                      .lr = 0.5191, .step_time_s = 0.465, .hours = 11.1, .total_usd = 50.88,
                                      .usd_per_node_hour = 2.29};
    if (branch) {
        snprintf(row->ci.provider, sizeof row->ci.provider, "github-actions");
        snprintf(row->ci.branch, sizeof row->ci.branch, "%s", branch);
        snprintf(row->ci.commit, sizeof row->ci.commit, "0123456789abcdef");
    }
}

/* The list's CSV has every CI value the JSON's ci has: run_url was left
 * out, the link from a row to the job that made it. */
static void test_history_csv_has_the_run_url(void **state)
{
    (void)state;
    cf_history_row row;
    history_row(&row, 1, "main");
    snprintf(row.ci.run_id, sizeof row.ci.run_id, "77");
    snprintf(row.ci.run_url, sizeof row.ci.run_url, "https://ci.example/run/77");
    cf_history_list_report r = {.rows = &row, .n = 1};
    cf_buf out = CF_BUF_INIT;
    cf_history_list_csv(&r, &out);
    const char *csv = cf_buf_cstr(&out);
    assert_non_null(strstr(csv, ",pull_request,run_id,run_url\r\n1,"));
    assert_non_null(strstr(csv, ",main,,,77,https://ci.example/run/77\r\n"));
    cf_buf_free(&out);
}

/* history diff -f csv: the values, as the JSON and the list's CSV give
 * them; it wrote the table's text, the LR at four digits and a cost of
 * $1,234,567.89 as 1.23457e+06. */
static void test_history_diff_csv_has_the_values(void **state)
{
    (void)state;
    cf_history_row a, b;
    history_row(&a, 1, NULL);
    history_row(&b, 2, NULL);
    a.chosen.lr = 0.5191473867796916;
    b.chosen.lr = 0.6567941659306896;
    a.chosen.total_usd = 1234567.89;
    b.chosen.total_usd = 1534567.25;
    snprintf(b.chosen.cloud, sizeof b.chosen.cloud, "aws");
    cf_history_diff_report r = {.from = &a, .to = &b};
    cf_history_compare(&a, &b, &r.diff);
    cf_buf out = CF_BUF_INIT;
    cf_history_diff_csv(&r, &out);
    const char *csv = cf_buf_cstr(&out);
    assert_non_null(strstr(csv, "\r\nlr,configuration,0.519147386779692,0.65679416593069,1,"));
    assert_non_null(strstr(csv, "\r\ntotal_usd,cost,1234567.89,1534567.25,1,"));
    assert_non_null(strstr(csv, "\r\ncloud,configuration,lambda,aws,1,\r\n")); /* text as it is */
    assert_non_null(strstr(csv, "\r\nnodes,configuration,2,2,0,0\r\n"));
    cf_buf_free(&out);
}

/* history show and history diff (table) write stored text as one line: a
 * line break in a row another client wrote (a shared PostgreSQL history, an
 * edited file) made a line of their output, which the output's sanitiser
 * keeps; the list's cells escaped it. */
static void test_history_show_and_diff_keep_stored_text_on_its_line(void **state)
{
    (void)state;
    cf_history_row a, b;
    history_row(&a, 1, "main");
    history_row(&b, 2, "x\nforged");
    snprintf(b.chosen.region, sizeof b.chosen.region, "us-east-1\n  predicted    step 0.001 s");
    snprintf(b.chosen.gpu, sizeof b.chosen.gpu, "H100\x1b[2J");
    cf_history_show_report show = {.row = &b};
    cf_buf out = CF_BUF_INIT;
    cf_history_show_table(&show, &out);
    const char *text = cf_buf_cstr(&out);
    assert_non_null(strstr(text, "/us-east-1\\n  predicted    step 0.001 s\n"));
    assert_non_null(strstr(text, "(1×H100\\e[2J)"));
    assert_non_null(strstr(text, ", branch x\\nforged"));
    assert_null(strstr(text, "\n  predicted    step 0.001 s"));
    cf_buf_free(&out);
    cf_history_diff_report r = {.from = &a, .to = &b};
    cf_history_compare(&a, &b, &r.diff);
    cf_history_diff_table(&r, &out);
    text = cf_buf_cstr(&out);
    assert_non_null(strstr(text, " → us-east-1\\n  predicted    step 0.001 s\n"));
    assert_null(strstr(text, "\n  predicted"));
    cf_buf_free(&out);
}

/* The BRANCH cell is cut at 40 bytes at a character boundary: "%.40s"
 * showed half an 'é' as '\xc3'. */
static void test_history_table_cuts_whole_characters(void **state)
{
    (void)state;
    cf_history_row row;
    char branch[128] = "release/x";
    for (int i = 0; i < 30; i++)
        strcat(branch, "\xc3\xa9");
    history_row(&row, 1, branch);
    cf_history_list_report r = {.rows = &row, .n = 1};
    cf_buf out = CF_BUF_INIT;
    cf_history_list_table(&r, &out);
    assert_false(cf_buf_failed(&out));
    assert_null(strstr(cf_buf_cstr(&out), "\\x"));
    assert_int_equal(cf_utf8_invalid_at(cf_buf_cstr(&out)), -1);
    assert_non_null(strstr(cf_buf_cstr(&out), "release/x\xc3\xa9"));
    cf_buf_free(&out);
}

/* The list written a row at a time (history list streams a long history)
 * gives the bytes of the whole-list renderers: JSON as --format json
 * prints cf_history_list_json's document (cJSON_Print, a newline), for no
 * row, one and several; the table (measured first) and CSV as
 * cf_history_list_table and _csv, also on a narrow terminal. */
static void streamed(cf_history_format format, const cf_history_row *rows, size_t n, int width, cf_buf *out)
{
    cf_history_list_writer w;
    assert_int_equal(cf_history_list_writer_init(&w, format, width), CF_OK);
    for (size_t i = 0; i < n; i++)
        cf_history_list_measure(&w, &rows[i]);
    cf_history_list_begin(&w, out);
    for (size_t i = 0; i < n; i++)
        cf_history_list_row(&w, &rows[i], out);
    cf_history_list_end(&w, out);
    cf_history_list_writer_free(&w);
    assert_false(cf_buf_failed(out));
}

static void test_history_list_streamed_is_the_whole_list(void **state)
{
    (void)state;
    cf_history_row rows[3];
    history_row(&rows[0], 3, "feature/\xc3\xa9t\xc3\xa9-a-long-branch-name-for-the-narrow-table");
    history_row(&rows[1], 2, NULL);
    history_row(&rows[2], 1, "main");
    rows[1].chosen.spot = rows[1].chosen.mixed = 1;
    for (size_t n = 0; n <= 3; n++) {
        cf_history_list_report r = {.rows = rows, .n = n};
        cJSON *doc = cf_history_list_json(&r);
        char *whole = cJSON_Print(doc);
        cf_buf out = CF_BUF_INIT;
        streamed(CF_HISTORY_FORMAT_JSON, rows, n, 0, &out);
        assert_int_equal(out.len, strlen(whole) + 1);
        assert_memory_equal(out.data, whole, strlen(whole));
        assert_int_equal(out.data[out.len - 1], '\n');
        free(whole);
        cJSON_Delete(doc);
        cf_buf_free(&out);
        for (int width = 0; width <= 120; width += 40) {
            cf_history_list_report t = {.rows = rows, .n = n, .width = width};
            cf_buf a = CF_BUF_INIT, b = CF_BUF_INIT, c = CF_BUF_INIT, d = CF_BUF_INIT;
            cf_history_list_table(&t, &a);
            streamed(CF_HISTORY_FORMAT_TABLE, rows, n, width, &b);
            assert_string_equal(cf_buf_cstr(&a), cf_buf_cstr(&b));
            cf_history_list_csv(&t, &c);
            streamed(CF_HISTORY_FORMAT_CSV, rows, n, width, &d);
            assert_string_equal(cf_buf_cstr(&c), cf_buf_cstr(&d));
            cf_buf_free(&a);
            cf_buf_free(&b);
            cf_buf_free(&c);
            cf_buf_free(&d);
        }
    }
}

static void test_history_list_json(void **state)
{
    (void)state;
    cf_history_row rows[2];
    history_row(&rows[0], 2, "feature/x");
    history_row(&rows[1], 1, NULL);
    cf_history_list_report r = {.rows = rows, .n = 2};
    cJSON *doc = cf_history_list_json(&r);
    assert_non_null(doc);
    assert_true(cJSON_IsArray(doc));
    assert_int_equal(cJSON_GetArraySize(doc), 2);
    /* docs/history.md: {id, created_at, tool_version, spec: {name, hash},
     * objective, catalog: {name, date}, chosen: {...}, ci: {...} | null} */
    const char *keys[] = {"id", "created_at", "tool_version", "spec", "objective", "catalog", "chosen", "ci"};
    for (int i = 0; i < 2; i++) {
        const cJSON *e = cJSON_GetArrayItem(doc, i);
        assert_int_equal(n_children(e), 8);
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
            assert_non_null(cJSON_GetObjectItemCaseSensitive(e, keys[k]));
    }
    const cJSON *newest = cJSON_GetArrayItem(doc, 0);
    assert_int_equal(cJSON_GetObjectItem(newest, "id")->valuedouble, 2);
    assert_string_equal(cJSON_GetObjectItem(newest, "created_at")->valuestring, "2026-11-22T10:00:00Z");
    const cJSON *spec = cJSON_GetObjectItem(newest, "spec");
    assert_string_equal(cJSON_GetObjectItem(spec, "name")->valuestring, "resnet50-imagenet");
    assert_int_equal(strlen(cJSON_GetObjectItem(spec, "hash")->valuestring), 64);
    const cJSON *cat = cJSON_GetObjectItem(newest, "catalog");
    assert_string_equal(cJSON_GetObjectItem(cat, "name")->valuestring, "embedded");
    assert_string_equal(cJSON_GetObjectItem(cat, "date")->valuestring, "2026-07-30");
    const cJSON *chosen = cJSON_GetObjectItem(newest, "chosen");
    assert_string_equal(cJSON_GetObjectItem(chosen, "gpu")->valuestring, "GH200");
    assert_int_equal(cJSON_GetObjectItem(chosen, "global_batch")->valuedouble, 1536);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(chosen, "spot")));
    assert_float_equal(cJSON_GetObjectItem(chosen, "total_usd")->valuedouble, 50.88, 1e-9);
    const cJSON *ci = cJSON_GetObjectItem(newest, "ci");
    assert_true(cJSON_IsObject(ci));
    assert_string_equal(cJSON_GetObjectItem(ci, "provider")->valuestring, "github-actions");
    assert_string_equal(cJSON_GetObjectItem(ci, "branch")->valuestring, "feature/x");
    /* not in CI: null, not an empty object */
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(doc, 1), "ci")));
    cJSON_Delete(doc);
}

/* ---- validate: the step-time report as JSON -------------------------------------- */

static void test_validate_steps_json(void **state)
{
    (void)state;
    cf_validate_options options = {.train_max_nodes = 1, .with_2node_probe = 1};
    cf_validate_context context = {0};
    cf_validate_group group = {.model = "bert", .gpu = "T4", .profile = "aws", .skipped = 1,
                               .message = "no parameter count for bert"};
    cf_validate_steps_report r = {.path = "runs.csv", .n_rows = 40, .options = &options, .context = &context,
                                  .groups = &group, .n_groups = 1,
                                  .overall = {.n = 12, .median_ape = 0.0512345, .p90_ape = 0.123456,
                                              .max_ape = 0.2, .interval_coverage = -1}};
    cJSON *doc = cf_validate_steps_json(&r);
    assert_non_null(doc);
    assert_string_equal(cJSON_GetObjectItem(doc, "kind")->valuestring, "step_time");
    assert_string_equal(cJSON_GetObjectItem(doc, "file")->valuestring, "runs.csv");
    const cJSON *opts = cJSON_GetObjectItem(doc, "options");
    assert_int_equal(cJSON_GetObjectItem(opts, "train_max_nodes")->valuedouble, 1);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(opts, "with_2node_probe")));
    const cJSON *overall = cJSON_GetObjectItem(doc, "overall");
    assert_true(cJSON_IsObject(overall));
    assert_int_equal(cJSON_GetObjectItem(overall, "n")->valuedouble, 12);
    /* rounded to 5 decimals so documents are stable */
    assert_float_equal(cJSON_GetObjectItem(overall, "median_ape")->valuedouble, 0.05123, 1e-12);
    assert_float_equal(cJSON_GetObjectItem(overall, "p90_ape")->valuedouble, 0.12346, 1e-12);
    assert_float_equal(cJSON_GetObjectItem(overall, "max_ape")->valuedouble, 0.2, 1e-12);
    /* no interval: no coverage key */
    assert_null(cJSON_GetObjectItem(overall, "interval_coverage"));
    const cJSON *groups = cJSON_GetObjectItem(doc, "groups");
    assert_int_equal(cJSON_GetArraySize(groups), 1);
    const cJSON *g = cJSON_GetArrayItem(groups, 0);
    assert_string_equal(cJSON_GetObjectItem(g, "error")->valuestring, "no parameter count for bert");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(g, "skipped")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(g, "gpu_table_entry")));
    cJSON_Delete(doc);
}

/* ---- the CI gates and the catalog object of a recommendation ----------------------- */

static void test_gates(void **state)
{
    (void)state;
    cf_history_gate gates[] = {
        {.name = "max_cost_usd", .limit = 100, .value = 123.456789, .passed = 0, .note = "$123.46 > $100"},
        {.name = "max_cost_increase_pct", .limit = 10, .value = NAN, .passed = 1, .note = "no baseline"},
    };
    cf_buf b = CF_BUF_INIT;
    cf_gates_text(gates, 2, &b);
    assert_string_equal(cf_buf_cstr(&b), "\nGates: FAILED\n"
                                         "  FAIL max_cost_usd           $123.46 > $100\n"
                                         "  pass max_cost_increase_pct  no baseline\n");
    cf_buf_free(&b);
    cf_gates_text(gates, 0, &b); /* no gates: nothing */
    assert_int_equal(b.len, 0);
    cf_buf_free(&b);

    cJSON *a = cf_gates_json(gates, 2);
    assert_int_equal(cJSON_GetArraySize(a), 2);
    const cJSON *g0 = cJSON_GetArrayItem(a, 0);
    assert_string_equal(cJSON_GetObjectItem(g0, "name")->valuestring, "max_cost_usd");
    assert_float_equal(cJSON_GetObjectItem(g0, "value")->valuedouble, 123.457, 1e-12); /* 6 significant digits */
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(g0, "passed")));
    const cJSON *g1 = cJSON_GetArrayItem(a, 1);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(g1, "value"))); /* nothing to compare with */
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(g1, "passed")));
    cJSON_Delete(a);
}

static void test_catalog_source_json(void **state)
{
    (void)state;
    cf_catalog_source src;
    embedded_source(&src);
    src.too_old = 1;
    cJSON *o = cf_catalog_source_json(&src, &src.catalog, src.age_days, NULL, 0, 0);
    assert_string_equal(cJSON_GetObjectItem(o, "source")->valuestring, "embedded");
    assert_string_equal(cJSON_GetObjectItem(o, "data_date")->valuestring, "2026-07-30");
    assert_string_equal(cJSON_GetObjectItem(o, "oldest_data")->valuestring, "2026-05-20");
    assert_int_equal(cJSON_GetObjectItem(o, "age_days")->valuedouble, 3); /* whole days */
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(o, "too_old")));
    assert_null(cJSON_GetObjectItem(o, "price_overrides")); /* none applied */
    cJSON_Delete(o);
    /* without a source: the catalog's own name and date, nothing about limits */
    o = cf_catalog_source_json(NULL, &src.catalog, 40.2, NULL, 0, 0);
    assert_string_equal(cJSON_GetObjectItem(o, "snapshot")->valuestring, "embedded");
    assert_string_equal(cJSON_GetObjectItem(o, "fetched_at")->valuestring, "2026-07-30");
    assert_int_equal(cJSON_GetObjectItem(o, "age_days")->valuedouble, 40);
    assert_null(cJSON_GetObjectItem(o, "too_old"));
    cJSON_Delete(o);
}

/* Which override rule the chosen plan's price comes from: the rule that
 * changed the price the plan pays, not the last rule that matched its VM.
 * An on-demand-only discount was credited to a spot plan paying the
 * catalog's spot price (JSON chosen_price_rule 1, "the chosen VM's price
 * comes from override discounts[0]"). */
static void test_chosen_price_rule_is_of_the_price_paid(void **state)
{
    (void)state;
    static cf_vm vm;
    memset(&vm, 0, sizeof vm);
    snprintf(vm.cloud, sizeof vm.cloud, "aws");
    snprintf(vm.region, sizeof vm.region, "us-east-1");
    snprintf(vm.instance_type, sizeof vm.instance_type, "p4d.24xlarge");
    vm.price_ondemand_usd_per_hr = 29.5, vm.price_spot_usd_per_hr = 9.8;
    /* discounts[0]: on demand only (changed the on-demand price); instances[0]: the spot price */
    cf_price_override rules[2];
    memset(rules, 0, sizeof rules);
    rules[0].kind = CF_OVERRIDE_DISCOUNT, rules[0].percent = 10, rules[0].applies_ondemand = 1;
    snprintf(rules[0].key_path, sizeof rules[0].key_path, "discounts[0]");
    snprintf(rules[0].note, sizeof rules[0].note, "EDP");
    rules[1].kind = CF_OVERRIDE_INSTANCE, rules[1].price_spot_usd_per_hr = 9.8;
    snprintf(rules[1].key_path, sizeof rules[1].key_path, "instances[0]");
    int rule_of_row[1] = {1}, rule_of_price[2] = {1, 0};
    cf_catalog_source src;
    embedded_source(&src);
    src.catalog.vms = &vm, src.catalog.n_vms = 1;
    src.overrides.items = rules, src.overrides.n = 1;
    snprintf(src.overrides.path, sizeof src.overrides.path, "ov.json");
    src.override_rule = rule_of_row, src.override_price_rule = rule_of_price, src.n_rows_overridden = 1;
    static const struct {
        int spot, mixed;
        double chosen, fallback; /* 0: null, -1: absent */
        const char *line;        /* NULL: none names a rule */
    } cases[] = {
        {0, 0, 1, -1, "the chosen VM's on-demand price comes from override discounts[0] (EDP)\n"},
        {1, 0, 0, -1, NULL}, /* the spot price is the catalog's: the on-demand discount is not its rule */
        {1, 1, 0, 1, "the chosen VM's on-demand price (the mixed plan's fallback) comes from override discounts[0] "
                     "(EDP); its spot price is the catalog's\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cJSON *o = cf_catalog_source_json(&src, &src.catalog, src.age_days, &vm, cases[i].spot, cases[i].mixed);
        const cJSON *ov = cJSON_GetObjectItem(o, "price_overrides");
        const cJSON *chosen = cJSON_GetObjectItem(ov, "chosen_price_rule");
        const cJSON *fallback = cJSON_GetObjectItem(ov, "chosen_fallback_price_rule");
        if (cases[i].chosen)
            assert_int_equal(cJSON_GetNumberValue(chosen), cases[i].chosen);
        else
            assert_true(cJSON_IsNull(chosen));
        if (cases[i].fallback < 0)
            assert_null(fallback);
        else
            assert_int_equal(cJSON_GetNumberValue(fallback), cases[i].fallback);
        cJSON_Delete(o);
        cf_buf b = CF_BUF_INIT;
        cf_catalog_source_overrides_text(&src, &vm, cases[i].spot, cases[i].mixed, &b);
        const char *first = "price overrides from ov.json: 1 rule changed 1 catalog row\n";
        assert_int_equal(strncmp(cf_buf_cstr(&b), first, strlen(first)), 0);
        if (cases[i].line)
            assert_string_equal(cf_buf_cstr(&b) + strlen(first), cases[i].line);
        else
            assert_string_equal(cf_buf_cstr(&b), first);
        cf_buf_free(&b);
    }
    /* both prices from rules: a mixed plan names each, a spot plan its spot price's */
    src.overrides.n = 2, rule_of_row[0] = 2, rule_of_price[1] = 2;
    cf_buf b = CF_BUF_INIT;
    cf_catalog_source_overrides_text(&src, &vm, 1, 1, &b);
    assert_non_null(strstr(cf_buf_cstr(&b), "the chosen VM's spot price comes from override instances[0]; its "
                                            "on-demand price (the mixed plan's fallback) from override discounts[0] "
                                            "(EDP)\n"));
    b.len = 0;
    cf_catalog_source_explain(&src, &src.catalog, src.age_days, &vm, 1, 0, &b);
    assert_non_null(strstr(cf_buf_cstr(&b), "\n  - the chosen VM's spot price comes from override instances[0]\n"));
    assert_null(strstr(cf_buf_cstr(&b), "discounts[0]"));
    cf_buf_free(&b);
}

/* A profile as the measurements CSV (docs/profiler.md "The measurements CSV") that validate reads
 * back: the header, one row per batch, the device name quoted (it has a
 * comma) and a name starting with '-' kept as it is (no spreadsheet guard);
 * and as text, the fit and the memory ceiling. */
static void test_profile_csv_and_table(void **state)
{
    (void)state;
    static cf_profile p;
    memset(&p, 0, sizeof p);
    snprintf(p.spec_name, sizeof p.spec_name, "-mlp");
    snprintf(p.backend, sizeof p.backend, "cpu");
    snprintf(p.device.name, sizeof p.device.name, "cpu: EPYC, 2 threads");
    p.steps = 30;
    p.warmup_steps = 3;
    int batches[] = {16, 32};
    double steps[] = {0.002, 0.003};
    for (int i = 0; i < 2; i++) {
        p.points[i].local_batch = batches[i];
        p.points[i].step_time_s = p.points[i].min_s = p.points[i].max_s = steps[i];
    }
    p.n_points = 2;
    p.has_fit = 1;
    p.alpha_s = 0.001;
    p.beta_s = 6.25e-5;
    p.r2 = 1;
    p.max_local_batch = 32;
    p.ceiling_found = 1;
    p.oom_batch = 64;
    snprintf(p.noise_error, sizeof p.noise_error, "not asked for");
    cf_buf csv = CF_BUF_INIT, text = CF_BUF_INIT;
    cf_profile_csv(&p, NULL, &csv);
    cf_profile_table(&p, NULL, &text);
    char line[256];
    assert_string_equal(line_of(cf_buf_cstr(&csv), 0, line, sizeof line),
                        "model,gpu,profile,hw_gpus_per_node,source,placement,num_nodes,num_gpus,local_bsz,global_bsz,"
                        "step_time_s,sync_time_s,compute_time_s,samples_per_s");
    assert_string_equal(line_of(cf_buf_cstr(&csv), 2, line, sizeof line),
                        "-mlp,\"cpu: EPYC, 2 threads\",cloudfit-cpu,1,cloudfit profile,1,1,1,32,32,0.003,0,0.003,10666.6667");
    assert_null(line_of(cf_buf_cstr(&csv), 4, line, sizeof line));
    assert_non_null(strstr(cf_buf_cstr(&text), "fit: t_c(m) = 0.001 + 6.25e-05·m s, R² 1.0000"));
    assert_non_null(strstr(cf_buf_cstr(&text), "memory: largest local batch that fits 32 (64 does not)"));
    assert_non_null(strstr(cf_buf_cstr(&text), "noise scale: not measured: not asked for"));
    cf_buf_free(&csv);
    cf_buf_free(&text);

    /* a runner profile's placement: one digit per node, none where a digit cannot say it (16 GPUs on a
     * VM were written "6", which the reader now refuses: 6 GPUs, not num_gpus 16) */
    static const int shape[][2] = {{1, 4}, {2, 1}, {1, 16}, {2, 16}};
    memset(&p, 0, sizeof p);
    snprintf(p.spec_name, sizeof p.spec_name, "m");
    snprintf(p.backend, sizeof p.backend, "runner");
    for (int i = 0; i < 4; i++)
        p.runs[i] = (cf_profile_run_row){.nodes = shape[i][0], .gpus_per_node = shape[i][1],
                                         .hw_gpus_per_node = shape[i][1] > 4 ? 16 : 4, .local_batch = 8,
                                         .step_time_s = 0.5};
    p.n_runs = 4;
    cf_profile_csv(&p, "A100-40GB", &csv);
    assert_string_equal(line_of(cf_buf_cstr(&csv), 1, line, sizeof line),
                        "m,A100-40GB,cloudfit-runner,4,cloudfit profile --runner,4,1,4,8,32,0.5,,,64");
    assert_string_equal(line_of(cf_buf_cstr(&csv), 2, line, sizeof line),
                        "m,A100-40GB,cloudfit-runner,4,cloudfit profile --runner,11,2,2,8,16,0.5,,,32");
    assert_string_equal(line_of(cf_buf_cstr(&csv), 3, line, sizeof line),
                        "m,A100-40GB,cloudfit-runner,16,cloudfit profile --runner,,1,16,8,128,0.5,,,256");
    assert_string_equal(line_of(cf_buf_cstr(&csv), 4, line, sizeof line),
                        "m,A100-40GB,cloudfit-runner,16,cloudfit profile --runner,,2,32,8,256,0.5,,,512");
    cf_buf_free(&csv);
}

/* The entry point of the launch specs: text with no words is refused as
 * such (no quoting hint: nothing was to quote), a shell operator with the
 * hint. */
static void test_entrypoint_words(void **state)
{
    (void)state;
    cf_shell_words w;
    assert_int_equal(cf_emit_split_words("python train.py --lr 0.1", &w), CF_OK);
    assert_int_equal(w.n, 4);
    cf_shell_words_free(&w);
    assert_int_equal(cf_emit_split_words("  \\\n ", &w), CF_ERR_USAGE);
    assert_string_equal(cf_error_message(), "option '--entrypoint': no words in '  \\\n '");
    assert_string_equal(cf_error_hint_text(), "");
    assert_int_equal(w.n, 0);
    assert_int_equal(cf_emit_split_words("train.py | tee log", &w), CF_ERR_USAGE);
    assert_true(strncmp(cf_error_message(), "option '--entrypoint': ", 23) == 0);
    assert_non_null(strstr(cf_error_hint_text(), "single quotes"));
    /* not UTF-8: refused before it is split (a launch spec is UTF-8 text) */
    assert_int_equal(cf_emit_split_words("train.py \xc3(", &w), CF_ERR_USAGE);
    assert_string_equal(cf_error_message(), "option '--entrypoint' is not valid UTF-8 (byte 10)");
    assert_int_equal(w.n, 0);
    cf_error_clear();
}

/* The entry point follows torchrun's flags and torchrun keeps the last
 * value of an option: words before the script that set the shape or the
 * rendezvous (by name, either spelling, or a prefix argparse takes) were
 * written as given and overrode the recommended --nnodes/--nproc_per_node.
 * Other torchrun options, and anything after the script, stay. */
/* An offer a price snapshot brought whose (cloud, GPU) the built-in
 * launcher table lacks: not bad input (exit 3, "add a row" to a table
 * inside the binary) but a launch spec this build does not have (exit 6),
 * named; a known offer still resolves. */
static void test_launch_name_missing_is_unavailable(void **state)
{
    (void)state;
    cf_vm unknown = {.cloud = "lambda", .region = "us-east-1", .instance_type = "gpu_8x_h200_sxm5",
                     .gpu_model = "H200"};
    cf_emit_accelerator acc;
    assert_int_equal(cf_emit_accelerator_for(&unknown, &acc), CF_ERR_UNAVAILABLE);
    assert_non_null(strstr(cf_error_message(), "no launch spec for GPU H200 on lambda gpu_8x_h200_sxm5"));
    cf_vm known = {.cloud = "aws", .region = "us-east-1", .instance_type = "g4dn.xlarge", .gpu_model = "T4"};
    assert_int_equal(cf_emit_accelerator_for(&known, &acc), CF_OK);
    assert_string_equal(acc.skypilot, "T4");
    cf_emit_accelerator_free(&acc);
}

static void test_entrypoint_cannot_set_torchrun_launch_flags(void **state)
{
    (void)state;
    static const char *const refused[][2] = {
        {"--nnodes=1 train.py", "--nnodes"},
        {"--nproc_per_node 8 train.py", "--nproc_per_node"},
        {"--nproc-per-node=8 train.py", "--nproc-per-node"},
        {"--log_dir /tmp/l --nnode=1 train.py", "--nnodes"}, /* after a value; a prefix */
        {"-m --nproc=8 pkg.train", "--nproc_per_node"},       /* both spellings: one option */
        {"--standalone train.py", "--standalone"},
        {"--rdzv_endpoint=h:1 train.py", "--rdzv_endpoint"},
        {"--max-restarts 0 train.py", "--max-restarts"},
        {"-r 3 --master_port=1 train.py", "--master_port"},
        /* a cluster of short options: -m, then -r or -t with the next word */
        {"-mr 3 --nnodes=1 train.py", "--nnodes"},
        {"-mt 3 --nproc_per_node=8 train.py", "--nproc_per_node"},
        {"-m -r3 --nnodes=1 train.py", "--nnodes"},
        /* torch 2.x options that take a value (the PyTorchJob's images) */
        {"--event-log-handler null --nnodes=1 train.py", "--nnodes"},
        {"--numa_binding node --nproc-per-node=8 train.py", "--nproc-per-node"},
        {"--local_ranks_filter 0 --nnodes=1 train.py", "--nnodes"},
        {"--signals-to-handle SIGTERM --master_port=1 train.py", "--master_port"},
        /* an option no torch release has: its next word may be its value */
        {"--some-later-option x --nnodes=1 train.py", "--nnodes"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        cf_shell_words w;
        assert_int_equal(cf_emit_split_words(refused[i][0], &w), CF_ERR_USAGE);
        assert_int_equal(w.n, 0);
        assert_non_null(strstr(cf_error_message(), "option '--entrypoint': the word '"));
        char sets[64];
        snprintf(sets, sizeof sets, "sets torchrun's %s,", refused[i][1]);
        assert_non_null(strstr(cf_error_message(), sets));
        assert_non_null(strstr(cf_error_hint_text(), "--max-nodes"));
    }
    static const char *const accepted[] = {
        "train.py --nnodes=1",          /* the script's own argument */
        "-m pkg.train --nproc_per_node 8",
        "--no_python python3 train.py",
        "--log_dir /tmp/l --tee 3 train.py",
        "-- --nnodes=1",                /* after "--" the script's name */
        "--rdzv_conf timeout=900 train.py",
        "--n train.py",                 /* ambiguous: torchrun refuses it itself */
        "-mr 3 pkg.train --nnodes=1",   /* -r's value, then the script and its own words */
        "-rm train.py --nnodes=1",      /* -r with the value "m": train.py is the script */
        "--virtual-local-rank train.py --nnodes=1", /* a torch 2.x flag, then the script */
        "--shutdown_timeout=30 train.py --nnodes=1",
    };
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        cf_shell_words w;
        assert_int_equal(cf_emit_split_words(accepted[i], &w), CF_OK);
        cf_shell_words_free(&w);
    }
    cf_error_clear();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entrypoint_words),
        cmocka_unit_test(test_launch_name_missing_is_unavailable),
        cmocka_unit_test(test_entrypoint_cannot_set_torchrun_launch_flags), cmocka_unit_test(test_prices_summary_table), cmocka_unit_test(test_history_list_json),
        cmocka_unit_test(test_history_table_cuts_whole_characters),
        cmocka_unit_test(test_history_list_streamed_is_the_whole_list),
        cmocka_unit_test(test_validate_steps_json), cmocka_unit_test(test_gates),
        cmocka_unit_test(test_config_json_keeps_limits),
        cmocka_unit_test(test_counts_of_one_are_singular),
        cmocka_unit_test(test_catalog_source_json),
        cmocka_unit_test(test_chosen_price_rule_is_of_the_price_paid),
        cmocka_unit_test(test_history_diff_csv_has_the_values),
        cmocka_unit_test(test_history_show_and_diff_keep_stored_text_on_its_line),
        cmocka_unit_test(test_history_csv_has_the_run_url), cmocka_unit_test(test_profile_csv_and_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
