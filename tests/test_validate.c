/* validate: error statistics, target selection, the trace and cross-GPU CSV
 * readers, and exactness on data generated from the models themselves. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/common/names.h"
#include "../advisor/model/model_sizes.h"
#include "cloudfit/advisor/validate.h"
#include "cloudfit/advisor/validate_crossgpu.h"
#include "cloudfit/profiler/crossgpu.h"
#include "cloudfit/profiler/gns_traces.h"
#include "../advisor/model/perf_internal.h"
#include "../advisor/validate/validate_internal.h"

static void test_ape_summary(void **state)
{
    (void)state;
    double odd[] = {0.05, -0.10, 0.01, 0.30, -0.02};
    cf_ape_stats s = cf_ape_summarise(odd, 5);
    assert_int_equal(s.n, 5);
    assert_float_equal(s.median_ape, 0.05, 1e-15);
    assert_float_equal(s.p90_ape, 0.30, 1e-15); /* nearest rank: ceil(4.5) = 5th */
    assert_float_equal(s.max_ape, 0.30, 1e-15);
    double even[20];
    for (int i = 0; i < 20; i++)
        even[i] = (i % 2 ? -1 : 1) * (i + 1) / 100.0;
    s = cf_ape_summarise(even, 20);
    assert_float_equal(s.median_ape, 0.105, 1e-12); /* mean of 10th and 11th */
    assert_float_equal(s.p90_ape, 0.18, 1e-12);     /* 18th of 20 */
    assert_float_equal(s.max_ape, 0.20, 1e-12);
    s = cf_ape_summarise(NULL, 0);
    assert_int_equal(s.n, 0);
}

static const char models_csv[] =
    "model,architecture,dataset,task,m0,trace_batch_sizes,epochs_in_trace,progress_per_epoch,metric_name,metric_better,sim_max_epochs\n"
    "up,x,x,x,100,100 400,4,10,acc,higher,4\n"
    "down,x,x,x,100,100 400,4,10,loss,lower,4\n";

static void test_target_selection(void **state)
{
    (void)state;
    const char *traces =
        "model,batch_size,m0,epoch,progress,iteration,samples,metric_name,metric,grad_sqr,grad_var,b_noise\n"
        "up,100,100,1,10,10,1000,acc,0.5,1,1,100\n"
        "up,100,100,2,20,20,2000,acc,0.9,1,1,100\n"
        "up,400,100,1,10,5,2000,acc,0.6,1,1,100\n"
        "up,400,100,2,20,10,4000,acc,0.85,1,1,100\n"
        "down,100,100,1,10,10,1000,loss,2.0,1,1,100\n"
        "down,100,100,2,20,20,2000,loss,1.0,1,1,100\n"
        "down,400,100,1,10,5,2000,loss,1.5,1,1,100\n"
        "down,400,100,2,20,10,4000,loss,1.2,1,1,100\n";
    cf_gns_traces t;
    assert_int_equal(cf_gns_traces_parse(traces, strlen(traces), "t.csv", models_csv, strlen(models_csv), "m.csv", &t),
                     CF_OK);
    double target = 0;
    assert_int_equal(cf_gns_target(&t, &t.models[0], &target), CF_OK);
    assert_float_equal(target, 0.85, 1e-12); /* every run reaches 0.85; not 0.9 */
    assert_int_equal(cf_gns_target(&t, &t.models[1], &target), CF_OK);
    assert_float_equal(target, 1.2, 1e-12);  /* lower is better: the worst best */
    cf_gns_traces_free(&t);
}

/* The noise scale a gain-rule run at batch m measures where the M0 run
 * measures b (docs/model.md): b·(b + m)/(b + m0), written out here rather
 * than taken from the library. */
static double gain_run_noise(double b, double m0, double m)
{
    return b * (b + m) / (b + m0);
}

/* Traces generated from the noise model itself: each run's iterations follow
 * Pollux's bookkeeping with the noise scale that run measures. The
 * prediction (from the M0 run alone) is exact. */
static void test_gns_prediction_exact_on_model_data(void **state)
{
    (void)state;
    const double b_noise = 300, m0 = 100;
    char traces[4096];
    int len = snprintf(traces, sizeof traces,
                       "model,batch_size,m0,epoch,progress,iteration,samples,metric_name,metric,grad_sqr,grad_var,b_noise\n");
    static const int batches[] = {100, 400, 1600};
    for (int b = 0; b < 3; b++) {
        double M = batches[b];
        double b_run = gain_run_noise(b_noise, m0, M);
        for (int e = 1; e <= 4; e++) {
            double progress = 10.0 * e; /* M0-iterations */
            double iterations = progress * m0 * (b_run + M) / (b_run + m0) / M;
            len += snprintf(traces + len, sizeof traces - (size_t)len, "up,%d,100,%d,%g,%.10g,0,acc,%g,1,1,%g\n",
                            batches[b], e, progress, iterations, 0.2 * e, b_run);
        }
    }
    cf_gns_traces t;
    assert_int_equal(cf_gns_traces_parse(traces, (size_t)len, "t.csv", models_csv, strlen(models_csv), "m.csv", &t),
                     CF_OK);
    cf_gns_validate_options o = {0};
    cf_gns_prediction *p = NULL;
    size_t n = 0;
    cf_ape_stats overall;
    assert_int_equal(cf_validate_gns(&t, &o, &p, &n, &overall), CF_OK);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        assert_float_equal(p[i].target, 0.8, 1e-12);
        assert_true(fabs(p[i].error) < 3e-6);
    }
    /* 1600 = 16 × M0: B_1600 = 300·1900/400 = 1425, so 40·100·3025/1525/1600. */
    assert_float_equal(p[1].predicted_iterations, 40.0 * 100 * 3025 / 1525 / 1600, 1e-5);
    assert_true(overall.max_ape < 3e-6);
    free(p);
    cf_gns_traces_free(&t);
}

/* The M0 run's noise scale at progress q (M0-iterations) in the trend test:
 * constant before the first epoch's point, then linear. */
static double growing_noise(double q)
{
    return q < 10 ? 300 : 200 + 10 * q;
}

/* Iterations of a gain-rule run at batch M to progress q_end, by the
 * midpoint rule on a fine grid (independent of the library's Simpson). */
static double growing_iterations(double m0, double M, double q_end)
{
    const int steps = 40000;
    double h = q_end / steps, sum = 0;
    for (int i = 0; i < steps; i++) {
        double b_run = gain_run_noise(growing_noise((i + 0.5) * h), m0, M);
        sum += m0 * (b_run + M) / (b_run + m0) / M;
    }
    return sum * h;
}

/* --train-epochs 2 of 4: the M0 trace's linear growth is continued along
 * its trend, so a noise scale that keeps growing linearly is predicted
 * exactly; the larger runs' own noise-scale column (deliberately wrong
 * here) is never read. */
static void test_gns_prediction_follows_trend(void **state)
{
    (void)state;
    const double m0 = 100;
    char traces[4096];
    int len = snprintf(traces, sizeof traces,
                       "model,batch_size,m0,epoch,progress,iteration,samples,metric_name,metric,grad_sqr,grad_var,b_noise\n");
    static const int batches[] = {100, 400, 1600};
    for (int b = 0; b < 3; b++) {
        for (int e = 1; e <= 4; e++) {
            double progress = 10.0 * e;
            double iterations = growing_iterations(m0, batches[b], progress);
            double column = b == 0 ? growing_noise(progress) : 1.0;
            len += snprintf(traces + len, sizeof traces - (size_t)len, "up,%d,100,%d,%g,%.10g,0,acc,%g,1,1,%g\n",
                            batches[b], e, progress, iterations, 0.2 * e, column);
        }
    }
    cf_gns_traces t;
    assert_int_equal(cf_gns_traces_parse(traces, (size_t)len, "t.csv", models_csv, strlen(models_csv), "m.csv", &t),
                     CF_OK);
    cf_gns_validate_options o = {.train_epochs = 2};
    cf_gns_prediction *p = NULL;
    size_t n = 0;
    cf_ape_stats overall;
    assert_int_equal(cf_validate_gns(&t, &o, &p, &n, &overall), CF_OK);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++)
        assert_true(fabs(p[i].error) < 1e-5);
    free(p);
    cf_gns_traces_free(&t);
}

/* The iterations predicted for batch 400 from an M0 run of 300 epochs
 * whose noise scale is 100 until epoch `jump` and `after` from then on. */
static double predicted_with_late_noise(int jump, double after)
{
    cf_buf text = CF_BUF_INIT;
    cf_buf_puts(&text, "model,batch_size,m0,epoch,progress,iteration,samples,metric_name,metric,grad_sqr,grad_var,"
                       "b_noise\n");
    for (int b = 0; b < 2; b++)
        for (int e = 1; e <= 300; e++)
            cf_buf_printf(&text, "up,%d,100,%d,%d,%d,0,acc,%g,1,1,%g\n", b ? 400 : 100, e, 10 * e,
                          b ? 4 * e : 10 * e, e / 300.0, e < jump ? 100.0 : after);
    cf_gns_traces t;
    assert_int_equal(cf_gns_traces_parse(cf_buf_cstr(&text), strlen(cf_buf_cstr(&text)), "t.csv", models_csv,
                                         strlen(models_csv), "m.csv", &t), CF_OK);
    cf_gns_validate_options o = {0};
    cf_gns_prediction *p = NULL;
    size_t n = 0;
    assert_int_equal(cf_validate_gns(&t, &o, &p, &n, NULL), CF_OK);
    assert_int_equal(n, 1);
    double predicted = p[0].predicted_iterations;
    free(p);
    cf_gns_traces_free(&t);
    cf_buf_free(&text);
    return predicted;
}

/* An M0 run of more than 256 rows (a trace logged more often than once an
 * epoch) was cut to its first 256 and continued along their trend: a change
 * in its last rows did not move the prediction. Now every row counts, and
 * the prediction is the one of the noise scale the rows give. */
static void test_gns_long_m0_run_used_whole(void **state)
{
    (void)state;
    double flat = predicted_with_late_noise(301, 100), late = predicted_with_late_noise(270, 1e6);
    /* B = 100 over 89 % of training, ~1e6 (≫ M) over the last 11 %: E(400)/E0 =
     * 0.89·(B_M + 400)/(B_M + 100) + 0.11, B_M = 100·500/200 = 250 */
    double ratio = 0.89 * (250.0 + 400) / (250 + 100) + 0.11;
    assert_float_equal(flat, 3000.0 * 100 * (650.0 / 350) / 400, 1e-6 * flat);
    assert_true(fabs(late / (3000.0 * 100 * ratio / 400) - 1) < 0.01);
}

/* A model's runs were read into an array of 64: a 70th batch size was never
 * scored (and an M0 run past the 64th was "not there"). */
static void test_gns_any_number_of_runs(void **state)
{
    (void)state;
    const double b_noise = 300, m0 = 100;
    cf_buf text = CF_BUF_INIT;
    cf_buf_puts(&text, "model,batch_size,m0,epoch,progress,iteration,samples,metric_name,metric,grad_sqr,grad_var,"
                       "b_noise\n");
    for (int b = 70; b >= 1; b--) { /* the M0 run last in the file, first in the sort */
        double M = 100.0 * b, b_run = gain_run_noise(b_noise, m0, M);
        for (int e = 1; e <= 4; e++) {
            double progress = 10.0 * e;
            cf_buf_printf(&text, "up,%d,100,%d,%g,%.10g,0,acc,%g,1,1,%g\n", 100 * b, e, progress,
                          progress * m0 * (b_run + M) / (b_run + m0) / M, 0.2 * e, b_run);
        }
    }
    cf_gns_traces t;
    assert_int_equal(cf_gns_traces_parse(cf_buf_cstr(&text), strlen(cf_buf_cstr(&text)), "t.csv", models_csv,
                                         strlen(models_csv), "m.csv", &t), CF_OK);
    cf_gns_validate_options o = {0};
    cf_gns_prediction *p = NULL;
    size_t n = 0;
    cf_ape_stats overall;
    assert_int_equal(cf_validate_gns(&t, &o, &p, &n, &overall), CF_OK);
    assert_int_equal(n, 69);
    assert_int_equal(p[68].batch, 7000);
    assert_true(overall.max_ape < 3e-6);
    free(p);
    cf_gns_traces_free(&t);
    cf_buf_free(&text);
}

static void test_trace_reader_errors(void **state)
{
    (void)state;
    cf_gns_traces t;
    const char *bad =
        "model,batch_size,m0,epoch,progress,iteration,samples,metric_name,metric,grad_sqr,grad_var,b_noise\n"
        "up,100,100,1,10,10,1000,acc,0.5,1,1,100\n"
        "up,100,100,two,20,20,2000,acc,0.9,1,1,100\n";
    assert_int_equal(cf_gns_traces_parse(bad, strlen(bad), "t.csv", models_csv, strlen(models_csv), "m.csv", &t),
                     CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "t.csv:3: column 'epoch': expected an integer, got 'two'");
    const char *neg =
        "model,batch_size,m0,epoch,progress,iteration,samples,metric_name,metric,grad_sqr,grad_var,b_noise\n"
        "up,-5,100,1,10,10,1000,acc,0.5,1,1,100\n";
    assert_int_equal(cf_gns_traces_parse(neg, strlen(neg), "t.csv", models_csv, strlen(models_csv), "m.csv", &t),
                     CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "t.csv:2: column 'batch_size': expected a positive number, got -5");
    const char *models_bad = "model,m0,metric_name,metric_better\nup,100,acc,sideways\n";
    const char *ok = "model,batch_size,m0,epoch,progress,iteration,samples,metric_name,metric,grad_sqr,grad_var,b_noise\n"
                     "up,100,100,1,10,10,1000,acc,0.5,1,1,\n";
    assert_int_equal(cf_gns_traces_parse(ok, strlen(ok), "t.csv", models_bad, strlen(models_bad), "m.csv", &t),
                     CF_ERR_INVALID);
    /* a model name too long to keep is refused, not cut (two models sharing their first 63 bytes were one) */
    char text[512], name[80];
    memset(name, 'u', 70);
    name[70] = '\0';
    snprintf(text, sizeof text,
             "model,batch_size,m0,epoch,progress,iteration,samples,metric_name,metric,grad_sqr,grad_var,b_noise\n"
             "%s,100,100,1,10,10,1000,acc,0.5,1,1,100\n", name);
    assert_int_equal(cf_gns_traces_parse(text, strlen(text), "t.csv", models_csv, strlen(models_csv), "m.csv", &t),
                     CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "t.csv:2: column 'model': expected at most 63 characters, got 70"));
    snprintf(text, sizeof text, "model,m0,metric_name,metric_better\n%s,100,acc,higher\n", name);
    assert_int_equal(cf_gns_traces_parse(ok, strlen(ok), "t.csv", text, strlen(text), "m.csv", &t), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "m.csv:2: column 'model': expected at most 63 characters, got 70"));
}

/* MODELS.csv names each model once, and the traces' m0 column is the
 * model's M0 there: a model listed twice was scored twice, and a trace m0
 * that disagrees was never read. */
static void test_trace_models_agree(void **state)
{
    (void)state;
    cf_gns_traces t;
    const char *traces =
        "model,batch_size,m0,epoch,progress,iteration,samples,metric_name,metric,grad_sqr,grad_var,b_noise\n"
        "up,100,100,1,10,10,1000,acc,0.5,1,1,100\n"
        "up,400,100,1,10,5,2000,acc,0.6,1,1,100\n";
    const char *twice = "model,m0,metric_name,metric_better\nup,100,acc,higher\ndown,100,loss,lower\n"
                        "up,200,acc,higher\n";
    assert_int_equal(cf_gns_traces_parse(traces, strlen(traces), "t.csv", twice, strlen(twice), "m.csv", &t),
                     CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "m.csv:4: model 'up' is listed twice (first at line 2)");
    const char *other_m0 = "model,m0,metric_name,metric_better\ndown,100,loss,lower\nup,200,acc,higher\n";
    assert_int_equal(cf_gns_traces_parse(traces, strlen(traces), "t.csv", other_m0, strlen(other_m0), "m.csv", &t),
                     CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "t.csv:2: column 'm0': 100, but m.csv:3 gives model 'up' m0 200");
    /* the files are named in what the scoring says (it said "model 'up': ...") */
    const char *no_m0_run =
        "model,batch_size,m0,epoch,progress,iteration,samples,metric_name,metric,grad_sqr,grad_var,b_noise\n"
        "up,400,100,1,10,5,2000,acc,0.6,1,1,100\n";
    assert_int_equal(cf_gns_traces_parse(no_m0_run, strlen(no_m0_run), "t.csv", models_csv, strlen(models_csv),
                                         "m.csv", &t), CF_OK);
    cf_gns_validate_options o = {0};
    cf_gns_prediction *p = NULL;
    size_t n = 0;
    assert_int_equal(cf_validate_gns(&t, &o, &p, &n, NULL), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "t.csv: no run of model 'up' at its M0 batch 100 (m.csv:2)");
    cf_gns_traces_free(&t);
    const char *no_noise =
        "model,batch_size,m0,epoch,progress,iteration,samples,metric_name,metric,grad_sqr,grad_var,b_noise\n"
        "up,400,100,1,10,5,2000,acc,0.6,1,1,100\n"
        "up,100,100,1,10,10,1000,acc,0.7,1,1,\n";
    assert_int_equal(cf_gns_traces_parse(no_noise, strlen(no_noise), "t.csv", models_csv, strlen(models_csv),
                                         "m.csv", &t), CF_OK);
    assert_int_equal(cf_validate_gns(&t, &o, &p, &n, NULL), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "t.csv:3: model 'up': the M0 run (batch 100) has no noise-scale values "
                                            "(column 'b_noise') in the epochs used");
    cf_gns_traces_free(&t);
}

/* A trace row of a model MODELS.csv does not list was left out without a
 * word (and the run it belonged to with it, which may be the one that sets
 * the target): it is still left out (a models file may name a subset of
 * the traces' models), counted with the first; a file that leaves nothing
 * to score read "n 0, median 0.0%" and succeeded. */
static void test_trace_models_listed_and_something_scored(void **state)
{
    (void)state;
    cf_gns_traces t;
    const char *typo =
        "model,batch_size,m0,epoch,progress,iteration,samples,metric_name,metric,grad_sqr,grad_var,b_noise\n"
        "up,100,100,1,10,10,1000,acc,0.5,1,1,100\n"
        "up,400,100,1,10,5,2000,acc,0.6,1,1,100\n"
        "uq,400,100,2,20,10,4000,acc,0.7,1,1,100\n";
    assert_int_equal(cf_gns_traces_parse(typo, strlen(typo), "t.csv", models_csv, strlen(models_csv), "m.csv", &t),
                     CF_OK);
    assert_int_equal(t.n_unlisted_rows, 1);
    assert_string_equal(t.first_unlisted, "uq");
    assert_int_equal(t.first_unlisted_line, 4);
    cf_gns_traces_free(&t);
    const char *only_m0 =
        "model,batch_size,m0,epoch,progress,iteration,samples,metric_name,metric,grad_sqr,grad_var,b_noise\n"
        "up,100,100,1,10,10,1000,acc,0.5,1,1,100\n"
        "up,100,100,2,20,20,2000,acc,0.9,1,1,100\n";
    assert_int_equal(cf_gns_traces_parse(only_m0, strlen(only_m0), "t.csv", models_csv, strlen(models_csv), "m.csv",
                                         &t), CF_OK);
    cf_gns_validate_options o = {0};
    cf_gns_prediction *p = NULL;
    size_t n = 7;
    cf_ape_stats overall;
    assert_int_equal(cf_validate_gns(&t, &o, &p, &n, &overall), CF_ERR_INVALID);
    assert_int_equal(n, 0);
    assert_null(p);
    assert_string_equal(cf_error_message(),
                        "t.csv: nothing could be predicted: no model has a run at a batch above its M0 (m.csv)");
    cf_gns_traces_free(&t);
}

/* The traces file t.csv of the gns tests' header and these rows, parsed
 * against m.csv. */
static cf_status parse_rows(const char *rows, cf_gns_traces *t)
{
    char text[1024];
    snprintf(text, sizeof text, "%s%s",
             "model,batch_size,m0,epoch,progress,iteration,samples,metric_name,metric,grad_sqr,grad_var,b_noise\n", rows);
    return cf_gns_traces_parse(text, strlen(text), "t.csv", models_csv, strlen(models_csv), "m.csv", t);
}

/* A run is one row per epoch with its progress and iteration growing: an
 * epoch given twice (the rows' order was qsort's, undefined) and a progress
 * that falls were taken without a word. */
static void test_trace_runs_one_row_per_epoch(void **state)
{
    (void)state;
    cf_gns_traces t;
    assert_int_equal(parse_rows("up,100,100,1,10,10,1000,acc,0.5,1,1,100\n"
                                "up,400,100,1,10,5,2000,acc,0.6,1,1,100\n"
                                "up,100,100,2,20,20,2000,acc,0.9,1,1,100\n"
                                "up,100,100,1,10,10,1000,acc,0.99,1,1,100\n", &t),
                     CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "t.csv:5: model 'up' batch 100: epoch 1 is given twice (first at line 2)");
    assert_int_equal(parse_rows("up,100,100,1,10,10,1000,acc,0.5,1,1,100\n"
                                "up,100,100,2,5,20,2000,acc,0.9,1,1,100\n", &t),
                     CF_ERR_INVALID);
    assert_string_equal(cf_error_message(),
                        "t.csv:3: column 'progress': expected more than 10 (epoch 1 of the same run, line 2), got 5");
    assert_int_equal(parse_rows("up,400,100,2,20,10,4000,acc,0.85,1,1,100\n"
                                "up,400,100,1,10,10,2000,acc,0.6,1,1,100\n", &t),
                     CF_ERR_INVALID);
    assert_string_equal(cf_error_message(),
                        "t.csv:2: column 'iteration': expected more than 10 (epoch 1 of the same run, line 3), got 10");
    /* rows in any order are sorted; each run checked on its own */
    assert_int_equal(parse_rows("up,400,100,2,20,10,4000,acc,0.85,1,1,100\n"
                                "up,100,100,2,20,20,2000,acc,0.9,1,1,100\n"
                                "up,400,100,1,10,5,2000,acc,0.6,1,1,100\n"
                                "up,100,100,1,10,10,1000,acc,0.5,1,1,100\n", &t),
                     CF_OK);
    assert_int_equal(t.rows[0].line, 5);
    cf_gns_traces_free(&t);
}

/* Progress is counted in M0 steps: the M0 run's progress is its
 * iteration count, a run at batch M has made 1 to M/M0 times its
 * iterations. A progress in another unit (a fraction of training, as the
 * project's own synthetic traces had) was taken without a word and
 * predicted 0 iterations against 600. */
static void test_trace_progress_in_m0_steps(void **state)
{
    (void)state;
    cf_gns_traces t;
    assert_int_equal(parse_rows("up,100,100,1,0.05,100,1000,acc,0.5,1,1,100\n"
                                "up,100,100,2,0.1,200,2000,acc,0.9,1,1,100\n", &t),
                     CF_ERR_INVALID);
    assert_string_equal(cf_error_message(),
                        "t.csv:2: column 'progress': 0.05 at iteration 100 of the M0 run (batch 100); progress is "
                        "counted in M0 steps, so the M0 run's progress should equal its iterations");
    assert_non_null(strstr(cf_error_hint_text(), "M0 steps"));
    /* a larger run's progress above iterations × M/M0 (here 4), or below its iterations */
    assert_int_equal(parse_rows("up,100,100,1,10,10,1000,acc,0.5,1,1,100\n"
                                "up,400,100,1,10,2,2000,acc,0.6,1,1,100\n", &t),
                     CF_ERR_INVALID);
    assert_string_equal(cf_error_message(),
                        "t.csv:3: column 'progress': 10 at iteration 2 of the run at batch 400 (M0 100); progress is "
                        "counted in M0 steps, of which one step at batch 400 makes between 1 and 4, so it should be "
                        "between 2 and 8");
    assert_int_equal(parse_rows("up,400,100,1,5,10,2000,acc,0.6,1,1,100\n"
                                "up,100,100,1,10,10,1000,acc,0.5,1,1,100\n", &t),
                     CF_ERR_INVALID);
    assert_non_null(
        strstr(cf_error_message(), "t.csv:2: column 'progress': 5 at iteration 10 of the run at batch 400"));
    /* within 5 %: the M0 run 2 % off (the shipped traces: 0.26 %), the larger run at exactly 1 and M/M0 */
    assert_int_equal(parse_rows("up,100,100,1,10.2,10,1000,acc,0.5,1,1,100\n"
                                "up,400,100,1,10,10,2000,acc,0.6,1,1,100\n"
                                "up,400,100,2,80,20,4000,acc,0.7,1,1,100\n", &t),
                     CF_OK);
    cf_gns_traces_free(&t);
}

static void test_crossgpu_reader(void **state)
{
    (void)state;
    const char *text = "source,gpu,gpu_count,model,precision,batch_size_per_gpu,throughput,unit,notes\n"
                       "s,H100,1,resnet50,amp,256,2700,images/s,\"benchmark v1; table row 'x'\"\n"
                       "s,A100-80GB,1,resnet50,amp,256,1600,images/s,\"benchmark v1; SUSPECT: something\"\n"
                       "s,A100-80GB,1,resnet50,int8,256,1600,images/s,benchmark v1\n";
    cf_crossgpu_set set;
    assert_int_equal(cf_crossgpu_parse(text, strlen(text), "x.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "x.csv:4: column 'precision': expected fp32, tf32, fp16, bf16 or amp, got 'int8'");
    assert_int_equal(cf_crossgpu_parse(text, strlen(text) - strlen("s,A100-80GB,1,resnet50,int8,256,1600,images/s,benchmark v1\n"),
                                       "x.csv", &set), CF_OK);
    assert_int_equal(set.n_rows, 2);
    assert_string_equal(set.rows[0].benchmark, "v1");
    assert_false(set.rows[0].suspect);
    assert_true(set.rows[1].suspect);
    cf_crossgpu_free(&set);
    /* batch_size_per_gpu: empty is "not given"; a value is positive */
    const char *batches = "source,gpu,gpu_count,model,precision,batch_size_per_gpu,throughput,unit,notes\n"
                          "s,H100,1,resnet50,amp,,2700,images/s,benchmark v1\n"
                          "s,A100-80GB,1,resnet50,amp,-64,1600,images/s,benchmark v1\n";
    assert_int_equal(cf_crossgpu_parse(batches, strlen(batches), "x.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "x.csv:3: column 'batch_size_per_gpu': expected a positive number, got -64");
    const char *zero = "source,gpu,gpu_count,model,precision,batch_size_per_gpu,throughput,unit,notes\n"
                       "s,H100,1,resnet50,amp,0,2700,images/s,benchmark v1\n";
    assert_int_equal(cf_crossgpu_parse(zero, strlen(zero), "x.csv", &set), CF_ERR_INVALID);
    /* a bad count or throughput names its column and value (it said "a positive gpu_count and throughput"),
     * and a bad precision on the same row does not hide it */
    const char *counts = "source,gpu,gpu_count,model,precision,batch_size_per_gpu,throughput,unit,notes\n"
                         "s,H100,0,resnet50,int8,256,2700,images/s,benchmark v1\n";
    assert_int_equal(cf_crossgpu_parse(counts, strlen(counts), "x.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "x.csv:2: column 'gpu_count': expected a positive integer, got 0");
    const char *throughput = "source,gpu,gpu_count,model,precision,batch_size_per_gpu,throughput,unit,notes\n"
                             "s,H100,1,resnet50,amp,256,-5,images/s,benchmark v1\n";
    assert_int_equal(cf_crossgpu_parse(throughput, strlen(throughput), "x.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "x.csv:2: column 'throughput': expected a positive number, got -5");
    assert_int_equal(cf_crossgpu_parse(batches, strlen(batches) - strlen("s,A100-80GB,1,resnet50,amp,-64,1600,images/s,benchmark v1\n"),
                                       "x.csv", &set), CF_OK);
    assert_true(set.rows[0].batch_per_gpu == 0);
    cf_crossgpu_free(&set);
    /* a model name too long to keep is refused, not cut (two models sharing their first 47 bytes were one) */
    const char *long_model = "source,gpu,gpu_count,model,precision,batch_size_per_gpu,throughput,unit,notes\n"
                             "s,H100,1,resnet50_with_a_rather_long_name_from_a_benchmark_suite_a,amp,256,2700,images/s,v1\n";
    assert_int_equal(cf_crossgpu_parse(long_model, strlen(long_model), "x.csv", &set), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "x.csv:2: column 'model': expected at most 47 characters, got 57"));
}

/* Five made-up GPU types G1..G5 (fp16 peak, bandwidth, memory) for the
 * cross-GPU tests. */
static const struct {
    const char *name;
    double tflops, gbs, gib;
} five_types[] = {{"G1", 100, 900, 16}, {"G2", 150, 700, 24}, {"G3", 300, 2000, 80}, {"G4", 1000, 3300, 80},
                  {"G5", 60, 600, 48}};

static void five_gpus(cf_gpu gpus[5])
{
    memset(gpus, 0, 5 * sizeof *gpus);
    for (int g = 0; g < 5; g++) {
        snprintf(gpus[g].model, sizeof gpus[g].model, "%s", five_types[g].name);
        gpus[g].fp16_tflops = five_types[g].tflops;
        gpus[g].fp32_tflops = five_types[g].tflops / 8;
        gpus[g].memory_bandwidth_gbs = five_types[g].gbs;
        gpus[g].memory_gib = five_types[g].gib;
    }
}

/* Throughputs generated by a power law in peak and bandwidth (no fixed
 * share): the refitted rule recovers it, so the leave-one-out columns are
 * exact while the shipped rule and the simple ratios are not; SUSPECT
 * rows, multi-GPU rows and GPUs outside the table do not count. */
static void test_crossgpu_refit_recovers_rule(void **state)
{
    (void)state;
    cf_gpu gpus[5];
    five_gpus(gpus);
    static const char *const models[] = {"m1", "m2", "m3"};
    cf_buf csv = CF_BUF_INIT;
    cf_buf_printf(&csv, "source,gpu,gpu_count,model,precision,batch_size_per_gpu,throughput,unit,notes\n");
    for (int k = 0; k < 3; k++)
        for (int g = 0; g < 5; g++)
            cf_buf_printf(&csv, "s,%s,1,%s,fp16,64,%.9g,samples/s,benchmark v1\n", five_types[g].name, models[k],
                          (k + 1) * 10.0 * pow(five_types[g].tflops, 0.4) * pow(five_types[g].gbs, 0.5));
    cf_buf_printf(&csv, "s,G1,1,m1,fp16,64,1,samples/s,benchmark v1; SUSPECT: broken\n");
    cf_buf_printf(&csv, "s,G2,8,m1,fp16,64,1,samples/s,benchmark v1\n");
    cf_buf_printf(&csv, "s,NOT-IN-TABLE,1,m1,fp16,64,1,samples/s,benchmark v1\n");
    cf_crossgpu_set set;
    assert_int_equal(cf_crossgpu_parse(csv.data, csv.len, "x.csv", &set), CF_OK);
    cf_carry_validation v;
    assert_int_equal(cf_validate_crossgpu(&set, gpus, 5, &v), CF_OK);
    const cf_carry_score *scores = v.scores;
    assert_int_equal(v.n_pairs, 3 * 5 * 4);
    assert_int_equal(v.n_cross_pairs, 0);
    assert_int_equal(v.n_models, 3);
    assert_true(scores[CF_CARRY_CLOUDFIT_LOMO].stats.max_ape < 1e-6);
    assert_true(scores[CF_CARRY_CLOUDFIT_LOGO].stats.max_ape < 1e-6);
    assert_true(scores[CF_CARRY_CLOUDFIT].stats.max_ape > 0.05);
    assert_true(scores[CF_CARRY_PEAK].stats.max_ape > 0.5);
    assert_string_equal(scores[CF_CARRY_CLOUDFIT_LOGO].name, "cloudfit-logo");
    /* exact refits: every leave-one-GPU-out prediction is inside its
     * interval, whose fitted width went to the floor */
    assert_true(fabs(v.overall.interval_coverage - 1.0) < 1e-12);
    assert_true(fabs(v.sigma_fitted.base - 0.02) < 1e-9);
    assert_true(scores[CF_CARRY_PEAK].stats.interval_coverage < 0); /* no interval */
    /* every ordered pair of the five types, 3 models each */
    assert_int_equal(v.n_gpu_pairs, 20);
    for (size_t i = 0; i < v.n_gpu_pairs; i++)
        assert_int_equal(v.gpu_pairs[i].n, 3);
    cf_carry_validation_free(&v);
    cf_crossgpu_free(&set);
    cf_buf_free(&csv);
}

/* Leave one GPU type out holds the type out of its interval too: G5's
 * row of model m1 scaled by 1e3 (its pairs fall outside any interval) or
 * left out must leave the other pairs into G5 with the same intervals, so
 * the same number of them covered. Before, the σ constants for G5 were
 * fitted on the other pairs' errors under rules that saw G5's pairs: the
 * wild row widened G5's interval from 1 covered pair of 5 to all 5. */
static void crossgpu_scaled_g5(double scale, cf_carry_validation *v, cf_crossgpu_set *set)
{
    static cf_gpu gpus[5];
    five_gpus(gpus);
    static const char *const models[] = {"m1", "m2", "m3", "m4", "m5", "m6"};
    cf_buf csv = CF_BUF_INIT;
    cf_buf_printf(&csv, "source,gpu,gpu_count,model,precision,batch_size_per_gpu,throughput,unit,notes\n");
    for (int k = 0; k < 6; k++)
        for (int g = 0; g < 5; g++) {
            /* a fixed pattern: ±5 % off the power law, G5 ±30 % */
            double noise = exp((g == 4 ? 0.3 : 0.05) * sin(3.7 * k + 1.9 * g * g + 0.3));
            double x = (k + 1) * 10.0 * pow(five_types[g].tflops, 0.4) * pow(five_types[g].gbs, 0.5) * noise;
            if (g == 4 && k == 0) {
                if (scale == 0)
                    continue;
                x *= scale;
            }
            cf_buf_printf(&csv, "s,%s,1,%s,fp16,64,%.9g,samples/s,benchmark v1\n", five_types[g].name, models[k], x);
        }
    assert_int_equal(cf_crossgpu_parse(csv.data, csv.len, "x.csv", set), CF_OK);
    assert_int_equal(cf_validate_crossgpu(set, gpus, 5, v), CF_OK);
    cf_buf_free(&csv);
}

static void test_crossgpu_held_out_type_is_out(void **state)
{
    (void)state;
    cf_carry_validation wild, out;
    cf_crossgpu_set sw, so;
    crossgpu_scaled_g5(1e3, &wild, &sw);
    crossgpu_scaled_g5(0, &out, &so);
    assert_int_equal(wild.n_gpu_pairs, out.n_gpu_pairs);
    int into_g5 = 0;
    for (size_t i = 0; i < wild.n_gpu_pairs; i++) {
        if (strcmp(wild.gpu_pairs[i].to, "G5") != 0)
            continue;
        into_g5++;
        assert_string_equal(wild.gpu_pairs[i].from, out.gpu_pairs[i].from);
        assert_int_equal(wild.gpu_pairs[i].n, 6);
        assert_int_equal(out.gpu_pairs[i].n, 5);
        /* covered pairs: the same 5 pairs, the same intervals (m1's wild pair is outside) */
        double covered_wild = wild.gpu_pairs[i].interval_coverage * 6, covered_out = out.gpu_pairs[i].interval_coverage * 5;
        assert_float_equal(covered_wild, covered_out, 1e-9);
        assert_true(covered_out < 4.5); /* G5's ±30 % is wider than the ±5 % its interval is fitted on */
    }
    assert_int_equal(into_g5, 4);
    cf_carry_validation_free(&wild);
    cf_carry_validation_free(&out);
    cf_crossgpu_free(&sw);
    cf_crossgpu_free(&so);
}

/* Known step-time model parameters the synthetic rows are timed by. */
static cf_perf_params model_truth(double bytes)
{
    cf_perf_params truth = cf_perf_defaults(NULL);
    truth.alpha_s = 0.03;
    truth.beta_s = 0.002;
    truth.contention = 0.04;
    truth.intra_gbps = 40;
    truth.nic_gbps = 50;
    truth.inter_gbps = 4;
    truth.hide = 0.3;
    truth.overhead_s = 0.003;
    truth.network_provenance = CF_PROV_FITTED;
    truth.gradient_bytes = bytes;
    return truth;
}

/* Rows of group synthetic/T4/lab (4 GPUs per VM) at batches 8..256 for
 * each (nodes, GPUs per node) layout, timed by the model `truth`. */
static size_t model_rows(const cf_perf_params *truth, double bytes, const int (*layouts)[2], size_t n_layouts,
                         cf_measurement *rows)
{
    size_t n = 0;
    for (size_t l = 0; l < n_layouts; l++)
        for (int m = 8; m <= 256; m *= 2) {
            cf_measurement *r = &rows[n++];
            memset(r, 0, sizeof *r);
            snprintf(r->model, sizeof r->model, "synthetic");
            snprintf(r->gpu, sizeof r->gpu, "T4");
            snprintf(r->profile, sizeof r->profile, "lab");
            r->hw_gpus_per_node = 4;
            r->num_nodes = layouts[l][0];
            r->num_gpus = layouts[l][0] * layouts[l][1];
            r->local_bsz = m;
            r->step_time_s = cf_perf_step_s(truth, bytes, r->num_nodes, layouts[l][1], m, 1);
        }
    return n;
}

/* Step times generated by the throughput model: fitting two nodes and
 * predicting sixteen is exact up to the fit's tolerance. */
static void test_steps_exact_on_model_data(void **state)
{
    (void)state;
    const double bytes = 40e6;
    cf_perf_params truth = model_truth(bytes);
    cf_measurement rows[256];
    static const int layouts[][2] = {{1, 1}, {1, 2}, {1, 4}, {2, 1}, {2, 2}, {2, 4}, {3, 4}, {8, 4}, {16, 4}};
    size_t n = model_rows(&truth, bytes, layouts, sizeof layouts / sizeof *layouts, rows);
    cf_validate_group *groups = NULL;
    size_t n_groups = 0;
    assert_int_equal(cf_validate_find_groups(rows, n, &groups, &n_groups), CF_OK);
    assert_int_equal(n_groups, 1);
    groups[0].gradient_bytes = bytes;
    groups[0].nominal_inter_gbps = 50;
    cf_validate_options o = {.train_max_nodes = 2};
    cf_ape_stats overall;
    assert_int_equal(cf_validate_steps(rows, n, &o, groups, n_groups, &overall), CF_OK);
    assert_int_equal(groups[0].n_fit, 36);
    assert_int_equal(groups[0].n_pred, 18);
    assert_true(overall.max_ape < 0.03); /* the grid's resolution */
    assert_true(overall.interval_coverage > 0.95); /* exact data: inside the interval */
    assert_int_equal(groups[0].n_buckets, 3); /* 3, 5–8 and 9–16 nodes */
    /* what the reports show of the network, computed by the library */
    assert_true(groups[0].params.inter_gbps > 0);
    assert_float_equal(groups[0].inter_gbps, groups[0].params.inter_gbps, 0);
    assert_non_null(strstr(groups[0].network_source, "fitted from the multi-node rows"));
    free(groups);
}

/* --light-profile: the search's seven runs are fitted (1 GPU at 8, 256 and
 * the middle batch 64; the full node at 8 and 256; the 2-node × 1-GPU
 * probe at 8 and 256), every other row is predicted, and on one GPU — a
 * line α + βm — the batches between are exact (log-log would miss). */
static void test_steps_light_profile(void **state)
{
    (void)state;
    const double bytes = 40e6;
    cf_perf_params truth = model_truth(bytes);
    cf_measurement rows[64];
    static const int layouts[][2] = {{1, 1}, {1, 2}, {1, 4}, {2, 1}, {2, 4}, {4, 4}};
    size_t n = model_rows(&truth, bytes, layouts, sizeof layouts / sizeof *layouts, rows);
    cf_validate_group *groups = NULL;
    size_t n_groups = 0;
    assert_int_equal(cf_validate_find_groups(rows, n, &groups, &n_groups), CF_OK);
    groups[0].gradient_bytes = bytes;
    groups[0].nominal_inter_gbps = 50;
    cf_validate_options o = {.train_max_nodes = 1, .light_profile = 1, .with_2node_probe = 1};
    cf_ape_stats overall;
    assert_int_equal(cf_validate_steps(rows, n, &o, groups, n_groups, &overall), CF_OK);
    assert_int_equal(groups[0].n_fit, 7);
    assert_int_equal(groups[0].n_pred, n - 7);
    const cf_perf_params *fit = &groups[0].params;
    for (int m = 8; m <= 256; m *= 2)
        assert_float_equal(cf_perf_compute_s(fit, m, 1), truth.alpha_s + truth.beta_s * m, 1e-12);
    /* without the probe: one node only */
    o.with_2node_probe = 0;
    assert_int_equal(cf_validate_steps(rows, n, &o, groups, n_groups, &overall), CF_OK);
    assert_int_equal(groups[0].n_fit, 5);
    /* no multi-node row fitted, no GPU table: the NIC's default rate, and the reports say why */
    assert_float_equal(groups[0].inter_gbps, cf_default_inter_gbps(groups[0].params.nic_gbps), 0);
    /* as the warning says it: a guessed NIC (its interval spans the catalog's) */
    assert_string_equal(groups[0].network_source, "GPU not in the GPU table, NIC unknown: default network, 10 Gbit/s "
                                                   "guessed (pass --inter-node-gbps)");
    /* each scored row as the model read it (validate --rows) */
    cf_validate_row_prediction per_row[64];
    memset(per_row, 0, sizeof per_row);
    o.per_row = per_row;
    assert_int_equal(cf_validate_steps(rows, n, &o, groups, n_groups, &overall), CF_OK);
    size_t scored = 0;
    for (size_t i = 0; i < n; i++)
        if (per_row[i].scored) {
            scored++;
            assert_int_equal(per_row[i].gpus_per_node, cf_measurement_gpus_per_node(&rows[i]));
        }
    assert_int_equal(scored, n - 5);
    free(groups);
}

/* A GPU table row and a catalog VM with what cf_validate_prepare reads. */
static cf_gpu table_gpu(const char *model, double fp32_tflops, double bandwidth_gbs, double memory_gib)
{
    cf_gpu gpu;
    memset(&gpu, 0, sizeof gpu);
    snprintf(gpu.model, sizeof gpu.model, "%s", model);
    gpu.fp32_tflops = fp32_tflops;
    gpu.memory_bandwidth_gbs = bandwidth_gbs;
    gpu.memory_gib = memory_gib;
    return gpu;
}

static cf_vm catalog_vm(const char *cloud, const char *instance_type, const char *gpu, int gpu_count, double nic_gbps)
{
    cf_vm vm;
    memset(&vm, 0, sizeof vm);
    snprintf(vm.cloud, sizeof vm.cloud, "%s", cloud);
    snprintf(vm.instance_type, sizeof vm.instance_type, "%s", instance_type);
    snprintf(vm.gpu_model, sizeof vm.gpu_model, "%s", gpu);
    vm.gpu_count = gpu_count;
    vm.network_gbps = nic_gbps;
    return vm;
}

/* Two groups of one model and GPU that differ in precision, on 4- and
 * 8-GPU VMs: each group's NIC is its own VM size's (the fp16 group took
 * the first row's, the 4-GPU VM's); within a group the multi-node rows
 * choose it (a 1-GPU run on a 1-GPU VM does not), and multi-node rows on
 * two sizes are said (hw_other_line). The --params count of a model is
 * matched as the size table's names are, the last one given winning. */
static void test_prepare_group_vm_size(void **state)
{
    (void)state;
    cf_gpu gpu = table_gpu("G9", 10, 900, 80);
    cf_vm vms[3] = {catalog_vm("aws", "g9.1", "G9", 1, 25), catalog_vm("aws", "g9.4", "G9", 4, 100),
                    catalog_vm("aws", "g9.8", "G9", 8, 400)};
    cf_measurement rows[8];
    memset(rows, 0, sizeof rows);
    /* {precision (0: fp32, 1: fp16), hw, nodes, gpus} */
    static const int shape[8][4] = {{0, 4, 1, 1}, {0, 4, 2, 2}, {1, 1, 1, 1}, {1, 8, 1, 8},
                                    {1, 8, 2, 2}, {1, 8, 2, 16}, {1, 4, 3, 3}, {1, 8, 4, 4}};
    for (int i = 0; i < 8; i++) {
        snprintf(rows[i].model, sizeof rows[i].model, "Syn-Net");
        snprintf(rows[i].gpu, sizeof rows[i].gpu, "G9");
        snprintf(rows[i].profile, sizeof rows[i].profile, "aws");
        rows[i].has_precision = 1;
        rows[i].precision = shape[i][0] ? CF_PREC_FP16 : CF_PREC_FP32;
        rows[i].hw_gpus_per_node = shape[i][1];
        rows[i].num_nodes = shape[i][2];
        rows[i].num_gpus = shape[i][3];
        rows[i].local_bsz = 32;
        rows[i].step_time_s = 0.1;
        rows[i].line = i + 2;
    }
    cf_validate_group *groups = NULL;
    size_t n_groups = 0;
    assert_int_equal(cf_validate_find_groups(rows, 8, &groups, &n_groups), CF_OK);
    assert_int_equal(n_groups, 2);
    const cf_model_param params[2] = {{.name = "syn_net", .parameters = 1e6}, {.name = "SYNNET", .parameters = 3e6}};
    cf_validate_context ctx = {.gpus = &gpu, .n_gpus = 1, .vms = vms, .n_vms = 3, .params = params, .n_params = 2};
    cf_validate_prepare(rows, 8, &ctx, groups, n_groups);
    assert_false(groups[0].skipped);
    assert_float_equal(groups[0].gradient_bytes, 3e6 * 4, 0); /* the last --params, matched as the table's names */
    assert_int_equal(groups[0].hw_gpus_per_node, 4);
    assert_float_equal(groups[0].nominal_inter_gbps, 100, 0);
    assert_int_equal(groups[0].hw_other_line, 0);
    assert_int_equal(groups[1].hw_gpus_per_node, 8); /* not row 2's 1-GPU VM, nor the fp32 group's 4 */
    assert_int_equal(groups[1].hw_line, 6);
    assert_non_null(groups[1].network_vm);
    assert_string_equal(groups[1].network_vm->instance_type, "g9.8");
    assert_float_equal(groups[1].nominal_inter_gbps, 400, 0);
    assert_int_equal(groups[1].hw_other, 4); /* the 3-node row ran on 4-GPU VMs */
    assert_int_equal(groups[1].hw_other_line, 8);
    /* the table told the two groups apart by nothing */
    assert_string_equal(groups[0].label, "Syn-Net/G9/aws fp32");
    assert_string_equal(groups[1].label, "Syn-Net/G9/aws fp16");
    free(groups);
    rows[0].has_precision = 0; /* no precision column: none in the label */
    assert_int_equal(cf_validate_find_groups(rows, 1, &groups, &n_groups), CF_OK);
    assert_string_equal(groups[0].label, "Syn-Net/G9/aws");
    free(groups);
}

/* A cluster whose GPU and GPUs per VM the catalog sells with several NICs
 * (here 100, 400 and 1,600 Gbit/s) ran on one of them, which the rows do
 * not say: the default network takes the slowest and its interval spans
 * the fastest (DGX A100 rows under their own name were taken for GCP's
 * 100 Gbit/s TCP VM: 96 % error, 8 % covered); a network fitted on the
 * rows is bounded by the fastest, not capped at the slowest; a campaign
 * named after a cloud counts only that cloud's VMs; --inter-node-gbps
 * says which, and nothing is spanned. */
static void test_prepare_nic_span(void **state)
{
    (void)state;
    const double bytes = 40e6;
    cf_gpu gpu = table_gpu("T4", 8, 320, 16);
    cf_vm vms[3] = {catalog_vm("gcp", "t4x4-gcp", "T4", 4, 100), catalog_vm("aws", "t4x4-aws", "T4", 4, 400),
                    catalog_vm("azure", "t4x4-azure", "T4", 4, 1600)};
    /* the truth: a fast fabric (1,600 Gbit/s RDMA, half of it effective) */
    cf_perf_params truth = model_truth(bytes);
    truth.nic_gbps = 1600;
    truth.inter_gbps = 800;
    cf_measurement rows[64];
    static const int layouts[][2] = {{1, 1}, {1, 2}, {1, 4}, {2, 1}, {2, 4}};
    size_t n = model_rows(&truth, bytes, layouts, sizeof layouts / sizeof *layouts, rows);
    const cf_model_param params[1] = {{.name = "synthetic", .parameters = bytes / 4}};
    for (int given = 0; given <= 1; given++)
        for (int probe = 0; probe <= 1; probe++) {
            cf_validate_group *groups = NULL;
            size_t n_groups = 0;
            assert_int_equal(cf_validate_find_groups(rows, n, &groups, &n_groups), CF_OK);
            cf_validate_context ctx = {.gpus = &gpu, .n_gpus = 1, .vms = vms, .n_vms = 3, .params = params,
                                       .n_params = 1, .inter_node_gbps = given ? 1600 : 0};
            cf_validate_prepare(rows, n, &ctx, groups, n_groups);
            cf_validate_group *g = &groups[0];
            assert_float_equal(g->nominal_inter_gbps, given ? 1600 : 100, 0);
            assert_float_equal(g->nic_span_gbps[0], given ? 1600 : 100, 0);
            assert_float_equal(g->nic_span_gbps[1], 1600, 0);
            cf_validate_options o = {.train_max_nodes = 1, .with_2node_probe = probe};
            cf_ape_stats overall;
            assert_int_equal(cf_validate_steps(rows, n, &o, groups, n_groups, &overall), CF_OK);
            if (probe) { /* fitted, bounded by the fastest: the fast fabric is found */
                assert_int_equal(g->params.network_provenance, CF_PROV_FITTED);
                assert_float_equal(g->params.nic_gbps, 1600, 0);
                assert_true(overall.median_ape < 0.05);
            } else if (!given) { /* the slowest's guess, its interval reaching the fastest */
                assert_int_equal(g->params.network_provenance, CF_PROV_DEFAULT);
                assert_float_equal(g->params.nic_gbps, 100, 0);
                assert_float_equal(g->params.nic_span_gbps[1], 1600, 0);
                assert_true(overall.median_ape > 0.2);
                assert_true(overall.interval_coverage > 0.9);
                assert_non_null(strstr(g->network_source, "the interval spans theirs, to 1600 Gbit/s"));
            } else { /* said: nothing spanned, and the guess is right */
                assert_float_equal(g->params.nic_span_gbps[1], 0, 0);
                assert_true(overall.median_ape < 0.1);
            }
            free(groups);
        }
    /* a campaign named after a cloud: that cloud's VMs alone */
    for (size_t i = 0; i < n; i++)
        snprintf(rows[i].profile, sizeof rows[i].profile, "aws");
    cf_validate_group *groups = NULL;
    size_t n_groups = 0;
    assert_int_equal(cf_validate_find_groups(rows, n, &groups, &n_groups), CF_OK);
    cf_validate_context ctx = {.gpus = &gpu, .n_gpus = 1, .vms = vms, .n_vms = 3, .params = params, .n_params = 1};
    cf_validate_prepare(rows, n, &ctx, groups, n_groups);
    assert_float_equal(groups[0].nominal_inter_gbps, 400, 0);
    assert_float_equal(groups[0].nic_span_gbps[0], 400, 0);
    assert_float_equal(groups[0].nic_span_gbps[1], 400, 0);
    free(groups);
}

/* --train-gpus A,B --train-gpus C: every name, no limit; an empty one
 * ("", ",", "A,,B", "A,") is refused (they were dropped, and n = 0 meant
 * every GPU). */
static void test_split_name_lists(void **state)
{
    (void)state;
    const char *items[] = {"A100,T4", "V100"};
    char **names = NULL;
    size_t n = 0;
    assert_int_equal(cf_names_split_list(items, 2, &names, &n), CF_OK);
    assert_int_equal(n, 3);
    assert_string_equal(names[0], "A100");
    assert_string_equal(names[1], "T4");
    assert_string_equal(names[2], "V100");
    free(names);
    static const char *const bad[] = {"", ",", "A,,B", "A,", ",A"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(cf_names_split_list(&bad[i], 1, &names, &n), CF_ERR_USAGE);
        assert_null(names);
    }
    assert_string_equal(cf_error_message(), "expects NAME[,NAME...], got ',A' (an empty name)");
    char many[4000] = "";
    for (int i = 0; i < 300; i++) /* past the 1024 bytes and 64 names it cut at */
        snprintf(many + strlen(many), sizeof many - strlen(many), "%sgpu%d", i ? "," : "", i);
    const char *one[] = {many};
    assert_int_equal(cf_names_split_list(one, 1, &names, &n), CF_OK);
    assert_int_equal(n, 300);
    assert_string_equal(names[299], "gpu299");
    free(names);
}

/* Model names in measurement files vary in case and separators. */
static void test_model_size_names(void **state)
{
    (void)state;
    assert_non_null(cf_model_size_find("ResNet-50"));
    assert_float_equal(cf_model_size_find("resnet_50")->parameters, 25557032, 0);
    assert_float_equal(cf_model_size_find("GPT2-Medium")->parameters, 354823168, 0);
    assert_float_equal(cf_model_size_find("BERT large")->parameters, 335141888, 0);
    assert_null(cf_model_size_find("resnet5"));
    assert_null(cf_model_size_find("resnet500"));
    int n = 0;
    const cf_model_size *all = cf_model_sizes(&n);
    for (int i = 0; i < n; i++) {
        assert_true(all[i].parameters >= 1e6);
        assert_true(strlen(all[i].source) > 0);
        for (int j = 0; j < i; j++) /* no two entries that the matching cannot tell apart */
            if (cf_model_size_find(all[j].name) == &all[i])
                fail_msg("'%s' and '%s' collide", all[i].name, all[j].name);
    }
}

/* No row scored: the first group skipped or not fitted is named, with its
 * hint; else the training subset is. */
static void test_nothing_predicted(void **state)
{
    (void)state;
    cf_validate_group g[2];
    memset(g, 0, sizeof g);
    snprintf(g[0].model, sizeof g[0].model, "resnet50");
    snprintf(g[0].gpu, sizeof g[0].gpu, "T4");
    snprintf(g[1].model, sizeof g[1].model, "bert");
    snprintf(g[1].gpu, sizeof g[1].gpu, "V100");
    cf_validate_options vo = {.train_max_nodes = 2, .with_2node_probe = 1};
    assert_int_equal(cf_validate_nothing_predicted("m.csv", &vo, g, 2), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "m.csv: nothing could be predicted: every row is in the training "
                                            "subset (≤ 2 nodes and the 2-node probe)");
    /* the hint is built from the options in force; --fit-all-rows scores the
     * same rows, so it is never what would help */
    assert_string_equal(cf_error_hint_text(),
                        "add rows with more nodes, lower --train-max-nodes (now 2), leave out --with-2node-probe, or "
                        "fit only the search's light profile (--light-profile, without --train-max-nodes) to score "
                        "the other single-node rows");
    cf_error_clear();
    vo = (cf_validate_options){.train_max_nodes = 1, .fit_all_rows = 1};
    assert_int_equal(cf_validate_nothing_predicted("m.csv", &vo, g, 2), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "(≤ 1 node)"));
    assert_null(strstr(cf_error_hint_text(), "pass --fit-all-rows"));   /* it was passed */
    assert_null(strstr(cf_error_hint_text(), "lower --train-max-nodes")); /* 1 is the least */
    assert_non_null(strstr(cf_error_hint_text(), "--fit-all-rows does not change which rows are scored"));
    cf_error_clear();
    vo = (cf_validate_options){.train_max_nodes = 1, .light_profile = 1};
    assert_int_equal(cf_validate_nothing_predicted("m.csv", &vo, g, 2), CF_ERR_INVALID);
    assert_string_equal(cf_error_hint_text(), "add rows beyond the light profile (other batches, GPU counts or nodes)");
    cf_error_clear();
    vo = (cf_validate_options){.train_max_nodes = 1};
    g[1].skipped = 1;
    snprintf(g[1].message, sizeof g[1].message, "no parameter count");
    snprintf(g[1].hint, sizeof g[1].hint, "give --params bert=110e6");
    assert_int_equal(cf_validate_nothing_predicted("m.csv", &vo, g, 2), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "m.csv: nothing could be predicted: bert/V100: no parameter count");
    assert_string_equal(cf_error_hint_text(), "give --params bert=110e6");
    cf_error_clear();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ape_summary),
        cmocka_unit_test(test_target_selection),
        cmocka_unit_test(test_gns_prediction_exact_on_model_data),
        cmocka_unit_test(test_gns_prediction_follows_trend),
        cmocka_unit_test(test_gns_long_m0_run_used_whole),
        cmocka_unit_test(test_gns_any_number_of_runs),
        cmocka_unit_test(test_trace_reader_errors),
        cmocka_unit_test(test_trace_models_agree),
        cmocka_unit_test(test_trace_models_listed_and_something_scored),
        cmocka_unit_test(test_trace_runs_one_row_per_epoch),
        cmocka_unit_test(test_trace_progress_in_m0_steps),
        cmocka_unit_test(test_crossgpu_reader),
        cmocka_unit_test(test_crossgpu_refit_recovers_rule),
        cmocka_unit_test(test_crossgpu_held_out_type_is_out),
        cmocka_unit_test(test_steps_exact_on_model_data),
        cmocka_unit_test(test_steps_light_profile),
        cmocka_unit_test(test_prepare_group_vm_size),
        cmocka_unit_test(test_prepare_nic_span),
        cmocka_unit_test(test_split_name_lists),
        cmocka_unit_test(test_model_size_names),
        cmocka_unit_test(test_nothing_predicted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
