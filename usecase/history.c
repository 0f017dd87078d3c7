#include "cloudfit/usecase/history.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "cloudfit/advisor/inputs.h"
#include "cloudfit/common/clock.h"
#include "cloudfit/common/number.h"
#include "cloudfit/pricing.h"

/* The list's GPU words as the history matches them: each as written (a
 * stored model in any case, and a family word such as "a100", as before)
 * and, where it differs, the model it stands for in every other GPU filter
 * (cf_catalog_gpu_filter_model: "Tesla T4" is T4), so that `history --gpu`
 * takes what `recommend --gpu` takes. The models point into `catalog`. */
typedef struct {
    cf_catalog catalog;
    const char **words;
    size_t n;
} gpu_words;

static cf_status gpu_words_init(gpu_words *g, const cf_history_query_request *req)
{
    memset(g, 0, sizeof *g);
    if (req->kind != CF_HISTORY_LIST || req->n_gpus == 0)
        return CF_OK;
    cf_status st = cf_catalog_load_embedded(&g->catalog);
    if (st != CF_OK)
        return st;
    if (!(g->words = malloc(2 * req->n_gpus * sizeof *g->words)))
        return cf_error_set(CF_ERR_NOMEM, "out of memory reading the history");
    for (size_t i = 0; i < req->n_gpus; i++) {
        const char *model = cf_catalog_gpu_filter_model(&g->catalog, req->gpus[i]);
        g->words[g->n++] = req->gpus[i];
        if (model && req->gpus[i] && strcasecmp(model, req->gpus[i]) != 0)
            g->words[g->n++] = model;
    }
    return CF_OK;
}

static void gpu_words_free(gpu_words *g)
{
    free(g->words);
    cf_catalog_free(&g->catalog);
    memset(g, 0, sizeof *g);
}

/* The list filter with its clouds and GPUs (rows of any of them). */
static cf_history_filter list_filter(const cf_history_query_request *req, const gpu_words *gpus)
{
    cf_history_filter f = req->filter;
    f.cloud = f.gpu = NULL;
    f.clouds = req->clouds;
    f.n_clouds = req->n_clouds;
    f.gpus = gpus->words;
    f.n_gpus = gpus->n;
    return f;
}

/* cf_history_list_stream: the rendered bytes, handed on in chunks. */
#define STREAM_CHUNK 65536
typedef struct {
    cf_history_list_writer w;
    const cf_history_query_request *req;
    gpu_words gpus;
    cf_history_sink sink;
    void *sink_ctx;
    cf_buf chunk;
    size_t n_rows;        /* the table's rows, as measured */
} list_stream;

static cf_status flush_chunk(list_stream *x, int all)
{
    if (cf_buf_failed(&x->chunk))
        return cf_error_set(CF_ERR_NOMEM, "out of memory rendering the result");
    if (x->chunk.len == 0 || (!all && x->chunk.len < STREAM_CHUNK))
        return CF_OK;
    cf_status st = x->sink(x->sink_ctx, x->chunk.data, x->chunk.len);
    x->chunk.len = 0;
    x->chunk.data[0] = '\0';
    return st;
}

static cf_status measure_row(void *ctx, const cf_history_row *row)
{
    list_stream *x = ctx;
    cf_history_list_measure(&x->w, row);
    x->n_rows++;
    return CF_OK;
}

static cf_status write_row(void *ctx, const cf_history_row *row)
{
    list_stream *x = ctx;
    cf_history_list_row(&x->w, row, &x->chunk);
    return flush_chunk(x, 0);
}

/* The rows read and written; the table reads them twice (its widths
 * first), both times on one snapshot, so both passes see the same rows. */
static cf_status stream_body(cf_db *db, void *ctx)
{
    list_stream *x = ctx;
    cf_history_filter f = list_filter(x->req, &x->gpus);
    f.listed_only = 1; /* no list format shows the identity or the intervals */
    cf_status st = CF_OK;
    if (x->w.format == CF_HISTORY_FORMAT_TABLE) {
        st = cf_history_each(db, &f, measure_row, x);
        if (st != CF_OK || x->n_rows == 0) /* no rows: no table (the caller says so) */
            return st;
    }
    cf_history_list_begin(&x->w, &x->chunk);
    st = cf_history_each(db, &f, write_row, x);
    if (st != CF_OK)
        return st;
    cf_history_list_end(&x->w, &x->chunk);
    return flush_chunk(x, 1);
}

cf_status cf_history_list_stream(const cf_history_query_request *req, cf_history_format format, int width,
                                 cf_history_sink sink, void *sink_ctx, size_t *n_rows)
{
    list_stream x = {.req = req, .sink = sink, .sink_ctx = sink_ctx};
    *n_rows = 0;
    cf_status st = gpu_words_init(&x.gpus, req);
    if (st == CF_OK)
        st = cf_history_list_writer_init(&x.w, format, width);
    if (st != CF_OK) {
        gpu_words_free(&x.gpus);
        return st;
    }
    st = format == CF_HISTORY_FORMAT_TABLE ? cf_db_read_snapshot(req->db, stream_body, &x) : stream_body(req->db, &x);
    *n_rows = format == CF_HISTORY_FORMAT_TABLE ? x.n_rows : x.w.n;
    cf_history_list_writer_free(&x.w);
    cf_buf_free(&x.chunk);
    gpu_words_free(&x.gpus);
    return st;
}

/* The rows matching the filter for any of the clouds and any of the GPUs. */
static cf_status list_rows(const cf_history_query_request *req, cf_history_row **out, size_t *n)
{
    gpu_words gpus;
    cf_status st = gpu_words_init(&gpus, req);
    cf_history_filter f = list_filter(req, &gpus);
    if (st == CF_OK)
        st = cf_history_list(req->db, &f, out, n);
    gpu_words_free(&gpus);
    return st;
}

static cf_status empty_filter(const char *option, const char *value, const char *expected)
{
    if (!value || value[0])
        return CF_OK;
    cf_error_set(CF_ERR_USAGE, "option '%s' expects %s, got ''", option, expected);
    cf_error_hint("leave '%s' out to list every recommendation", option);
    return CF_ERR_USAGE;
}

cf_status cf_history_list_check(cf_history_query_request *req, char hash[65])
{
    cf_history_filter *f = &req->filter;
    cf_status st = CF_OK;
    if ((st = empty_filter("--spec-hash", f->spec_hash, "a spec hash or its first digits")) != CF_OK ||
        (st = empty_filter("--model", f->spec_name, "a spec name")) != CF_OK ||
        (st = empty_filter("--branch", f->branch, "a branch name")) != CF_OK)
        return st;
    for (size_t i = 0; i < req->n_clouds && st == CF_OK; i++)
        st = empty_filter("--cloud", req->clouds[i], "a cloud name");
    for (size_t i = 0; i < req->n_gpus && st == CF_OK; i++)
        st = empty_filter("--gpu", req->gpus[i], "a GPU name");
    /* since is inclusive, until exclusive: a range with no time in it (the
     * two swapped, `--since 1d --until 7d`) listed nothing, exit 0 */
    if (st == CF_OK && f->since && f->until && strcmp(f->since, f->until) >= 0) {
        st = cf_error_set(CF_ERR_USAGE, "options '--since' (%s) and '--until' (%s): no time is in the range; "
                          "--since must come before --until", f->since, f->until);
        cf_error_hint("--since is inclusive, --until exclusive: e.g. '--since 14d --until 7d' (the week before the "
                      "last) or '--since 2026-11-01 --until 2026-12-01'");
    }
    size_t n = f->spec_hash ? strlen(f->spec_hash) : 0;
    for (size_t i = 0; i < n && st == CF_OK; i++)
        if (!isxdigit((unsigned char)f->spec_hash[i]) || i >= 64) {
            st = cf_error_set(CF_ERR_USAGE, "option '--spec-hash' expects a spec hash or its first digits (up to 64 "
                              "hexadecimal digits), got '%s'", f->spec_hash);
            cf_error_hint("'cloudfit history -f json' lists each recommendation's spec.hash");
        }
    if (st != CF_OK || !f->spec_hash)
        return st;
    for (size_t i = 0; i <= n; i++)
        hash[i] = (char)tolower((unsigned char)f->spec_hash[i]);
    f->spec_hash = hash;
    return CF_OK;
}

cf_status cf_history_query(const cf_history_query_request *req, cf_history_query_result *out)
{
    memset(out, 0, sizeof *out);
    cf_status st = CF_OK;
    switch (req->kind) {
    case CF_HISTORY_LIST:
        st = list_rows(req, &out->rows, &out->n_rows);
        out->list = (cf_history_list_report){.rows = out->rows, .n = out->n_rows};
        break;
    case CF_HISTORY_SHOW:
        st = cf_history_get(req->db, req->ids[0], &out->shown[0]);
        out->show.row = &out->shown[0];
        if (st == CF_OK)
            st = cf_history_alternatives(req->db, req->ids[0], &out->alternatives, &out->show.n_alternatives);
        if (st == CF_OK)
            st = cf_history_gates(req->db, req->ids[0], &out->gates, &out->show.n_gates);
        if (st == CF_OK)
            st = cf_history_measurements_of(req->db, req->ids[0], &out->measurements, &out->show.n_measurements);
        out->show.alternatives = out->alternatives;
        out->show.gates = out->gates;
        out->show.measurements = out->measurements;
        if (st == CF_OK && out->shown[0].result_json) {
            cJSON *doc = cJSON_Parse(out->shown[0].result_json);
            out->show.document_unreadable = !doc;
            cJSON_Delete(doc);
        }
        break;
    case CF_HISTORY_DIFF:
        st = cf_history_get(req->db, req->ids[0], &out->shown[0]);
        if (st == CF_OK)
            st = cf_history_get(req->db, req->ids[1], &out->shown[1]);
        for (int i = 0; i < 2; i++) { /* compared on the columns, not the documents */
            free(out->shown[i].result_json);
            out->shown[i].result_json = NULL;
        }
        out->diff = (cf_history_diff_report){.from = &out->shown[0], .to = &out->shown[1]};
        if (st == CF_OK)
            cf_history_compare(&out->shown[0], &out->shown[1], &out->diff.diff);
        break;
    }
    return st;
}

void cf_history_query_free(cf_history_query_result *out)
{
    cf_history_rows_free(out->rows, out->n_rows);
    for (int i = 0; i < 2; i++)
        free(out->shown[i].result_json);
    free(out->alternatives);
    free(out->gates);
    free(out->measurements);
    memset(out, 0, sizeof *out);
}

cf_status cf_history_prune_run(cf_db *db, const char *before, cf_history_prune_result *out)
{
    memset(out, 0, sizeof *out);
    return cf_history_prune(db, before, &out->report.n_deleted);
}

cf_status cf_history_prune_dry_run(cf_db *db, const char *before, int width, cf_history_sink sink, void *sink_ctx,
                                   cf_history_prune_report *report)
{
    cf_history_query_request req = {.db = db, .kind = CF_HISTORY_LIST, .filter = {.until = before}}; /* no limit */
    size_t n = 0;
    cf_status st = cf_history_list_stream(&req, CF_HISTORY_FORMAT_TABLE, width, sink, sink_ctx, &n);
    report->dry_run = 1;
    report->n_deleted = (long long)n;
    if (st != CF_OK)
        return st;
    cf_buf text = CF_BUF_INIT;
    cf_history_prune_text(report, &text);
    st = cf_buf_failed(&text) ? cf_error_set(CF_ERR_NOMEM, "out of memory rendering the result")
                              : sink(sink_ctx, text.data, text.len);
    cf_buf_free(&text);
    return st;
}

/* A refused ratio, "108×", in as many digits as show it past the bounds
 * 1/CF_RECORD_SCALE_MAX and hi: 20.0002 was "20×", the bound itself. */
static void ratio_text(double ratio, double hi, char *out, size_t n)
{
    cf_number_beyond_text(ratio, 3, 1.0 / CF_RECORD_SCALE_MAX, hi, out, n);
    size_t len = strlen(out);
    snprintf(out + len, n - len, "×");
}

cf_status cf_history_record_check(const cf_history_record_request *req, cf_history_record_result *out)
{
    memset(out, 0, sizeof *out);
    cf_history_measurement *m = &out->measurement;
    m->recommendation_id = req->recommendation_id;
    cf_now_iso8601(m->recorded_at, sizeof m->recorded_at);
    m->step_time_s = req->step_time_s > 0 ? req->step_time_s : NAN;
    m->total_hours = req->total_hours > 0 ? req->total_hours : NAN;
    m->total_usd = req->total_usd > 0 ? req->total_usd : NAN;
    snprintf(m->note, sizeof m->note, "%s", req->note ? req->note : "");
    out->report = (cf_record_report){.measurement = m, .row = &out->row};
    if (m->total_hours > CF_RECORD_MAX_HOURS || m->total_usd > CF_RECORD_MAX_USD) {
        int hours = m->total_hours > CF_RECORD_MAX_HOURS;
        char given[32]; /* exactly: %.4g wrote 1000001 as "1e+06", the bound itself */
        cf_number_exact_text(hours ? m->total_hours : m->total_usd, given, sizeof given);
        cf_error_set(CF_ERR_USAGE, "%s %s is more than a run %s: a record takes at most %g, the range of %s",
                     hours ? "--total-hours" : "--total-usd", given,
                     hours ? "takes (hours)" : "costs (US dollars)", hours ? CF_RECORD_MAX_HOURS : CF_RECORD_MAX_USD,
                     hours ? "search.deadline_hours" : "search.budget_usd");
        cf_error_hint("give the whole run's wall time in hours and its cost in US dollars; nothing was stored");
        return CF_ERR_USAGE;
    }
    cf_status st = cf_history_get(req->db, req->recommendation_id, &out->row);
    free(out->row.result_json);
    out->row.result_json = NULL;
    /* A step time later recommendations could not use as given (they move
     * the compute by at most CF_RECORD_SCALE_MAX either way): almost always
     * another unit — per epoch, per sample, milliseconds. Refused before
     * anything is written; there is no command that deletes a record. */
    double predicted_s = out->row.chosen.step_time_s, ratio = m->step_time_s / predicted_s;
    if (st == CF_OK && predicted_s > 0 && (ratio > CF_RECORD_SCALE_MAX || ratio < 1.0 / CF_RECORD_SCALE_MAX)) {
        char times[32];
        if (ratio > 1e6 || ratio < 1e-6)
            snprintf(times, sizeof times, "more than a million times %s", ratio > 1 ? "over" : "under");
        else
            ratio_text(ratio, CF_RECORD_SCALE_MAX, times, sizeof times);
        st = cf_error_set(CF_ERR_USAGE,
                          "--step-time-s %.4g s is %s the %.4g s recommendation %lld predicted; a recorded step "
                          "time is used within %g× either way of the prediction",
                          m->step_time_s, times, predicted_s, req->recommendation_id, CF_RECORD_SCALE_MAX);
        cf_error_hint("give seconds per optimizer step (one update of the global batch), not per epoch, per "
                      "sample or in milliseconds");
    }
    /* The whole run's hours and cost have the step time's lower bound: a run
     * takes its steps, and a step is at most CF_RECORD_SCALE_MAX times
     * faster than predicted, so a run more than that far under the
     * prediction is another unit (days, thousands of dollars) or nonsense
     * (--total-hours 1e-300 was stored for good). Above, start-up and
     * preemptions may stretch a run: only CF_RECORD_MAX_* bound it. */
    for (int k = 0; k < 2 && st == CF_OK; k++) {
        double given = k ? m->total_usd : m->total_hours;
        double predicted = k ? out->row.chosen.total_usd : out->row.chosen.hours;
        if (!(predicted > 0) || !(given < predicted / CF_RECORD_SCALE_MAX))
            continue;
        char under[48];
        if (given < predicted * 1e-6)
            snprintf(under, sizeof under, "more than a million times under");
        else
            ratio_text(given / predicted, HUGE_VAL, under, sizeof under);
        st = cf_error_set(CF_ERR_USAGE,
                          "%s %.4g %s is %s the %.4g %s recommendation %lld predicted; a whole run takes at least "
                          "1/%g of the prediction, as its steps do",
                          k ? "--total-usd" : "--total-hours", given, k ? "USD" : "h", under, predicted,
                          k ? "USD" : "h", req->recommendation_id, CF_RECORD_SCALE_MAX);
        cf_error_hint("give the whole run's wall time in hours and its cost in US dollars; nothing was stored");
    }
    return st;
}

cf_status cf_history_record_run(const cf_history_record_request *req, cf_history_record_result *out)
{
    cf_status st = cf_history_record_check(req, out);
    if (st == CF_OK)
        st = cf_db_hold(req->db);
    if (st == CF_OK)
        st = cf_history_record_measurement(req->db, &out->measurement, &out->report.measurement_id);
    return st;
}

/* The one table of which subcommand takes which option (history.h). */
static const struct {
    const char *option;
    const char *subcommands;
    int list_filter; /* prune refuses it: it would not narrow what goes */
} sub_options[] = {
    {"model", "list", 1},  {"spec-hash", "list", 1}, {"since", "list", 1}, {"until", "list", 1},
    {"branch", "list", 1}, {"cloud", "list", 1},     {"gpu", "list", 1},   {"limit", "list", 1},
    {"older-than", "prune", 0}, {"dry-run", "prune", 0}, {"to", "migrate", 0},
    /* prune and migrate print text: -f json there printed it without a word */
    {"format", "list show diff", 0},
};

static int sub_option_row(const char *name)
{
    for (size_t i = 0; name && i < sizeof sub_options / sizeof *sub_options; i++)
        if (strcmp(sub_options[i].option, name) == 0)
            return (int)i;
    return -1;
}

const char *cf_history_option_subcommands(const char *name)
{
    int row = sub_option_row(name);
    return row < 0 ? NULL : sub_options[row].subcommands;
}

/* Whether the space-separated `words` hold `word`. */
static int has_word(const char *words, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = words; *p;) {
        size_t n = strcspn(p, " ");
        if (n == len && strncmp(p, word, n) == 0)
            return 1;
        p += n + (p[n] == ' ');
    }
    return 0;
}

cf_status cf_history_check_options(const char *sub, const char *const *given, size_t n_given, cf_note_fn note,
                                   void *note_ctx)
{
    /* The subcommands that write refuse what they would not honour: noted
     * and ignored, prune --to deleted what the user meant to keep a copy
     * of, and migrate --model/--since/--dry-run copied the whole history. */
    for (size_t i = 0; i < n_given; i++) {
        int row = sub_option_row(given[i]);
        if (row < 0 || has_word(sub_options[row].subcommands, sub) || !strcmp(given[i], "format"))
            continue;
        if (!strcmp(sub, "prune") && sub_options[row].list_filter) {
            cf_error_set(CF_ERR_USAGE, "history prune deletes by age alone: it does not take --%s", given[i]);
            cf_error_hint("'history prune --older-than AGE --dry-run' lists what it would delete, every spec's");
            return CF_ERR_USAGE;
        }
        if (!strcmp(sub, "prune")) { /* --to */
            cf_error_set(CF_ERR_USAGE, "history prune deletes, it copies nothing: it does not take --%s", given[i]);
            cf_error_hint("keep a copy first with 'cloudfit history migrate --to DATABASE', then prune");
            return CF_ERR_USAGE;
        }
        if (!strcmp(sub, "migrate")) {
            cf_error_set(CF_ERR_USAGE, "history migrate copies the whole history: it does not take --%s", given[i]);
            cf_error_hint("a row copied before is not copied again; 'cloudfit history' lists what the source holds");
            return CF_ERR_USAGE;
        }
    }
    char text[200];
    for (size_t i = 0; note && i < n_given; i++) {
        int row = sub_option_row(given[i]);
        if (row < 0 || has_word(sub_options[row].subcommands, sub))
            continue;
        /* "'history list', 'history show' and 'history diff'" */
        char names[120] = "";
        size_t len = 0;
        for (const char *p = sub_options[row].subcommands; *p && len < sizeof names;) {
            size_t n = strcspn(p, " ");
            const char *next = p + n + (p[n] == ' ');
            const char *sep = !len ? "" : *next ? ", " : " and ";
            len += (size_t)snprintf(names + len, sizeof names - len, "%s'history %.*s'", sep, (int)n, p);
            p = next;
        }
        snprintf(text, sizeof text, "note: --%s applies to %s only; ignored", given[i], names);
        note(note_ctx, CF_NOTE_INFO, text);
    }
    return CF_OK;
}
