/* The spot model on outside input (advisor/spot_*.c, behind `simulate`
 * and `simulate --calibrate`): the input is parsed as a trace; when it
 * parses, a few replays (spot and mixed) run on it, the table is fitted
 * to it and a short path is drawn from the fitted row. A first line
 * "#model a b c d e f g h i j" gives a process's ten numbers directly
 * (medians, sigmas, rates, probabilities, regime spreads) for a path of
 * 100 h. Every call must end: an error or an answer, never a loop. */
#include <math.h>

#include "fuzz.h"
#include "cloudfit/advisor/spot_model.h"
#include "cloudfit/advisor/spot_replay.h"
#include "cloudfit/advisor/spot_table.h"
#include "cloudfit/profiler/spot_traces.h"
#include "../advisor/spot/spot_replay_internal.h"

static void draw(const cf_spot_process *p, int nodes, double hours)
{
    cf_spot_path path;
    cf_status st = cf_spot_path_generate(p, nodes, hours, 1, &path);
    fuzz_check_error(st);
    if (st == CF_OK)
        cf_spot_path_free(&path);
}

static void model_line(const char *text)
{
    if (strncmp(text, "#model", 6) != 0)
        return;
    double v[10] = {0};
    const char *s = text + 6;
    for (int i = 0; i < 10; i++) {
        char *end;
        v[i] = strtod(s, &end);
        if (end == s)
            break;
        s = end;
    }
    cf_spot_process p = {.up_median_h = v[0], .up_sigma = v[1], .down_median_h = v[2], .down_sigma = v[3],
                         .kd_per_h = v[4], .kr_per_h = v[5], .qf = v[6], .qr = v[7], .regime_sd_up = v[8],
                         .regime_sd_down = v[9]};
    draw(&p, 1, 100);
    draw(&p, 8, 100);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    model_line(text);
    cf_spot_trace t;
    cf_status st = cf_spot_trace_parse(text, size, "trace.csv", 0, &t);
    fuzz_check_error(st);
    if (st == CF_OK) {
        cf_spot_path path;
        st = cf_spot_path_from_trace(&t, &path);
        fuzz_check_error(st);
        if (st == CF_OK) {
            int nodes = t.vm[0].requested > 0 ? t.vm[0].requested : 1;
            cf_spot_plan plan = {.n_types = t.n_types, .nodes = {nodes, t.n_types > 1 ? t.vm[1].requested : 0},
                                 .work_h = 3, .checkpoint_h = 0.01, .restart_h = 0.1, .interval_h = 0.5};
            size_t segs[8];
            double offs[8] = {0};
            cf_spot_run many[8];
            for (int k = 0; k < 8; k++)
                segs[k] = (size_t)k * path.n / 8;
            cf_spot_replay_many(&path, segs, offs, 8, &plan, many, NULL);
            for (int k = 0; k < 8; k++) {
                size_t seg = segs[k];
                cf_spot_run run;
                cf_spot_replay(&path, seg, 0, &plan, &run);
                /* the starts' shared pass stops each where its own replay does */
                if (run.stop != many[k].stop || run.preemptions != many[k].preemptions ||
                    run.restarts != many[k].restarts || run.checkpoints != many[k].checkpoints ||
                    !(run.wall_h == many[k].wall_h))
                    abort();
                if (t.n_types == 1)
                    cf_spot_replay_mixed(&path, seg, 0, &plan, 10, k % 2 ? CF_MIXED_UNIFORM : CF_MIXED_GREEDY, &run);
            }
            cf_spot_path_stats stats;
            cf_spot_path_stats_of(&path, nodes, &stats);
            cf_spot_path_free(&path);
            cf_spot_table_row *rows = NULL;
            size_t n_rows = 0;
            st = cf_spot_table_fit(&t, 1, &rows, &n_rows);
            fuzz_check_error(st);
            if (st == CF_OK && n_rows > 0)
                draw(&rows[0].process, nodes < 64 ? nodes : 64, 100);
            free(rows);
        }
        cf_spot_trace_free(&t);
    }
    free(text);
    return 0;
}
