#include "cloudfit/render/calibrate_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cloudfit/common/fileio.h"
#include "cloudfit/common/json.h"

static const char *const KEYS[CF_CAL_N] = {"below_p10", "below_p50", "below_p90", "done_by_check_quantile"};

/* A trace's name below the folder scored: its file name in an index.csv
 * folder, its path in the public traces' layout (where file names repeat
 * across dates). */
static const char *shown_name(const char *path, const char *dir)
{
    size_t n = dir ? strlen(dir) : 0;
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n && strncmp(path, dir, n) == 0 && path[n] == '/') {
        while (path[n] == '/')
            n++;
        return path + n;
    }
    return cf_basename(path);
}

static int inside(const cf_calibrate_share *s) { return s->share >= s->band_lo && s->share <= s->band_hi; }

static void hours_cell(char *out, size_t n, double h)
{
    if (isfinite(h))
        snprintf(out, n, "%.1f", h);
    else
        snprintf(out, n, "never");
}

void cf_calibrate_table(const cf_calibrate_report *r, cf_buf *out)
{
    const cf_calibrate_result *res = r->result;
    cf_buf_printf(out, "calibration of the spot preemption model (%s) on %zu trace%s in %s, plan of %s\n",
                  r->fit_dir ? "fitted to the traces in --fit" : "the shipped table", r->n_traces,
                  r->n_traces == 1 ? "" : "s", r->traces_dir, r->spec->job.name);
    if (r->fit_dir)
        cf_buf_printf(out, "model fitted to: %s\n", r->fit_dir);
    cf_buf_printf(out, "windows: a start every %.0f min of each trace (circular), elastic; job lengths W, W/4, W/16, "
                       "W/64 (at least %.1f h), scored when the trace is at least %g× the work\n\n",
                  CF_SPOT_REPLAY_STEP_H * 60, CF_CALIBRATE_MIN_WORK_H, CF_CALIBRATE_TRACE_PER_WORK);
    int width = 20;
    for (size_t i = 0; i < r->n_traces; i++) {
        int len = (int)strlen(shown_name(r->traces[i].name, r->traces_dir));
        width = len > width ? (len < 72 ? len : 72) : width;
    }
    cf_buf_printf(out, " %-*s %5s %7s %6s %8s %8s %8s %8s %8s  %5s %5s %5s %5s\n", width, "TRACE", "NODES", "W h", "WINDOWS",
                  "MODEL p10", "p50", "p90", "REPLAY p50", "p90", "<p10", "<p50", "<p90", "<chk");
    for (size_t i = 0; i < res->n_items; i++) {
        const cf_calibrate_item *it = &res->items[i];
        const cf_calibrate_trace *t = &r->traces[it->trace];
        char a[16], b[16], c[16], d[16], e[16];
        hours_cell(a, sizeof a, it->model_h[CF_CAL_P10]);
        hours_cell(b, sizeof b, it->model_h[CF_CAL_P50]);
        hours_cell(c, sizeof c, it->model_h[CF_CAL_P90]);
        hours_cell(d, sizeof d, it->replay_p50_h);
        hours_cell(e, sizeof e, it->replay_p90_h);
        cf_buf_printf(out, " %-*.*s %5d %7.1f %6zu %8s %8s %8s %8s %8s  %5.2f %5.2f %5.2f %5.2f%s\n",
                      width, width, shown_name(t->name, r->traces_dir), t->nodes, it->work_h, it->windows, a, b, c, d, e, it->share[CF_CAL_P10],
                      it->share[CF_CAL_P50], it->share[CF_CAL_P90], it->share[CF_CAL_CHECK],
                      it->scored ? "" : "  (too long for the trace: not pooled)");
    }
    cf_buf_printf(out, "\npooled over %zu window%s (the band: %.1f–%.1f %% of %d traces of the same lengths drawn "
                       "from the model itself, windows every %.0f h):\n",
                  res->windows, res->windows == 1 ? "" : "s", 100 * CF_CALIBRATE_BAND_LO, 100 * CF_CALIBRATE_BAND_HI,
                  res->replicates, CF_CALIBRATE_BOOT_STEP_H);
    static const char *const label[CF_CAL_N] = {"below the model's p10", "below the model's p50",
                                                "below the model's p90", "done by the check quantile"};
    for (int q = 0; q < CF_CAL_N; q++) {
        const cf_calibrate_share *s = &res->pooled[q];
        char what[64];
        if (q == CF_CAL_CHECK)
            snprintf(what, sizeof what, "%s (q%.2f, confidence %.2f)", label[q], res->quantile[q], r->confidence);
        else
            snprintf(what, sizeof what, "%s", label[q]);
        if (!isfinite(s->share)) /* nothing to show but that */
            cf_buf_printf(out, "  %-52s –       no window scored\n", what);
        else
            cf_buf_printf(out, "  %-52s %.3f   band %.3f–%.3f  %s\n", what, s->share, s->band_lo, s->band_hi,
                          inside(s) ? "inside" : "OUTSIDE");
    }
    if (isfinite(res->replicates_outside_any_band))
        cf_buf_printf(out, "  a correct model (the model's own traces) has a share outside its band in %.0f %% of the "
                           "%d replicates: one share outside is not evidence against the model by itself\n",
                      100 * res->replicates_outside_any_band, res->replicates);
    for (size_t j = 0; j < r->n_traces; j++)
        cf_buf_printf(out, "model row for %s: %s\n", shown_name(r->traces[j].name, r->traces_dir), r->rows[j].text);
}

cJSON *cf_calibrate_json(const cf_calibrate_report *r)
{
    const cf_calibrate_result *res = r->result;
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "spec", r->spec->job.name);
    cJSON_AddStringToObject(doc, "traces", r->traces_dir);
    if (r->fit_dir)
        cJSON_AddStringToObject(doc, "model", r->fit_dir);
    else
        cJSON_AddStringToObject(doc, "model", "shipped");
    cJSON_AddNumberToObject(doc, "confidence", r->confidence);
    cJSON_AddNumberToObject(doc, "check_quantile", res->quantile[CF_CAL_CHECK]);
    cJSON_AddNumberToObject(doc, "windows", (double)res->windows);
    cJSON_AddNumberToObject(doc, "replicates", res->replicates);
    cJSON *band = cJSON_AddArrayToObject(doc, "band_quantiles");
    cJSON_AddItemToArray(band, cJSON_CreateNumber(CF_CALIBRATE_BAND_LO));
    cJSON_AddItemToArray(band, cJSON_CreateNumber(CF_CALIBRATE_BAND_HI));
    for (int q = 0; q < CF_CAL_N; q++) {
        const cf_calibrate_share *s = &res->pooled[q];
        cJSON *o = cJSON_AddObjectToObject(doc, KEYS[q]);
        cf_json_add_rounded(o, "share", s->share, 4);
        cf_json_add_rounded(o, "band_lo", s->band_lo, 4);
        cf_json_add_rounded(o, "band_hi", s->band_hi, 4);
    }
    cf_json_add_rounded(doc, "replicates_outside_any_band", res->replicates_outside_any_band, 4);
    cJSON *reps = cJSON_AddArrayToObject(doc, "replicate_shares");
    for (int b = 0; res->replicate_shares && b < res->replicates; b++) {
        cJSON *row = cJSON_CreateArray();
        for (int q = 0; q < CF_CAL_N; q++)
            cJSON_AddItemToArray(row, cJSON_CreateNumber(round(res->replicate_shares[(size_t)b * CF_CAL_N + (size_t)q] * 1e4) / 1e4));
        cJSON_AddItemToArray(reps, row);
    }
    cJSON *items = cJSON_AddArrayToObject(doc, "items");
    for (size_t i = 0; i < res->n_items; i++) {
        const cf_calibrate_item *it = &res->items[i];
        const cf_calibrate_trace *t = &r->traces[it->trace];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "trace", shown_name(t->name, r->traces_dir));
        cJSON_AddNumberToObject(o, "nodes", t->nodes);
        cJSON_AddStringToObject(o, "model_row", cf_spot_row_kind_name(r->rows[it->trace].kind));
        cf_json_add_rounded(o, "work_hours", it->work_h, 4);
        cJSON_AddBoolToObject(o, "scored", it->scored);
        cJSON_AddNumberToObject(o, "windows", (double)it->windows);
        cf_json_add_rounded(o, "model_p10_hours", it->model_h[CF_CAL_P10], 4);
        cf_json_add_rounded(o, "model_p50_hours", it->model_h[CF_CAL_P50], 4);
        cf_json_add_rounded(o, "model_p90_hours", it->model_h[CF_CAL_P90], 4);
        cf_json_add_rounded(o, "model_check_quantile_hours", it->model_h[CF_CAL_CHECK], 4);
        cf_json_add_rounded(o, "replay_p50_hours", it->replay_p50_h, 4);
        cf_json_add_rounded(o, "replay_p90_hours", it->replay_p90_h, 4);
        for (int q = 0; q < CF_CAL_N; q++)
            cf_json_add_rounded(o, KEYS[q], it->share[q], 4);
        cJSON_AddItemToArray(items, o);
    }
    return doc;
}
