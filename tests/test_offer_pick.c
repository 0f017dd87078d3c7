/* Tests of pricing/offer_pick.c: the offer that stands for a VM measured
 * elsewhere (an availability trace's VM; a profiling trace row's VM). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cloudfit/pricing/offer_pick.h"

static cf_vm vms[11];
static cf_gpu gpus[5];
static cf_catalog catalog;

static void vm(size_t i, const char *cloud, const char *region, const char *type, const char *gpu, int count,
               double ondemand, double spot)
{
    memset(&vms[i], 0, sizeof vms[i]);
    snprintf(vms[i].cloud, sizeof vms[i].cloud, "%s", cloud);
    snprintf(vms[i].region, sizeof vms[i].region, "%s", region);
    snprintf(vms[i].instance_type, sizeof vms[i].instance_type, "%s", type);
    snprintf(vms[i].gpu_model, sizeof vms[i].gpu_model, "%s", gpu);
    vms[i].gpu_count = count;
    vms[i].price_ondemand_usd_per_hr = ondemand;
    vms[i].price_spot_usd_per_hr = spot;
}

static int setup(void **state)
{
    (void)state;
    vm(0, "aws", "us-east-1", "g4dn.xlarge", "T4", 1, 0.526, 0.20);
    vm(1, "aws", "us-west-2", "g4dn.xlarge", "T4", 1, 0.526, 0.15);
    vm(2, "aws", "us-east-1", "p3.2xlarge", "V100-16GB", 1, 3.06, 0.95);
    vm(3, "aws", "us-east-1", "p3.8xlarge", "V100-16GB", 4, 12.24, 0);
    vm(4, "gcp", "us-central1", "n1-t4-4", "T4", 4, 1.90, 0.70);
    vm(5, "aws", "us-east-1", "g4dn.12xlarge", "T4", 4, 3.91, 0);
    vm(6, "aws", "us-east-1", "unpriced", "T4", 1, 0, 0);
    vm(7, "gcp", "us-central1", "n1-v100-4", "V100-16GB", 4, 10.0, 0);
    vm(8, "gcp", "us-central1", "a2-highgpu-1g", "A100-40GB", 1, 3.67, 1.10);
    vm(9, "gcp", "us-central1", "a2-ultragpu-1g", "A100-80GB", 1, 5.07, 1.60);
    vm(10, "gcp", "us-central1", "a2-ultragpu-8g", "A100-80GB", 8, 40.6, 12.8);
    /* the GPU table: the sold GPUs and one that no offer sells any more */
    const char *models[] = {"K80", "T4", "V100-16GB", "A100-40GB", "A100-80GB"};
    const double memory_gib[] = {12, 16, 16, 40, 80};
    for (size_t i = 0; i < 5; i++) {
        memset(&gpus[i], 0, sizeof gpus[i]);
        snprintf(gpus[i].model, sizeof gpus[i].model, "%s", models[i]);
        gpus[i].memory_gib = memory_gib[i];
    }
    catalog = (cf_catalog){.vms = vms, .n_vms = 11, .gpus = gpus, .n_gpus = 5};
    return 0;
}

static void test_cheapest_prefers_the_spot_price(void **state)
{
    (void)state;
    cf_offer_match m = {.gpu = "t4", .gpus_per_vm = 1};
    assert_ptr_equal(cf_offer_cheapest(&catalog, &m), &vms[1]); /* 0.15 spot in us-west-2 */
    m.region = "us-east-1";
    assert_ptr_equal(cf_offer_cheapest(&catalog, &m), &vms[0]);
    cf_offer_match none = {.gpu = "H100"};
    assert_null(cf_offer_cheapest(&catalog, &none));
    cf_offer_match by_type = {.instance_type = "p3.8xlarge"};
    assert_ptr_equal(cf_offer_cheapest(&catalog, &by_type), &vms[3]); /* on demand when no spot */
}

static cf_spot_trace_vm trace_vm(const char *cloud, const char *region, const char *type, const char *gpu, int n)
{
    cf_spot_trace_vm t;
    memset(&t, 0, sizeof t);
    snprintf(t.cloud, sizeof t.cloud, "%s", cloud);
    snprintf(t.region, sizeof t.region, "%s", region);
    snprintf(t.instance_type, sizeof t.instance_type, "%s", type);
    snprintf(t.gpu, sizeof t.gpu, "%s", gpu);
    t.gpus_per_vm = n;
    return t;
}

static const cf_vm *offer_of(const cf_trace_offer_query *q, char *note, size_t note_size)
{
    const cf_vm *offer = &vms[0]; /* overwritten on every return */
    assert_int_equal(cf_offer_for_trace(&catalog, q, &offer, note, note_size), CF_OK);
    return offer;
}

static void test_trace_offer(void **state)
{
    (void)state;
    char note[320];
    /* the trace's own VM, in its region first */
    cf_spot_trace_vm t = trace_vm("aws", "us-east-1", "g4dn.xlarge", "T4", 1);
    cf_trace_offer_query q = {.vm = &t};
    assert_ptr_equal(offer_of(&q, note, sizeof note), &vms[0]);
    assert_string_equal(note, "");
    /* --gpu replaces the VM type: the instance type no longer applies */
    q.gpu = "V100-16GB";
    assert_ptr_equal(offer_of(&q, note, sizeof note), &vms[2]);
    /* --cloud narrows */
    t = trace_vm("", "", "", "T4", 4);
    q = (cf_trace_offer_query){.vm = &t, .cloud = "gcp"};
    assert_ptr_equal(offer_of(&q, note, sizeof note), &vms[4]);
    /* a VM no longer sold: the cheapest of its size, and a note */
    t = trace_vm("aws", "us-east-1", "p2.xlarge", "K80", 1);
    q = (cf_trace_offer_query){.vm = &t};
    assert_ptr_equal(offer_of(&q, note, sizeof note), &vms[0]);
    assert_string_equal(note, "the trace's VM (p2.xlarge, K80) is not in the catalog; its availability is applied to "
                              "g4dn.xlarge (T4), the cheapest offer of that size in its region");
    /* ... named by its path alone (no instance type): the note says so, not '?' */
    t = trace_vm("aws", "us-east-1", "", "k80", 1);
    assert_ptr_equal(offer_of(&q, note, sizeof note), &vms[0]);
    assert_string_equal(note, "the trace's VM (1 × K80 per VM, instance type not recorded) is not in the catalog; its "
                              "availability is applied to g4dn.xlarge (T4), the cheapest offer of that size in its "
                              "region");
    /* ... and when the user named it (--gpu K80, as the hint for a trace without index.csv asks) */
    q.gpu = "K80";
    assert_ptr_equal(offer_of(&q, note, sizeof note), &vms[0]);
    assert_non_null(strstr(note, "(1 × K80 per VM, instance type not recorded) is not in the catalog"));
    /* a --gpu that no GPU table row names is an error, as the trace's own name is */
    q.gpu = "K81";
    const cf_vm *offer = NULL;
    assert_int_equal(cf_offer_for_trace(&catalog, &q, &offer, note, sizeof note), CF_ERR_INVALID);
    /* the row's own instance type holds its own GPUs per VM: p3.8xlarge (4 × V100) in a row of gpus_per_vm 1
     * was replayed as a 4-GPU VM without a word */
    t = trace_vm("aws", "us-east-1", "p3.8xlarge", "V100-16GB", 1);
    q = (cf_trace_offer_query){.vm = &t};
    offer = NULL;
    assert_int_equal(cf_offer_for_trace(&catalog, &q, &offer, note, sizeof note), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "column 'instance_type': 'p3.8xlarge' is a VM of 4 × V100-16GB, the "
                                               "row's gpus_per_vm says 1"));
    t.gpus_per_vm = 4;
    assert_ptr_equal(offer_of(&q, note, sizeof note), &vms[3]);
    /* the user's --instance-type or --gpu replaces the row's VM, and its size with it */
    t.gpus_per_vm = 1;
    q.instance_type = "p3.8xlarge";
    assert_ptr_equal(offer_of(&q, note, sizeof note), &vms[3]);
    q = (cf_trace_offer_query){.vm = &t, .gpu = "V100-16GB"};
    assert_ptr_equal(offer_of(&q, note, sizeof note), &vms[2]);
    /* nothing names a VM */
    t = trace_vm("aws", "us-east-1", "", "", 1);
    q = (cf_trace_offer_query){.vm = &t};
    assert_null(offer_of(&q, note, sizeof note));
}

/* A trace's GPU as a path or index.csv spells it: read as cf_gpu_resolve
 * reads names, never swapped for another GPU the catalog sells. */
static void test_trace_gpu_names(void **state)
{
    (void)state;
    char note[320];
    cf_spot_trace_vm t = trace_vm("aws", "us-east-1", "", "Tesla T4", 1);
    cf_trace_offer_query q = {.vm = &t};
    assert_ptr_equal(offer_of(&q, note, sizeof note), &vms[0]);
    assert_string_equal(note, "");
    /* a bare family with one member sold as such VMs there: that member */
    t = trace_vm("gcp", "us-central1", "", "a100", 8);
    assert_ptr_equal(offer_of(&q, note, sizeof note), &vms[10]);
    assert_string_equal(note, "");
    /* ... or the one of its index row's instance type */
    t = trace_vm("gcp", "us-central1", "a2-highgpu-1g", "A100", 1);
    assert_ptr_equal(offer_of(&q, note, sizeof note), &vms[8]);
    /* two members sold as 1-GPU VMs: refused, not the cheapest 1-GPU VM of any GPU */
    t = trace_vm("gcp", "us-central1", "", "a100", 1);
    const cf_vm *offer = &vms[0];
    assert_int_equal(cf_offer_for_trace(&catalog, &q, &offer, note, sizeof note), CF_ERR_INVALID);
    assert_null(offer);
    assert_string_equal(cf_error_message(), "the trace's GPU 'a100' may be A100-40GB or A100-80GB: the catalog sells "
                                            "each as 1-GPU VMs on gcp in us-central1");
    assert_non_null(strstr(cf_error_hint_text(), "--gpu GPU"));
    /* a name of no GPU of the table: refused */
    t = trace_vm("aws", "us-east-1", "", "M40", 1);
    assert_int_equal(cf_offer_for_trace(&catalog, &q, &offer, note, sizeof note), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "the trace's GPU 'M40' is no GPU the catalog knows");
    cf_error_clear();
    /* a GPU the catalog sells, but not in that size: no offer, no stand-in
     * (the only 8-GPU VM is an A100-80GB one) */
    t = trace_vm("gcp", "us-central1", "", "T4", 8);
    assert_null(offer_of(&q, note, sizeof note));
    assert_string_equal(note, "");
}

static void test_hardware_offer(void **state)
{
    (void)state;
    /* four T4s measured on gcp: the gcp VM, though aws has one too */
    assert_ptr_equal(cf_offer_for_hardware(&catalog, "T4", 4, "gcp"), &vms[4]);
    /* on a cloud without one: the cheapest on demand */
    assert_ptr_equal(cf_offer_for_hardware(&catalog, "t4", 4, "azure"), &vms[4]);
    assert_ptr_equal(cf_offer_for_hardware(&catalog, "V100-16GB", 4, "aws"), &vms[3]);
    assert_ptr_equal(cf_offer_for_hardware(&catalog, "V100-16GB", 4, "lambda"), &vms[7]);
    assert_null(cf_offer_for_hardware(&catalog, "T4", 8, "aws"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cheapest_prefers_the_spot_price),
        cmocka_unit_test(test_trace_offer),
        cmocka_unit_test(test_trace_gpu_names),
        cmocka_unit_test(test_hardware_offer),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
