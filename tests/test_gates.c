/* Tests of advisor/plan/gates.c: the CI gates (cost, hours, cost increase over
 * a baseline) and the baseline read from a recommendation document. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cloudfit/advisor/gates.h"
#include "../advisor/plan/gates_internal.h"

static cf_gate_limits off(void)
{
    return (cf_gate_limits){.max_cost_usd = 0, .max_hours = 0, .max_increase = -1};
}

static cf_vm test_vm = {.cloud = "gcp", .region = "us-central1", .instance_type = "n1-highmem-8", .gpu_model = "T4"};

/* A chosen configuration costing usd over hours (intervals unknown unless set). */
static cf_config cfg(double usd, double hours)
{
    cf_config c;
    memset(&c, 0, sizeof c);
    c.vm = &test_vm;
    c.nodes = 1;
    c.gpus_per_node = 2;
    c.total_usd = usd;
    c.hours = hours;
    c.total_usd_p10 = c.total_usd_p90 = c.hours_p10 = c.hours_p90 = NAN;
    return c;
}

#define EVAL(l, usd, hours, base, g) (c_ = cfg(usd, hours), cf_gates_evaluate(l, &c_, base, g))
static cf_config c_;

static cf_baseline base_costing(double usd)
{
    cf_baseline b;
    memset(&b, 0, sizeof b);
    b.have = 1;
    b.chosen.total_usd = usd;
    b.chosen.nodes = 1;
    b.chosen.gpus_per_node = 2;
    snprintf(b.chosen.instance_type, sizeof b.chosen.instance_type, "n1-highmem-8");
    snprintf(b.chosen.gpu, sizeof b.chosen.gpu, "T4");
    b.hours_p10 = b.hours_p90 = b.total_usd_p10 = b.total_usd_p90 = NAN;
    snprintf(b.source, sizeof b.source, "recommendation 7 (main, 2026-01-01T00:00:00Z)");
    return b;
}

static void test_no_gates(void **state)
{
    (void)state;
    cf_gate_limits l = off();
    cf_history_gate g[CF_MAX_GATES];
    assert_false(cf_gates_any(&l));
    assert_int_equal(EVAL(&l, 100, 10, NULL, g), 0);
    assert_true(cf_gates_passed(g, 0));
}

static void test_cost_and_hours(void **state)
{
    (void)state;
    cf_gate_limits l = off();
    l.max_cost_usd = 50;
    l.max_hours = 10;
    assert_true(cf_gates_any(&l));
    cf_history_gate g[CF_MAX_GATES];
    assert_int_equal(EVAL(&l, 50, 10.5, NULL, g), 2);
    assert_string_equal(g[0].name, "max_cost_usd");
    assert_true(g[0].passed); /* equal to the limit passes */
    assert_string_equal(g[0].note, "predicted total cost $50.00, limit $50.00");
    assert_string_equal(g[1].name, "max_hours");
    assert_false(g[1].passed);
    assert_string_equal(g[1].note, "predicted wall time 10.50 h, limit 10.00 h");
    assert_false(cf_gates_passed(g, 2));
    assert_int_equal(EVAL(&l, 50.01, 9, NULL, g), 2);
    assert_false(g[0].passed);
    assert_true(g[1].passed);
    /* a limit the value's decimals would round away reads as it was given */
    l.max_cost_usd = 0.000000001;
    l.max_hours = 0.125;
    assert_int_equal(EVAL(&l, 0.09, 0.5, NULL, g), 2);
    assert_string_equal(g[0].note, "predicted total cost $0.09, limit $0.000000001");
    assert_string_equal(g[1].note, "predicted wall time 0.50 h, limit 0.125 h");
}

static void test_increase_against_a_baseline(void **state)
{
    (void)state;
    cf_gate_limits l = off();
    assert_int_equal(cf_gate_limits_set_increase(&l, "10%"), CF_OK);
    assert_true(l.increase_is_pct);
    assert_true(cf_gates_any(&l));
    cf_history_gate g[CF_MAX_GATES];
    cf_baseline b = base_costing(100);
    assert_int_equal(EVAL(&l, 110, 1, &b, g), 1);
    assert_string_equal(g[0].name, "max_cost_increase_pct");
    assert_true(g[0].passed);
    assert_true(fabs(g[0].value - 10) < 1e-9);
    assert_non_null(strstr(g[0].note, "cost $100.00 → $110.00, +10.00 USD (+10.0%) against recommendation 7"));
    assert_non_null(strstr(g[0].note, "; spec: not known (the baseline names no spec); plan: 1 × n1-highmem-8 (2×T4), "));
    assert_int_equal(EVAL(&l, 111, 1, &b, g), 1);
    assert_false(g[0].passed);
    /* cheaper always passes; from a free baseline any increase is infinite */
    assert_int_equal(EVAL(&l, 50, 1, &b, g), 1);
    assert_true(g[0].passed);
    b.chosen.total_usd = 0;
    EVAL(&l, 1, 1, &b, g);
    assert_true(isinf(g[0].value));
    assert_false(g[0].passed);
    /* a baseline that shows as $0.00 has no percentage either: $2e-299 gave
     * 2.3e301 %, printed cut at 46 digits without its '%' */
    b.chosen.total_usd = 2.2e-299;
    EVAL(&l, 50, 1, &b, g);
    assert_true(isinf(g[0].value));
    assert_false(g[0].passed);
    assert_non_null(strstr(g[0].note, ", +50.00 USD (from $0.00: no percentage) against "));
    assert_false(cf_baseline_cost_usable(0) || cf_baseline_cost_usable(-5) || cf_baseline_cost_usable(INFINITY) ||
                 cf_baseline_cost_usable(NAN) || cf_baseline_cost_usable(2e15));
    assert_true(cf_baseline_cost_usable(2.2e-299) && cf_baseline_cost_usable(1e15));
    /* dollars */
    assert_int_equal(cf_gate_limits_set_increase(&l, "$25"), CF_OK);
    assert_false(l.increase_is_pct);
    b = base_costing(100);
    EVAL(&l, 126, 1, &b, g);
    assert_string_equal(g[0].name, "max_cost_increase_usd");
    assert_false(g[0].passed);
    assert_true(fabs(g[0].value - 26) < 1e-9);
}

static void test_increase_without_a_baseline_passes(void **state)
{
    (void)state;
    cf_gate_limits l = off();
    assert_int_equal(cf_gate_limits_set_increase(&l, "0"), CF_OK);
    cf_history_gate g[CF_MAX_GATES];
    cf_baseline none;
    memset(&none, 0, sizeof none);
    assert_int_equal(EVAL(&l, 1e6, 1, &none, g), 1);
    assert_true(g[0].passed);
    assert_true(isnan(g[0].value));
    assert_string_equal(g[0].note, "no earlier recommendation to compare with: passes");
    assert_int_equal(EVAL(&l, 1e6, 1, NULL, g), 1);
    assert_true(g[0].passed);
}

static void test_increase_note_names_spec_and_plan_changes(void **state)
{
    (void)state;
    cf_gate_limits l = off();
    assert_int_equal(cf_gate_limits_set_increase(&l, "10%"), CF_OK);
    cf_baseline b = base_costing(10);
    b.hours_p10 = 0.9, b.hours_p90 = 1.4, b.total_usd_p10 = 8, b.total_usd_p90 = 13;
    b.chosen.hours = 1.1;
    b.spec_known = 1;
    snprintf(b.spec_changes, sizeof b.spec_changes, "training.epochs 90 → 270");
    cf_config c = cfg(30, 3.3);
    c.total_usd_p10 = 24, c.total_usd_p90 = 39, c.hours_p10 = 2.7, c.hours_p90 = 4.2;
    c.nodes = 2;
    cf_history_gate g[CF_MAX_GATES];
    assert_int_equal(cf_gates_evaluate(&l, &c, &b, g), 1);
    assert_false(g[0].passed);
    assert_string_equal(g[0].note, "cost $10.00 (80 %: $8.00–$13.00) → $30.00 (80 %: $24.00–$39.00), +20.00 USD "
                                   "(+200.0%) against recommendation 7 (main, 2026-01-01T00:00:00Z); spec: "
                                   "training.epochs 90 → 270; plan: 1 × n1-highmem-8 (2×T4) → 2 × n1-highmem-8 "
                                   "(2×T4), 1.1 h (80 %: 0.9–1.4) → 3.3 h (80 %: 2.7–4.2)");
    b.spec_changes[0] = '\0'; /* the same spec: said so */
    cf_gates_evaluate(&l, &c, &b, g);
    assert_non_null(strstr(g[0].note, "; spec: unchanged; "));
}

static void test_require_baseline(void **state)
{
    (void)state;
    cf_gate_limits l = off();
    l.require_baseline = 1;
    assert_true(cf_gates_any(&l));
    cf_history_gate g[CF_MAX_GATES];
    cf_baseline none;
    memset(&none, 0, sizeof none);
    snprintf(none.lookup, sizeof none.lookup, "spec m@train/model.json on branch main");
    assert_int_equal(EVAL(&l, 5, 1, &none, g), 1);
    assert_string_equal(g[0].name, "require_baseline");
    assert_false(g[0].passed);
    assert_string_equal(g[0].note, "no baseline: no earlier recommendation for spec m@train/model.json on branch "
                                   "main, and --require-baseline asks for one");
    cf_baseline b = base_costing(5);
    assert_int_equal(EVAL(&l, 5, 1, &b, g), 1);
    assert_true(g[0].passed);
    /* with every gate asked for, all five fit */
    l.max_cost_usd = 1, l.max_hours = 1;
    assert_int_equal(cf_gate_limits_set_increase(&l, "1%"), CF_OK);
    assert_int_equal(EVAL(&l, 5, 1, &b, g), 4);
}

/* A refusal says what is wrong with the value: "-5" and "nan" got the
 * same "expects a percentage (10%) or US dollars (25 or $25), got '-5'". */
static void test_increase_text_refused(void **state)
{
    (void)state;
    static const struct {
        const char *text, *why;
    } bad[] = {{"", "an empty value"},
               {"%", "no number before '%'"},
               {"ten", "not a decimal number"},
               {"-5", "negative"},
               {"$-5", "negative"},
               {"-5%", "negative"},
               {"$10%", "'%' after the number"},
               {"10%%", "'%' after the number"},
               {"1e999", "out of range"},
               {"nan", "not a finite number"},
               {"$inf", "not a finite number"},
               {"nan%", "not a finite number"},
               {"5x", "'x' after the number"},
               {"25usd", "'usd' after the number"},
               {"$", "no amount after '$'"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cf_gate_limits l = off();
        if (cf_gate_limits_set_increase(&l, bad[i].text) != CF_ERR_USAGE)
            fail_msg("'%s' accepted", bad[i].text);
        assert_true(l.max_increase < 0); /* unchanged */
        char want[256];
        snprintf(want, sizeof want, "expects a percentage (10%%) or US dollars (25 or $25), got '%s' (%s)", bad[i].text,
                 bad[i].why);
        if (strcmp(cf_error_message(), want) != 0)
            fail_msg("'%s': '%s', not '%s'", bad[i].text, cf_error_message(), want);
        cf_error_clear();
    }
    static const struct {
        const char *text;
        double value;
        int pct;
    } good[] = {{"10%", 10, 1}, {"0%", 0, 1}, {"25", 25, 0}, {"$25", 25, 0}, {"$2.5e1", 25, 0}, {"0", 0, 0}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        cf_gate_limits l = off();
        if (cf_gate_limits_set_increase(&l, good[i].text) != CF_OK)
            fail_msg("'%s' refused: %s", good[i].text, cf_error_message());
        assert_true(l.max_increase == good[i].value);
        assert_int_equal(l.increase_is_pct, good[i].pct);
    }
}

/* A limit past the spec's ranges (1e6 hours, $1e12) was taken, and its
 * note printed 1e300 cut at 46 digits: a wrong number, stored. */
static void test_limits_beyond_the_spec_ranges_refused(void **state)
{
    (void)state;
    cf_gate_limits l = off();
    l.max_hours = CF_GATE_MAX_HOURS;
    l.max_cost_usd = CF_GATE_MAX_USD;
    assert_int_equal(cf_gate_limits_check(&l), CF_OK); /* the bound itself is taken */
    l.max_hours = 1e300;
    assert_int_equal(cf_gate_limits_check(&l), CF_ERR_USAGE);
    assert_string_equal(cf_error_message(), "option '--max-hours' expects a positive number of hours up to 1e6 (the "
                                            "range of search.deadline_hours), got 1e+300");
    cf_error_clear();
    /* a value just past the bound is shown as it is: %.6g wrote 1000001 as "1e+06", the bound itself */
    l.max_hours = 1000001;
    assert_int_equal(cf_gate_limits_check(&l), CF_ERR_USAGE);
    assert_non_null(strstr(cf_error_message(), "up to 1e6 (the range of search.deadline_hours), got 1000001"));
    cf_error_clear();
    l.max_hours = 0;
    l.max_cost_usd = 1000000000001;
    assert_int_equal(cf_gate_limits_check(&l), CF_ERR_USAGE);
    assert_non_null(strstr(cf_error_message(), "up to 1e12 (the range of search.budget_usd), got 1000000000001"));
    cf_error_clear();
    l.max_cost_usd = 2e12;
    assert_int_equal(cf_gate_limits_check(&l), CF_ERR_USAGE);
    assert_non_null(strstr(cf_error_message(), "option '--max-cost' expects a positive number of US dollars up to 1e12"));
    cf_error_clear();
    static const char *const too_big[] = {"1e13", "$1e300", "1e13%"};
    for (size_t i = 0; i < sizeof too_big / sizeof *too_big; i++) {
        cf_gate_limits m = off();
        if (cf_gate_limits_set_increase(&m, too_big[i]) != CF_ERR_USAGE)
            fail_msg("'%s' accepted", too_big[i]);
        assert_true(m.max_increase < 0);
        assert_non_null(strstr(cf_error_message(), "(more than 1e12"));
        cf_error_clear();
    }
    cf_gate_limits m = off();
    assert_int_equal(cf_gate_limits_set_increase(&m, "1e12%"), CF_OK);
    assert_int_equal(cf_gate_limits_set_increase(&m, "$1e12"), CF_OK);
}

static const char *const good_doc =
    "{\"version\":\"1\",\"metadata\":{\"created_at\":\"2026-02-03T04:05:06Z\"},"
    "\"catalog\":{\"source\":\"embedded\",\"fetched_at\":\"2026-01-30\"},"
    "\"chosen\":{\"cloud\":\"aws\",\"region\":\"us-east-1\",\"instance_type\":\"p4d.24xlarge\",\"gpu\":\"A100-40GB\","
    "\"gpus_per_node\":8,\"nodes\":2,\"local_batch\":32,\"accumulation\":1,\"global_batch\":512,\"lr\":0.1,"
    "\"step_time_s\":0.25,\"hours\":12.5,\"total_usd\":800.5,\"usd_per_hour\":64.04,\"spot\":false}}";

static void test_baseline_from_text(void **state)
{
    (void)state;
    cf_baseline b;
    assert_int_equal(cf_baseline_from_text(good_doc, strlen(good_doc), "old.json", &b), CF_OK);
    assert_true(b.have);
    assert_int_equal(b.id, 0);
    assert_string_equal(b.chosen.instance_type, "p4d.24xlarge");
    assert_int_equal(b.chosen.nodes, 2);
    assert_int_equal(b.chosen.global_batch, 512);
    assert_true(fabs(b.chosen.total_usd - 800.5) < 1e-9);
    assert_true(fabs(b.chosen.usd_per_node_hour - 32.02) < 1e-9);
    assert_false(b.chosen.spot);
    assert_string_equal(b.source, "old.json of 2026-02-03T04:05:06Z");
    assert_string_equal(b.catalog, "embedded 2026-01-30"); /* a document of an earlier version: source, fetched_at */
    assert_true(isnan(b.hours_p10) && isnan(b.total_usd_p90)); /* no intervals in this document */
    /* a price snapshot's document: named as the run names its catalog (snapshot name, data date), not by its
     * source and fetch time ("snapshot 2026-09-20T06:13" never matched "snapshot-1 2026-07-30") */
    const char *snap = "{\"version\":\"1\",\"catalog\":{\"source\":\"snapshot\",\"snapshot\":\"snapshot-1\","
                       "\"fetched_at\":\"2026-09-20T06:13:20Z\",\"data_date\":\"2026-07-30\"},";
    char text[2048];
    snprintf(text, sizeof text, "%s%s", snap, strstr(good_doc, "\"chosen\""));
    assert_int_equal(cf_baseline_from_text(text, strlen(text), "snap.json", &b), CF_OK);
    assert_string_equal(b.catalog, "snapshot-1 2026-07-30");
    /* names longer than a configuration keeps are cut at a character boundary and end in "…": the markdown
     * comparison showed "my-private-clou" and 63 bytes of an instance type as the baseline's, whole */
    char long_names[2048];
    snprintf(long_names, sizeof long_names,
             "{\"chosen\":{\"cloud\":\"my-private-cloud-\xc3\xa9-two\",\"region\":\"us-east-1\","
             "\"instance_type\":\"Standard_ND96isr_H100_v5_with_an_extraordinarily_long_custom_suffix_\xc3\xa9\","
             "%s", strstr(good_doc, "\"gpu\":"));
    assert_int_equal(cf_baseline_from_text(long_names, strlen(long_names), "long.json", &b), CF_OK);
    assert_string_equal(b.chosen.cloud, "my-private-c\xe2\x80\xa6");
    assert_true(strlen(b.chosen.instance_type) <= sizeof b.chosen.instance_type - 1);
    assert_non_null(strstr(b.chosen.instance_type, "Standard_ND96isr_H100_v5_with_an_extraordinarily_long_"));
    assert_string_equal(b.chosen.instance_type + strlen(b.chosen.instance_type) - 3, "\xe2\x80\xa6");
}

static void refused_doc(const char *text, const char *want)
{
    cf_baseline b;
    cf_status st = cf_baseline_from_text(text, strlen(text), "old.json", &b);
    if (st == CF_OK)
        fail_msg("accepted: %s", text);
    if (!strstr(cf_error_message(), want))
        fail_msg("message '%s' does not say '%s'", cf_error_message(), want);
    assert_false(b.have);
    cf_error_clear();
}

/* The good document with `from` replaced by `to` is refused saying `want`. */
static void refused_doc_with(const char *from, const char *to, const char *want)
{
    char doc[2048];
    const char *at = strstr(good_doc, from);
    assert_non_null(at);
    snprintf(doc, sizeof doc, "%.*s%s%s", (int)(at - good_doc), good_doc, to, at + strlen(from));
    refused_doc(doc, want);
}

static void test_baseline_refused(void **state)
{
    (void)state;
    refused_doc("{", "old.json");
    refused_doc("{\"chosen\": 3}", "old.json: chosen: expected an object");
    refused_doc("{\"chosen\": {}}", "old.json: chosen.cloud: expected a string");
    refused_doc_with("\"nodes\":2", "\"nodes\":2.5", "chosen.nodes: expected an integer from 1 to 1e+06, got 2.5");
    /* a plan of 0 VMs or 0 GPUs was taken as the baseline: counts start at 1 */
    refused_doc_with("\"nodes\":2", "\"nodes\":0", "old.json: chosen.nodes: expected an integer from 1 to 1e+06, got 0");
    refused_doc_with("\"gpus_per_node\":8", "\"gpus_per_node\":0",
                     "old.json: chosen.gpus_per_node: expected an integer from 1 to 1024, got 0");
    refused_doc_with("\"nodes\":2", "\"nodes\":-1", "old.json: chosen.nodes: expected an integer from 1 to 1e+06, got -1");
    /* the range stated is the one held: "from 0 to 1e+15" told a cost of -1 that 0 would do */
    refused_doc_with("\"total_usd\":800.5", "\"total_usd\":-1", "old.json: chosen.total_usd: expected a cost above 0 "
                     "(a chosen plan is never free) and at most 1e15, got -1");
    refused_doc_with("\"total_usd\":800.5", "\"total_usd\":0", "chosen.total_usd: expected a cost above 0 (a chosen "
                     "plan is never free) and at most 1e15, got 0");
    refused_doc_with("\"total_usd\":800.5", "\"total_usd\":2e15", "chosen.total_usd: expected a cost above 0 (a "
                     "chosen plan is never free) and at most 1e15, got 2e+15");
    refused_doc_with("\"gpus_per_node\":8", "\"gpus_per_node\":4096", "chosen.gpus_per_node: expected an integer");
    refused_doc_with("\"spot\":false", "\"spot\":0", "chosen.spot: expected true or false");
    refused_doc_with("\"gpu\":\"A100-40GB\",", "", "chosen.gpu: expected a string");
    /* a spec hash that is none went into the gate's note cut at 12 bytes, half an 'é' shown as \xc3 */
    refused_doc_with("\"catalog\"", "\"spec\":{\"hash\":\"a\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"},\"catalog\"",
                     "old.json: spec.hash: expected 64 hexadecimal digits (the spec's SHA-256), got 'a\xc3\xa9");
    refused_doc_with("\"catalog\"", "\"spec\":{\"hash\":7},\"catalog\"", "spec.hash: expected 64 hexadecimal digits");
    char long_hash[128];
    snprintf(long_hash, sizeof long_hash, "\"spec\":{\"hash\":\"%064d0\"},\"catalog\"", 0);
    refused_doc_with("\"catalog\"", long_hash, "spec.hash: expected 64 hexadecimal digits");
    snprintf(long_hash, sizeof long_hash, "\"spec\":{\"hash\":\"%064d\"},\"catalog\"", 0);
    char doc[2048];
    const char *at = strstr(good_doc, "\"catalog\"");
    snprintf(doc, sizeof doc, "%.*s%s%s", (int)(at - good_doc), good_doc, long_hash, at + strlen("\"catalog\""));
    cf_baseline b;
    assert_int_equal(cf_baseline_from_text(doc, strlen(doc), "old.json", &b), CF_OK);
    assert_int_equal(strlen(b.spec_hash), 64);
}

static void test_config_in_stored_form(void **state)
{
    (void)state;
    cf_vm vm;
    memset(&vm, 0, sizeof vm);
    snprintf(vm.cloud, sizeof vm.cloud, "gcp");
    snprintf(vm.region, sizeof vm.region, "us-central1");
    snprintf(vm.instance_type, sizeof vm.instance_type, "a2-highgpu-4g");
    snprintf(vm.gpu_model, sizeof vm.gpu_model, "A100-40GB");
    cf_config c;
    memset(&c, 0, sizeof c);
    c.vm = &vm;
    c.nodes = 3;
    c.gpus_per_node = 4;
    c.local_batch = 16;
    c.accumulation = 2;
    c.global_batch = 384;
    c.lr.lr = 0.2;
    c.spot = 1;
    c.hours = 5;
    c.total_usd = 90;
    c.usd_per_hour = 18;
    cf_history_config h;
    cf_history_config_from(&c, 2, &h);
    assert_int_equal(h.rank, 2);
    assert_string_equal(h.instance_type, "a2-highgpu-4g");
    assert_int_equal(h.global_batch, 384);
    assert_true(h.spot);
    assert_true(fabs(h.usd_per_node_hour - 6) < 1e-12);
    assert_true(fabs(h.lr - 0.2) < 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_gates),
        cmocka_unit_test(test_cost_and_hours),
        cmocka_unit_test(test_increase_against_a_baseline),
        cmocka_unit_test(test_increase_without_a_baseline_passes),
        cmocka_unit_test(test_increase_note_names_spec_and_plan_changes),
        cmocka_unit_test(test_require_baseline),
        cmocka_unit_test(test_increase_text_refused),
        cmocka_unit_test(test_limits_beyond_the_spec_ranges_refused),
        cmocka_unit_test(test_baseline_from_text),
        cmocka_unit_test(test_baseline_refused),
        cmocka_unit_test(test_config_in_stored_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
