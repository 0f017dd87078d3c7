/* Tests of db/history_diff.c: what `history diff` and the markdown
 * baseline comparison report as changed between two recommendations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cloudfit/db/history_diff.h"

static cf_history_row sample_row(void)
{
    cf_history_row r;
    memset(&r, 0, sizeof r);
    r.id = 1;
    snprintf(r.created_at, sizeof r.created_at, "2026-11-18T11:06:40Z");
    snprintf(r.tool_version, sizeof r.tool_version, "0.9.0");
    snprintf(r.spec_hash, sizeof r.spec_hash, "f3ae7c2b");
    snprintf(r.spec_name, sizeof r.spec_name, "resnet18-cifar10");
    snprintf(r.objective, sizeof r.objective, "cost");
    snprintf(r.catalog_name, sizeof r.catalog_name, "embedded");
    snprintf(r.catalog_date, sizeof r.catalog_date, "2026-07-30");
    cf_history_config *c = &r.chosen;
    c->rank = 1;
    snprintf(c->cloud, sizeof c->cloud, "gcp");
    snprintf(c->region, sizeof c->region, "asia-southeast1");
    snprintf(c->instance_type, sizeof c->instance_type, "n1-highmem-4");
    snprintf(c->gpu, sizeof c->gpu, "T4");
    c->gpus_per_node = 1;
    c->nodes = 1;
    c->local_batch = 256;
    c->accumulation = 1;
    c->global_batch = 256;
    c->lr = 0.188311167763883;
    c->spot = 1;
    c->step_time_s = 0.184870173234396;
    c->hours = 1.22704243202916;
    c->usd_per_node_hour = 0.17122;
    c->total_usd = 0.210094205212033;
    return r;
}

static const cf_diff_entry *entry(const cf_history_diff *d, const char *key)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->entries[i].key, key) == 0)
            return &d->entries[i];
    fail_msg("no diff entry '%s'", key);
    return NULL;
}

static void test_same_recommendation_changes_nothing(void **state)
{
    (void)state;
    cf_history_row a = sample_row(), b = sample_row();
    cf_history_diff d;
    cf_history_compare(&a, &b, &d);
    static const char *const keys[] = {"cloud", "region", "instance_type", "gpu", "gpus_per_node", "nodes",
                                       "local_batch", "accumulation", "global_batch", "lr", "spot", "step_time_s",
                                       "hours", "usd_per_node_hour", "total_usd", "spec_hash", "objective",
                                       "catalog_name", "catalog_date", "tool_version"};
    assert_int_equal(d.n, sizeof keys / sizeof *keys);
    assert_true(d.n <= CF_HISTORY_DIFF_FIELDS);
    for (size_t i = 0; i < d.n; i++)
        assert_string_equal(d.entries[i].key, keys[i]);
    assert_int_equal(d.n_changed, 0);
    assert_string_equal(entry(&d, "lr")->before, "0.1883");
    assert_string_equal(entry(&d, "spot")->after, "yes");
}

static void test_changes_with_groups_and_percentages(void **state)
{
    (void)state;
    cf_history_row a = sample_row(), b = sample_row();
    b.chosen.nodes = 8;
    b.chosen.spot = 0;
    snprintf(b.chosen.instance_type, sizeof b.chosen.instance_type, "a4-highgpu-8g");
    b.chosen.total_usd = 0.420188410424066; /* doubled */
    snprintf(b.objective, sizeof b.objective, "time");
    snprintf(b.catalog_date, sizeof b.catalog_date, "2026-08-01");
    cf_history_diff d;
    cf_history_compare(&a, &b, &d);
    assert_int_equal(d.n_changed, 6);
    const cf_diff_entry *nodes = entry(&d, "nodes");
    assert_true(nodes->changed);
    assert_string_equal(nodes->group, "configuration");
    assert_string_equal(nodes->before, "1");
    assert_string_equal(nodes->after, "8");
    assert_float_equal(cf_diff_pct(nodes), 700, 1e-9);
    assert_float_equal(cf_diff_pct(entry(&d, "total_usd")), 100, 1e-9);
    assert_string_equal(entry(&d, "total_usd")->group, "cost");
    const cf_diff_entry *spot = entry(&d, "spot");
    assert_true(spot->changed && isnan(cf_diff_pct(spot)));
    assert_string_equal(spot->before, "yes");
    assert_string_equal(spot->after, "no");
    assert_true(entry(&d, "instance_type")->changed && isnan(entry(&d, "instance_type")->before_value));
    assert_string_equal(entry(&d, "objective")->group, "inputs");
    assert_true(entry(&d, "objective")->changed);
    assert_string_equal(entry(&d, "catalog_date")->group, "catalog");
    assert_true(entry(&d, "catalog_date")->changed);
    assert_false(entry(&d, "catalog_name")->changed);
    assert_false(entry(&d, "hours")->changed);
}

static void test_numbers_compare_at_display_precision(void **state)
{
    (void)state;
    cf_history_row a = sample_row(), b = sample_row();
    b.chosen.lr = 0.18832;                /* 0.1883 at 4 digits: noise */
    b.chosen.total_usd = 0.2100942;       /* 0.210094 at 6 digits: noise */
    b.chosen.step_time_s = 0.18497;       /* 0.185 vs 0.1849: a change */
    cf_history_diff d;
    cf_history_compare(&a, &b, &d);
    assert_false(entry(&d, "lr")->changed);
    assert_false(entry(&d, "total_usd")->changed);
    assert_true(entry(&d, "step_time_s")->changed);
    assert_int_equal(d.n_changed, 1);
}

/* A cost of a million dollars or more: shown to the cent, never as
 * 1.23457e+06, and a change of it compared at that precision. */
static void test_large_numbers_are_shown_whole(void **state)
{
    (void)state;
    cf_history_row a = sample_row(), b = sample_row();
    a.chosen.total_usd = 1234567.89;
    b.chosen.total_usd = 1234568.2;
    a.chosen.global_batch = b.chosen.global_batch = 1234567;
    cf_history_diff d;
    cf_history_compare(&a, &b, &d);
    assert_string_equal(entry(&d, "total_usd")->before, "1234567.89");
    assert_string_equal(entry(&d, "total_usd")->after, "1234568.20");
    assert_true(entry(&d, "total_usd")->changed);
    assert_string_equal(entry(&d, "global_batch")->before, "1234567");
    b.chosen.lr = a.chosen.lr = 123456.7; /* 4 digits: whole */
    cf_history_compare(&a, &b, &d);
    assert_string_equal(entry(&d, "lr")->before, "123457");
    assert_string_equal(entry(&d, "total_usd")->before, "1234567.89");
    /* and a small one in decimals: BERT's LR of 4.21e-05 was shown so */
    a.chosen.lr = 4.21e-05;
    b.chosen.lr = 4.2149e-05;
    a.chosen.step_time_s = 1.23456e-7;
    cf_history_compare(&a, &b, &d);
    assert_string_equal(entry(&d, "lr")->before, "0.0000421");
    assert_string_equal(entry(&d, "lr")->after, "0.00004215");
    assert_true(entry(&d, "lr")->changed);
    assert_string_equal(entry(&d, "step_time_s")->before, "0.0000001235");
}

static void test_pct_needs_a_nonzero_number_before(void **state)
{
    (void)state;
    cf_history_row a = sample_row(), b = sample_row();
    a.chosen.usd_per_node_hour = 0;
    cf_history_diff d;
    cf_history_compare(&a, &b, &d);
    const cf_diff_entry *price = entry(&d, "usd_per_node_hour");
    assert_true(price->changed);
    assert_true(isnan(cf_diff_pct(price)));
}

static void test_config_diff_fits_its_array(void **state)
{
    (void)state;
    cf_history_row a = sample_row();
    cf_diff_entry e[CF_DIFF_FIELDS];
    size_t n = cf_config_diff(&a.chosen, &a.chosen, e);
    assert_true(n <= CF_DIFF_FIELDS);
    assert_int_equal(n, 15);
    assert_string_equal(e[n - 1].key, "total_usd");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_recommendation_changes_nothing),
        cmocka_unit_test(test_changes_with_groups_and_percentages),
        cmocka_unit_test(test_numbers_compare_at_display_precision),
        cmocka_unit_test(test_large_numbers_are_shown_whole),
        cmocka_unit_test(test_pct_needs_a_nonzero_number_before),
        cmocka_unit_test(test_config_diff_fits_its_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
