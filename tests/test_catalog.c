/* Tests of the pricing catalog: the embedded data (facts of the shipped
 * CSV files, see /work/shared/data/catalog/README.md), CSV validation,
 * GPU look-ups, filters and filter errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cloudfit/pricing.h"
#include "cloudfit/common/csvread.h"
#include "cloudfit/common/fileio.h"

static cf_catalog embedded;

static int setup_embedded(void **state)
{
    (void)state;
    return cf_catalog_load_embedded(&embedded) == CF_OK ? 0 : -1;
}

static int teardown_embedded(void **state)
{
    (void)state;
    cf_catalog_free(&embedded);
    return 0;
}

static const cf_vm *find_row(const cf_catalog *cat, const char *cloud, const char *region,
                             const char *type, const char *gpu)
{
    for (size_t i = 0; i < cat->n_vms; i++) {
        const cf_vm *vm = &cat->vms[i];
        if (!strcmp(vm->cloud, cloud) && !strcmp(vm->region, region) &&
            !strcmp(vm->instance_type, type) && !strcmp(vm->gpu_model, gpu))
            return vm;
    }
    return NULL;
}

static size_t count_cloud(const cf_catalog *cat, const char *cloud)
{
    size_t n = 0;
    for (size_t i = 0; i < cat->n_vms; i++)
        n += strcmp(cat->vms[i].cloud, cloud) == 0;
    return n;
}

/* Reads data/NAME from the source tree (the files the catalog embeds). */
static char *read_data(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/data/%s", CF_SOURCE_DIR, name);
    char *text = NULL;
    assert_int_equal(cf_read_file(path, &text, len), CF_OK);
    return text;
}

/* ---- the embedded catalog: facts of the shipped data ---------------------- */

static void test_embedded_counts(void **state)
{
    (void)state;
    assert_string_equal(embedded.name, "embedded");
    assert_int_equal(embedded.n_vms, 1868);
    assert_int_equal(embedded.n_gpus, 27);
    assert_int_equal(count_cloud(&embedded, "aws"), 62);
    assert_int_equal(count_cloud(&embedded, "gcp"), 1062);
    assert_int_equal(count_cloud(&embedded, "azure"), 629);
    assert_int_equal(count_cloud(&embedded, "lambda"), 115);
    /* Six distinct provenance strings in gpu_vms.csv (2 AWS, 2 GCP, Azure, Lambda). */
    assert_int_equal(embedded.n_sources, 6);
    for (size_t i = 0; i < embedded.n_vms; i++) {
        assert_true(embedded.vms[i].source_index >= 0);
        assert_true((size_t)embedded.vms[i].source_index < embedded.n_sources);
        assert_non_null(cf_catalog_gpu(&embedded, embedded.vms[i].gpu_model));
    }
}

static void test_known_row(void **state)
{
    (void)state;
    const cf_vm *vm = find_row(&embedded, "aws", "us-east-1", "p4d.24xlarge", "A100-40GB");
    assert_non_null(vm);
    assert_int_equal(vm->gpu_count, 8);
    assert_float_equal(vm->price_ondemand_usd_per_hr, 21.957642, 1e-9);
    assert_float_equal(vm->gpu_memory_gib, 40, 0);
    assert_int_equal(vm->vcpus, 96);
    assert_float_equal(vm->memory_gib, 1152, 0);
    assert_float_equal(vm->network_gbps, 400, 0);
    assert_non_null(strstr(embedded.sources[vm->source_index], "karpenter-provider-aws@1d92708"));

    /* An Azure row with an empty network column reads as 0 (not recorded). */
    size_t azure_no_network = 0;
    for (size_t i = 0; i < embedded.n_vms; i++)
        azure_no_network += !strcmp(embedded.vms[i].cloud, "azure") && embedded.vms[i].network_gbps == 0;
    assert_int_equal(azure_no_network, 521);
}

/* The expected AWS spot values are recomputed here from the CSV text, not
 * taken from the loader: on-demand from gpu_vms.csv, savings and band from
 * aws_spot_advisor.csv. */
static void test_aws_spot_from_advisor(void **state)
{
    (void)state;
    size_t vms_len, adv_len;
    char *vms_text = read_data("gpu_vms.csv", &vms_len);
    char *adv_text = read_data("aws_spot_advisor.csv", &adv_len);
    cf_csv_doc vms, adv;
    assert_int_equal(cf_csv_parse(vms_text, vms_len, "gpu_vms.csv", &vms), CF_OK);
    assert_int_equal(cf_csv_parse(adv_text, adv_len, "aws_spot_advisor.csv", &adv), CF_OK);
    static const double midpoint[] = {2.5, 7.5, 12.5, 17.5, 25.0};

    size_t with_advisor = 0;
    for (size_t i = 0; i < vms.n_records; i++) {
        const cf_csv_record *row = &vms.records[i];
        if (strcmp(cf_csv_field(row, 0), "aws") != 0)
            continue;
        const cf_vm *vm = find_row(&embedded, "aws", cf_csv_field(row, 1), cf_csv_field(row, 2),
                                   cf_csv_field(row, 3));
        assert_non_null(vm);
        const cf_csv_record *hit = NULL;
        for (size_t a = 0; a < adv.n_records && !hit; a++)
            if (!strcmp(cf_csv_field(&adv.records[a], 0), vm->region) &&
                !strcmp(cf_csv_field(&adv.records[a], 1), vm->instance_type))
                hit = &adv.records[a];
        if (!hit) {
            assert_float_equal(vm->price_spot_usd_per_hr, 0, 0);
            assert_int_equal(vm->spot_price_estimated, 0);
            assert_true(vm->interruptions_pct_per_month < 0);
            continue;
        }
        with_advisor++;
        double ondemand = atof(cf_csv_field(row, 9));
        double savings = atof(cf_csv_field(hit, 3));
        int band = atoi(cf_csv_field(hit, 4));
        assert_int_equal(vm->spot_price_estimated, 1);
        assert_float_equal(vm->price_spot_usd_per_hr, ondemand * (1 - savings / 100), 1e-9);
        assert_float_equal(vm->interruptions_pct_per_month, midpoint[band], 0);
    }
    assert_int_equal(with_advisor, 44);

    /* One row spelled out: g5.2xlarge is 1.212 $/h, advisor 58 % / band 3 "15-20%". */
    const cf_vm *g5 = find_row(&embedded, "aws", "us-east-1", "g5.2xlarge", "A10G");
    assert_non_null(g5);
    assert_float_equal(g5->price_spot_usd_per_hr, 1.212 * 0.42, 1e-9);
    assert_float_equal(g5->interruptions_pct_per_month, 17.5, 0);

    /* Other clouds: spot from the data, never estimated, interruptions unknown. */
    for (size_t i = 0; i < embedded.n_vms; i++) {
        const cf_vm *vm = &embedded.vms[i];
        if (strcmp(vm->cloud, "aws") == 0)
            continue;
        assert_int_equal(vm->spot_price_estimated, 0);
        assert_true(vm->interruptions_pct_per_month < 0);
        if (strcmp(vm->cloud, "lambda") == 0)
            assert_float_equal(vm->price_spot_usd_per_hr, 0, 0);
    }
    cf_csv_free(&vms);
    cf_csv_free(&adv);
    free(vms_text);
    free(adv_text);
}

static void test_dates(void **state)
{
    (void)state;
    /* README: GCP-Cyclenerd 2026-07-30 is the newest; GCP-SkyPilot, Azure and
     * Lambda (anycloud-sh/catalog) 2026-05-20 the oldest. */
    assert_string_equal(embedded.data_date, "2026-07-30");
    assert_string_equal(embedded.oldest_date, "2026-05-20");
}

/* The embedded arrays are byte copies of the data/ CSV files: loading the files
 * gives the same rows. */
static void test_embedded_matches_files(void **state)
{
    (void)state;
    size_t vl, gl, al;
    char *v = read_data("gpu_vms.csv", &vl), *g = read_data("gpus.csv", &gl);
    char *a = read_data("aws_spot_advisor.csv", &al);
    cf_catalog files;
    assert_int_equal(cf_catalog_load_csv(v, vl, "gpu_vms.csv", g, gl, "gpus.csv", a, al,
                                         "aws_spot_advisor.csv", &files), CF_OK);
    assert_string_equal(files.name, "gpu_vms.csv");
    assert_int_equal(files.n_vms, embedded.n_vms);
    assert_int_equal(files.n_gpus, embedded.n_gpus);
    for (size_t i = 0; i < files.n_vms; i++) {
        const cf_vm *x = &files.vms[i], *y = &embedded.vms[i];
        assert_string_equal(x->instance_type, y->instance_type);
        assert_string_equal(x->region, y->region);
        assert_float_equal(x->price_ondemand_usd_per_hr, y->price_ondemand_usd_per_hr, 0);
        assert_float_equal(x->price_spot_usd_per_hr, y->price_spot_usd_per_hr, 0);
    }
    cf_catalog_free(&files);
    free(v);
    free(g);
    free(a);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* `recommend` loads the catalog every time; it must stay in milliseconds.
 * The bound is loose (sanitizer builds are several times slower). */
static void test_embedded_load_time(void **state)
{
    (void)state;
    enum { RUNS = 21 };
    double ms[RUNS];
    for (int i = 0; i < RUNS; i++) {
        cf_catalog cat;
        double t0 = now_ms();
        assert_int_equal(cf_catalog_load_embedded(&cat), CF_OK);
        ms[i] = now_ms() - t0;
        cf_catalog_free(&cat);
    }
    qsort(ms, RUNS, sizeof *ms, cmp_double);
    print_message("embedded catalog load: median %.2f ms, min %.2f ms, max %.2f ms\n",
                  ms[RUNS / 2], ms[0], ms[RUNS - 1]);
    assert_true(ms[RUNS / 2] < 100.0);
}

/* ---- GPU table ------------------------------------------------------------ */

static void test_gpu_lookup_and_peak(void **state)
{
    (void)state;
    assert_null(cf_catalog_gpu(&embedded, "A100-80G"));
    assert_null(cf_catalog_gpu(&embedded, NULL));
    const cf_gpu *a100 = cf_catalog_gpu(&embedded, "a100-40gb");
    assert_non_null(a100);
    assert_string_equal(a100->model, "A100-40GB");
    assert_string_equal(a100->architecture, "Ampere");
    assert_float_equal(a100->memory_bandwidth_gbs, 1555, 0);
    assert_float_equal(a100->interconnect_gbs_per_gpu, 600, 0);
    assert_float_equal(cf_gpu_peak_tflops(a100, CF_PREC_FP32), 19.5, 0);
    assert_float_equal(cf_gpu_peak_tflops(a100, CF_PREC_TF32), 156, 0);
    assert_float_equal(cf_gpu_peak_tflops(a100, CF_PREC_BF16), 312, 0);

    /* T4: FP16 tensor, no TF32/BF16 → FP32. */
    const cf_gpu *t4 = cf_catalog_gpu(&embedded, "T4");
    assert_non_null(t4);
    assert_float_equal(cf_gpu_peak_tflops(t4, CF_PREC_TF32), 8.1, 0);
    assert_float_equal(cf_gpu_peak_tflops(t4, CF_PREC_FP16), 65, 0);
    assert_float_equal(cf_gpu_peak_tflops(t4, CF_PREC_BF16), 8.1, 0);

    /* K80: FP32 only. */
    const cf_gpu *k80 = cf_catalog_gpu(&embedded, "K80");
    assert_non_null(k80);
    assert_float_equal(cf_gpu_peak_tflops(k80, CF_PREC_FP16), 4.37, 0);

    /* B300: rates blank in gpus.csv → 0 (unknown) for every precision. */
    const cf_gpu *b300 = cf_catalog_gpu(&embedded, "B300");
    assert_non_null(b300);
    assert_float_equal(b300->memory_gib, 268.6, 0);
    for (int p = CF_PREC_FP32; p <= CF_PREC_BF16; p++)
        assert_float_equal(cf_gpu_peak_tflops(b300, (cf_precision)p), 0, 0);
    assert_float_equal(cf_gpu_peak_tflops(NULL, CF_PREC_FP32), 0, 0);
}

/* ---- filters -------------------------------------------------------------- */

static int listed(const char *value, const char *const *list, size_t n, int ignore_case)
{
    for (size_t i = 0; i < n; i++)
        if (ignore_case ? !strcasecmp(value, list[i]) : !strcmp(value, list[i]))
            return 1;
    return 0;
}

/* The reference: the filter rules written out once more, row by row. */
static size_t brute_force_count(const cf_catalog *cat, const cf_catalog_filter *f)
{
    size_t n = 0;
    for (size_t i = 0; i < cat->n_vms; i++) {
        const cf_vm *vm = &cat->vms[i];
        int ok = (f->n_clouds == 0 || listed(vm->cloud, f->clouds, f->n_clouds, 1)) &&
                 (f->n_regions == 0 || listed(vm->region, f->regions, f->n_regions, 0)) &&
                 (f->n_gpus == 0 || listed(vm->gpu_model, f->gpus, f->n_gpus, 1)) &&
                 (f->spot != CF_SPOT_ONLY || vm->price_spot_usd_per_hr > 0);
        n += ok;
    }
    return n;
}

static size_t filter_count(const cf_catalog_filter *f)
{
    const cf_vm **rows = calloc(embedded.n_vms, sizeof *rows);
    assert_non_null(rows);
    size_t n = cf_catalog_filter_rows(&embedded, f, rows);
    /* Catalog order: strictly increasing row addresses. */
    for (size_t i = 1; i < n; i++)
        assert_true(rows[i - 1] < rows[i]);
    free(rows);
    assert_int_equal(cf_catalog_check_filter(&embedded, f), CF_OK);
    return n;
}

#define LIST(...) (const char *const[]){__VA_ARGS__}, sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)

/* Names from measurement files and nvidia-smi map to the GPU table. */
static void test_gpu_resolve(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"A100-40GB", "A100-40GB"},     {"a100 40gb", "A100-40GB"},       {"A100", "A100-40GB"},
        {"NVIDIA A100-SXM4-80GB", "A100-80GB"}, {"Tesla V100-SXM2-16GB", "V100"}, {"Tesla T4", "T4"},
        {"NVIDIA H100 80GB HBM3", "H100"}, {"v100_32gb", "V100-32GB"},      {"NVIDIA-L4", "L4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const cf_gpu *g = cf_catalog_gpu_resolve(&embedded, cases[i][0]);
        if (!g || strcmp(g->model, cases[i][1]) != 0)
            fail_msg("'%s' resolved to '%s', expected '%s'", cases[i][0], g ? g->model : "(none)", cases[i][1]);
    }
    assert_string_equal(cf_catalog_gpu_resolve(&embedded, "NVIDIA A100-SXM4-40GB")->model, "A100-40GB");
    assert_null(cf_catalog_gpu_resolve(&embedded, "RTX 8000"));
    /* other products, not variants of a table entry */
    assert_null(cf_catalog_gpu_resolve(&embedded, "A100-40GB-PCIE"));
    assert_null(cf_catalog_gpu_resolve(&embedded, "RTX6000-Ada"));
    assert_null(cf_catalog_gpu_resolve(&embedded, "H200-NVL"));
    assert_null(cf_catalog_gpu_resolve(&embedded, "RTX3080-MaxQ"));
    assert_string_equal(cf_catalog_gpu_resolve(&embedded, "Tesla V100-PCIE-32GB")->model, "V100-PCIE");
    assert_string_equal(cf_catalog_gpu_resolve(&embedded, "NVIDIA RTX A6000")->model, "A6000");
    assert_string_equal(cf_catalog_gpu_resolve(&embedded, "Quadro RTX 6000")->model, "RTX6000");
    assert_null(cf_catalog_gpu_resolve(&embedded, "NVIDIA GeForce RTX 3090"));
    assert_null(cf_catalog_gpu_resolve(&embedded, "Intel(R) Xeon(R) CPU @ 2.20GHz"));
    assert_null(cf_catalog_gpu_resolve(&embedded, "A1"));
    assert_null(cf_catalog_gpu_resolve(&embedded, NULL));
}

static void test_filters(void **state)
{
    (void)state;
    const cf_catalog_filter cases[] = {
        {0},
        {.clouds = LIST("aws")},
        {.clouds = LIST("GCP")},
        {.clouds = LIST("gcp", "azure")},
        {.regions = LIST("us-east-1")},
        {.regions = LIST("us-east-1", "eastus", "us-central1")},
        {.gpus = LIST("h100")},
        {.gpus = LIST("A100-80GB", "T4")},
        {.spot = CF_SPOT_ONLY},
        {.spot = CF_SPOT_NEVER},
        {.spot = CF_SPOT_ALLOW},
        {.clouds = LIST("aws", "lambda"), .regions = LIST("us-east-1")},
        {.clouds = LIST("gcp"), .gpus = LIST("H100", "A100-40GB"), .spot = CF_SPOT_ONLY},
        {.clouds = LIST("azure", "gcp"), .regions = LIST("eastus", "us-central1"),
         .gpus = LIST("A100-80GB", "a100-80gb-pcie", "V100")},
        {.clouds = LIST("aws"), .spot = CF_SPOT_ONLY},
        {.clouds = LIST("lambda"), .spot = CF_SPOT_ONLY},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        assert_int_equal(filter_count(&cases[i]), brute_force_count(&embedded, &cases[i]));

    /* A few absolute counts from the data, so the reference cannot drift. */
    assert_int_equal(filter_count(&cases[0]), 1868);
    assert_int_equal(filter_count(&cases[1]), 62);
    assert_int_equal(filter_count(&cases[2]), 1062);
    /* Spot: 197 rows have no spot price in the CSV (Lambda 115, AWS 62,
     * Azure 20); 44 AWS rows get one from the advisor. */
    assert_int_equal(filter_count(&cases[8]), 1868 - 197 + 44);
    assert_int_equal(filter_count(&cases[14]), 44);
    assert_int_equal(filter_count(&cases[15]), 0);
    /* Several filter values or NULL filter. */
    const cf_vm **rows = calloc(embedded.n_vms, sizeof *rows);
    assert_non_null(rows);
    assert_int_equal(cf_catalog_filter_rows(&embedded, NULL, rows), 1868);
    assert_ptr_equal(rows[0], &embedded.vms[0]);
    free(rows);
}

/* ---- filter errors -------------------------------------------------------- */

static void expect_filter_error(const cf_catalog_filter *f, const char *message,
                                const char *hint_part)
{
    cf_error_clear();
    assert_int_equal(cf_catalog_check_filter(&embedded, f), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), message);
    if (!strstr(cf_error_hint_text(), hint_part))
        fail_msg("hint '%s' lacks '%s'", cf_error_hint_text(), hint_part);
}

static void test_check_filter_errors(void **state)
{
    (void)state;
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("H100", "A100-80G")},
                        "unknown GPU 'A100-80G'", "did you mean 'A100-80GB'? known GPUs: ");
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("A100-80G")}, "unknown GPU 'A100-80G'",
                        "known GPUs: A10, A100-40GB, A100-80GB, A100-80GB-PCIE, A10G, A6000, B200,");
    /* The known list is sorted and complete. */
    assert_non_null(strstr(cf_error_hint_text(), "T4, V100, V100-32GB, V100-PCIE"));
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("a100")}, "unknown GPU 'a100'",
                        "did you mean 'A100-40GB', 'A100-80GB' or 'A100-80GB-PCIE'?");
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("h100 nvl ")}, "unknown GPU 'h100 nvl '",
                        "did you mean 'H100-NVL'?");
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("TPUv5")}, "unknown GPU 'TPUv5'",
                        "known GPUs: A10,");
    assert_null(strstr(cf_error_hint_text(), "did you mean"));

    expect_filter_error(&(cf_catalog_filter){.clouds = LIST("aws", "oracle")},
                        "unknown cloud 'oracle'", "known clouds: aws, azure, gcp, lambda");
    expect_filter_error(&(cf_catalog_filter){.clouds = LIST("azrue")}, "unknown cloud 'azrue'",
                        "did you mean 'azure'? known clouds:");

    /* AWS has only us-east-1 in this catalog. */
    expect_filter_error(&(cf_catalog_filter){.clouds = LIST("aws"), .regions = LIST("us-west-2")},
                        "unknown region 'us-west-2'",
                        "regions of aws in this catalog: us-east-1");
    expect_filter_error(&(cf_catalog_filter){.clouds = LIST("aws"), .regions = LIST("eastus")},
                        "region 'eastus' has no rows for the selected clouds (aws)",
                        "regions of aws in this catalog: us-east-1");
    expect_filter_error(&(cf_catalog_filter){.clouds = LIST("gcp"), .regions = LIST("us-central-1")},
                        "unknown region 'us-central-1'", "did you mean 'us-central1'?");
    expect_filter_error(&(cf_catalog_filter){.clouds = LIST("gcp"), .regions = LIST("mars-1")},
                        "unknown region 'mars-1'", "in all)");
    expect_filter_error(&(cf_catalog_filter){.spot = (cf_spot_policy)7}, "invalid spot policy 7", "");

    /* Valid values in any case pass. */
    cf_error_clear();
    assert_int_equal(cf_catalog_check_filter(&embedded, &(cf_catalog_filter){
                         .clouds = LIST("AWS", "Lambda"), .regions = LIST("us-east-1"),
                         .gpus = LIST("h100", "a10g")}), CF_OK);
    assert_int_equal(cf_catalog_check_filter(&embedded, NULL), CF_OK);
}

/* ---- CSV validation on small documents ------------------------------------ */

#define GPUS_HEADER                                                                              \
    "gpu_model,vendor,architecture,form_factor,memory_gib,memory_type,memory_bandwidth_gbs,"    \
    "fp32_tflops,tf32_tensor_tflops_dense,fp16_tensor_tflops_dense,bf16_tensor_tflops_dense,"   \
    "fp8_tensor_tflops_dense,intra_node_interconnect,interconnect_gbs_per_gpu,pcie,tdp_w,source,notes\n"
#define GPU_T4 "T4,NVIDIA,Turing,PCIe,16,GDDR6,320,8.1,,65,,,PCIe,32,Gen3 x16,70,datasheet,\n"
#define VMS_HEADER                                                                               \
    "cloud,region,instance_type,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,"           \
    "network_gbps,price_ondemand_usd_per_hour,price_spot_usd_per_hour,source\n"
#define ADV_HEADER                                                                               \
    "region,instance_type,os,savings_pct_vs_ondemand,interruption_range_index,"                 \
    "interruption_range_label,source\n"

static cf_status load_small(const char *vms, const char *gpus, const char *adv, cf_catalog *out)
{
    cf_error_clear();
    return cf_catalog_load_csv(vms, strlen(vms), "vms.csv", gpus, strlen(gpus), "gpus.csv", adv,
                               adv ? strlen(adv) : 0, "adv.csv", out);
}

static void expect_load_error(const char *vms, const char *gpus, const char *adv,
                              const char *message)
{
    cf_catalog cat;
    assert_int_equal(load_small(vms, gpus, adv, &cat), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), message);
    /* A failed load leaves an empty catalog that is safe to free. */
    assert_null(cat.vms);
    assert_int_equal(cat.n_vms, 0);
    assert_int_equal(cat.n_sources, 0);
    cf_catalog_free(&cat);
}

static void test_small_catalog_loads(void **state)
{
    (void)state;
    const char *vms = VMS_HEADER
        "aws,us-east-1,g4dn.xlarge,t4,1,16,4,16,25,0.526,,\"aws, 2026-07-20 (x)\"\n"
        "gcp,us-central1,n1-standard-4,T4,1,16,4,15,,0.54,0.16,gcp 2025-01-31 and 20261-01-01\n"
        "\n"
        "aws,us-east-1,g4dn.2xlarge,T4,1,16,8,32,,0.752,,\"aws, 2026-07-20 (x)\"\n";
    const char *adv = ADV_HEADER
        "us-east-1,g4dn.xlarge,Linux,64,3,15-20%,feed 2020-01-01\n"
        "us-east-1,g4dn.2xlarge,Windows,10,0,<5%,feed\n";
    cf_catalog cat;
    assert_int_equal(load_small(vms, GPUS_HEADER GPU_T4, adv, &cat), CF_OK);
    assert_int_equal(cat.n_vms, 3);
    assert_int_equal(cat.n_sources, 2);
    assert_string_equal(cat.name, "vms.csv");
    assert_string_equal(cat.sources[0], "aws, 2026-07-20 (x)");
    assert_int_equal(cat.vms[2].source_index, 0);
    /* Dates come from VM sources only (not the advisor); "20261-01-01" is no date. */
    assert_string_equal(cat.data_date, "2026-07-20");
    assert_string_equal(cat.oldest_date, "2025-01-31");
    /* GPU spelling follows the GPU table. */
    assert_string_equal(cat.vms[0].gpu_model, "T4");
    assert_float_equal(cat.vms[0].price_spot_usd_per_hr, 0.526 * 0.36, 1e-12);
    assert_float_equal(cat.vms[0].interruptions_pct_per_month, 17.5, 0);
    assert_float_equal(cat.vms[1].network_gbps, 0, 0);
    assert_float_equal(cat.vms[1].price_spot_usd_per_hr, 0.16, 0);
    assert_int_equal(cat.vms[1].spot_price_estimated, 0);
    /* Only Linux advisor rows count. */
    assert_float_equal(cat.vms[2].price_spot_usd_per_hr, 0, 0);
    assert_true(cat.vms[2].interruptions_pct_per_month < 0);
    cf_catalog_free(&cat);
    cf_catalog_free(&cat); /* freeing twice is harmless */

    /* Without an advisor: AWS spot stays unknown. */
    assert_int_equal(load_small(vms, GPUS_HEADER GPU_T4, NULL, &cat), CF_OK);
    assert_float_equal(cat.vms[0].price_spot_usd_per_hr, 0, 0);
    assert_true(cat.vms[0].interruptions_pct_per_month < 0);
    cf_catalog_free(&cat);
}

static void test_malformed_vms(void **state)
{
    (void)state;
    const char *gpus = GPUS_HEADER GPU_T4;
#define ROW_OK "aws,us-east-1,g4dn.xlarge,T4,1,16,4,16,25,0.526,,src\n"
    expect_load_error(VMS_HEADER ROW_OK "aws,us-east-1,g4dn.2xlarge,T4,1,16,8,32,,0.7x,,src\n", gpus, NULL,
                      "vms.csv:3: column 'price_ondemand_usd_per_hour': expected a number, got '0.7x'");
    expect_load_error(VMS_HEADER "aws,us-east-1,p4d.24xlarge,Z100,8,40,96,1152,400,21.9,,src\n", gpus,
                      NULL, "vms.csv:2: column 'gpu_model': unknown GPU 'Z100' (not in the GPU table)");
    expect_load_error(VMS_HEADER ROW_OK ROW_OK "gcp,us-central1,n1,T4,1,16,4,15,,-0.54,,src\n", gpus, NULL,
                      "vms.csv:4: column 'price_ondemand_usd_per_hour': must be > 0, got -0.54");
    expect_load_error(VMS_HEADER "gcp,us-central1,n1,T4,1,16,4,15,,0,,src\n", gpus, NULL,
                      "vms.csv:2: column 'price_ondemand_usd_per_hour': must be > 0, got 0");
    expect_load_error(VMS_HEADER "gcp,us-central1,n1,T4,1,16,4,15,,0.54,-0.1,src\n", gpus, NULL,
                      "vms.csv:2: column 'price_spot_usd_per_hour': must be > 0, got -0.1");
    expect_load_error(VMS_HEADER "gcp,us-central1,n1,T4,0,16,4,15,,0.54,,src\n", gpus, NULL,
                      "vms.csv:2: column 'gpu_count': must be between 1 and 1024, got 0");
    expect_load_error(VMS_HEADER "gcp,us-central1,n1,T4,1.5,16,4,15,,0.54,,src\n", gpus, NULL,
                      "vms.csv:2: column 'gpu_count': expected an integer, got '1.5'");
    expect_load_error(VMS_HEADER ",us-central1,n1,T4,1,16,4,15,,0.54,,src\n", gpus, NULL,
                      "vms.csv:2: column 'cloud': must not be empty");
    expect_load_error(VMS_HEADER "gcp,us-central1,n1,T4,1,16,4,15,-1,0.54,,src\n", gpus, NULL,
                      "vms.csv:2: column 'network_gbps': must be >= 0, got -1");
    expect_load_error(VMS_HEADER "gcp,us-central1,n1,T4,1,16,4,15,,0.54,,\n", gpus, NULL,
                      "vms.csv:2: column 'source': must not be empty (every price needs its provenance)");
    expect_load_error(VMS_HEADER "gcp,us-central1,n1-standard-4-with-a-very-long-made-up-suffix-xyz,T4,1,16,4,15,,0.54,,s\n",
                      gpus, NULL,
                      "vms.csv:2: column 'instance_type': 'n1-standard-4-with-a-very-long-made-up-suffix-xyz' "
                      "is too long (at most 47 characters)");
    expect_load_error("cloud,region,instance_type,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,"
                      "price_ondemand_usd_per_hour,price_spot_usd_per_hour,source\n"
                      "gcp,us-central1,n1,T4,1,16,4,15,0.54,,src\n",
                      gpus, NULL, "vms.csv:1: missing required column 'network_gbps'");
    expect_load_error(VMS_HEADER, gpus, NULL, "vms.csv: no VM rows");
    expect_load_error("", gpus, NULL, "vms.csv: empty CSV file (expected a header line)");
#undef ROW_OK
}

static void test_malformed_gpus_and_advisor(void **state)
{
    (void)state;
    const char *vms = VMS_HEADER "aws,us-east-1,g4dn.xlarge,T4,1,16,4,16,25,0.526,,src\n";
    expect_load_error(vms, GPUS_HEADER GPU_T4 "L4,NVIDIA,Ada,PCIe,24,GDDR6,300,abc,,,,,PCIe,64,,72,s,\n",
                      NULL, "gpus.csv:3: column 'fp32_tflops': expected a number, got 'abc'");
    expect_load_error(vms, GPUS_HEADER GPU_T4 "t4,NVIDIA,Turing,PCIe,16,GDDR6,320,8.1,,65,,,PCIe,32,,70,s,\n",
                      NULL, "gpus.csv:3: column 'gpu_model': duplicate GPU 't4'");
    expect_load_error(vms, GPUS_HEADER "T4,NVIDIA,Turing,PCIe,,GDDR6,320,8.1,,65,,,PCIe,32,,70,s,\n", NULL,
                      "gpus.csv:2: column 'memory_gib': expected a number, got an empty field");
    expect_load_error(vms, "gpu_model,memory_gib\nT4,16\n", NULL,
                      "gpus.csv:1: missing required column 'architecture'");
    expect_load_error(vms, GPUS_HEADER GPU_T4, ADV_HEADER "us-east-1,g4dn.xlarge,Linux,64,5,>20%,s\n",
                      "adv.csv:2: column 'interruption_range_index': must be between 0 and 4, got 5");
    expect_load_error(vms, GPUS_HEADER GPU_T4, ADV_HEADER "us-east-1,g4dn.xlarge,Linux,100,1,5-10%,s\n",
                      "adv.csv:2: column 'savings_pct_vs_ondemand': must be in [0, 100), got 100");
    expect_load_error(vms, GPUS_HEADER GPU_T4,
                      ADV_HEADER "us-east-1,g4dn.xlarge,Linux,64,1,5-10%,s\nus-east-1,g4dn.xlarge,Linux,60,1,5-10%,s\n",
                      "adv.csv:3: duplicate advisor row for us-east-1 g4dn.xlarge");
    expect_load_error(vms, GPUS_HEADER GPU_T4, "region,instance_type\nus-east-1,g4dn.xlarge\n",
                      "adv.csv:1: missing required column 'os'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embedded_counts),
        cmocka_unit_test(test_known_row),
        cmocka_unit_test(test_aws_spot_from_advisor),
        cmocka_unit_test(test_dates),
        cmocka_unit_test(test_embedded_matches_files),
        cmocka_unit_test(test_embedded_load_time),
        cmocka_unit_test(test_gpu_lookup_and_peak),
        cmocka_unit_test(test_gpu_resolve),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_check_filter_errors),
        cmocka_unit_test(test_small_catalog_loads),
        cmocka_unit_test(test_malformed_vms),
        cmocka_unit_test(test_malformed_gpus_and_advisor),
    };
    return cmocka_run_group_tests(tests, setup_embedded, teardown_embedded);
}
