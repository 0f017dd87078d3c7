/* The shipped preemption-model table (advisor/spot/spot_table.c) from a folder
 * of traces: `spot_bench --table DIR` prints the C rows between the
 * GENERATED markers (tests/test_spot.c refits it from examples/spot-traces
 * and fails when they disagree). The model's calibration against traces is
 * `cloudfit simulate SPEC --calibrate DIR` (bench/spot.sh, docs/spot.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/advisor/spot_table.h"
#include "cloudfit/profiler/spot_traces.h"

static void die(void)
{
    fprintf(stderr, "spot_bench: %s\n", cf_error_message());
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "--table") != 0) {
        fprintf(stderr, "usage: spot_bench --table DIR\n");
        return 2;
    }
    cf_spot_trace_set set;
    if (cf_spot_trace_set_load(argv[2], &set) != CF_OK)
        die();
    cf_spot_table_row *rows = NULL;
    size_t n = 0;
    if (cf_spot_table_fit(set.traces, set.n, &rows, &n) != CF_OK)
        die();
    for (size_t i = 0; i < n; i++) {
        const cf_spot_table_row *r = &rows[i];
        const cf_spot_process *p = &r->process;
        printf("    {\"%s\", \"%s\", %d, \"%s\", %d,\n     {%.4f, %.4f, %.4f, %.4f, %.4f, %.4f, %.4f, %.4f, %.4f, %.4f},\n"
               "     %d, %d, %.3f, %.2f, \"%s\"},\n",
               r->cloud, r->gpu, r->size_class, r->region, r->nodes, p->up_median_h, p->up_sigma, p->down_median_h,
               p->down_sigma, p->kd_per_h, p->kr_per_h, p->qf, p->qr, p->regime_sd_up, p->regime_sd_down, r->cycles,
               r->n_traces, r->availability, r->runs_per_day, r->traces);
    }
    free(rows);
    cf_spot_trace_set_free(&set);
    return 0;
}
