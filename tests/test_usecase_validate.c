/* cf_validate_run, the library's `validate` on measured step times, on the
 * rows the CLI tests use (tests/data/search-t4-imagenet.csv, real Pollux T4
 * rows). The expected figures are what `cloudfit validate -f json` prints
 * for the same file and options (its JSON rounds to 5 significant digits). */
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

#include "cloudfit/common/buf.h"
#include "cloudfit/common/fileio.h"
#include "cloudfit/usecase/validate.h"

#define DATA CF_SOURCE_DIR "/tests/data/search-t4-imagenet.csv"
#define JSON_ROUNDING 5e-6

typedef struct {
    char warnings[2][512];
    char hints[2][256];
    int n_warnings, n_hints, n_progress;
} notes_seen;

static void on_note(void *ctx, cf_note_kind kind, const char *text)
{
    notes_seen *seen = ctx;
    if (kind == CF_NOTE_WARNING && seen->n_warnings < 2)
        snprintf(seen->warnings[seen->n_warnings++], sizeof seen->warnings[0], "%s", text);
    else if (kind == CF_NOTE_HINT && seen->n_hints < 2)
        snprintf(seen->hints[seen->n_hints++], sizeof seen->hints[0], "%s", text);
    else if (kind == CF_NOTE_PROGRESS)
        seen->n_progress++;
}

static void read_data(char **text, size_t *len)
{
    *text = NULL;
    assert_int_equal(cf_read_file(DATA, text, len), CF_OK);
}

static void run_ok(const cf_validate_request *req, cf_validate_result *res)
{
    if (cf_validate_run(req, res) != CF_OK)
        fail_msg("cf_validate_run: %s", cf_error_message());
}

static void assert_stats(const cf_ape_stats *s, size_t n, double median, double p90, double max, double coverage)
{
    assert_int_equal(s->n, n);
    assert_true(fabs(s->median_ape - median) <= JSON_ROUNDING);
    assert_true(fabs(s->p90_ape - p90) <= JSON_ROUNDING);
    assert_true(fabs(s->max_ape - max) <= JSON_ROUNDING);
    assert_true(fabs(s->interval_coverage - coverage) <= JSON_ROUNDING);
}

/* `validate -f json tests/data/search-t4-imagenet.csv`: fitted on the
 * 20 single-node rows, the 80 others predicted. */
static void test_single_node_fit_matches_cli_json(void **state)
{
    (void)state;
    size_t len = 0;
    char *text;
    read_data(&text, &len);
    notes_seen seen = {0};
    cf_validate_request req = {.path = "search-t4-imagenet.csv", .text = text, .len = len, .with_per_row = 1,
                               .note = on_note, .note_ctx = &seen};
    cf_validate_result res;
    run_ok(&req, &res);
    assert_int_equal(res.set.n_rows, 100);
    assert_int_equal(res.n_groups, 1);
    assert_string_equal(res.groups[0].model, "imagenet");
    assert_int_equal(res.groups[0].n_fit, 20);
    assert_int_equal(res.groups[0].n_pred, 80);
    assert_stats(&res.report.overall, 80, 0.10801, 0.2944, 0.44455, 0.8875);
    assert_stats(&res.groups[0].by_nodes[0], 20, 0.0872, 0.27476, 0.44455, 0.95);
    assert_int_equal(res.options.train_max_nodes, 1);
    assert_ptr_equal(res.report.options, &res.options);
    assert_non_null(res.per_row);
    assert_int_equal(seen.n_warnings, 0);
    assert_int_equal(seen.n_progress, 1);
    cf_validate_result_free(&res);
    free(text);
}

/* Rows that repeat a configuration (model, GPU, profile, precision,
 * shape, batch) are kept, each fitted and scored as a row of its own — a
 * campaign that repeats a run measured it twice —, and said: the count
 * and the first repeat's lines (a row written twice was scored twice
 * without a word). "Tesla T4" is the same GPU as "T4". */
static void test_repeated_configurations_are_said(void **state)
{
    (void)state;
    size_t len = 0;
    char *text;
    read_data(&text, &len);
    const char *row2 = strchr(text, '\n') + 1, *row3 = strchr(row2, '\n') + 1;
    cf_buf more = CF_BUF_INIT;
    cf_buf_append(&more, text, len);
    cf_buf_append(&more, row2, (size_t)(row3 - row2)); /* line 102: line 2 again, the same step time */
    /* line 103: line 3's configuration, the GPU as nvidia-smi says, another step time */
    cf_buf_puts(&more, "imagenet,Tesla T4,aws,4,placement,1,1,1,40,40,0.26,,,\r\n");
    free(text);
    assert_false(cf_buf_failed(&more));
    notes_seen seen = {0};
    cf_validate_request req = {.path = "repeats.csv", .text = more.data, .len = more.len, .note = on_note,
                               .note_ctx = &seen};
    cf_validate_result res;
    run_ok(&req, &res);
    assert_int_equal(res.set.n_rows, 102);
    assert_int_equal(res.groups[0].n_fit, 22); /* both kept */
    assert_int_equal(seen.n_warnings, 1);
    assert_string_equal(seen.warnings[0], "repeats.csv: 2 rows repeat the configuration of an earlier row (the first: "
                                          "line 102 repeats line 2, imagenet/T4 1 node × 1 GPU, batch 20 per GPU), "
                                          "1 with the same step time; each row is fitted and scored as a row of its "
                                          "own");
    assert_int_equal(seen.n_hints, 1);
    cf_validate_result_free(&res);
    cf_buf_free(&more);
}

/* `validate -f json --with-2node-probe ...`: 25 rows fitted, 75 predicted. */
static void test_two_node_probe_matches_cli_json(void **state)
{
    (void)state;
    size_t len = 0;
    char *text;
    read_data(&text, &len);
    cf_validate_request req = {.path = "search-t4-imagenet.csv", .text = text, .len = len, .with_2node_probe = 1};
    cf_validate_result res;
    run_ok(&req, &res);
    assert_int_equal(res.groups[0].n_fit, 25);
    assert_stats(&res.report.overall, 75, 0.10589, 0.38153, 0.52602, 0.94667);
    assert_null(res.per_row);
    cf_validate_result_free(&res);
    free(text);
}

/* The file's rows again under a model with no known parameter count: that
 * group is skipped with a warning and a hint through the note function,
 * the other scored as before (`validate -f json` on the same rows). */
static void test_skipped_group_is_a_note(void **state)
{
    (void)state;
    size_t len = 0;
    char *text;
    read_data(&text, &len);
    char *mixed = malloc(2 * len + 1024);
    assert_non_null(mixed);
    memcpy(mixed, text, len);
    size_t n = len;
    for (const char *line = strchr(text, '\n') + 1; *line; ) {
        const char *end = strchr(line, '\n');
        size_t line_len = end ? (size_t)(end - line) + 1 : strlen(line);
        assert_true(strncmp(line, "imagenet,", 9) == 0);
        n += (size_t)sprintf(mixed + n, "my-own-net,%.*s", (int)(line_len - 9), line + 9);
        line += line_len;
    }
    notes_seen seen = {0};
    cf_validate_request req = {.path = "mixed.csv", .text = mixed, .len = n, .note = on_note, .note_ctx = &seen};
    cf_validate_result res;
    run_ok(&req, &res);
    assert_int_equal(res.n_groups, 2);
    assert_int_equal(seen.n_warnings, 1);
    assert_string_equal(seen.warnings[0], "mixed.csv: my-own-net/T4 skipped: model 'my-own-net' has no known "
                                          "parameter count (needed for the communication term)");
    assert_int_equal(seen.n_hints, 1);
    assert_string_equal(seen.hints[0], "pass --params my-own-net=COUNT");
    assert_stats(&res.report.overall, 80, 0.10801, 0.2944, 0.44455, 0.8875);
    cf_validate_result_free(&res);
    free(mixed);
    free(text);
}

/* The file's rows under a GPU no catalog VM has with 4 per VM (Quadro RTX
 * 6000: Lambda's one-GPU VM, whose NIC the catalog does not give either):
 * with nothing measured across VMs the default network is a guess, and the
 * run says so with a hint naming --inter-node-gbps; its interval is wider
 * than the same guess on a NIC given (--inter-node-gbps 10: the same
 * points). A measured network (--with-2node-probe) or a given NIC says
 * nothing. (The guess was silent, its interval a known NIC's.) */
static void test_unknown_nic_guess_is_a_note(void **state)
{
    (void)state;
    size_t len = 0;
    char *text;
    read_data(&text, &len);
    char *renamed = malloc(2 * len + 1024);
    assert_non_null(renamed);
    const char *line = strchr(text, '\n') + 1;
    size_t n = (size_t)(line - text);
    memcpy(renamed, text, n);
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t line_len = end ? (size_t)(end - line) + 1 : strlen(line);
        assert_true(strncmp(line, "imagenet,T4,", 12) == 0);
        n += (size_t)sprintf(renamed + n, "imagenet,Quadro RTX 6000,%.*s", (int)(line_len - 12), line + 12);
        line += line_len;
    }
    cf_validate_result guess, known, probe;
    notes_seen seen = {0}, seen_known = {0}, seen_probe = {0};
    cf_validate_request req = {.path = "rtx.csv", .text = renamed, .len = n, .note = on_note, .note_ctx = &seen};
    run_ok(&req, &guess);
    assert_int_equal(seen.n_warnings, 1);
    assert_non_null(strstr(seen.warnings[0], "rtx.csv: imagenet/Quadro RTX 6000/aws: the NIC is unknown"));
    assert_non_null(strstr(seen.warnings[0], "guessed 10 Gbit/s"));
    assert_int_equal(seen.n_hints, 1);
    assert_non_null(strstr(seen.hints[0], "--inter-node-gbps"));
    cf_validate_request kreq = req;
    kreq.note_ctx = &seen_known;
    kreq.inter_node_gbps = 10;
    run_ok(&kreq, &known);
    assert_int_equal(seen_known.n_warnings, 0);
    assert_int_equal(guess.report.overall.n, known.report.overall.n);
    assert_true(fabs(guess.report.overall.median_ape - known.report.overall.median_ape) < 1e-12);
    assert_true(guess.report.overall.interval_coverage > known.report.overall.interval_coverage);
    cf_validate_request preq = req;
    preq.note_ctx = &seen_probe;
    preq.with_2node_probe = 1;
    run_ok(&preq, &probe);
    assert_int_equal(seen_probe.n_warnings, 0);
    cf_validate_result_free(&guess);
    cf_validate_result_free(&known);
    cf_validate_result_free(&probe);
    free(renamed);
    free(text);
}

/* The file's rows with the GPU spelled as nvidia-smi and others do
 * ("Tesla T4" on the multi-node rows, "t4" on some single-node ones): one
 * GPU, one group, scored as the file that says "T4" throughout (they were
 * three groups, and "nothing could be predicted"); --train-gpus T4 names
 * it too. */
static char *respell(const char *text, size_t len, int all, size_t *n_out)
{
    char *out = malloc(2 * len + 64);
    assert_non_null(out);
    const char *line = strchr(text, '\n') + 1;
    size_t n = (size_t)(line - text);
    memcpy(out, text, n);
    for (int row = 0; *line; row++) {
        const char *end = strchr(line, '\n');
        size_t line_len = end ? (size_t)(end - line) + 1 : strlen(line);
        assert_true(strncmp(line, "imagenet,T4,", 12) == 0);
        int nodes = atoi(line + 12 + strlen("aws,4,placement,") + strcspn(line + 12 + strlen("aws,4,placement,"), ",") + 1);
        const char *gpu = all || nodes > 1 ? "Tesla T4" : row % 2 ? "t4" : "T4";
        n += (size_t)sprintf(out + n, "imagenet,%s,%.*s", gpu, (int)(line_len - 12), line + 12);
        line += line_len;
    }
    out[n] = '\0';
    *n_out = n;
    return out;
}

static void test_gpu_spellings_are_one_group(void **state)
{
    (void)state;
    size_t len = 0, n = 0;
    char *text;
    read_data(&text, &len);
    char *mixed = respell(text, len, 0, &n);
    cf_validate_request req = {.path = "spellings.csv", .text = mixed, .len = n};
    cf_validate_result res;
    run_ok(&req, &res);
    assert_int_equal(res.n_groups, 1);
    assert_string_equal(res.groups[0].gpu, "T4"); /* the first row's spelling */
    assert_int_equal(res.groups[0].n_fit, 20);
    assert_stats(&res.report.overall, 80, 0.10801, 0.2944, 0.44455, 0.8875);
    cf_validate_result_free(&res);
    free(mixed);

    char *tesla = respell(text, len, 1, &n);
    const char *train[] = {"T4"};
    cf_validate_request treq = {.path = "tesla.csv", .text = tesla, .len = n, .train_gpus = train, .n_train_gpus = 1};
    run_ok(&treq, &res);
    assert_int_equal(res.n_groups, 1);
    assert_string_equal(res.groups[0].gpu, "Tesla T4");
    assert_stats(&res.report.overall, 80, 0.10801, 0.2944, 0.44455, 0.8875);
    cf_validate_result_free(&res);
    free(tesla);
    free(text);
}

/* Single-node rows alone: nothing to predict, an error naming the file. */
static void test_nothing_predicted_is_an_error(void **state)
{
    (void)state;
    size_t len = 0;
    char *text;
    read_data(&text, &len);
    const char *second_row_end = strchr(strchr(text, '\n') + 1, '\n') + 1;
    cf_validate_request req = {.path = "single.csv", .text = text, .len = (size_t)(second_row_end - text)};
    cf_validate_result res;
    assert_int_not_equal(cf_validate_run(&req, &res), CF_OK);
    assert_non_null(strstr(cf_error_message(), "single.csv: nothing could be predicted"));
    cf_validate_result_free(&res);
    free(text);
}

/* An empty growth range is refused before anything is read. */
static void test_empty_growth_range_is_refused(void **state)
{
    (void)state;
    cf_perf_constants k = cf_perf_constants_default();
    assert_int_equal(cf_perf_constants_check(&k), CF_OK);
    k.growth_nodes_min = 1.5;
    k.growth_nodes_max = 1.0;
    cf_validate_request req = {.path = "never-read.csv", .text = "", .len = 0, .constants = &k};
    cf_validate_result res;
    assert_int_equal(cf_validate_run(&req, &res), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "a_min (1.5) is above a_max (1): the growth exponent's range is empty");
    cf_validate_result_free(&res);
    k.growth_nodes_min = 1.0; /* a range of one point is a range */
    assert_int_equal(cf_perf_constants_check(&k), CF_OK);
}

/* A temporary file with `text`; its path in `path`. */
static void write_temp(char *path, size_t n, const char *name, const char *text)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, n, "%s/cf_usecase_validate_%ld_%s", tmp && *tmp ? tmp : "/tmp", (long)getpid(), name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* `validate --gns`: a 128-sample M0 run and a 512-sample run of the same
 * model; the 512 run is predicted from the M0 run's noise trace (one
 * prediction, its measured iterations the 512 run's first at the target).
 * A traces file that is not there is an error naming it. */
static void test_gns_run_scores_the_larger_batch(void **state)
{
    (void)state;
    cf_buf traces = CF_BUF_INIT;
    cf_buf_puts(&traces, "model,batch_size,m0,epoch,progress,iteration,metric,b_noise\n");
    /* progress in M0 steps: the M0 run's is its iterations, the 512 run makes 3 (of at most 512/128) a step */
    const int batches[2] = {128, 512}, iterations_per_epoch[2] = {100, 30}, progress_per_epoch[2] = {100, 90};
    for (int b = 0; b < 2; b++)
        for (int e = 1; e <= 20; e++)
            cf_buf_printf(&traces, "cifar10,%d,128,%d,%d,%d,%.3f,%.1f\n", batches[b], e, e * progress_per_epoch[b],
                          e * iterations_per_epoch[b], 0.5 + e * 0.02, 300.0 + 40 * e);
    char traces_path[512], models_path[512];
    write_temp(traces_path, sizeof traces_path, "traces.csv", cf_buf_cstr(&traces));
    write_temp(models_path, sizeof models_path, "models.csv",
               "model,m0,metric_name,metric_better\ncifar10,128,accuracy,higher\n");
    cf_validate_gns_report report;
    if (cf_validate_gns_run(traces_path, models_path, 0, &report) != CF_OK)
        fail_msg("cf_validate_gns_run: %s", cf_error_message());
    assert_int_equal(report.n, 1);
    assert_int_equal(report.overall.n, 1);
    assert_string_equal(report.predictions[0].model, "cifar10");
    assert_int_equal(report.predictions[0].batch, 512);
    assert_true(report.predictions[0].measured_iterations == 600);
    /* 676 (+12.6 %); a progress counted as a fraction of training (0.05 ... 1.0) predicted 0 */
    double predicted = report.predictions[0].predicted_iterations;
    assert_true(predicted > 600 * 0.8 && predicted < 600 * 1.5);
    cf_validate_gns_report_free(&report);

    char missing[600];
    snprintf(missing, sizeof missing, "%s.not-there", traces_path);
    assert_int_not_equal(cf_validate_gns_run(missing, models_path, 0, &report), CF_OK);
    assert_non_null(strstr(cf_error_message(), missing));
    cf_validate_gns_report_free(&report);
    unlink(traces_path);
    unlink(models_path);
    cf_buf_free(&traces);
}

typedef struct {
    char info[512];
    int n_info;
} info_seen;

static void on_info(void *ctx, cf_note_kind kind, const char *text)
{
    info_seen *seen = ctx;
    if (kind == CF_NOTE_INFO && seen->n_info++ == 0)
        snprintf(seen->info, sizeof seen->info, "%s", text);
}

/* `validate --crossgpu`: three GPU types the GPU table knows, spelt as
 * tools print them, give 6 same-precision pairs; the fourth row's GPU is
 * unknown, left out and said once, by name. */
static void test_crossgpu_run_leaves_unknown_gpus_out_with_a_note(void **state)
{
    (void)state;
    char path[512];
    write_temp(path, sizeof path, "crossgpu.csv",
               "source,gpu,gpu_count,model,precision,batch_size_per_gpu,throughput,unit,notes\n"
               "test,NVIDIA A100-SXM4-40GB,1,resnet50,fp16,256,900,images/s,benchmark v1\n"
               "test,Tesla V100-SXM2-16GB,1,resnet50,fp16,256,400,images/s,benchmark v1\n"
               "test,H100,1,resnet50,fp16,256,2000,images/s,benchmark v1\n"
               "test,RTX 9999,1,resnet50,fp16,256,100,images/s,benchmark v1\n");
    info_seen seen = {{0}, 0};
    cf_validate_crossgpu_result result;
    if (cf_validate_crossgpu_run(path, on_info, &seen, &result) != CF_OK)
        fail_msg("cf_validate_crossgpu_run: %s", cf_error_message());
    assert_int_equal(result.report.v.n_pairs, 6);
    assert_int_equal(seen.n_info, 1);
    /* which GPUs, and the count for the JSON (the note said neither) */
    assert_string_equal(seen.info, "1 of 4 rows name a GPU that is not in the GPU table (RTX 9999; docs/catalog.md); "
                                   "they are left out");
    assert_int_equal(result.report.rows_left_out, 1);
    /* the pairs' names are the GPU table's, alive until the result is freed
     * (valgrind and ASan see a read of a freed table) */
    assert_true(result.report.v.n_gpu_pairs > 0);
    size_t named = 0;
    for (size_t i = 0; i < result.report.v.n_gpu_pairs; i++)
        named += strcmp(result.report.v.gpu_pairs[i].from, "H100") == 0 || strcmp(result.report.v.gpu_pairs[i].to, "H100") == 0;
    assert_true(named > 0);
    cf_validate_crossgpu_result_free(&result);
    unlink(path);
}

/* A table converted from another source has only the columns the carry-over
 * reads (no source, unit or notes): it scores as the same table with them
 * (it was "missing required column 'notes'"). */
static void test_crossgpu_table_without_notes_scores_the_same(void **state)
{
    (void)state;
    const char *rows[][2] = {{"NVIDIA A100-SXM4-40GB", "900"}, {"Tesla V100-SXM2-16GB", "400"}, {"H100", "2000"}};
    char with[4096] = "source,gpu,gpu_count,model,precision,batch_size_per_gpu,throughput,unit,notes\n";
    char without[4096] = "model,gpu,precision,gpu_count,throughput,batch_size_per_gpu\n";
    const char *models[] = {"resnet50", "bert_base"};
    for (size_t m = 0; m < 2; m++)
        for (size_t i = 0; i < 3; i++) {
            double scale = m ? 0.37 + 0.05 * (double)i : 1.0;
            size_t a = strlen(with), b = strlen(without);
            snprintf(with + a, sizeof with - a, "test,%s,1,%s,fp16,64,%g,images/s,benchmark v1\n", rows[i][0],
                     models[m], atof(rows[i][1]) * scale);
            snprintf(without + b, sizeof without - b, "%s,%s,fp16,1,%g,64\n", models[m], rows[i][0],
                     atof(rows[i][1]) * scale);
        }
    char path_with[512], path_without[512];
    write_temp(path_with, sizeof path_with, "crossgpu-with.csv", with);
    write_temp(path_without, sizeof path_without, "crossgpu-without.csv", without);
    cf_validate_crossgpu_result a, b;
    if (cf_validate_crossgpu_run(path_with, NULL, NULL, &a) != CF_OK)
        fail_msg("with notes: %s", cf_error_message());
    if (cf_validate_crossgpu_run(path_without, NULL, NULL, &b) != CF_OK)
        fail_msg("without notes: %s", cf_error_message());
    assert_int_equal(a.report.v.n_pairs, 12);
    assert_int_equal(b.report.v.n_pairs, a.report.v.n_pairs);
    assert_int_equal(b.report.v.n_gpu_pairs, a.report.v.n_gpu_pairs);
    for (size_t i = 0; i < a.report.v.n_gpu_pairs; i++) {
        assert_string_equal(b.report.v.gpu_pairs[i].from, a.report.v.gpu_pairs[i].from);
        assert_string_equal(b.report.v.gpu_pairs[i].to, a.report.v.gpu_pairs[i].to);
    }
    cf_validate_crossgpu_result_free(&a);
    cf_validate_crossgpu_result_free(&b);
    unlink(path_with);
    unlink(path_without);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_node_fit_matches_cli_json),
        cmocka_unit_test(test_two_node_probe_matches_cli_json),
        cmocka_unit_test(test_repeated_configurations_are_said),
        cmocka_unit_test(test_skipped_group_is_a_note),
        cmocka_unit_test(test_unknown_nic_guess_is_a_note),
        cmocka_unit_test(test_gpu_spellings_are_one_group),
        cmocka_unit_test(test_nothing_predicted_is_an_error),
        cmocka_unit_test(test_empty_growth_range_is_refused),
        cmocka_unit_test(test_gns_run_scores_the_larger_batch),
        cmocka_unit_test(test_crossgpu_run_leaves_unknown_gpus_out_with_a_note),
        cmocka_unit_test(test_crossgpu_table_without_notes_scores_the_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
