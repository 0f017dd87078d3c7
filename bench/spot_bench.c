/* The spot preemption model against the shipped traces (bench/spot.sh,
 * docs/spot.md). For each 4- and 16-node trace and a fixed plan of W hours
 * of work (a GPT-2 XL checkpoint, 125 MB/s storage, 10 min start-up), it
 * compares the model's p50/p90 wall time with the replay of the trace
 * (a start every 15 min), for several models:
 *   in-sample   LN-AR fitted to this trace alone
 *   leave-out   LN-AR from the table refitted without this trace (the
 *               region row of the other traces, else the pooled row)
 *   shipped     the table recommend uses (this trace is in it)
 *   block24/72  circular block bootstrap of this trace, 24 h / 72 h blocks
 *   cycles      i.i.d. bootstrap of this trace's UP/DOWN cycles
 *   cycles x4   the same in blocks of 4 consecutive cycles
 * and the advisor-band model cloudfit used before (15 %/month, N × rate).
 * Usage: spot_bench [DIR] [--single] [--band]   (DIR default examples/spot-traces)
 *        spot_bench --table DIR                  (the C table of advisor/spot_table.c) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/advisor/spot.h"
#include "cloudfit/advisor/spot_boot.h"
#include "cloudfit/advisor/spot_model.h"
#include "cloudfit/advisor/spot_plan.h"
#include "cloudfit/advisor/spot_table.h"
#include "cloudfit/profiler/spot_traces.h"

#define PARAMS 1.558e9 /* GPT-2 XL */
#define STARTUP_MIN 10.0
#define BAND_TRACES 12

static const double JOBS[] = {6.0, 24.0, 72.0};
#define N_JOBS 3

enum { V_INSAMPLE, V_LEAVEOUT, V_SHIPPED, V_BLOCK24, V_BLOCK72, V_CYCLES, V_CYCLES4, N_VARIANTS };
static const char *const VARIANT_NAMES[] = {"in-sample LN-AR",      "leave-trace-out LN-AR", "shipped table LN-AR",
                                            "block bootstrap 24 h", "block bootstrap 72 h",  "cycle bootstrap",
                                            "cycle bootstrap x4"};

static double C_H, R_H;

static void die(void)
{
    fprintf(stderr, "spot_bench: %s\n", cf_error_message());
    exit(1);
}

static const char *base(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static void print_table(const cf_spot_trace_set *set)
{
    cf_spot_fitted_row *rows = NULL;
    size_t n = 0;
    if (cf_spot_table_fit(set->traces, set->n, &rows, &n) != CF_OK)
        die();
    for (size_t i = 0; i < n; i++) {
        const cf_spot_fitted_row *r = &rows[i];
        const cf_spot_process *p = &r->process;
        printf("    {\"%s\", \"%s\", %d, \"%s\", %d, {%.4f, %.4f, %.4f, %.4f, %.4f, %.4f, %.4f, %.4f}, %d, %.3f, %.2f, %d,\n"
               "     \"%s\"},\n",
               r->cloud, r->gpu, r->size_class, r->region, r->multi_node, p->up_median_h, p->up_sigma, p->down_median_h,
               p->down_sigma, p->kd_per_h, p->kr_per_h, p->qf, p->qr, r->cycles, r->avail1, r->rate1_per_node_day,
               r->inner_pooled, r->traces);
    }
    free(rows);
}

/* Replays of a plan on a path from the given starts: sorted wall times. */
static double *replays(const cf_spot_path *p, const size_t *seg, const double *off, size_t n, int nodes, double w,
                       double tau)
{
    cf_spot_plan plan = {.n_types = 1, .nodes = {nodes, 0}, .work_h = w, .checkpoint_h = C_H, .restart_h = R_H,
                         .interval_h = tau};
    cf_spot_run *runs = malloc(n * sizeof *runs);
    double *h = malloc(n * sizeof *h);
    if (!runs || !h)
        exit(1);
    cf_spot_replay_many(p, seg, off, n, &plan, runs);
    for (size_t i = 0; i < n; i++)
        h[i] = runs[i].wall_h;
    free(runs);
    cf_quantile(h, n, 0.5); /* sorts */
    return h;
}

typedef struct {
    cf_spot_path path;
    size_t *seg;
    double *off;
    size_t n;
    double tau;
} model_paths;

static void model_from_process(const cf_spot_process *p, int nodes, unsigned long seed, model_paths *m)
{
    if (cf_spot_path_generate(p, nodes, CF_SPOT_MC_PATH_HOURS, seed, &m->path) != CF_OK)
        die();
}

static void finish_model(model_paths *m, int nodes, unsigned long seed)
{
    cf_spot_path_stats st;
    cf_spot_path_stats_of(&m->path, nodes, &st);
    m->tau = cf_daly_interval_h(C_H, st.mtbf_h);
    m->n = CF_SPOT_MC_STARTS;
    m->seg = malloc(m->n * sizeof *m->seg);
    m->off = malloc(m->n * sizeof *m->off);
    if (!m->seg || !m->off || cf_spot_starts_random(&m->path, m->n, CF_SPOT_START_FRACTION, seed, m->seg, m->off) != CF_OK)
        die();
}

static void free_model(model_paths *m)
{
    cf_spot_path_free(&m->path);
    free(m->seg);
    free(m->off);
}

typedef struct {
    int rows, p50_ok, p90_ok, deadline_ok;
    double e50[64], e90[64], met[64];
} score;

static int cmp_abs(const void *a, const void *b)
{
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return (x > y) - (x < y);
}

static double median_abs(double *v, int n)
{
    if (n == 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_abs);
    return n % 2 ? fabs(v[n / 2]) : 0.5 * (fabs(v[n / 2 - 1]) + fabs(v[n / 2]));
}

/* One trace: every variant × every job length. */
static void bench_trace(const cf_spot_trace_set *set, size_t ti, score *scores, int band, int verbose)
{
    const cf_spot_trace *t = &set->traces[ti];
    int N = t->vm[0].requested;
    cf_spot_path trace_path;
    if (cf_spot_path_from_trace(t, &trace_path) != CF_OK)
        die();
    size_t cap = (size_t)(trace_path.total_h / CF_SPOT_REPLAY_STEP_H) + 2;
    size_t *gseg = malloc(cap * sizeof *gseg);
    double *goff = malloc(cap * sizeof *goff);
    size_t ng = cf_spot_starts_grid(&trace_path, CF_SPOT_REPLAY_STEP_H, gseg, goff);

    model_paths models[N_VARIANTS];
    memset(models, 0, sizeof models);
    unsigned long seed = CF_SPOT_SEED + 1000 * ti;
    /* in-sample */
    cf_spot_runs runs = {0};
    if (cf_spot_runs_add(&runs, t) != CF_OK)
        die();
    cf_spot_process own;
    cf_spot_process_fit(&runs, NULL, &own);
    cf_spot_runs_free(&runs);
    model_from_process(&own, N, seed, &models[V_INSAMPLE]);
    /* leave this trace out */
    cf_spot_trace *others = malloc(set->n * sizeof *others);
    size_t n_others = 0;
    for (size_t i = 0; i < set->n; i++)
        if (i != ti)
            others[n_others++] = set->traces[i];
    cf_spot_fitted_row *rows = NULL;
    size_t n_rows = 0;
    if (cf_spot_table_fit(others, n_others, &rows, &n_rows) != CF_OK)
        die();
    cf_spot_process loo;
    cf_spot_row_kind loo_kind;
    cf_spot_model_lookup_in(rows, n_rows, t->vm[0].cloud, t->vm[0].gpu, t->vm[0].gpus_per_vm, t->vm[0].region, N,
                            &loo, &loo_kind);
    free(rows);
    free(others);
    model_from_process(&loo, N, seed + 1, &models[V_LEAVEOUT]);
    /* the shipped table */
    cf_spot_lookup shipped;
    cf_spot_model_lookup(t->vm[0].cloud, t->vm[0].gpu, t->vm[0].gpus_per_vm, t->vm[0].region, N, &shipped);
    model_from_process(&shipped.row->process, N, seed + 2, &models[V_SHIPPED]);
    /* resampling families */
    if (cf_spot_path_block_bootstrap(&trace_path, 24.0, CF_SPOT_MC_PATH_HOURS, seed + 3, &models[V_BLOCK24].path) !=
            CF_OK ||
        cf_spot_path_block_bootstrap(&trace_path, 72.0, CF_SPOT_MC_PATH_HOURS, seed + 5, &models[V_BLOCK72].path) !=
            CF_OK ||
        cf_spot_path_cycle_bootstrap(&trace_path, 1, CF_SPOT_MC_PATH_HOURS, seed + 4, &models[V_CYCLES].path) != CF_OK ||
        cf_spot_path_cycle_bootstrap(&trace_path, 4, CF_SPOT_MC_PATH_HOURS, seed + 6, &models[V_CYCLES4].path) != CF_OK)
        die();
    for (int v = 0; v < N_VARIANTS; v++)
        finish_model(&models[v], N, seed + 10 + (unsigned long)v);

    if (verbose) {
        printf("\n%s (N = %d, %.1f days; leave-out row: %s)\n", base(t->name), N, trace_path.total_h / 24,
               cf_spot_row_kind_name(loo_kind));
        printf("  %-22s %4s | %6s %6s %6s | %6s %6s %6s | %6s %6s | %5s%s\n", "model", "W h", "rp10", "rp50", "rp90",
               "mp10", "mp50", "mp90", "e50", "e90", "met", band ? " | P(bars) band p50 / p90" : "");
    }
    for (int j = 0; j < N_JOBS; j++) {
        double w = JOBS[j];
        for (int v = 0; v < N_VARIANTS; v++) {
            model_paths *m = &models[v];
            double *rep = replays(&trace_path, gseg, goff, ng, N, w, m->tau);
            double *mod = replays(&m->path, m->seg, m->off, m->n, N, w, m->tau);
            double rp[3] = {cf_quantile_sorted(rep, ng, .1), cf_quantile_sorted(rep, ng, .5),
                            cf_quantile_sorted(rep, ng, .9)};
            double mp[3] = {cf_quantile_sorted(mod, m->n, .1), cf_quantile_sorted(mod, m->n, .5),
                            cf_quantile_sorted(mod, m->n, .9)};
            double q = cf_quantile_sorted(mod, m->n, CF_SPOT_DEADLINE_QUANTILE);
            size_t met = 0;
            for (size_t i = 0; i < ng; i++)
                met += rep[i] <= q;
            double e50 = mp[1] / rp[1] - 1, e90 = mp[2] / rp[2] - 1, share = (double)met / (double)ng;
            int wraps = rp[2] > 0.5 * trace_path.total_h;
            if (!wraps) {
                score *s = &scores[v];
                s->e50[s->rows] = e50;
                s->e90[s->rows] = e90;
                s->met[s->rows] = share;
                s->rows++;
                s->p50_ok += fabs(e50) <= 0.15;
                s->p90_ok += fabs(e90) <= 0.25;
                s->deadline_ok += share >= 0.85;
            }
            char band_text[96] = "";
            if (band && v == V_INSAMPLE && !wraps) {
                /* How often would a trace of this length, drawn from the
                 * model itself, meet both bars? */
                int ok = 0;
                double b50[BAND_TRACES], b90[BAND_TRACES];
                for (int b = 0; b < BAND_TRACES; b++) {
                    cf_spot_path syn;
                    if (cf_spot_path_generate(&own, N, trace_path.total_h, seed + 100 + (unsigned long)b, &syn) !=
                        CF_OK)
                        die();
                    size_t cap2 = (size_t)(syn.total_h) + 2;
                    size_t *s2 = malloc(cap2 * sizeof *s2);
                    double *o2 = malloc(cap2 * sizeof *o2);
                    size_t n2 = cf_spot_starts_grid(&syn, 1.0, s2, o2);
                    double *x = replays(&syn, s2, o2, n2, N, w, m->tau);
                    b50[b] = cf_quantile_sorted(x, n2, .5);
                    b90[b] = cf_quantile_sorted(x, n2, .9);
                    ok += fabs(mp[1] / b50[b] - 1) <= 0.15 && fabs(mp[2] / b90[b] - 1) <= 0.25;
                    free(x);
                    free(s2);
                    free(o2);
                    cf_spot_path_free(&syn);
                }
                snprintf(band_text, sizeof band_text, " | %.2f  %4.0f-%-4.0f / %4.0f-%-4.0f", (double)ok / BAND_TRACES,
                         cf_quantile(b50, BAND_TRACES, .1), cf_quantile_sorted(b50, BAND_TRACES, .9),
                         cf_quantile(b90, BAND_TRACES, .1), cf_quantile_sorted(b90, BAND_TRACES, .9));
            }
            if (verbose)
                printf("  %-22s %3.0f%s | %6.1f %6.1f %6.1f | %6.1f %6.1f %6.1f | %+5.0f%% %+5.0f%% | %5.2f%s\n",
                       VARIANT_NAMES[v], w, wraps ? "W" : " ", rp[0], rp[1], rp[2], mp[0], mp[1], mp[2], 100 * e50,
                       100 * e90, share, band_text);
            free(rep);
            free(mod);
        }
        if (verbose)
            printf("  %-22s %3.0f  | advisor band 15 %%/month, N x rate: %.1f h\n", "cloudfit before", w,
                   R_H + w * cf_spot_time_factor(15.0, N, C_H, R_H, NULL));
    }
    for (int v = 0; v < N_VARIANTS; v++)
        free_model(&models[v]);
    free(gseg);
    free(goff);
    cf_spot_path_free(&trace_path);
}

static void summary(const char *what, score *scores)
{
    printf("\n%s: scored rows (replay p90 within half the trace)\n", what);
    for (int v = 0; v < N_VARIANTS; v++) {
        score *s = &scores[v];
        double minmet = 1;
        for (int i = 0; i < s->rows; i++)
            minmet = fmin(minmet, s->met[i]);
        printf("  %-22s p50 within 15 %%: %d/%d (median |e| %.0f %%); p90 within 25 %%: %d/%d (median |e| %.0f %%); "
               "replays meeting the q95 deadline >= 0.85: %d/%d (lowest %.2f)\n",
               VARIANT_NAMES[v], s->p50_ok, s->rows, 100 * median_abs(s->e50, s->rows), s->p90_ok, s->rows,
               100 * median_abs(s->e90, s->rows), s->deadline_ok, s->rows, minmet);
    }
}

/* The claim recommend makes: a plan shown as meeting a deadline at 0.9
 * (the shipped table, recommend's Monte Carlo size, the model's q95) —
 * what share of each trace's replays meet that deadline. */
static void deadline_claim(const cf_spot_trace_set *set)
{
    printf("\nDeadline claim as recommend makes it (shipped table, %0.f h path, %d starts; deadline = model q95):\n",
           CF_SPOT_RECOMMEND_PATH_HOURS, CF_SPOT_RECOMMEND_STARTS);
    cf_spot_mc_settings settings = {CF_SPOT_RECOMMEND_PATH_HOURS, CF_SPOT_RECOMMEND_STARTS, CF_SPOT_SEED};
    cf_spot_mc *mc = NULL;
    if (cf_spot_mc_new(&settings, &mc) != CF_OK)
        die();
    size_t met_all = 0, n_all = 0, rows = 0, ok_rows = 0;
    double lowest = 1;
    for (size_t i = 0; i < set->n; i++) {
        const cf_spot_trace *t = &set->traces[i];
        int nodes = t->vm[0].requested;
        if (nodes < 2)
            continue;
        cf_spot_lookup l;
        cf_spot_model_lookup(t->vm[0].cloud, t->vm[0].gpu, t->vm[0].gpus_per_vm, t->vm[0].region, nodes, &l);
        cf_spot_path path;
        if (cf_spot_path_from_trace(t, &path) != CF_OK)
            die();
        size_t cap = (size_t)(path.total_h / CF_SPOT_REPLAY_STEP_H) + 2;
        size_t *seg = malloc(cap * sizeof *seg);
        double *off = malloc(cap * sizeof *off);
        size_t n = cf_spot_starts_grid(&path, CF_SPOT_REPLAY_STEP_H, seg, off);
        for (int j = 0; j < N_JOBS; j++) {
            cf_spot_request req = {.process = &l.row->process, .nodes = nodes, .work_h = JOBS[j], .checkpoint_h = C_H,
                                   .restart_h = R_H, .spot_usd_per_node_h = 1};
            cf_spot_estimate e;
            if (cf_spot_mc_estimate(mc, &req, &e) != CF_OK)
                die();
            double *rep = replays(&path, seg, off, n, nodes, JOBS[j], e.interval_h);
            size_t met = 0;
            for (size_t k = 0; k < n; k++)
                met += rep[k] <= e.spot.q_h;
            int wraps = cf_quantile_sorted(rep, n, 0.9) > 0.5 * path.total_h;
            free(rep);
            printf("  %-55s W %3.0f h: deadline %6.1f h met by %.3f of %zu replays%s\n", base(t->name), JOBS[j],
                   e.spot.q_h, (double)met / (double)n, n, wraps ? " (wraps: not scored)" : "");
            if (wraps)
                continue;
            rows++;
            ok_rows += (double)met / (double)n >= 0.85;
            met_all += met;
            n_all += n;
            lowest = fmin(lowest, (double)met / (double)n);
        }
        free(seg);
        free(off);
        cf_spot_path_free(&path);
    }
    printf("  scored rows: %zu; all their replays: %.3f met the deadline; rows >= 0.85: %zu/%zu (lowest %.3f)\n",
           rows, (double)met_all / (double)(n_all ? n_all : 1), ok_rows, rows, lowest);
    cf_spot_mc_free(mc);
}

int main(int argc, char **argv)
{
    const char *dir = "examples/spot-traces";
    int single = 0, band = 0, table = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--single") == 0)
            single = 1;
        else if (strcmp(argv[i], "--band") == 0)
            band = 1;
        else if (strcmp(argv[i], "--table") == 0)
            table = 1;
        else
            dir = argv[i];
    }
    cf_spot_trace_set set;
    if (cf_spot_trace_set_load(dir, &set) != CF_OK)
        die();
    if (table) {
        print_table(&set);
        return 0;
    }
    cf_checkpoint_costs(cf_checkpoint_bytes(PARAMS, CF_OPT_ADAM), CF_DEFAULT_STORAGE_MB_PER_S, 0, STARTUP_MIN, &C_H,
                        &R_H);
    printf("spot_bench: %zu traces from %s; plan: checkpoint %.2f min (%.3g parameters, Adam, %.0f MB/s), restart "
           "%.2f min; Monte Carlo %d starts on a %.0f h path; replay a start every %.2f h; deadline claim = model "
           "q%.0f\n",
           set.n, dir, C_H * 60, PARAMS, CF_DEFAULT_STORAGE_MB_PER_S, R_H * 60, CF_SPOT_MC_STARTS,
           CF_SPOT_MC_PATH_HOURS, CF_SPOT_REPLAY_STEP_H, 100 * CF_SPOT_DEADLINE_QUANTILE);
    printf("columns: replay p10/p50/p90, model p10/p50/p90 (h), errors of the model p50 and p90, met = share of "
           "replays done by the model's q95; W = wraps (replay p90 > half the trace: not scored)\n");
    score multi[N_VARIANTS], one[N_VARIANTS];
    memset(multi, 0, sizeof multi);
    memset(one, 0, sizeof one);
    for (size_t i = 0; i < set.n; i++)
        if (set.traces[i].vm[0].requested > 1)
            bench_trace(&set, i, multi, band, 1);
    summary("4- and 16-node traces (the acceptance rows)", multi);
    deadline_claim(&set);
    if (single) {
        for (size_t i = 0; i < set.n; i++)
            if (set.traces[i].vm[0].requested == 1)
                bench_trace(&set, i, one, 0, 0);
        summary("1-node traces (where PHI, RHO and the q95 rule were chosen)", one);
    }
    cf_spot_trace_set_free(&set);
    return 0;
}
