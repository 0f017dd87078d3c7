/* Tests of pricing/price_views.c: GPU families, the offers a `prices` view
 * selects and their order, and the cheapest $/GPU-hour per GPU and cloud,
 * on a small hand-made catalog (plain structs) and on the embedded one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/pricing/price_views.h"

/* A100-40GB-PCIE: a row of the table that no VM sells */
static cf_gpu GPUS[] = {{.model = "A10"},       {.model = "A100-40GB"}, {.model = "A100-80GB"},
                        {.model = "H100"},      {.model = "A100-40GB-PCIE"}};

/* cloud, region, instance, gpu, count, on-demand $/hr, spot $/hr, spot kind */
#define VM(c, r, t, g, n, od, spot, kind)                                                                        \
    {.cloud = c, .region = r, .instance_type = t, .gpu_model = g, .gpu_count = n,                               \
     .price_ondemand_usd_per_hr = od, .price_spot_usd_per_hr = spot, .ondemand_kind = (od) > 0 ? CF_PRICE_LISTED \
                                                                                               : CF_PRICE_NONE, \
     .spot_kind = kind, .spot_price_estimated = (kind) == CF_PRICE_ESTIMATED}

static cf_vm VMS[] = {
    VM("gcp", "us-central1", "a2-highgpu-8g", "A100-40GB", 8, 29.4, 8.8, CF_PRICE_LISTED),
    VM("aws", "us-east-1", "p4d.24xlarge", "A100-40GB", 8, 32.8, 9.6, CF_PRICE_OBSERVED),
    VM("aws", "us-west-2", "p4d.24xlarge", "A100-40GB", 8, 32.8, 8.0, CF_PRICE_ESTIMATED),
    VM("gcp", "us-central1", "a2-highgpu-1g", "A100-40GB", 1, 3.0, 0, CF_PRICE_NONE),
    VM("gcp", "europe-west4", "a2-ultragpu-1g", "A100-80GB", 1, 0, 1.5, CF_PRICE_LISTED), /* spot only */
    VM("azure", "eastus", "NC24ads_A100_v4", "A100-80GB", 1, 3.67, 0, CF_PRICE_NONE),
    VM("lambda", "us-east-1", "gpu_1x_a10", "A10", 1, 0.75, 0, CF_PRICE_NONE),
    VM("aws", "us-east-1", "p5.48xlarge", "H100", 8, 98.3, 0, CF_PRICE_NONE),
    VM("gcp", "us-central1", "a3-megagpu-64g", "H100", 64, 600.0, 0, CF_PRICE_NONE),
};

static cf_catalog small_catalog(void)
{
    cf_catalog c;
    memset(&c, 0, sizeof c);
    c.vms = VMS;
    c.n_vms = sizeof VMS / sizeof *VMS;
    c.gpus = GPUS;
    c.n_gpus = sizeof GPUS / sizeof *GPUS;
    snprintf(c.name, sizeof c.name, "small");
    return c;
}

static void test_gpu_families(void **state)
{
    (void)state;
    cf_catalog c = small_catalog();
    const char *out[8];
    size_t n = cf_gpu_family_models(&c, "a100", out, 8);
    assert_int_equal(n, 2);
    assert_string_equal(out[0], "A100-40GB");
    assert_string_equal(out[1], "A100-80GB"); /* not A100-40GB-PCIE: no VM sells it */
    /* A model is itself, not the family it prefixes ("A10" is not "A100-…"). */
    assert_int_equal(cf_gpu_family_models(&c, "A10", out, 8), 1);
    assert_string_equal(out[0], "A10");
    assert_int_equal(cf_gpu_family_models(&c, "A100-80GB", out, 8), 1);
    assert_string_equal(out[0], "A100-80GB");
    /* A tool's spelling of a row: that row. */
    assert_int_equal(cf_gpu_family_models(&c, "NVIDIA A10", out, 8), 1);
    assert_string_equal(out[0], "A10");
    /* A family after a maker's name is the family too, not its first row
     * (it was A100-40GB alone while "a100" was both). */
    assert_int_equal(cf_gpu_family_models(&c, "NVIDIA A100", out, 8), 2);
    assert_string_equal(out[0], "A100-40GB");
    assert_string_equal(out[1], "A100-80GB");
    /* No family: the name as given, for the filter check to explain. */
    assert_int_equal(cf_gpu_family_models(&c, "A1", out, 8), 1);
    assert_string_equal(out[0], "A1");
    assert_int_equal(cf_gpu_family_models(&c, NULL, out, 8), 0);
    assert_int_equal(cf_gpu_family_models(&c, "A100", out, 1), 1); /* capacity respected */
}

static void test_select_filters_in_catalog_order(void **state)
{
    (void)state;
    cf_catalog c = small_catalog();
    const char *gcp[] = {"gcp"};
    cf_price_query q = {.clouds = gcp, .n_clouds = 1, .gpu = "A100"};
    cf_vm_list l;
    assert_int_equal(cf_price_select(&c, &q, &l), CF_OK);
    assert_int_equal(l.n, 3);
    assert_ptr_equal(l.items[0], &VMS[0]);
    assert_ptr_equal(l.items[1], &VMS[3]);
    assert_ptr_equal(l.items[2], &VMS[4]);
    cf_vm_list_free(&l);
    q = (cf_price_query){.gpu = "A100", .gpu_count = 8, .spot_only = 1};
    assert_int_equal(cf_price_select(&c, &q, &l), CF_OK);
    assert_int_equal(l.n, 3);
    for (size_t i = 0; i < l.n; i++)
        assert_true(l.items[i]->gpu_count == 8 && l.items[i]->price_spot_usd_per_hr > 0);
    cf_vm_list_free(&l);
    q = (cf_price_query){0};
    assert_int_equal(cf_price_select(&c, &q, &l), CF_OK);
    assert_int_equal(l.n, c.n_vms);
    cf_vm_list_free(&l);
    /* Unknown names are explained, not an empty view. */
    q = (cf_price_query){.gpu = "B300"};
    assert_int_equal(cf_price_select(&c, &q, &l), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "unknown GPU 'B300'"));
    assert_int_equal(l.n, 0);
    const char *bad[] = {"oracle"};
    q = (cf_price_query){.clouds = bad, .n_clouds = 1};
    assert_int_equal(cf_price_select(&c, &q, &l), CF_ERR_INVALID);
}

static void test_offers_cheapest_first(void **state)
{
    (void)state;
    cf_catalog c = small_catalog();
    cf_price_query q = {.gpu = "A100"};
    cf_vm_list l;
    assert_int_equal(cf_price_offers(&c, &q, &l), CF_OK);
    assert_int_equal(l.n, 6);
    /* On-demand per VM-hour; equal prices by cloud then region; no on-demand price last. */
    static const char *const want[] = {"a2-highgpu-1g", "NC24ads_A100_v4", "a2-highgpu-8g", "p4d.24xlarge",
                                       "p4d.24xlarge", "a2-ultragpu-1g"};
    for (size_t i = 0; i < l.n; i++)
        assert_string_equal(l.items[i]->instance_type, want[i]);
    assert_string_equal(l.items[3]->region, "us-east-1");
    assert_string_equal(l.items[4]->region, "us-west-2");
    cf_vm_list_free(&l);
    /* --spot: only offers with a spot price, by it. */
    q.spot_only = 1;
    assert_int_equal(cf_price_offers(&c, &q, &l), CF_OK);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.items[0]->instance_type, "a2-ultragpu-1g");
    assert_string_equal(l.items[1]->region, "us-west-2");
    assert_string_equal(l.items[2]->instance_type, "a2-highgpu-8g");
    assert_string_equal(l.items[3]->region, "us-east-1");
    cf_vm_list_free(&l);
}

static void test_no_offer_is_infeasible(void **state)
{
    (void)state;
    cf_catalog c = small_catalog();
    cf_price_query q = {.gpu = "A100", .gpu_count = 3};
    cf_vm_list l;
    assert_int_equal(cf_price_offers(&c, &q, &l), CF_ERR_INFEASIBLE);
    assert_string_equal(cf_error_message(), "no offer of A100 with 3 matches");
    assert_int_equal(l.n, 0);
    cf_vm_list_free(&l);
    /* Filters that each name something on offer but leave no offer
     * together name themselves, as recommend's do (the message was "no
     * offer of H100 matches with a spot price", and the summary of
     * --cloud lambda --spot an empty table, exit 0). */
    q = (cf_price_query){.gpu = "H100", .spot_only = 1};
    assert_int_equal(cf_price_offers(&c, &q, &l), CF_ERR_INFEASIBLE);
    assert_non_null(strstr(cf_error_message(), "passes the filters together (GPUs H100; spot only)"));
    assert_non_null(strstr(cf_error_hint_text(), "2 offers without --spot"));
    assert_int_equal(l.n, 0);
    cf_vm_list_free(&l);
    const char *lambda[] = {"lambda"};
    q = (cf_price_query){.clouds = lambda, .n_clouds = 1, .spot_only = 1};
    assert_int_equal(cf_price_select(&c, &q, &l), CF_ERR_INFEASIBLE);
    assert_non_null(strstr(cf_error_message(), "passes the filters together (clouds lambda; spot only)"));
    cf_vm_list_free(&l);
    q = (cf_price_query){.clouds = lambda, .n_clouds = 1, .gpu = "A100"};
    assert_int_equal(cf_price_offers(&c, &q, &l), CF_ERR_INFEASIBLE);
    assert_non_null(strstr(cf_error_message(), "(clouds lambda; GPUs A100-40GB, A100-80GB)"));
    assert_non_null(strstr(cf_error_hint_text(), "offers without the cloud filter"));
    cf_vm_list_free(&l);
}

static const cf_gpu_cloud_prices *find(const cf_gpu_cloud_prices *s, size_t n, const char *gpu, const char *cloud)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s[i].gpu, gpu) && !strcmp(s[i].cloud, cloud))
            return &s[i];
    fail_msg("no summary row %s/%s", gpu, cloud);
    return NULL;
}

static void test_summary_per_gpu_and_cloud(void **state)
{
    (void)state;
    cf_catalog c = small_catalog();
    cf_price_query q = {0};
    cf_vm_list l;
    assert_int_equal(cf_price_select(&c, &q, &l), CF_OK);
    cf_gpu_cloud_prices *s = NULL;
    size_t n = 0;
    assert_int_equal(cf_price_summary(&l, &s, &n), CF_OK);
    /* GPU by name, then aws, azure, gcp, lambda. */
    static const char *const order[][2] = {{"A10", "lambda"},    {"A100-40GB", "aws"}, {"A100-40GB", "gcp"},
                                           {"A100-80GB", "azure"}, {"A100-80GB", "gcp"}, {"H100", "aws"},
                                           {"H100", "gcp"}};
    assert_int_equal(n, sizeof order / sizeof *order);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(s[i].gpu, order[i][0]);
        assert_string_equal(s[i].cloud, order[i][1]);
    }
    const cf_gpu_cloud_prices *g = find(s, n, "A100-40GB", "gcp");
    assert_int_equal(g->n_offers, 2);
    assert_int_equal(g->gpu_counts_mask, (1u << 1) | (1u << 8));
    assert_float_equal(g->cheapest_usd_per_gpu_hr, 3.0, 1e-12); /* 1 GPU at 3.0 beats 8 at 29.4 */
    assert_ptr_equal(g->cheapest, &VMS[3]);
    assert_int_equal(g->cheapest_kind, CF_PRICE_LISTED);
    assert_float_equal(g->cheapest_spot_usd_per_gpu_hr, 8.8 / 8, 1e-12);
    assert_int_equal(g->cheapest_spot_kind, CF_PRICE_LISTED);
    g = find(s, n, "A100-40GB", "aws");
    assert_float_equal(g->cheapest_spot_usd_per_gpu_hr, 1.0, 1e-12);
    assert_int_equal(g->cheapest_spot_kind, CF_PRICE_ESTIMATED);
    assert_string_equal(g->cheapest_spot->region, "us-west-2");
    g = find(s, n, "A100-80GB", "gcp"); /* spot only */
    assert_null(g->cheapest);
    assert_float_equal(g->cheapest_usd_per_gpu_hr, 0, 0);
    assert_int_equal(g->cheapest_kind, CF_PRICE_NONE);
    assert_float_equal(g->cheapest_spot_usd_per_gpu_hr, 1.5, 1e-12);
    g = find(s, n, "A100-80GB", "azure"); /* no spot */
    assert_null(g->cheapest_spot);
    assert_int_equal(g->cheapest_spot_kind, CF_PRICE_NONE);
    g = find(s, n, "H100", "gcp");
    assert_int_equal(g->gpu_counts_mask, 0);
    assert_true(g->gpu_counts_32_plus);
    assert_float_equal(g->cheapest_usd_per_gpu_hr, 600.0 / 64, 1e-12);
    free(s);
    cf_vm_list_free(&l);

    cf_vm_list empty = {0};
    assert_int_equal(cf_price_summary(&empty, &s, &n), CF_OK);
    assert_int_equal(n, 0);
    free(s);
}

/* On the shipped catalog: "A100" is a family, and the summary's cheapest
 * price is no more than any offer of that GPU and cloud. */
static void test_embedded_catalog(void **state)
{
    (void)state;
    cf_catalog c;
    assert_int_equal(cf_catalog_load_embedded(&c), CF_OK);
    const char *models[16];
    size_t n_models = cf_gpu_family_models(&c, "A100", models, 16);
    assert_true(n_models >= 2);
    for (size_t i = 0; i < n_models; i++)
        assert_int_equal(strncasecmp(models[i], "A100-", 5), 0);
    cf_price_query q = {0};
    cf_vm_list l;
    /* restricted-access regions are left out unless asked for */
    assert_int_equal(cf_price_select(&c, &q, &l), CF_OK);
    assert_true(l.n_restricted_left_out > 0);
    assert_int_equal(l.n + l.n_restricted_left_out, c.n_vms);
    cf_vm_list_free(&l);
    q.include_restricted = 1;
    assert_int_equal(cf_price_select(&c, &q, &l), CF_OK);
    assert_int_equal(l.n, c.n_vms);
    assert_int_equal(l.n_restricted_left_out, 0);
    cf_gpu_cloud_prices *s = NULL;
    size_t n = 0;
    assert_int_equal(cf_price_summary(&l, &s, &n), CF_OK);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        total += s[i].n_offers;
        if (i > 0)
            assert_true(strcasecmp(s[i - 1].gpu, s[i].gpu) <= 0);
    }
    assert_int_equal(total, l.n);
    for (size_t k = 0; k < l.n; k++) {
        const cf_vm *vm = l.items[k];
        const cf_gpu_cloud_prices *g = find(s, n, vm->gpu_model, vm->cloud);
        double od = vm->price_ondemand_usd_per_hr / vm->gpu_count;
        if (od > 0)
            assert_true(g->cheapest && g->cheapest_usd_per_gpu_hr <= od);
        double spot = vm->price_spot_usd_per_hr / vm->gpu_count;
        if (spot > 0)
            assert_true(g->cheapest_spot && g->cheapest_spot_usd_per_gpu_hr <= spot);
    }
    free(s);
    cf_vm_list_free(&l);
    cf_catalog_free(&c);
}

/* "GPU" or "GPU:N" as `cloudfit prices` takes it. */
static void test_parse_gpu(void **state)
{
    (void)state;
    char gpu[32];
    int n = -1;
    assert_int_equal(cf_price_parse_gpu("A100", gpu, sizeof gpu, &n), CF_OK);
    assert_string_equal(gpu, "A100");
    assert_int_equal(n, 0);
    assert_int_equal(cf_price_parse_gpu("H100:8", gpu, sizeof gpu, &n), CF_OK);
    assert_string_equal(gpu, "H100");
    assert_int_equal(n, 8);
    assert_int_equal(cf_price_parse_gpu(":8", gpu, sizeof gpu, &n), CF_ERR_USAGE);
    assert_string_equal(cf_error_message(), "expected GPU or GPU:N, got ':8'");
    cf_error_clear();
    assert_int_equal(cf_price_parse_gpu("a-name-that-is-far-too-long-for-the-field", gpu, 16, &n), CF_ERR_USAGE);
    cf_error_clear();
    const char *bad[] = {"T4:", "T4:0", "T4:x", "T4:1025", "T4:-1", "T4:2x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(cf_price_parse_gpu(bad[i], gpu, sizeof gpu, &n), CF_ERR_USAGE);
        assert_non_null(strstr(cf_error_message(), "the GPU count after ':' must be a positive integer"));
        assert_string_equal(cf_error_hint_text(), "e.g. 'cloudfit prices A100:8'");
        cf_error_clear();
    }
    assert_int_equal(cf_price_parse_gpu("T4:1024", gpu, sizeof gpu, &n), CF_OK);
    assert_int_equal(n, 1024);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_families),
        cmocka_unit_test(test_select_filters_in_catalog_order),
        cmocka_unit_test(test_offers_cheapest_first),
        cmocka_unit_test(test_no_offer_is_infeasible),
        cmocka_unit_test(test_summary_per_gpu_and_cloud),
        cmocka_unit_test(test_embedded_catalog),
        cmocka_unit_test(test_parse_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
