/* cf_simulate_run and cf_simulate_calibrate_run, the library's `simulate`
 * and `simulate --calibrate`, on the shipped example spec and traces
 * (examples/spot-traces, real SkyPilot traces) with the embedded catalog
 * and no database. The expected figures are what `cloudfit simulate
 * ... -f json` prints for the same inputs (its JSON rounds to 5
 * significant digits). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/pricing/source.h"
#include "cloudfit/usecase/simulate.h"

#define EXAMPLES CF_SOURCE_DIR "/examples/"
#define TRACES EXAMPLES "spot-traces/"
#define TRACE_16N "availability_16node_08-27-2023_us-east-2b_V100x1.csv"
#define TRACE_1C "availability_1node_02-15-2023_us-east-1c_V100x1.csv"

typedef struct {
    cf_spec spec;
    cf_catalog_source src;
    char warnings[2][512];
    char hints[2][256];
    int n_warnings, n_hints;
} fixture;

static void on_note(void *ctx, cf_note_kind kind, const char *text)
{
    fixture *f = ctx;
    if (kind == CF_NOTE_WARNING && f->n_warnings < 2)
        snprintf(f->warnings[f->n_warnings++], sizeof f->warnings[0], "%s", text);
    else if (kind == CF_NOTE_HINT && f->n_hints < 2)
        snprintf(f->hints[f->n_hints++], sizeof f->hints[0], "%s", text);
}

static int open_spec(void **state, const char *name)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    char path[512];
    snprintf(path, sizeof path, "%s%s", EXAMPLES, name);
    assert_int_equal(cf_spec_load_file(path, &f->spec), CF_OK);
    assert_int_equal(cf_catalog_source_open(NULL, -1, NULL, &f->src), CF_OK);
    *state = f;
    return 0;
}

static int setup_resnet(void **state)
{
    return open_spec(state, "resnet50-imagenet.json");
}

static int setup_gpt2(void **state)
{
    return open_spec(state, "gpt2-124m-openwebtext.json");
}

static int teardown(void **state)
{
    fixture *f = *state;
    cf_catalog_source_close(&f->src);
    cf_spec_free(&f->spec);
    free(f);
    return 0;
}

/* Equal to the JSON's 5 significant digits (simulate) or 4 (calibrate). */
static void assert_digits_equal(double got, double printed, double digits)
{
    if (!(fabs(got - printed) <= 0.5 * pow(10, 1 - digits) * fabs(printed)))
        fail_msg("%.9g is not %.*g", got, (int)digits, printed);
}

static void assert_json_equal(double got, double printed)
{
    assert_digits_equal(got, printed, 5);
}

static void write_text(const char *path, const char *text)
{
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs(text, out);
    assert_int_equal(fclose(out), 0);
}

static cf_simulate_run_request request(fixture *f, const char *const *paths, size_t n)
{
    return (cf_simulate_run_request){.spec = &f->spec, .catalog = &f->src.catalog, .trace_paths = paths,
                                     .n_traces = n, .note = on_note, .note_ctx = f};
}

/* `simulate resnet50 --trace TRACE_16N --rule gain --batch shrink -f json` */
static void test_one_rule_matches_cli(void **state)
{
    fixture *f = *state;
    const char *paths[] = {TRACES TRACE_16N};
    cf_simulate_run_request req = request(f, paths, 1);
    assert_int_equal(cf_simulate_rules_of("gain", &req.rules), CF_OK);
    assert_int_equal(cf_simulate_batches_of("shrink", &req.batches), CF_OK);
    cf_simulate_run_result res;
    if (cf_simulate_run(&req, &res) != CF_OK)
        fail_msg("cf_simulate_run: %s", cf_error_message());
    assert_string_equal(res.vms[0]->instance_type, "p3.2xlarge");
    assert_string_equal(res.vms[0]->region, "us-east-2");
    assert_int_equal(res.nodes[0], 16);
    assert_json_equal(res.setup.req.work_h, 23.98);
    assert_int_equal(res.result.n_rows, 1);
    const cf_simulate_row *row = &res.result.rows[0];
    assert_string_equal(row->rule, "gain");
    assert_json_equal(row->spread.p10_h, 27.63);
    assert_json_equal(row->spread.p50_h, 54.386);
    assert_json_equal(row->spread.p90_h, 131.79);
    assert_json_equal(row->spread.p50_usd, 313.47);
    assert_json_equal(row->progress_per_usd, 621060);
    assert_int_equal(res.result.n_starts, 1083);
    /* the spec's own limits the replay is outside: its spot policy and deadline (test_limits_are_noted) */
    assert_int_equal(f->n_warnings, 1);
    assert_non_null(strstr(f->warnings[0], "outside the spec's search.spot never (the trace is a spot VM's "
                                           "availability), search.deadline_hours 24 (the median wall time is 54.4 h "
                                           "at best):"));
    /* what render/ shows is in the result */
    assert_ptr_equal(res.report.result, &res.result);
    assert_string_equal(res.report.note, "");
    cf_simulate_run_result_free(&res);
}

/* simulate replays the trace's VMs whatever the spec's search allows: a
 * spec limited to gcp, A100, 2 nodes, a deadline and a budget was replayed
 * on 16 × aws V100 without a word; now a warning names each limit the
 * plan is outside (in the JSON's warnings too), with a hint. */
static void test_limits_are_noted(void **state)
{
    fixture *f = *state;
    cf_constraints *c = &f->spec.search;
    snprintf(c->clouds[0], sizeof c->clouds[0], "gcp");
    c->n_clouds = 1;
    snprintf(c->gpus[0], sizeof c->gpus[0], "A100");
    c->n_gpus = 1;
    c->max_nodes = 2;
    c->max_gpus = 8;
    c->deadline_hours = 5;
    c->budget_usd = 100;
    c->spot = CF_SPOT_ALLOW;
    const char *paths[] = {TRACES TRACE_16N};
    cf_simulate_run_request req = request(f, paths, 1);
    req.rules = CF_SIM_GAIN;
    req.batches = CF_SIM_SHRINK;
    cf_simulate_run_result res;
    if (cf_simulate_run(&req, &res) != CF_OK)
        fail_msg("cf_simulate_run: %s", cf_error_message());
    assert_int_equal(f->n_warnings, 1);
    assert_string_equal(f->warnings[0],
                        "the replayed plan (16 × aws/us-east-2 p3.2xlarge, V100) is outside the spec's search.clouds "
                        "(aws not in it), search.gpus (V100 not in it), search.max_nodes 2 (16 VMs), search.max_gpus 8 "
                        "(16 GPUs), search.deadline_hours 5 (the median wall time is 54.4 h at best), "
                        "search.budget_usd 100 (the median cost is $313.47 at best): simulate replays the trace's "
                        "VMs, whatever the spec's search allows");
    assert_int_equal(res.n_warnings, 1);
    assert_string_equal(res.report.warnings[0], f->warnings[0]);
    assert_int_equal(f->n_hints, 1);
    assert_non_null(strstr(f->hints[0], "'cloudfit recommend --spot allow' plans within the search"));
    cf_simulate_run_result_free(&res);
    /* within every limit (spot allowed, no deadline or budget): nothing */
    f->n_warnings = f->n_hints = 0;
    c->n_clouds = c->n_gpus = 0;
    c->max_nodes = 16;
    c->max_gpus = 64;
    c->deadline_hours = c->budget_usd = 0;
    if (cf_simulate_run(&req, &res) != CF_OK)
        fail_msg("cf_simulate_run: %s", cf_error_message());
    assert_int_equal(f->n_warnings, 0);
    assert_int_equal(f->n_hints, 0);
    cf_simulate_run_result_free(&res);
}

/* Every rule and batch policy: 8 rows, the first fixed/hold. */
static void test_all_rules(void **state)
{
    fixture *f = *state;
    const char *paths[] = {TRACES TRACE_1C};
    cf_simulate_run_request req = request(f, paths, 1);
    cf_simulate_run_result res;
    if (cf_simulate_run(&req, &res) != CF_OK)
        fail_msg("cf_simulate_run: %s", cf_error_message());
    assert_int_equal(res.result.n_rows, 8);
    assert_json_equal(res.setup.req.work_h, 73.367);
    assert_string_equal(res.result.rows[0].rule, "fixed");
    assert_json_equal(res.result.rows[0].spread.p50_h, 170.99);
    assert_json_equal(res.result.rows[0].spread.mean_usd, 31.732);
    cf_simulate_run_result_free(&res);
}

/* gpt2 on a 4-node trace of 428 h: the job outlasts it, said as a warning and a hint. */
static void test_outlasting_job_is_noted(void **state)
{
    fixture *f = *state;
    const char *paths[] = {TRACES "preemption_4node_08-03-2023_us-east-2a_V100x1.csv"};
    cf_simulate_run_request req = request(f, paths, 1);
    req.rules = CF_SIM_GAIN;
    req.batches = CF_SIM_HOLD;
    cf_simulate_run_result res;
    if (cf_simulate_run(&req, &res) != CF_OK)
        fail_msg("cf_simulate_run: %s", cf_error_message());
    assert_int_equal(f->n_warnings, 2); /* and the V100 plan outside the spec's search.gpus */
    assert_non_null(strstr(f->warnings[0], "the job (5663.5 h of work, a median of 8142.2 h of wall time) outlasts "
                                           "half the trace (427.6 h)"));
    assert_non_null(strstr(f->warnings[0], "19.0 times for the median start"));
    assert_non_null(strstr(f->warnings[1], "outside the spec's search.gpus (V100 not in it)"));
    assert_int_equal(f->n_hints, 2);
    assert_non_null(strstr(f->hints[0], "--calibrate"));
    cf_simulate_run_result_free(&res);
}

static void test_errors_name_the_input(void **state)
{
    fixture *f = *state;
    char dir[] = "/tmp/cf-simulate-XXXXXX", plain[64];
    assert_non_null(mkdtemp(dir));
    snprintf(plain, sizeof plain, "%s/plain.csv", dir);
    write_text(plain, "t_s,nodes_available\n0,1\n300,2\n600,0\n900,2\n");
    const char *paths[] = {plain};
    cf_simulate_run_request req = request(f, paths, 1);
    cf_simulate_run_result res;
    assert_int_equal(cf_simulate_run(&req, &res), CF_ERR_INVALID); /* no index.csv row names its VM */
    assert_non_null(strstr(cf_error_message(), "which VM was this trace recorded on?"));
    assert_non_null(strstr(cf_error_hint_text(), "--gpu"));
    cf_simulate_run_result_free(&res);
    const char *gpus[] = {"V100"};
    req.gpus = gpus;
    req.n_gpus = 1;
    req.cloud = "aws";
    if (cf_simulate_run(&req, &res) != CF_OK)
        fail_msg("cf_simulate_run: %s", cf_error_message());
    assert_int_equal(res.nodes[0], 2); /* the trace's largest count */
    assert_string_equal(res.vms[0]->gpu_model, "V100");
    cf_simulate_run_result_free(&res);
    req.n_traces = 0;
    assert_int_equal(cf_simulate_run(&req, &res), CF_ERR_INVALID);
    cf_simulate_run_result_free(&res);
    unsigned bits;
    assert_int_equal(cf_simulate_rules_of("cubic", &bits), CF_ERR_INVALID);
    assert_int_equal(cf_simulate_batches_of("both", &bits), CF_OK);
    assert_int_equal(bits, CF_SIM_HOLD | CF_SIM_SHRINK);
    cf_error_clear();
    unlink(plain);
    rmdir(dir);
}

/* `simulate resnet50 --calibrate DIR -f json` on a folder holding TRACE_1C alone. */
static void test_calibrate_matches_cli(void **state)
{
    fixture *f = *state;
    char dir[] = "/tmp/cf-calibrate-XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/index.csv", dir);
    write_text(path, "file,kind,nodes_requested,cloud,zone,instance_type,gpu,gpus_per_vm,start_date,gap_s,points,days,source\n"
          TRACE_1C ",availability,1,aws,us-east-1c,p3.2xlarge,V100,1,2023-02-15,195,20158,45.5,"
          "skypilot-org/spot-traces@221da1ab9bdfe7966da296265d7694d52dc0c5a6:availability/1-node/aws-02-15-2023/"
          "us-east-1c_v100_1.json\n"); /* its row of examples/spot-traces/index.csv */
    char link[128];
    snprintf(link, sizeof link, "%s/%s", dir, TRACE_1C);
    assert_int_equal(symlink(TRACES TRACE_1C, link), 0);
    cf_simulate_calibrate_request req = {.spec = &f->spec, .catalog = &f->src.catalog, .traces_dir = dir};
    cf_simulate_calibration cal;
    if (cf_simulate_calibrate_run(&req, &cal) != CF_OK)
        fail_msg("cf_simulate_calibrate_run: %s", cf_error_message());
    assert_int_equal(cal.n, 1);
    assert_true(cal.confidence == 0.9);
    assert_int_equal(cal.result.windows, 17472);
    assert_digits_equal(cal.result.pooled[CF_CAL_P10].share, 0.1229, 4);
    assert_digits_equal(cal.result.pooled[CF_CAL_P50].share, 0.5562, 4);
    assert_int_equal(cal.result.n_items, 4);
    const cf_calibrate_item *first = &cal.result.items[0];
    assert_int_equal(first->windows, 4368);
    assert_digits_equal(first->work_h, 73.37, 4);
    assert_digits_equal(first->share[CF_CAL_P50], 0.612, 4);
    assert_ptr_equal(cal.report.result, &cal.result);
    cf_simulate_calibration_free(&cal);
    unlink(link);
    unlink(path);
    assert_int_not_equal(cf_simulate_calibrate_run(&req, &cal), CF_OK);
    assert_non_null(strstr(cf_error_message(), "index.csv"));
    cf_simulate_calibration_free(&cal);
    cf_error_clear();
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_rule_matches_cli, setup_resnet, teardown),
        cmocka_unit_test_setup_teardown(test_all_rules, setup_resnet, teardown),
        cmocka_unit_test_setup_teardown(test_limits_are_noted, setup_resnet, teardown),
        cmocka_unit_test_setup_teardown(test_outlasting_job_is_noted, setup_gpt2, teardown),
        cmocka_unit_test_setup_teardown(test_errors_name_the_input, setup_resnet, teardown),
        cmocka_unit_test_setup_teardown(test_calibrate_matches_cli, setup_resnet, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
