/* Tests of the pricing catalog: the embedded data (facts of the shipped
 * CSV files under data/, built by scripts/catalog/build_catalog.py; see
 * docs/catalog.md), that every embedded GCP and AWS offer can be launched
 * where it is offered (data/gcp_availability.csv, data/aws_gpu_regions.csv),
 * the kind and date of every price, CSV validation, GPU look-ups, filters
 * and filter errors. GPU names from tools: test_gpu_names.c. */
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
#include "cloudfit/pricing/update.h"
#include "cloudfit/pricing/regions.h"

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

/* The shipped gpu_vms.csv, parsed independently of the loader. */
typedef struct {
    char *text;
    cf_csv_doc doc;
    int cloud, region, zones, type, gpu, count, od, od_kind, od_date, spot, spot_kind, spot_date, source, network;
} vms_file;

static void vms_open(vms_file *f)
{
    size_t len;
    f->text = read_data("gpu_vms.csv", &len);
    assert_int_equal(cf_csv_parse(f->text, len, "gpu_vms.csv", &f->doc), CF_OK);
    struct { int *dst; const char *name; } cols[] = {
        {&f->cloud, "cloud"}, {&f->region, "region"}, {&f->zones, "zones"}, {&f->type, "instance_type"},
        {&f->gpu, "gpu_model"}, {&f->count, "gpu_count"}, {&f->od, "price_ondemand_usd_per_hour"},
        {&f->od_kind, "ondemand_kind"}, {&f->od_date, "ondemand_date"}, {&f->spot, "price_spot_usd_per_hour"},
        {&f->spot_kind, "spot_kind"}, {&f->spot_date, "spot_date"}, {&f->source, "source"},
        {&f->network, "network_gbps"},
    };
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++) {
        *cols[i].dst = cf_csv_column(&f->doc, cols[i].name);
        assert_true(*cols[i].dst >= 0);
    }
}

static void vms_close(vms_file *f)
{
    cf_csv_free(&f->doc);
    free(f->text);
}

static const char *vf(const vms_file *f, size_t row, int col)
{
    return cf_csv_field(&f->doc.records[row], col);
}

static void test_embedded_counts(void **state)
{
    (void)state;
    vms_file f;
    vms_open(&f);
    assert_string_equal(embedded.name, "embedded");
    assert_int_equal(embedded.n_vms, f.doc.n_records);
    assert_int_equal(embedded.n_gpus, 34); /* the shared table's 27 + data/gpus_added.csv's 7 */
    static const char *const clouds[] = {"aws", "gcp", "azure", "lambda"};
    for (size_t c = 0; c < 4; c++) {
        size_t in_file = 0;
        for (size_t i = 0; i < f.doc.n_records; i++)
            in_file += strcmp(vf(&f, i, f.cloud), clouds[c]) == 0;
        assert_true(in_file > 0);
        assert_int_equal(count_cloud(&embedded, clouds[c]), in_file);
    }
    for (size_t i = 0; i < embedded.n_vms; i++) {
        assert_true(embedded.vms[i].source_index >= 0);
        assert_true((size_t)embedded.vms[i].source_index < embedded.n_sources);
        assert_non_null(cf_catalog_gpu(&embedded, embedded.vms[i].gpu_model));
        assert_string_equal(embedded.sources[embedded.vms[i].source_index], vf(&f, i, f.source));
        assert_string_equal(embedded.vms[i].zones, vf(&f, i, f.zones));
    }
    vms_close(&f);
}

static void test_known_row(void **state)
{
    (void)state;
    /* us-east-1 p4d.24xlarge: Karpenter's on-demand (2026-07-20), observed
     * spot = the lowest of the four us-east-1 zones in aws_gpu_regions.csv
     * (use1-az1 2.4655, az2 8.1915, az4 8.1203, az6 7.8799). */
    const cf_vm *vm = find_row(&embedded, "aws", "us-east-1", "p4d.24xlarge", "A100-40GB");
    assert_non_null(vm);
    assert_int_equal(vm->gpu_count, 8);
    assert_float_equal(vm->price_ondemand_usd_per_hr, 21.957642, 1e-9);
    assert_int_equal(vm->ondemand_kind, CF_PRICE_LISTED);
    assert_string_equal(vm->ondemand_date, "2026-07-20");
    assert_float_equal(vm->price_spot_usd_per_hr, 2.4655, 1e-9);
    assert_int_equal(vm->spot_kind, CF_PRICE_OBSERVED);
    assert_string_equal(vm->spot_date, "");
    assert_int_equal(vm->spot_price_estimated, 0);
    assert_string_equal(vm->zones, "use1-az1 use1-az2 use1-az4 use1-az6");
    assert_float_equal(vm->gpu_memory_gib, 40, 0);
    assert_int_equal(vm->vcpus, 96);
    assert_float_equal(vm->memory_gib, 1152, 0);
    assert_float_equal(vm->network_gbps, 400, 0);
    assert_non_null(strstr(embedded.sources[vm->source_index], "karpenter-provider-aws@1d92708"));
    char text[192];
    cf_vm_price_origin(vm, 1, text, sizeof text);
    assert_string_equal(text, "observed, lowest of 4 zones, date not recorded");
    cf_vm_price_origin(vm, 0, text, sizeof text);
    assert_string_equal(text, "listed, 2026-07-20");

    /* Another AWS region (issue 14): p5.48xlarge in us-west-2 is offered. */
    vm = find_row(&embedded, "aws", "us-west-2", "p5.48xlarge", "H100");
    assert_non_null(vm);
    assert_true(vm->price_ondemand_usd_per_hr > 0 && vm->price_spot_usd_per_hr > 0);

    /* An Azure row with an empty network column reads as 0 (not recorded). */
    vms_file f;
    vms_open(&f);
    size_t azure_no_network = 0, in_file = 0;
    for (size_t i = 0; i < embedded.n_vms; i++) {
        azure_no_network += !strcmp(embedded.vms[i].cloud, "azure") && embedded.vms[i].network_gbps == 0;
        in_file += !strcmp(vf(&f, i, f.cloud), "azure") && !*vf(&f, i, f.network);
    }
    assert_true(in_file > 0);
    assert_int_equal(azure_no_network, in_file);
    vms_close(&f);
}

/* AWS spot: observed where the CSV has one; otherwise estimated from the
 * advisor (recomputed here from the CSV text, not taken from the loader);
 * the interruption rate and its band from the advisor. */
static void test_aws_spot_from_advisor(void **state)
{
    (void)state;
    vms_file f;
    vms_open(&f);
    size_t adv_len;
    char *adv_text = read_data("aws_spot_advisor.csv", &adv_len);
    cf_csv_doc adv;
    assert_int_equal(cf_csv_parse(adv_text, adv_len, "aws_spot_advisor.csv", &adv), CF_OK);
    static const double midpoint[] = {2.5, 7.5, 12.5, 17.5, 25.0};

    size_t estimated = 0, observed = 0, none = 0;
    for (size_t i = 0; i < f.doc.n_records; i++) {
        if (strcmp(vf(&f, i, f.cloud), "aws") != 0)
            continue;
        const cf_vm *vm = &embedded.vms[i];
        assert_string_equal(vm->instance_type, vf(&f, i, f.type));
        const cf_csv_record *hit = NULL;
        for (size_t a = 0; a < adv.n_records && !hit; a++)
            if (!strcmp(cf_csv_field(&adv.records[a], 0), vm->region) &&
                !strcmp(cf_csv_field(&adv.records[a], 1), vm->instance_type))
                hit = &adv.records[a];
        if (hit) {
            int band = atoi(cf_csv_field(hit, 4));
            assert_float_equal(vm->interruptions_pct_per_month, midpoint[band], 0);
            assert_int_equal(vm->interruption_band, band);
        } else {
            assert_true(vm->interruptions_pct_per_month < 0);
            assert_int_equal(vm->interruption_band, -1);
        }
        if (*vf(&f, i, f.spot)) {
            observed++;
            assert_string_equal(vf(&f, i, f.spot_kind), "observed");
            assert_int_equal(vm->spot_kind, CF_PRICE_OBSERVED);
            assert_int_equal(vm->spot_price_estimated, 0);
            assert_float_equal(vm->price_spot_usd_per_hr, atof(vf(&f, i, f.spot)), 0);
        } else if (hit && *vf(&f, i, f.od)) {
            estimated++;
            double ondemand = atof(vf(&f, i, f.od)), savings = atof(cf_csv_field(hit, 3));
            assert_int_equal(vm->spot_kind, CF_PRICE_ESTIMATED);
            assert_int_equal(vm->spot_price_estimated, 1);
            assert_float_equal(vm->price_spot_usd_per_hr, ondemand * (1 - savings / 100), 1e-9);
            assert_float_equal(vm->spot_savings_pct, savings, 0);
            assert_string_equal(vm->spot_date, "2025-06-28");
            char text[192];
            cf_vm_price_origin(vm, 1, text, sizeof text);
            assert_non_null(strstr(text, "estimated: on-demand × (1 − "));
            assert_non_null(strstr(text, "AWS Spot Advisor savings of 2025-06-28"));
        } else {
            none++;
            assert_float_equal(vm->price_spot_usd_per_hr, 0, 0);
            assert_int_equal(vm->spot_kind, CF_PRICE_NONE);
        }
    }
    /* Observed spot prices are the rule now; estimates fill a few gaps. */
    assert_true(observed > 10 * estimated && estimated > 0);
    print_message("AWS spot: %zu observed, %zu estimated, %zu none\n", observed, estimated, none);

    /* Other clouds: spot from the data, never estimated, interruptions unknown. */
    for (size_t i = 0; i < embedded.n_vms; i++) {
        const cf_vm *vm = &embedded.vms[i];
        if (strcmp(vm->cloud, "aws") == 0)
            continue;
        assert_int_equal(vm->spot_price_estimated, 0);
        assert_true(vm->spot_kind != CF_PRICE_ESTIMATED && vm->spot_kind != CF_PRICE_OBSERVED);
        assert_true(vm->interruptions_pct_per_month < 0);
        char text[64];
        cf_vm_interruptions_origin(&embedded, vm, text, sizeof text);
        assert_string_equal(text, "");
        if (strcmp(vm->cloud, "lambda") == 0)
            assert_float_equal(vm->price_spot_usd_per_hr, 0, 0);
    }
    cf_csv_free(&adv);
    free(adv_text);
    vms_close(&f);
}

/* Every price has a kind that matches its presence, and a spot price is
 * below the on-demand price (no discount is not a spot price). */
static void test_price_kinds(void **state)
{
    (void)state;
    for (size_t i = 0; i < embedded.n_vms; i++) {
        const cf_vm *vm = &embedded.vms[i];
        assert_int_equal(vm->ondemand_kind != CF_PRICE_NONE, vm->price_ondemand_usd_per_hr > 0);
        assert_int_equal(vm->spot_kind != CF_PRICE_NONE, vm->price_spot_usd_per_hr > 0);
        assert_true(vm->price_ondemand_usd_per_hr > 0 || vm->price_spot_usd_per_hr > 0);
        if (vm->price_ondemand_usd_per_hr > 0 && vm->price_spot_usd_per_hr > 0)
            assert_true(vm->price_spot_usd_per_hr < vm->price_ondemand_usd_per_hr);
        /* Issue 14: Azure's fractional A10 sizes are not whole GPUs; H200
         * v5 "spot" equal to on-demand is no spot price. */
        assert_true(strcmp(vm->instance_type, "Standard_NC8ads_A10_v4") != 0);
        assert_true(strcmp(vm->instance_type, "Standard_NC16ads_A10_v4") != 0);
        if (!strcmp(vm->instance_type, "Standard_ND96isr_H200_v5"))
            assert_float_equal(vm->price_spot_usd_per_hr, 0, 0);
        /* a3-highgpu-1g/2g/4g: spot or flex-start only. */
        if (!strncmp(vm->instance_type, "a3-highgpu-", 11) && strcmp(vm->instance_type, "a3-highgpu-8g") != 0) {
            assert_float_equal(vm->price_ondemand_usd_per_hr, 0, 0);
            assert_true(vm->price_spot_usd_per_hr > 0);
        }
    }
    assert_non_null(find_row(&embedded, "azure", "westus3", "Standard_ND96isr_H200_v5", "H200"));
}

/* ---- launchable offers (issue 14) ------------------------------------------- */

/* Every embedded GCP offer is a (machine, region) — or for N1 hosts an
 * (attached GPU, count, region) — of data/gcp_availability.csv, with its
 * zones; every AWS offer a (type, region) of data/aws_gpu_regions.csv whose
 * zones are zones of that type there. A catalog that offers a machine
 * where it cannot be launched fails the build here. */
static void test_embedded_offers_launchable(void **state)
{
    (void)state;
    size_t gl, al;
    char *gtext = read_data("gcp_availability.csv", &gl), *atext = read_data("aws_gpu_regions.csv", &al);
    cf_csv_doc gav, aav;
    assert_int_equal(cf_csv_parse(gtext, gl, "gcp_availability.csv", &gav), CF_OK);
    assert_int_equal(cf_csv_parse(atext, al, "aws_gpu_regions.csv", &aav), CF_OK);
    int g_kind = cf_csv_column(&gav, "kind"), g_name = cf_csv_column(&gav, "name"),
        g_count = cf_csv_column(&gav, "gpu_count"), g_region = cf_csv_column(&gav, "region"),
        g_zones = cf_csv_column(&gav, "zones");
    int a_type = cf_csv_column(&aav, "instance_type"), a_region = cf_csv_column(&aav, "region"),
        a_zone = cf_csv_column(&aav, "zone");
    assert_true(g_kind >= 0 && g_name >= 0 && g_count >= 0 && g_region >= 0 && g_zones >= 0);
    assert_true(a_type >= 0 && a_region >= 0 && a_zone >= 0);
    size_t gcp = 0, aws = 0, spot_only = 0;
    for (size_t i = 0; i < embedded.n_vms; i++) {
        const cf_vm *vm = &embedded.vms[i];
        if (!strcmp(vm->cloud, "gcp")) {
            gcp++;
            int n1 = !strncmp(vm->instance_type, "n1-", 3);
            const cf_csv_record *hit = NULL;
            for (size_t r = 0; r < gav.n_records && !hit; r++) {
                const cf_csv_record *rec = &gav.records[r];
                if (strcmp(cf_csv_field(rec, g_region), vm->region) != 0)
                    continue;
                if (n1 ? !strcmp(cf_csv_field(rec, g_kind), "accelerator") &&
                             !strcmp(cf_csv_field(rec, g_name), vm->gpu_model) &&
                             atoi(cf_csv_field(rec, g_count)) == vm->gpu_count
                       : !strcmp(cf_csv_field(rec, g_kind), "instance") &&
                             !strcmp(cf_csv_field(rec, g_name), vm->instance_type))
                    hit = rec;
            }
            if (!hit)
                fail_msg("embedded GCP offer %s %d×%s in %s is not launchable there (gcp_availability.csv)",
                         vm->instance_type, vm->gpu_count, vm->gpu_model, vm->region);
            assert_string_equal(vm->zones, cf_csv_field(hit, g_zones));
            spot_only += vm->price_ondemand_usd_per_hr == 0;
        } else if (!strcmp(vm->cloud, "aws")) {
            aws++;
            assert_true(vm->zones[0] != '\0');
            /* Each zone of the offer is a zone of this type in this region. */
            char zones[sizeof vm->zones];
            snprintf(zones, sizeof zones, "%s", vm->zones);
            for (char *save = NULL, *z = strtok_r(zones, " ", &save); z; z = strtok_r(NULL, " ", &save)) {
                int found = 0;
                for (size_t r = 0; r < aav.n_records && !found; r++)
                    found = !strcmp(cf_csv_field(&aav.records[r], a_type), vm->instance_type) &&
                            !strcmp(cf_csv_field(&aav.records[r], a_region), vm->region) &&
                            !strcmp(cf_csv_field(&aav.records[r], a_zone), z);
                if (!found)
                    fail_msg("embedded AWS offer %s in %s: zone %s is not in aws_gpu_regions.csv", vm->instance_type,
                             vm->region, z);
            }
        }
    }
    print_message("launchable: %zu GCP offers (%zu spot/flex-start only), %zu AWS offers\n", gcp, spot_only, aws);
    assert_true(gcp > 0 && aws > 0 && spot_only > 0);
    /* The price sheet's a2-highgpu-1g regions that cannot launch it are gone. */
    size_t a2 = 0;
    for (size_t i = 0; i < embedded.n_vms; i++)
        a2 += !strcmp(embedded.vms[i].instance_type, "a2-highgpu-1g");
    size_t a2_avail = 0;
    for (size_t r = 0; r < gav.n_records; r++)
        a2_avail += !strcmp(cf_csv_field(&gav.records[r], g_name), "a2-highgpu-1g");
    assert_true(a2 <= a2_avail);
    cf_csv_free(&gav);
    cf_csv_free(&aav);
    free(gtext);
    free(atext);
}

/* The catalog's dates are those of its listed and observed prices (the
 * kind/date columns), recomputed here from the file. */
static void test_dates(void **state)
{
    (void)state;
    vms_file f;
    vms_open(&f);
    char newest[11] = "", oldest[11] = "";
    size_t undated = 0;
    for (size_t i = 0; i < f.doc.n_records; i++) {
        const int cols[2][2] = {{f.od, f.od_date}, {f.spot, f.spot_date}};
        for (int k = 0; k < 2; k++) {
            if (!*vf(&f, i, cols[k][0]))
                continue;
            const char *d = vf(&f, i, cols[k][1]);
            if (!*d) {
                undated++;
                continue;
            }
            if (!*newest || strcmp(d, newest) > 0)
                snprintf(newest, sizeof newest, "%s", d);
            if (!*oldest || strcmp(d, oldest) < 0)
                snprintf(oldest, sizeof oldest, "%s", d);
        }
    }
    assert_string_equal(embedded.data_date, newest);
    assert_string_equal(embedded.oldest_date, oldest);
    assert_int_equal(embedded.n_undated_prices, undated);
    assert_string_equal(embedded.advisor_date, "2025-06-28");
    vms_close(&f);
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
    if (!getenv("CF_TEST_NO_TIMING")) /* under valgrind (scripts/valgrind-tests.sh) time means nothing */
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
                 (f->spot != CF_SPOT_ONLY || vm->price_spot_usd_per_hr > 0) &&
                 (f->spot != CF_SPOT_NEVER || vm->price_ondemand_usd_per_hr > 0) &&
                 (f->include_restricted || !cf_region_restriction(vm->cloud, vm->region) ||
                  (f->n_regions && listed(vm->region, f->regions, f->n_regions, 0)));
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
        {.spot = CF_SPOT_ALLOW, .include_restricted = 1},
        {.clouds = LIST("azure"), .regions = LIST("germanynorth", "eastus")},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        assert_int_equal(filter_count(&cases[i]), brute_force_count(&embedded, &cases[i]));

    /* Absolute counts from the file, so the reference cannot drift. A zero
     * filter is spot "never": offers without an on-demand price (spot or
     * flex-start only) are left out. */
    vms_file f;
    vms_open(&f);
    size_t all = f.doc.n_records, aws_od = 0, gcp_od = 0, with_spot = 0, aws_spot = 0, no_od = 0;
    size_t restricted = 0, restricted_od = 0, restricted_spot = 0;
    for (size_t i = 0; i < all; i++) {
        int is_aws = !strcmp(vf(&f, i, f.cloud), "aws"), od = *vf(&f, i, f.od) != '\0';
        aws_od += is_aws && od;
        gcp_od += !strcmp(vf(&f, i, f.cloud), "gcp") && od;
        no_od += !od;
        /* a spot price in the file, or an AWS advisor estimate */
        int spot = *vf(&f, i, f.spot) || embedded.vms[i].spot_kind == CF_PRICE_ESTIMATED;
        with_spot += spot;
        aws_spot += spot && is_aws;
        /* Azure's restricted-access regions (pricing/regions.c) */
        int r = !strcmp(vf(&f, i, f.cloud), "azure") &&
                (!strcmp(embedded.vms[i].region, "australiacentral2") || !strcmp(embedded.vms[i].region, "germanynorth") ||
                 !strcmp(embedded.vms[i].region, "norwaywest") || !strcmp(embedded.vms[i].region, "southafricawest") ||
                 !strcmp(embedded.vms[i].region, "switzerlandwest") || !strcmp(embedded.vms[i].region, "uaecentral"));
        restricted += r;
        restricted_od += r && od;
        restricted_spot += r && spot;
    }
    vms_close(&f);
    assert_true(no_od > 0);
    assert_int_equal(restricted, 11);
    assert_int_equal(filter_count(&cases[0]), all - no_od - restricted_od);
    assert_int_equal(filter_count(&cases[1]), aws_od);
    assert_int_equal(filter_count(&cases[2]), gcp_od);
    assert_int_equal(filter_count(&cases[8]), with_spot - restricted_spot);
    assert_int_equal(filter_count(&cases[9]), all - no_od - restricted_od);
    assert_int_equal(filter_count(&cases[10]), all - restricted);
    assert_int_equal(filter_count(&cases[14]), aws_spot);
    assert_int_equal(filter_count(&cases[15]), 0);
    assert_int_equal(filter_count(&cases[16]), all);
    assert_int_equal(cf_catalog_filter_restricted(&embedded, &cases[10]), restricted);
    assert_int_equal(cf_catalog_filter_restricted(&embedded, &cases[16]), 0);
    /* a restricted region named in the filter is offered */
    assert_int_equal(cf_catalog_filter_restricted(&embedded, &cases[17]), 0);
    assert_true(filter_count(&cases[17]) > filter_count(&(cf_catalog_filter){.clouds = LIST("azure"),
                                                                            .regions = LIST("eastus")}));
    /* Several filter values or NULL filter. */
    const cf_vm **rows = calloc(embedded.n_vms, sizeof *rows);
    assert_non_null(rows);
    assert_int_equal(cf_catalog_filter_rows(&embedded, NULL, rows), all);
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
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("H100", "A100-8GB")},
                        "unknown GPU 'A100-8GB'", "did you mean 'A100-80GB'? known GPUs: ");
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("A100-8GB")}, "unknown GPU 'A100-8GB'",
                        "known GPUs: A10, A100-40GB, A100-80GB, A100-80GB-PCIE, A10G, A6000, B200,");
    /* The known list is sorted and complete. */
    assert_non_null(strstr(cf_error_hint_text(), "T4, V100, V100-32GB, V100-PCIE"));
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("a100")}, "unknown GPU 'a100'",
                        "did you mean 'A100-40GB', 'A100-80GB' or 'A100-80GB-PCIE'?");
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("H100-NV")}, "unknown GPU 'H100-NV'",
                        "did you mean 'H100-NVL'?");
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("TPUv5")}, "unknown GPU 'TPUv5'",
                        "known GPUs: A10,");
    assert_null(strstr(cf_error_hint_text(), "did you mean"));
    /* a name one word short of a row: that GPU's rows, never a GPU of another family spelt alike (the
     * hint said 'H100-PCIE' or 'V100-PCIE' for "A100 PCIe", nothing for "A100-SXM4") */
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("A100 PCIe")}, "unknown GPU 'A100 PCIe'",
                        "did you mean 'A100-80GB-PCIE', 'A100-40GB' or 'A100-80GB'? known GPUs: ");
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("A100-SXM4")}, "unknown GPU 'A100-SXM4'",
                        "did you mean 'A100-40GB', 'A100-80GB' or 'A100-80GB-PCIE'? known GPUs: ");
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("Tesla V100-SXM2-32GB-LS")},
                        "unknown GPU 'Tesla V100-SXM2-32GB-LS'", "did you mean 'V100-32GB', 'V100' or 'V100-PCIE'?");
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("NVIDIA H100")}, "unknown GPU 'NVIDIA H100'",
                        "did you mean 'H100', 'H100-PCIE' or 'H100-NVL'?");
    /* a word of the model that is no model number names no family: "RTX" is no RTX PRO 6000 */
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("NVIDIA RTX A4000")}, "unknown GPU 'NVIDIA RTX A4000'",
                        "known GPUs: ");
    assert_null(strstr(cf_error_hint_text(), "did you mean"));

    expect_filter_error(&(cf_catalog_filter){.clouds = LIST("aws", "oracle")},
                        "unknown cloud 'oracle'", "known clouds: aws, azure, gcp, lambda");
    expect_filter_error(&(cf_catalog_filter){.clouds = LIST("azrue")}, "unknown cloud 'azrue'",
                        "did you mean 'azure'? known clouds:");

    /* Every AWS region is in the catalog now; a typo is still caught. */
    expect_filter_error(&(cf_catalog_filter){.clouds = LIST("aws"), .regions = LIST("us-west-9")},
                        "unknown region 'us-west-9'", "did you mean 'us-west-1' or 'us-west-2'?");
    expect_filter_error(&(cf_catalog_filter){.clouds = LIST("aws"), .regions = LIST("eastus")},
                        "region 'eastus' has no rows for the selected clouds (aws)",
                        "regions of aws in this catalog: af-south-1, ap-east-1,");
    /* A GCP region the price sheet bills but where no GPU machine launches. */
    expect_filter_error(&(cf_catalog_filter){.clouds = LIST("gcp"), .regions = LIST("europe-west12")},
                        "unknown region 'europe-west12'", "regions of gcp in this catalog");
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

/* A GPU filter takes a GPU as the tools print it ("Tesla T4", docs/catalog.md
 * "GPU names in filters"): the same offers as the model's name, where the
 * filter refused it before; a family word is never narrowed to the
 * resolver's first row of the family ("a100" is refused as before, with the
 * family in the hint). */
static void test_filter_takes_tool_spellings(void **state)
{
    (void)state;
    static const struct {
        const char *spelling, *model;
    } cases[] = {
        {"Tesla T4", "T4"},
        {"NVIDIA H100 80GB HBM3", "H100"},
        {"NVIDIA_H100_80GB_HBM3", "H100"},
        {"NVIDIA A100-SXM4-40GB", "A100-40GB"},
        {"NVIDIA A100 80GB PCIe", "A100-80GB-PCIE"},
        {"AMD Instinct MI300X", "MI300X"},
        {"AMD Instinct MI300X VF", "MI300X"},
        {"Quadro RTX 6000", "RTX6000"},
        {"Tesla V100-SXM2-32GB", "V100-32GB"},
        {"NVIDIA GH200 480GB", "GH200"},
        {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000"},
        {"h100 nvl ", "H100-NVL"},
        {"A100-80G", "A100-80GB"}, /* "80G": a memory size as tools write it (rule 3) */
        {"t4", "t4"}, /* a model in any case: as written */
    };
    const cf_vm **by_spelling = calloc(embedded.n_vms, sizeof *by_spelling);
    const cf_vm **by_model = calloc(embedded.n_vms, sizeof *by_model);
    assert_non_null(by_spelling);
    assert_non_null(by_model);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *spelling = cases[i].spelling;
        assert_string_equal(cf_catalog_gpu_filter_model(&embedded, spelling), cases[i].model);
        /* with a model before it, as a repeated --gpu gives */
        const char *spelled[2] = {"B200", spelling}, *named[2] = {"B200", cases[i].model};
        cf_catalog_filter fs = {.gpus = spelled, .n_gpus = 2, .spot = CF_SPOT_ALLOW};
        cf_catalog_filter fm = {.gpus = named, .n_gpus = 2, .spot = CF_SPOT_ALLOW};
        cf_error_clear();
        if (cf_catalog_check_filter(&embedded, &fs) != CF_OK)
            fail_msg("'%s' refused: %s", spelling, cf_error_message());
        size_t ns = cf_catalog_filter_rows(&embedded, &fs, by_spelling);
        size_t nm = cf_catalog_filter_rows(&embedded, &fm, by_model);
        assert_int_equal(ns, nm);
        assert_true(nm > filter_count(&(cf_catalog_filter){.gpus = LIST("B200"), .spot = CF_SPOT_ALLOW}));
        assert_memory_equal(by_spelling, by_model, nm * sizeof *by_model);
        assert_int_equal(cf_catalog_filter_restricted(&embedded, &fs), cf_catalog_filter_restricted(&embedded, &fm));
    }
    free(by_spelling);
    free(by_model);

    /* Family words and other products stay as written: "a100" is refused as
     * before, never read as A100-40GB alone; so is "NVIDIA A100". */
    const char *const as_written[] = {"a100", "A100", "NVIDIA A100", "NVIDIA H100", "TPUv5", "Tesla T4 T4 x"};
    for (size_t i = 0; i < sizeof as_written / sizeof *as_written; i++)
        assert_ptr_equal(cf_catalog_gpu_filter_model(&embedded, as_written[i]), as_written[i]);
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("a100")}, "unknown GPU 'a100'",
                        "did you mean 'A100-40GB', 'A100-80GB' or 'A100-80GB-PCIE'? known GPUs: ");
    /* the family, not the resolver's first row of it (the hint said 'A100-40GB' alone) */
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("NVIDIA A100")}, "unknown GPU 'NVIDIA A100'",
                        "did you mean 'A100-40GB', 'A100-80GB' or 'A100-80GB-PCIE'? known GPUs: ");
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("T4", "NVIDIA H100")}, "unknown GPU 'NVIDIA H100'",
                        "known GPUs: ");
    /* a tool's spelling of a GPU no offer sells: the message of its model */
    expect_filter_error(&(cf_catalog_filter){.gpus = LIST("Tesla K80")},
                        "no VM in catalog 'embedded' has GPU 'Tesla K80'", "known GPUs: ");
}

/* Which list failed, without reading the message: a cloud or region named
 * like another list's field ("GPU", "cloud") is still its own list's. */
static void test_check_filter_names_the_failed_list(void **state)
{
    (void)state;
    cf_filter_field failed = CF_FILTER_OK;
    assert_int_equal(cf_catalog_check_filter_field(&embedded, &(cf_catalog_filter){.clouds = LIST("GPU")}, &failed),
                     CF_ERR_INVALID);
    assert_int_equal(failed, CF_FILTER_CLOUDS);
    assert_int_equal(cf_catalog_check_filter_field(&embedded, &(cf_catalog_filter){.gpus = LIST("region")}, &failed),
                     CF_ERR_INVALID);
    assert_int_equal(failed, CF_FILTER_GPUS);
    assert_int_equal(cf_catalog_check_filter_field(&embedded, &(cf_catalog_filter){.regions = LIST("cloud-GPU-1")},
                                                   &failed), CF_ERR_INVALID);
    assert_int_equal(failed, CF_FILTER_REGIONS);
    assert_int_equal(cf_catalog_check_filter_field(&embedded, &(cf_catalog_filter){.spot = (cf_spot_policy)9}, &failed),
                     CF_ERR_INVALID);
    assert_int_equal(failed, CF_FILTER_SPOT);
    assert_int_equal(cf_catalog_check_filter_field(&embedded, &(cf_catalog_filter){.gpus = LIST("T4")}, &failed), CF_OK);
    assert_int_equal(failed, CF_FILTER_OK);
    cf_error_clear();
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
    expect_load_error(VMS_HEADER "gcp,us-central1,n1-standard-4-with-a-very-long-made-up-suffix-xyz-longer-than-any-type,T4,1,16,4,15,,0.54,,s\n",
                      gpus, NULL,
                      "vms.csv:2: column 'instance_type': 'n1-standard-4-with-a-very-long-made-up-suffix-xyz-longer-than-any-type' "
                      "is too long (at most 63 characters)");
    expect_load_error("cloud,region,instance_type,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,"
                      "price_ondemand_usd_per_hour,price_spot_usd_per_hour,source\n"
                      "gcp,us-central1,n1,T4,1,16,4,15,0.54,,src\n",
                      gpus, NULL, "vms.csv:1: missing required column 'network_gbps'");
    /* a name with a line end (it put a live line into torchrun.sh) or a reordering character is not a name */
    expect_load_error(VMS_HEADER "gcp,us-central1,\"n1\ntouch PWNED #\",T4,1,16,4,15,,0.54,,s\n", gpus, NULL,
                      "vms.csv:2: column 'instance_type': 'n1\\ntouch PWNED #' holds a control or reordering "
                      "character, or a byte that is not UTF-8: not a name");
    expect_load_error(VMS_HEADER "gcp,us-\xe2\x80\xae" "central1,n1,T4,1,16,4,15,,0.54,,s\n", gpus, NULL,
                      "vms.csv:2: column 'region': 'us-\\u202ecentral1' holds a control or reordering "
                      "character, or a byte that is not UTF-8: not a name");
    expect_load_error(VMS_HEADER, gpus, NULL, "vms.csv: no VM rows");
    expect_load_error("", gpus, NULL, "vms.csv: empty CSV file (expected a header line)");
#undef ROW_OK
}

#define VMS2_HEADER                                                                              \
    "cloud,region,zones,instance_type,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,network_gbps,"  \
    "price_ondemand_usd_per_hour,ondemand_kind,ondemand_date,price_spot_usd_per_hour,spot_kind,spot_date,source\n"

/* The kind and date of every price (issue 14): read, checked, and the
 * rules for spot-only offers and "spot" prices that are no discount. */
static void test_price_kind_columns(void **state)
{
    (void)state;
    const char *gpus = GPUS_HEADER GPU_T4;
    const char *vms = VMS2_HEADER
        "aws,us-west-2,usw2-az1 usw2-az2,g4dn.xlarge,T4,1,16,4,16,25,0.526,listed,,0.2,observed,,s1\n"
        "gcp,us-central1,us-central1-a,a3-like,T4,1,16,4,16,,,,,0.3,listed,2026-07-30,s2\n"
        "azure,eastus,,nc-like,T4,1,16,4,16,,0.9,listed,2026-05-20,0.9,listed,2026-05-20,s3\n"
        "aws,us-east-1,use1-az1,g4dn.2xlarge,T4,1,16,8,32,,0.752,listed,2026-07-20,,,,s4 2020-01-01\n";
    const char *adv = ADV_HEADER "us-east-1,g4dn.2xlarge,Linux,60,2,10-15%,feed committed 2025-06-28\n";
    cf_catalog cat;
    assert_int_equal(load_small(vms, gpus, adv, &cat), CF_OK);
    assert_string_equal(cat.vms[0].zones, "usw2-az1 usw2-az2");
    assert_int_equal(cat.vms[0].spot_kind, CF_PRICE_OBSERVED);
    assert_string_equal(cat.vms[0].spot_date, "");
    /* spot only: no on-demand price, kind none */
    assert_float_equal(cat.vms[1].price_ondemand_usd_per_hr, 0, 0);
    assert_int_equal(cat.vms[1].ondemand_kind, CF_PRICE_NONE);
    assert_int_equal(cat.vms[1].spot_kind, CF_PRICE_LISTED);
    char text[192];
    cf_vm_price_origin(&cat.vms[1], 0, text, sizeof text);
    assert_string_equal(text, "not offered on demand (spot or flex-start only)");
    /* spot equal to on-demand: no spot price */
    assert_float_equal(cat.vms[2].price_spot_usd_per_hr, 0, 0);
    assert_int_equal(cat.vms[2].spot_kind, CF_PRICE_NONE);
    /* estimated from the advisor, dated by it */
    assert_int_equal(cat.vms[3].spot_kind, CF_PRICE_ESTIMATED);
    assert_float_equal(cat.vms[3].price_spot_usd_per_hr, 0.752 * 0.4, 1e-12);
    assert_string_equal(cat.vms[3].spot_date, "2025-06-28");
    cf_vm_interruptions_origin(&cat, &cat.vms[3], text, sizeof text);
    assert_string_equal(text, "AWS Spot Advisor band 10-15% (2025-06-28)");
    /* dates: from the kind/date columns, not the sources (2020-01-01);
     * two prices undated (row 1's on-demand and observed spot) */
    assert_string_equal(cat.data_date, "2026-07-30");
    assert_string_equal(cat.oldest_date, "2026-05-20");
    assert_int_equal(cat.n_undated_prices, 2);
    /* writing keeps kinds and dates, and never stores the estimate */
    char *text_out = NULL;
    size_t len = 0;
    assert_int_equal(cf_catalog_write_vms_csv(&cat, &text_out, &len), CF_OK);
    assert_non_null(strstr(text_out, "0.526,listed,,0.2,observed,,s1,\n"));
    assert_non_null(strstr(text_out, ",,,,0.3,listed,2026-07-30,s2,\n"));
    assert_non_null(strstr(text_out, "0.752,listed,2026-07-20,,,,"));
    free(text_out);
    cf_catalog_free(&cat);

    expect_load_error(VMS2_HEADER "gcp,r,,t,T4,1,16,4,16,,,,,,,,s\n", gpus, NULL,
                      "vms.csv:2: column 'price_ondemand_usd_per_hour': empty, and so is the spot price: an offer "
                      "needs at least one price");
    expect_load_error(VMS2_HEADER "gcp,r,,t,T4,1,16,4,16,,1,guessed,,,,,s\n", gpus, NULL,
                      "vms.csv:2: column 'ondemand_kind': expected 'listed' or 'observed', got 'guessed'");
    expect_load_error(VMS2_HEADER "gcp,r,,t,T4,1,16,4,16,,1,estimated,,,,,s\n", gpus, NULL,
                      "vms.csv:2: column 'ondemand_kind': expected 'listed' or 'observed', got 'estimated'");
    expect_load_error(VMS2_HEADER "gcp,r,,t,T4,1,16,4,16,,1,listed,2026-13-01,,,,s\n", gpus, NULL,
                      "vms.csv:2: column 'ondemand_date': expected a date YYYY-MM-DD or nothing, got '2026-13-01'");
    expect_load_error(VMS2_HEADER "gcp,r,,t,T4,1,16,4,16,,1,listed,,,observed,,s\n", gpus, NULL,
                      "vms.csv:2: column 'spot_kind': 'observed' without a price (leave it empty)");
    expect_load_error("cloud,region,instance_type,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,network_gbps,"
                      "price_ondemand_usd_per_hour,ondemand_kind,price_spot_usd_per_hour,source\n"
                      "gcp,r,t,T4,1,16,4,16,,1,listed,,s\n", gpus, NULL,
                      "vms.csv: has some of the price kind/date columns but not 'ondemand_date' (ondemand_kind, "
                      "ondemand_date, spot_kind and spot_date come together)");
}

/* Each price keeps its provenance (issue 32): a spot price from the AWS
 * feed is one price for the region, and a price refreshed apart from the
 * row's other price names its own source; both survive a write and a
 * load. */
static void test_spot_provenance_columns(void **state)
{
    (void)state;
    const char *gpus = GPUS_HEADER GPU_T4;
    const char *vms =
        "cloud,region,zones,instance_type,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,network_gbps,"
        "price_ondemand_usd_per_hour,ondemand_kind,ondemand_date,price_spot_usd_per_hour,spot_kind,spot_date,source,"
        "spot_source\n"
        "aws,us-west-2,usw2-az1 usw2-az2,g4dn.xlarge,T4,1,16,4,16,25,0.526,listed,2026-11-18,0.19,observed-regional,"
        "2026-11-16,od s,feed s\n"
        "aws,us-east-1,use1-az1 use1-az2,g4dn.2xlarge,T4,1,16,8,32,,0.752,listed,2026-11-18,0.3,observed,,od s,old s\n"
        "aws,us-east-2,use2-az1,g4dn.4xlarge,T4,1,16,16,64,,1.2,listed,2026-11-18,,,,od s,ignored without a spot price\n";
    cf_catalog cat;
    assert_int_equal(load_small(vms, gpus, NULL, &cat), CF_OK);
    assert_int_equal(cat.vms[0].spot_regional, 1);
    assert_int_equal(cat.vms[1].spot_regional, 0);
    assert_string_equal(cf_vm_price_source(&cat, &cat.vms[0], 0), "od s");
    assert_string_equal(cf_vm_price_source(&cat, &cat.vms[0], 1), "feed s");
    assert_string_equal(cf_vm_price_source(&cat, &cat.vms[1], 1), "old s");
    assert_int_equal(cat.vms[2].has_spot_source, 0);
    char text[192];
    cf_vm_price_origin(&cat.vms[0], 1, text, sizeof text);
    assert_string_equal(text, "observed, one price for the region (AWS spot feed), 2026-11-16");
    cf_vm_price_origin(&cat.vms[1], 1, text, sizeof text);
    assert_string_equal(text, "observed, lowest of 2 zones, date not recorded");
    char *out = NULL;
    size_t len = 0;
    assert_int_equal(cf_catalog_write_vms_csv(&cat, &out, &len), CF_OK);
    assert_non_null(strstr(out, ",0.19,observed-regional,2026-11-16,od s,feed s\n"));
    assert_non_null(strstr(out, ",0.3,observed,,od s,old s\n"));
    assert_non_null(strstr(out, ",1.2,listed,2026-11-18,,,,od s,\n"));
    cf_catalog again;
    assert_int_equal(cf_catalog_load_csv(out, len, "again.csv", gpus, strlen(gpus), "gpus.csv", NULL, 0, NULL, &again),
                     CF_OK);
    assert_int_equal(again.vms[0].spot_regional, 1);
    assert_string_equal(cf_vm_price_source(&again, &again.vms[0], 1), "feed s");
    cf_catalog_free(&again);
    free(out);
    cf_catalog_free(&cat);
    /* "regional" is a spot price's scope only */
    expect_load_error(VMS2_HEADER "aws,r,,t,T4,1,16,4,16,,1,observed-regional,,,,,s\n", gpus, NULL,
                      "vms.csv:2: column 'ondemand_kind': expected 'listed' or 'observed', got 'observed-regional'");
}

/* Equal prices in several regions: the user's preferred region first, then
 * the documented default list, never the alphabet (issue 32). */
static void test_region_order_and_availability(void **state)
{
    (void)state;
    const cf_vm **rows = calloc(embedded.n_vms, sizeof *rows);
    assert_non_null(rows);
    cf_catalog_filter f = {.clouds = LIST("lambda"), .spot = CF_SPOT_ALLOW};
    size_t n = cf_catalog_filter_rows(&embedded, &f, rows);
    assert_true(n > 5);
    assert_string_equal(rows[0]->region, "asia-northeast-1"); /* the file's (alphabetical) order */
    assert_int_equal(cf_rows_order_by_region(rows, n, NULL, 0), CF_OK);
    /* every offer's first row is its default region, and offers stay grouped */
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(rows[i]->instance_type, rows[i - 1]->instance_type) != 0)
            assert_string_equal(rows[i]->region, "us-east-1");
    const char *prefer[] = {"europe-central-1"};
    assert_int_equal(cf_rows_order_by_region(rows, n, prefer, 1), CF_OK);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(rows[i]->instance_type, rows[i - 1]->instance_type) != 0)
            assert_string_equal(rows[i]->region, "europe-central-1");
    /* an offer's rows split apart (not how a catalog lists them): regrouped, preferred first */
    size_t half = n / 2;
    for (size_t i = 0; i + 1 < half; i += 2) {
        const cf_vm *t = rows[i];
        rows[i] = rows[n - 1 - i];
        rows[n - 1 - i] = t;
    }
    assert_int_equal(cf_rows_order_by_region(rows, n, NULL, 0), CF_OK);
    for (size_t i = 0, groups = 0; i < n; i++)
        if (i == 0 || strcmp(rows[i]->instance_type, rows[i - 1]->instance_type) != 0) {
            assert_string_equal(rows[i]->region, "us-east-1");
            assert_true(++groups <= 23); /* each offer's rows together: one group per Lambda type */
        }
    assert_true(cf_region_rank("azure", "eastus", NULL, 0) < cf_region_rank("azure", "australiacentral2", NULL, 0));
    assert_true(cf_region_rank("gcp", "made-up-region", NULL, 0) > cf_region_rank("gcp", "southamerica-east1", NULL, 0));
    assert_int_equal(cf_region_rank("gcp", "made-up-region", prefer, 1), cf_region_rank("gcp", "other-made-up", prefer, 1));
    /* availability: a table where one exists, said so where none does */
    char text[384];
    assert_int_equal(cf_vm_availability(rows[0], text, sizeof text), 0);
    assert_non_null(strstr(text, "availability not known for lambda/us-east-1 "));
    assert_non_null(strstr(text, "capacity varies"));
    free(rows);
    for (size_t i = 0; i < embedded.n_vms; i++) {
        const cf_vm *vm = &embedded.vms[i];
        int table = cf_vm_availability(vm, text, sizeof text);
        assert_int_equal(table, !strcmp(vm->cloud, "aws") || !strcmp(vm->cloud, "gcp"));
        assert_int_equal(strstr(text, "needs an access request") != NULL, cf_region_restriction(vm->cloud, vm->region) != NULL);
    }
    assert_non_null(cf_region_restriction("azure", "germanynorth"));
    assert_null(cf_region_restriction("azure", "germanywestcentral"));
    assert_null(cf_region_restriction("aws", "af-south-1")); /* opt-in by the account owner, no request */
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
        cmocka_unit_test(test_price_kinds),
        cmocka_unit_test(test_embedded_offers_launchable),
        cmocka_unit_test(test_dates),
        cmocka_unit_test(test_embedded_matches_files),
        cmocka_unit_test(test_embedded_load_time),
        cmocka_unit_test(test_gpu_lookup_and_peak),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_check_filter_errors),
        cmocka_unit_test(test_filter_takes_tool_spellings),
        cmocka_unit_test(test_check_filter_names_the_failed_list),
        cmocka_unit_test(test_small_catalog_loads),
        cmocka_unit_test(test_malformed_vms),
        cmocka_unit_test(test_price_kind_columns),
        cmocka_unit_test(test_spot_provenance_columns),
        cmocka_unit_test(test_region_order_and_availability),
        cmocka_unit_test(test_malformed_gpus_and_advisor),
    };
    return cmocka_run_group_tests(tests, setup_embedded, teardown_embedded);
}
