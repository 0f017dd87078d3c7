/* Renders the results of `cloudfit history` and `cloudfit record`
 * (history_report.h). */
#include "cloudfit/render/history_report.h"
#include "cloudfit/render.h"
#include "cloudfit/render/text_table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/csvwrite.h"
#include "cloudfit/common/escape.h"

/* ---- JSON ---------------------------------------------------------------- */

static cJSON *config_json(const cf_history_config *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "rank", c->rank);
    cJSON_AddStringToObject(o, "cloud", c->cloud);
    cJSON_AddStringToObject(o, "region", c->region);
    cJSON_AddStringToObject(o, "instance_type", c->instance_type);
    cJSON_AddStringToObject(o, "gpu", c->gpu);
    cJSON_AddNumberToObject(o, "gpus_per_node", c->gpus_per_node);
    cJSON_AddNumberToObject(o, "nodes", c->nodes);
    cJSON_AddNumberToObject(o, "local_batch", c->local_batch);
    cJSON_AddNumberToObject(o, "accumulation", c->accumulation);
    cJSON_AddNumberToObject(o, "global_batch", (double)c->global_batch);
    cJSON_AddNumberToObject(o, "lr", c->lr);
    cJSON_AddBoolToObject(o, "spot", c->spot);
    cJSON_AddBoolToObject(o, "mixed", c->spot && c->mixed);
    cJSON_AddNumberToObject(o, "step_time_s", c->step_time_s);
    cJSON_AddNumberToObject(o, "hours", c->hours);
    cJSON_AddNumberToObject(o, "usd_per_node_hour", c->usd_per_node_hour);
    cJSON_AddNumberToObject(o, "total_usd", c->total_usd);
    return o;
}

static cJSON *row_json(const cf_history_row *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", (double)r->id);
    cJSON_AddStringToObject(o, "created_at", r->created_at);
    cJSON_AddStringToObject(o, "tool_version", r->tool_version);
    cJSON *spec = cJSON_AddObjectToObject(o, "spec");
    cJSON_AddStringToObject(spec, "name", r->spec_name);
    cJSON_AddStringToObject(spec, "hash", r->spec_hash);
    cJSON_AddStringToObject(o, "objective", r->objective);
    cJSON *cat = cJSON_AddObjectToObject(o, "catalog");
    cJSON_AddStringToObject(cat, "name", r->catalog_name);
    cJSON_AddStringToObject(cat, "date", r->catalog_date);
    cJSON_AddItemToObject(o, "chosen", config_json(&r->chosen));
    cJSON_AddItemToObject(o, "ci", cf_ci_json(&r->ci)); /* as recommend writes it: null, not "" */
    return o;
}

/* ---- CSV (RFC 4180, CRLF) ------------------------------------------------ */

static const char *const csv_config_columns =
    "cloud,region,instance_type,gpu,gpus_per_node,nodes,local_batch,accumulation,global_batch,lr,spot,mixed,"
    "step_time_s,hours,usd_per_node_hour,total_usd";

static void csv_config(cf_buf *out, const cf_history_config *c, int last)
{
    cf_csv_put_text(out, c->cloud, 0);
    cf_csv_put_text(out, c->region, 0);
    cf_csv_put_text(out, c->instance_type, 0);
    cf_csv_put_text(out, c->gpu, 0);
    cf_csv_put_int(out, c->gpus_per_node, 0);
    cf_csv_put_int(out, c->nodes, 0);
    cf_csv_put_int(out, c->local_batch, 0);
    cf_csv_put_int(out, c->accumulation, 0);
    cf_csv_put_int(out, c->global_batch, 0);
    cf_csv_put_number(out, c->lr, 0);
    cf_csv_put_int(out, c->spot, 0);
    cf_csv_put_int(out, c->spot && c->mixed, 0); /* spot with an on-demand fallback (spot+od) */
    cf_csv_put_number(out, c->step_time_s, 0);
    cf_csv_put_number(out, c->hours, 0);
    cf_csv_put_number(out, c->usd_per_node_hour, 0);
    cf_csv_put_number(out, c->total_usd, last);
}

/* ---- list ---------------------------------------------------------------- */

/* narrow terminals: the commit, global batch, branch and region go first, the date loses its
 * year and seconds; names are cut; below that (about 62 columns) the time, the date, the
 * shape and the spec name go in that order, so ID, INSTANCE and TOTAL $ stay on one line
 * rather than every row being wrapped with its cost on the next (`history show ID` has all) */
static const cf_text_column list_columns[CF_HISTORY_LIST_COLUMNS] = {
    {"ID", 1, 0, 0, 0, NULL, NULL},           {"CREATED", 0, -2, 0, 4, NULL, NULL},
    {"SPEC", 0, -4, 1, 0, NULL, NULL},        {"CLOUD/REGION", 0, 5, 1, 0, NULL, NULL},
    {"INSTANCE", 0, 0, 1, 0, NULL, NULL},     {"NODES×GPUS", 0, -3, 0, 0, NULL, NULL},
    {"GLOBAL", 1, 2, 0, 0, NULL, NULL},       {"TIME", 1, -1, 0, 0, NULL, NULL},
    {"TOTAL $", 1, 0, 0, 0, NULL, NULL},      {"BRANCH", 0, 3, 1, 0, NULL, NULL},
    {"COMMIT", 0, 1, 0, 0, NULL, NULL}};

/* A row's table cells (w->cells, w->short_cells). */
static void list_cells(cf_history_list_writer *w, const cf_history_row *row)
{
    enum { NC = CF_HISTORY_LIST_COLUMNS, CELL = sizeof w->cell[0] };
    char(*cells)[CELL] = w->cell;
    const cf_history_config *c = &row->chosen;
    snprintf(cells[0], CELL, "%lld", row->id);
    snprintf(cells[1], CELL, "%s", row->created_at);
    /* "2026-11-27T14:56:03Z" → "11-27 14:56" */
    snprintf(w->created_short, CELL, "%.5s %.5s", strlen(row->created_at) >= 16 ? row->created_at + 5 : row->created_at,
             strlen(row->created_at) >= 16 ? row->created_at + 11 : "");
    snprintf(cells[2], CELL, "%s", row->spec_name);
    snprintf(cells[3], CELL, "%s/%s", c->cloud, c->region);
    snprintf(cells[4], CELL, "%s%s", c->instance_type, !c->spot ? "" : c->mixed ? " (spot+od)" : " (spot)");
    snprintf(cells[5], CELL, "%d×%d %s", c->nodes, c->gpus_per_node, c->gpu);
    snprintf(cells[6], CELL, "%ld", c->global_batch);
    cf_text_duration(c->hours, cells[7], CELL);
    snprintf(cells[8], CELL, "%.2f", c->total_usd);
    /* cut at a character boundary ("%.40s" showed half an 'é' as '\xc3'), ending in "…" (a branch cut at
     * 40 bytes read as another, whole branch); the commit is a short hash, its first 10 digits */
    cf_text_fit_clip(row->ci.branch[0] ? row->ci.branch : "-", 40, cells[9], CELL);
    cf_text_fit(row->ci.commit[0] ? row->ci.commit : "-", 10, cells[10], CELL);
    for (int k = 0; k < NC; k++) {
        /* Control characters from outside (branch names) are shown as '?'. */
        for (char *p = cells[k]; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
        w->cell_ptr[k] = cells[k];
        w->short_ptr[k] = NULL;
    }
    w->short_ptr[1] = w->created_short;
}

cf_status cf_history_list_writer_init(cf_history_list_writer *w, cf_history_format format, int width)
{
    memset(w, 0, sizeof *w);
    w->format = format;
    w->width = width;
    w->table = (cf_text_table){.columns = list_columns, .n_columns = CF_HISTORY_LIST_COLUMNS, .width = width,
                               .gap = 2, .highlight_row = -1};
    return format == CF_HISTORY_FORMAT_TABLE ? cf_text_table_stream_init(&w->stream, &w->table) : CF_OK;
}

void cf_history_list_writer_free(cf_history_list_writer *w)
{
    if (w->format == CF_HISTORY_FORMAT_TABLE)
        cf_text_table_stream_free(&w->stream);
    cf_buf_free(&w->left_out);
}

void cf_history_list_measure(cf_history_list_writer *w, const cf_history_row *row)
{
    if (w->format != CF_HISTORY_FORMAT_TABLE)
        return;
    list_cells(w, row);
    cf_text_table_stream_measure(&w->stream, w->cell_ptr, w->short_ptr);
}

void cf_history_list_begin(cf_history_list_writer *w, cf_buf *out)
{
    if (w->format == CF_HISTORY_FORMAT_TABLE)
        cf_text_table_stream_head(&w->stream, out, &w->left_out);
    else if (w->format == CF_HISTORY_FORMAT_CSV)
        cf_buf_printf(out, "id,created_at,spec_name,spec_hash,objective,catalog_name,catalog_date,%s,"
                           "ci_provider,commit,branch,base_branch,pull_request,run_id,run_url\r\n",
                      csv_config_columns);
}

/* One element of the JSON array as cJSON_Print writes it inside the array
 * (one level deeper than alone): printed in an array of its own, less the
 * brackets. */
static void json_element(const cf_history_row *row, cf_buf *out)
{
    cJSON *a = cJSON_CreateArray();
    char *text = NULL;
    if (a && cJSON_AddItemToArray(a, row_json(row)))
        text = cJSON_Print(a);
    size_t len = text ? strlen(text) : 0;
    if (len >= 2)
        cf_buf_append(out, text + 1, len - 2);
    else
        out->failed = 1;
    free(text);
    cJSON_Delete(a);
}

void cf_history_list_row(cf_history_list_writer *w, const cf_history_row *row, cf_buf *out)
{
    if (w->format == CF_HISTORY_FORMAT_TABLE) {
        list_cells(w, row);
        cf_text_table_stream_row(&w->stream, w->n, w->cell_ptr, w->short_ptr, out);
    } else if (w->format == CF_HISTORY_FORMAT_JSON) {
        cf_buf_puts(out, w->n ? ", " : "[");
        json_element(row, out);
    } else {
        cf_csv_put_int(out, row->id, 0);
        const char *texts[] = {row->created_at, row->spec_name, row->spec_hash, row->objective, row->catalog_name,
                               row->catalog_date};
        for (int k = 0; k < 6; k++)
            cf_csv_put_text(out, texts[k], 0);
        csv_config(out, &row->chosen, 0);
        const char *ci[] = {row->ci.provider, row->ci.commit, row->ci.branch, row->ci.base_branch,
                            row->ci.pull_request, row->ci.run_id, row->ci.run_url}; /* as the JSON's ci */
        for (int k = 0; k < 7; k++)
            cf_csv_put_text(out, ci[k], k == 6);
    }
    w->n++;
}

void cf_history_list_end(cf_history_list_writer *w, cf_buf *out)
{
    if (w->format == CF_HISTORY_FORMAT_TABLE) {
        cf_text_table_stream_foot(&w->stream, out);
        cf_text_table_note(&w->left_out, w->width, out);
    } else if (w->format == CF_HISTORY_FORMAT_JSON) {
        cf_buf_puts(out, w->n ? "]\n" : "[]\n");
    }
}

/* The whole list through the writer, rows in memory. */
static void list_all(const cf_history_list_report *r, cf_history_format format, cf_buf *out)
{
    cf_history_list_writer w;
    if (cf_history_list_writer_init(&w, format, r->width) != CF_OK) {
        out->failed = 1;
        return;
    }
    for (size_t i = 0; i < r->n; i++)
        cf_history_list_measure(&w, &r->rows[i]);
    cf_history_list_begin(&w, out);
    for (size_t i = 0; i < r->n; i++)
        cf_history_list_row(&w, &r->rows[i], out);
    cf_history_list_end(&w, out);
    cf_history_list_writer_free(&w);
}

void cf_history_list_table(const cf_history_list_report *r, cf_buf *out) { list_all(r, CF_HISTORY_FORMAT_TABLE, out); }

void cf_history_list_csv(const cf_history_list_report *r, cf_buf *out) { list_all(r, CF_HISTORY_FORMAT_CSV, out); }

cJSON *cf_history_list_json(const cf_history_list_report *r)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < r->n; i++)
        cJSON_AddItemToArray(a, row_json(&r->rows[i]));
    return a;
}

/* ---- show ---------------------------------------------------------------- */

/* A measured value against its prediction: "+3.4%"; a ratio
 * past a million either way in words (a record of 1e308 s printed "+inf%"). */
static const char *change_text(double measured, double predicted, char *out, size_t n)
{
    double ratio = measured / predicted;
    if (!(predicted > 0) || !isfinite(ratio))
        snprintf(out, n, "no prediction to compare");
    else if (ratio > 1e6 || ratio < 1e-6)
        snprintf(out, n, "%s", ratio > 1 ? "over a million times the prediction" : "under a millionth of the prediction");
    else
        snprintf(out, n, "%+.1f%%", 100 * (ratio - 1));
    return out;
}

/* Stored text as one line of a table: a line break or another control
 * character in a row another client wrote (a shared PostgreSQL history, an
 * edited file) is shown escaped, as the list's cells show it; the output's
 * own sanitiser keeps line breaks, and a stored "\n" made a line of
 * `history show` or `history diff`. Text without one is returned as is. */
typedef struct {
    char slot[24][1024];
    int next;
} shown_text;

static const char *one_line(shown_text *p, const char *text)
{
    if (!cf_has_controls(text))
        return text;
    char *b = p->slot[p->next++ % 24];
    cf_escape_into(text, b, sizeof p->slot[0]);
    return b;
}

void cf_history_show_table(const cf_history_show_report *r, cf_buf *out)
{
    shown_text st;
    st.next = 0;
#define L(x) one_line(&st, (x))
    const cf_history_row *row = r->row;
    const cf_history_config *c = &row->chosen;
    cf_buf_printf(out, "recommendation %lld\n", row->id);
    cf_buf_printf(out, "  created      %s (cloudfit %s)\n", L(row->created_at), L(row->tool_version));
    cf_buf_printf(out, "  spec         %s (%s)\n", L(row->spec_name), L(row->spec_hash));
    cf_buf_printf(out, "  objective    %s\n", L(row->objective));
    cf_buf_printf(out, "  catalog      %s, data of %s\n", L(row->catalog_name), L(row->catalog_date));
    cf_buf_printf(out, "  chosen       %d × %s%s (%d×%s) on %s/%s\n", c->nodes, L(c->instance_type),
                  !c->spot ? "" : c->mixed ? " (spot+od)" : " (spot)", c->gpus_per_node, L(c->gpu), L(c->cloud),
                  L(c->region));
    cf_buf_printf(out, "  batch        %d per GPU × %d accumulation = %ld global, lr %.4g\n", c->local_batch,
                  c->accumulation, c->global_batch, c->lr);
    cf_buf_printf(out, "  predicted    step %.4g s, %.2f h, $%.2f ($%.4g per node-hour)\n", c->step_time_s, c->hours,
                  c->total_usd, c->usd_per_node_hour);
    const cf_ci_info *ci = &row->ci;
    if (ci->provider[0]) {
        cf_buf_printf(out, "  ci           %s", L(ci->provider));
        if (ci->branch[0])
            cf_buf_printf(out, ", branch %s", L(ci->branch));
        if (ci->commit[0]) {
            const char *commit = L(ci->commit);
            cf_buf_printf(out, ", commit %.*s", (int)cf_utf8_prefix(commit, 12), commit);
        }
        if (ci->pull_request[0])
            cf_buf_printf(out, ", pull request %s", L(ci->pull_request));
        if (ci->run_url[0])
            cf_buf_printf(out, "\n               %s", L(ci->run_url));
        cf_buf_puts(out, "\n");
    }
    if (r->n_alternatives) {
        cf_buf_puts(out, "alternatives\n");
        for (size_t i = 0; i < r->n_alternatives; i++) {
            const cf_history_config *a = &r->alternatives[i];
            cf_buf_printf(out, "  %2d  %s/%s  %s%s  %d×%d %s  batch %ld  %.1f h  $%.2f\n", a->rank, L(a->cloud),
                          L(a->region), L(a->instance_type), !a->spot ? "" : a->mixed ? " (spot+od)" : " (spot)",
                          a->nodes, a->gpus_per_node, L(a->gpu), a->global_batch, a->hours, a->total_usd);
        }
    }
    if (r->n_gates) {
        cf_buf_puts(out, "gates\n");
        for (size_t i = 0; i < r->n_gates; i++)
            cf_buf_printf(out, "  %-22s %s  %s\n", L(r->gates[i].name), r->gates[i].passed ? "pass" : "FAIL",
                          L(r->gates[i].note));
    }
    if (r->n_measurements) {
        cf_buf_puts(out, "measured (cloudfit record)\n");
        for (size_t i = 0; i < r->n_measurements; i++) {
            const cf_history_measurement *m = &r->measurements[i];
            cf_buf_printf(out, "  #%lld  %s", m->id, L(m->recorded_at));
            char change[48];
            if (!isnan(m->step_time_s))
                cf_buf_printf(out, "  step %.4g s, predicted %.4g s (%s)", m->step_time_s, c->step_time_s,
                              change_text(m->step_time_s, c->step_time_s, change, sizeof change));
            if (!isnan(m->total_hours))
                cf_buf_printf(out, "  %.4g h, predicted %.4g h (%s)", m->total_hours, c->hours,
                              change_text(m->total_hours, c->hours, change, sizeof change));
            if (!isnan(m->total_usd))
                cf_buf_printf(out, "  $%.2f, predicted $%.2f (%s)", m->total_usd, c->total_usd,
                              change_text(m->total_usd, c->total_usd, change, sizeof change));
            if (m->note[0]) {
                char note[sizeof m->note * 4];
                cf_escape_into(m->note, note, sizeof note);
                cf_buf_printf(out, "  %s", note);
            }
            cf_buf_puts(out, "\n");
        }
    }
#undef L
}

void cf_history_show_csv(const cf_history_show_report *r, cf_buf *out)
{
    cf_buf_printf(out, "rank,%s\r\n", csv_config_columns);
    cf_csv_put_int(out, 1, 0);
    csv_config(out, &r->row->chosen, 1);
    for (size_t i = 0; i < r->n_alternatives; i++) {
        cf_csv_put_int(out, r->alternatives[i].rank, 0);
        csv_config(out, &r->alternatives[i], 1);
    }
}

cJSON *cf_history_show_json(const cf_history_show_report *r)
{
    cJSON *o = row_json(r->row);
    cJSON *measured = cJSON_AddArrayToObject(o, "measurements");
    for (size_t i = 0; i < r->n_measurements; i++) {
        const cf_history_measurement *m = &r->measurements[i];
        cJSON *item = cJSON_CreateObject();
        cJSON_AddNumberToObject(item, "id", (double)m->id);
        cJSON_AddStringToObject(item, "recorded_at", m->recorded_at);
        const char *keys[] = {"step_time_s", "total_hours", "total_usd"};
        const double values[] = {m->step_time_s, m->total_hours, m->total_usd};
        for (int k = 0; k < 3; k++) {
            if (isnan(values[k]))
                cJSON_AddNullToObject(item, keys[k]);
            else
                cJSON_AddNumberToObject(item, keys[k], values[k]);
        }
        cJSON_AddStringToObject(item, "note", m->note);
        cJSON_AddItemToArray(measured, item);
    }
    cJSON *doc = r->row->result_json ? cJSON_Parse(r->row->result_json) : NULL;
    cJSON_AddItemToObject(o, "document", doc ? doc : cJSON_CreateNull());
    return o;
}

/* ---- diff ---------------------------------------------------------------- */

void cf_history_diff_table(const cf_history_diff_report *r, cf_buf *out)
{
    const cf_diff_entry *e = r->diff.entries;
    size_t n = r->diff.n;
    shown_text st = {.next = 0};
    cf_buf_printf(out, "recommendation %lld (%s) → %lld (%s): %zu of %zu fields changed\n", r->from->id,
                  one_line(&st, r->from->created_at), r->to->id, one_line(&st, r->to->created_at), r->diff.n_changed,
                  n);
    int w = 0;
    for (size_t i = 0; i < n; i++)
        if (e[i].changed && cf_utf8_width(e[i].before) > w)
            w = cf_utf8_width(e[i].before);
    for (size_t i = 0; i < n; i++) {
        if (!e[i].changed)
            continue;
        cf_buf_printf(out, "  %-14s %-18s ", e[i].group, e[i].key);
        cf_buf_pad(out, e[i].before, w, 1);
        cf_buf_printf(out, " → %s", one_line(&st, e[i].after));
        double pct = cf_diff_pct(&e[i]);
        if (isfinite(pct))
            cf_buf_printf(out, "  (%+.1f%%)", pct);
        cf_buf_puts(out, "\n");
    }
}

void cf_history_diff_csv(const cf_history_diff_report *r, cf_buf *out)
{
    cf_buf_puts(out, "field,group,before,after,changed,change_pct\r\n");
    for (size_t i = 0; i < r->diff.n; i++) {
        const cf_diff_entry *e = &r->diff.entries[i];
        cf_csv_put_text(out, e->key, 0);
        cf_csv_put_text(out, e->group, 0);
        if (isnan(e->before_value)) {
            cf_csv_put_text(out, e->before, 0);
            cf_csv_put_text(out, e->after, 0);
        } else { /* the values, as the JSON and the list's CSV give them: the table's text rounds them */
            cf_csv_put_number(out, e->before_value, 0);
            cf_csv_put_number(out, e->after_value, 0);
        }
        cf_csv_put_int(out, e->changed, 0);
        cf_csv_put_number(out, cf_diff_pct(e), 1);
    }
}

cJSON *cf_history_diff_json(const cf_history_diff_report *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "from", (double)r->from->id);
    cJSON_AddNumberToObject(doc, "to", (double)r->to->id);
    cJSON_AddStringToObject(doc, "from_created_at", r->from->created_at);
    cJSON_AddStringToObject(doc, "to_created_at", r->to->created_at);
    cJSON *changes = cJSON_AddArrayToObject(doc, "changes");
    cJSON *same = cJSON_AddArrayToObject(doc, "unchanged");
    for (size_t i = 0; i < r->diff.n; i++) {
        const cf_diff_entry *e = &r->diff.entries[i];
        if (!e->changed) {
            cJSON_AddItemToArray(same, cJSON_CreateString(e->key));
            continue;
        }
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "field", e->key);
        cJSON_AddStringToObject(c, "group", e->group);
        if (isnan(e->before_value)) {
            cJSON_AddStringToObject(c, "before", e->before);
            cJSON_AddStringToObject(c, "after", e->after);
        } else {
            cJSON_AddNumberToObject(c, "before", e->before_value);
            cJSON_AddNumberToObject(c, "after", e->after_value);
        }
        double pct = cf_diff_pct(e);
        if (isfinite(pct))
            cJSON_AddNumberToObject(c, "change_pct", round(pct * 100) / 100);
        cJSON_AddItemToArray(changes, c);
    }
    return doc;
}

/* ---- prune and record ---------------------------------------------------- */

void cf_history_prune_text(const cf_history_prune_report *r, cf_buf *out)
{
    if (r->dry_run)
        cf_buf_printf(out, "dry run: prune would delete %lld recommendation%s created before %s from %s (with their "
                           "alternatives, CI rows and gates; recorded measurements stay); nothing was deleted\n",
                      r->n_deleted, r->n_deleted == 1 ? "" : "s", r->before, r->db_path);
    else
        cf_buf_printf(out, "pruned %lld recommendation%s created before %s from %s\n", r->n_deleted,
                      r->n_deleted == 1 ? "" : "s", r->before, r->db_path);
}

void cf_record_text(const cf_record_report *r, cf_buf *out)
{
    const cf_history_measurement *m = r->measurement;
    const cf_history_row *row = r->row;
    const cf_history_config *c = &row->chosen;
    shown_text st = {.next = 0};
    cf_buf_printf(out, "recorded measurement %lld for recommendation %lld (%s on %d × %s, %d×%s)\n",
                  r->measurement_id, row->id, one_line(&st, row->spec_name), c->nodes, one_line(&st, c->instance_type),
                  c->gpus_per_node, one_line(&st, c->gpu));
    char change[48];
    if (!isnan(m->step_time_s))
        cf_buf_printf(out, "  step time   %.4g s measured, %.4g s predicted (%s)\n", m->step_time_s, c->step_time_s,
                      change_text(m->step_time_s, c->step_time_s, change, sizeof change));
    if (!isnan(m->total_hours))
        cf_buf_printf(out, "  wall time   %.4g h measured, %.4g h predicted (%s)\n", m->total_hours, c->hours,
                      change_text(m->total_hours, c->hours, change, sizeof change));
    if (!isnan(m->total_usd))
        cf_buf_printf(out, "  cost        $%.2f measured, $%.2f predicted (%s)\n", m->total_usd, c->total_usd,
                      change_text(m->total_usd, c->total_usd, change, sizeof change));
    if (!isnan(m->step_time_s))
        cf_buf_printf(out, "later recommendations for %s use this step time for %s\n", one_line(&st, row->spec_name),
                      one_line(&st, c->gpu));
    else
        cf_buf_puts(out, "no step time given: kept in the history, but later recommendations cannot use it\n");
}

void cf_history_migrate_text(const cf_history_copy_counts *n, const char *from, const char *to, cf_buf *out)
{
#define S(n) ((n) == 1 ? "" : "s")
    /* profiles replaced or left out are said: which one a recommend uses changes */
    char profiles[160] = "";
    if (n->profiles_replaced > 0 && n->profiles_older > 0)
        snprintf(profiles, sizeof profiles, " (%lld replacing an older one; %lld not copied: older than the "
                 "destination's)", n->profiles_replaced, n->profiles_older);
    else if (n->profiles_replaced > 0)
        snprintf(profiles, sizeof profiles, " (%lld replacing an older one)", n->profiles_replaced);
    else if (n->profiles_older > 0)
        snprintf(profiles, sizeof profiles, " (%lld not copied: older than the destination's)", n->profiles_older);
    cf_buf_printf(out, "copied %lld recommendation%s (%lld %s there already), %lld spec%s, %lld measurement%s, "
                  "%lld profile%s%s, %lld price snapshot%s and %lld search run%s\nfrom %s\nto   %s\n",
                  n->recommendations, S(n->recommendations), n->recommendations_present,
                  n->recommendations_present == 1 ? "was" : "were", n->specs, S(n->specs), n->measurements,
                  S(n->measurements), n->profiles, S(n->profiles), profiles, n->snapshots, S(n->snapshots),
                  n->search_runs, S(n->search_runs), from, to);
#undef S
}
