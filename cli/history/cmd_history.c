/* `cloudfit history`: list (with filters), show ID, diff ID1 ID2, prune.
 * Output as a table (default), JSON or CSV (docs/history.md). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"
#include "log.h"
#include "cloudfit/common/clock.h"
#include "commands.h"
#include "io/db_open.h"
#include "history/history_diff.h"
#include "render/render_csv.h"

#define DEFAULT_LIMIT 20

typedef enum { FMT_TABLE, FMT_JSON, FMT_CSV } out_format;

static int parse_format(const cf_cli_options *o, out_format *f)
{
    *f = FMT_TABLE;
    if (!o->format || strcmp(o->format, "table") == 0)
        return 0;
    if (strcmp(o->format, "json") == 0)
        *f = FMT_JSON;
    else if (strcmp(o->format, "csv") == 0)
        *f = FMT_CSV;
    else {
        cf_log_error("option '--format' does not accept '%s' for history", o->format);
        cf_log_hint("use one of: table, json, csv");
        return CF_EXIT_USAGE;
    }
    return 0;
}

static int parse_id(const char *text, long long *id)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || errno || v < 1) {
        cf_log_error("expected a recommendation id (a positive integer), got '%s'", text);
        cf_log_hint("see 'cloudfit history' for the stored ids");
        return CF_EXIT_USAGE;
    }
    *id = v;
    return 0;
}

/* Prints the buffer to stdout, or reports running out of memory. */
static int flush(cf_buf *out)
{
    int rc = 0;
    if (cf_buf_failed(out)) {
        cf_error_set(CF_ERR_NOMEM, "out of memory rendering the history");
        rc = cf_report_error();
    } else if (out->len) {
        fwrite(out->data, 1, out->len, stdout);
        fflush(stdout);
    }
    cf_buf_free(out);
    return rc;
}

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
    cJSON_AddNumberToObject(o, "step_time_s", c->step_time_s);
    cJSON_AddNumberToObject(o, "hours", c->hours);
    cJSON_AddNumberToObject(o, "usd_per_node_hour", c->usd_per_node_hour);
    cJSON_AddNumberToObject(o, "total_usd", c->total_usd);
    return o;
}

static cJSON *ci_json(const cf_ci_info *ci)
{
    if (!ci->provider[0])
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "provider", ci->provider);
    cJSON_AddStringToObject(o, "commit", ci->commit);
    cJSON_AddStringToObject(o, "branch", ci->branch);
    cJSON_AddStringToObject(o, "base_branch", ci->base_branch);
    cJSON_AddStringToObject(o, "pull_request", ci->pull_request);
    cJSON_AddStringToObject(o, "run", ci->run_id);
    cJSON_AddStringToObject(o, "run_url", ci->run_url);
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
    cJSON_AddItemToObject(o, "ci", ci_json(&r->ci));
    return o;
}

static int print_json(cJSON *doc)
{
    char *text = doc ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (!text) {
        cf_error_set(CF_ERR_NOMEM, "out of memory rendering the history");
        return cf_report_error();
    }
    printf("%s\n", text);
    free(text);
    fflush(stdout);
    return 0;
}

/* ---- CSV ----------------------------------------------------------------- */

static const char *const csv_config_columns =
    "cloud,region,instance_type,gpu,gpus_per_node,nodes,local_batch,accumulation,global_batch,lr,spot,"
    "step_time_s,hours,usd_per_node_hour,total_usd";

static void csv_config(cf_buf *out, const cf_history_config *c)
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
    cf_csv_put_number(out, c->step_time_s, 0);
    cf_csv_put_number(out, c->hours, 0);
    cf_csv_put_number(out, c->usd_per_node_hour, 0);
    cf_csv_put_number(out, c->total_usd, 1);
}

/* ---- list ---------------------------------------------------------------- */

static void table_list(cf_buf *out, const cf_history_row *rows, size_t n)
{
    static const char *const titles[] = {"ID", "CREATED", "SPEC", "CLOUD/REGION", "INSTANCE", "NODES×GPUS",
                                         "GLOBAL", "HOURS", "TOTAL $", "BRANCH", "COMMIT"};
    enum { NC = sizeof titles / sizeof *titles };
    static const int right[NC] = {1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0};
    int widths[NC];
    for (int c = 0; c < NC; c++)
        widths[c] = cf_utf8_width(titles[c]);
    char(*cells)[NC][96] = calloc(n ? n : 1, sizeof *cells);
    if (!cells) {
        out->failed = 1;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const cf_history_row *r = &rows[i];
        snprintf(cells[i][0], 96, "%lld", r->id);
        snprintf(cells[i][1], 96, "%s", r->created_at);
        snprintf(cells[i][2], 96, "%s", r->spec_name);
        snprintf(cells[i][3], 96, "%s/%s", r->chosen.cloud, r->chosen.region);
        snprintf(cells[i][4], 96, "%s%s", r->chosen.instance_type, r->chosen.spot ? " (spot)" : "");
        snprintf(cells[i][5], 96, "%d×%d %s", r->chosen.nodes, r->chosen.gpus_per_node, r->chosen.gpu);
        snprintf(cells[i][6], 96, "%ld", r->chosen.global_batch);
        snprintf(cells[i][7], 96, "%.1f", r->chosen.hours);
        snprintf(cells[i][8], 96, "%.2f", r->chosen.total_usd);
        snprintf(cells[i][9], 96, "%.40s", r->ci.branch[0] ? r->ci.branch : "-");
        snprintf(cells[i][10], 96, "%.10s", r->ci.commit[0] ? r->ci.commit : "-");
        for (int c = 0; c < NC; c++) {
            /* Control characters from outside (branch names) are shown as '?'. */
            for (char *p = cells[i][c]; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                    *p = '?';
            if (cf_utf8_width(cells[i][c]) > widths[c])
                widths[c] = cf_utf8_width(cells[i][c]);
        }
    }
    for (int c = 0; c < NC; c++) {
        cf_buf_pad(out, titles[c], c + 1 < NC ? widths[c] : 0, right[c]);
        cf_buf_puts(out, c + 1 < NC ? "  " : "\n");
    }
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < NC; c++) {
            cf_buf_pad(out, cells[i][c], c + 1 < NC ? widths[c] : 0, right[c]);
            cf_buf_puts(out, c + 1 < NC ? "  " : "\n");
        }
    free(cells);
}

static int list(const cf_cli_options *o, out_format fmt)
{
    if (o->clouds.n > 1 || o->gpus.n > 1) {
        cf_log_error("history takes one --cloud and one --gpu filter");
        return CF_EXIT_USAGE;
    }
    cf_history_filter f = {.spec_name = o->model, .spec_hash = o->spec_hash, .since = o->since, .until = o->until,
                           .cloud = o->clouds.n ? o->clouds.items[0] : NULL,
                           .gpu = o->gpus.n ? o->gpus.items[0] : NULL, .branch = o->branch,
                           .limit = o->limit > 0 ? o->limit : DEFAULT_LIMIT};
    char path[1024];
    cf_db *db = NULL;
    if (cf_cli_db_open(o, 0, &db, path, sizeof path) != CF_OK)
        return cf_report_error();
    cf_history_row *rows = NULL;
    size_t n = 0;
    cf_status st = cf_history_list(db, &f, &rows, &n);
    cf_db_close(db);
    if (st != CF_OK)
        return cf_report_error();
    int rc = 0;
    if (fmt == FMT_JSON) {
        cJSON *a = cJSON_CreateArray();
        for (size_t i = 0; i < n; i++)
            cJSON_AddItemToArray(a, row_json(&rows[i]));
        rc = print_json(a);
    } else {
        cf_buf out = CF_BUF_INIT;
        if (fmt == FMT_CSV) {
            cf_buf_printf(&out, "id,created_at,spec_name,spec_hash,objective,catalog_name,catalog_date,%s,"
                                "ci_provider,commit,branch,base_branch,pull_request,run_id\r\n",
                          csv_config_columns);
            for (size_t i = 0; i < n; i++) {
                const cf_history_row *r = &rows[i];
                cf_csv_put_int(&out, r->id, 0);
                const char *texts[] = {r->created_at, r->spec_name, r->spec_hash, r->objective, r->catalog_name,
                                       r->catalog_date};
                for (int k = 0; k < 6; k++)
                    cf_csv_put_text(&out, texts[k], 0);
                csv_config(&out, &r->chosen);
                out.len -= 2; /* csv_config ended the record: continue it */
                out.data[out.len] = '\0';
                cf_buf_puts(&out, ",");
                const char *ci[] = {r->ci.provider, r->ci.commit, r->ci.branch, r->ci.base_branch,
                                    r->ci.pull_request, r->ci.run_id};
                for (int k = 0; k < 6; k++)
                    cf_csv_put_text(&out, ci[k], k == 5);
            }
        } else if (n == 0) {
            cf_log_info("no recommendations match in %s", path);
        } else {
            table_list(&out, rows, n);
        }
        rc = flush(&out);
    }
    cf_history_rows_free(rows, n);
    return rc;
}

/* ---- show ---------------------------------------------------------------- */

static void table_show(cf_buf *out, const cf_history_row *r, const cf_history_config *alts, size_t n_alts,
                       const cf_history_gate *gates, size_t n_gates)
{
    const cf_history_config *c = &r->chosen;
    cf_buf_printf(out, "recommendation %lld\n", r->id);
    cf_buf_printf(out, "  created      %s (cloudfit %s)\n", r->created_at, r->tool_version);
    cf_buf_printf(out, "  spec         %s (%s)\n", r->spec_name, r->spec_hash);
    cf_buf_printf(out, "  objective    %s\n", r->objective);
    cf_buf_printf(out, "  catalog      %s, data of %s\n", r->catalog_name, r->catalog_date);
    cf_buf_printf(out, "  chosen       %d × %s%s (%d×%s) on %s/%s\n", c->nodes, c->instance_type,
                  c->spot ? " (spot)" : "", c->gpus_per_node, c->gpu, c->cloud, c->region);
    cf_buf_printf(out, "  batch        %d per GPU × %d accumulation = %ld global, lr %.4g\n", c->local_batch,
                  c->accumulation, c->global_batch, c->lr);
    cf_buf_printf(out, "  predicted    step %.4g s, %.2f h, $%.2f ($%.4g per node-hour)\n", c->step_time_s, c->hours,
                  c->total_usd, c->usd_per_node_hour);
    if (r->ci.provider[0]) {
        cf_buf_printf(out, "  ci           %s", r->ci.provider);
        if (r->ci.branch[0])
            cf_buf_printf(out, ", branch %s", r->ci.branch);
        if (r->ci.commit[0])
            cf_buf_printf(out, ", commit %.12s", r->ci.commit);
        if (r->ci.pull_request[0])
            cf_buf_printf(out, ", pull request %s", r->ci.pull_request);
        if (r->ci.run_url[0])
            cf_buf_printf(out, "\n               %s", r->ci.run_url);
        cf_buf_puts(out, "\n");
    }
    if (n_alts) {
        cf_buf_puts(out, "alternatives\n");
        for (size_t i = 0; i < n_alts; i++) {
            const cf_history_config *a = &alts[i];
            cf_buf_printf(out, "  %2d  %s/%s  %s%s  %d×%d %s  batch %ld  %.1f h  $%.2f\n", a->rank, a->cloud,
                          a->region, a->instance_type, a->spot ? " (spot)" : "", a->nodes, a->gpus_per_node, a->gpu,
                          a->global_batch, a->hours, a->total_usd);
        }
    }
    if (n_gates) {
        cf_buf_puts(out, "gates\n");
        for (size_t i = 0; i < n_gates; i++)
            cf_buf_printf(out, "  %-22s %s  %s\n", gates[i].name, gates[i].passed ? "pass" : "FAIL", gates[i].note);
    }
}

static int show(const cf_cli_options *o, out_format fmt, const char *id_text)
{
    long long id;
    int rc = parse_id(id_text, &id);
    if (rc)
        return rc;
    char path[1024];
    cf_db *db = NULL;
    if (cf_cli_db_open(o, 0, &db, path, sizeof path) != CF_OK)
        return cf_report_error();
    cf_history_row row;
    cf_history_config *alts = NULL;
    cf_history_gate *gates = NULL;
    size_t n_alts = 0, n_gates = 0;
    memset(&row, 0, sizeof row);
    cf_status st = cf_history_get(db, id, &row);
    if (st == CF_OK)
        st = cf_history_alternatives(db, id, &alts, &n_alts);
    if (st == CF_OK)
        st = cf_history_gates(db, id, &gates, &n_gates);
    cf_db_close(db);
    if (st != CF_OK) {
        free(row.result_json);
        free(alts);
        return cf_report_error();
    }
    if (fmt == FMT_JSON) {
        cJSON *o_json = row_json(&row);
        cJSON *doc = cJSON_Parse(row.result_json);
        cJSON_AddItemToObject(o_json, "document", doc ? doc : cJSON_CreateNull());
        rc = print_json(o_json);
    } else {
        cf_buf out = CF_BUF_INIT;
        if (fmt == FMT_CSV) {
            cf_buf_printf(&out, "rank,%s\r\n", csv_config_columns);
            cf_csv_put_int(&out, 1, 0);
            csv_config(&out, &row.chosen);
            for (size_t i = 0; i < n_alts; i++) {
                cf_csv_put_int(&out, alts[i].rank, 0);
                csv_config(&out, &alts[i]);
            }
        } else {
            table_show(&out, &row, alts, n_alts, gates, n_gates);
        }
        rc = flush(&out);
    }
    free(row.result_json);
    free(alts);
    free(gates);
    return rc;
}

/* ---- diff ---------------------------------------------------------------- */

static int diff(const cf_cli_options *o, out_format fmt, const char *a_text, const char *b_text)
{
    long long ids[2];
    int rc;
    if ((rc = parse_id(a_text, &ids[0])) || (rc = parse_id(b_text, &ids[1])))
        return rc;
    char path[1024];
    cf_db *db = NULL;
    if (cf_cli_db_open(o, 0, &db, path, sizeof path) != CF_OK)
        return cf_report_error();
    cf_history_row rows[2];
    memset(rows, 0, sizeof rows);
    cf_status st = cf_history_get(db, ids[0], &rows[0]);
    if (st == CF_OK)
        st = cf_history_get(db, ids[1], &rows[1]);
    cf_db_close(db);
    free(rows[0].result_json);
    free(rows[1].result_json);
    if (st != CF_OK)
        return cf_report_error();
    cf_diff_entry e[CF_DIFF_FIELDS + 6];
    size_t n = cf_config_diff(&rows[0].chosen, &rows[1].chosen, e);
    /* What the configuration rests on: spec, objective, catalog, tool. */
    struct {
        const char *key, *a, *b;
    } extra[] = {{"spec_hash", rows[0].spec_hash, rows[1].spec_hash},
                 {"objective", rows[0].objective, rows[1].objective},
                 {"catalog_name", rows[0].catalog_name, rows[1].catalog_name},
                 {"catalog_date", rows[0].catalog_date, rows[1].catalog_date},
                 {"tool_version", rows[0].tool_version, rows[1].tool_version}};
    for (size_t i = 0; i < sizeof extra / sizeof *extra; i++) {
        cf_diff_entry *x = &e[n++];
        memset(x, 0, sizeof *x);
        x->key = extra[i].key;
        x->group = strncmp(extra[i].key, "catalog", 7) == 0 ? "catalog" : "inputs";
        snprintf(x->before, sizeof x->before, "%s", extra[i].a);
        snprintf(x->after, sizeof x->after, "%s", extra[i].b);
        x->before_value = x->after_value = NAN;
        x->changed = strcmp(extra[i].a, extra[i].b) != 0;
    }
    size_t n_changed = 0;
    for (size_t i = 0; i < n; i++)
        n_changed += e[i].changed;
    if (fmt == FMT_JSON) {
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddNumberToObject(doc, "from", (double)ids[0]);
        cJSON_AddNumberToObject(doc, "to", (double)ids[1]);
        cJSON_AddStringToObject(doc, "from_created_at", rows[0].created_at);
        cJSON_AddStringToObject(doc, "to_created_at", rows[1].created_at);
        cJSON *changes = cJSON_AddArrayToObject(doc, "changes");
        cJSON *same = cJSON_AddArrayToObject(doc, "unchanged");
        for (size_t i = 0; i < n; i++) {
            if (!e[i].changed) {
                cJSON_AddItemToArray(same, cJSON_CreateString(e[i].key));
                continue;
            }
            cJSON *c = cJSON_CreateObject();
            cJSON_AddStringToObject(c, "field", e[i].key);
            cJSON_AddStringToObject(c, "group", e[i].group);
            if (isnan(e[i].before_value)) {
                cJSON_AddStringToObject(c, "before", e[i].before);
                cJSON_AddStringToObject(c, "after", e[i].after);
            } else {
                cJSON_AddNumberToObject(c, "before", e[i].before_value);
                cJSON_AddNumberToObject(c, "after", e[i].after_value);
            }
            double pct = cf_diff_pct(&e[i]);
            if (isfinite(pct))
                cJSON_AddNumberToObject(c, "change_pct", round(pct * 100) / 100);
            cJSON_AddItemToArray(changes, c);
        }
        return print_json(doc);
    }
    cf_buf out = CF_BUF_INIT;
    if (fmt == FMT_CSV) {
        cf_buf_puts(&out, "field,group,before,after,changed,change_pct\r\n");
        for (size_t i = 0; i < n; i++) {
            cf_csv_put_text(&out, e[i].key, 0);
            cf_csv_put_text(&out, e[i].group, 0);
            cf_csv_put_text(&out, e[i].before, 0);
            cf_csv_put_text(&out, e[i].after, 0);
            cf_csv_put_int(&out, e[i].changed, 0);
            cf_csv_put_number(&out, cf_diff_pct(&e[i]), 1);
        }
    } else {
        cf_buf_printf(&out, "recommendation %lld (%s) → %lld (%s): %zu of %zu fields changed\n", ids[0],
                      rows[0].created_at, ids[1], rows[1].created_at, n_changed, n);
        int w = 0;
        for (size_t i = 0; i < n; i++)
            if (e[i].changed && cf_utf8_width(e[i].before) > w)
                w = cf_utf8_width(e[i].before);
        for (size_t i = 0; i < n; i++) {
            if (!e[i].changed)
                continue;
            cf_buf_printf(&out, "  %-14s %-18s ", e[i].group, e[i].key);
            cf_buf_pad(&out, e[i].before, w, 1);
            cf_buf_printf(&out, " → %s", e[i].after);
            double pct = cf_diff_pct(&e[i]);
            if (isfinite(pct))
                cf_buf_printf(&out, "  (%+.1f%%)", pct);
            cf_buf_puts(&out, "\n");
        }
    }
    return flush(&out);
}

/* ---- prune --------------------------------------------------------------- */

/* "30d", "12h", "90m", "2w" → a cut-off before now; or an ISO date as is. */
static int cutoff(const char *age, char *out, size_t n)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(age, &end);
    double unit = 0;
    if (end != age && !errno && v >= 0 && end[0] && !end[1]) {
        switch (end[0]) {
        case 'm': unit = 60; break;
        case 'h': unit = 3600; break;
        case 'd': unit = 86400; break;
        case 'w': unit = 7 * 86400; break;
        default: break;
        }
    }
    if (unit > 0) {
        cf_iso8601_ago(v * unit, out, n);
        return 0;
    }
    int y, mo, d;
    if (sscanf(age, "%4d-%2d-%2d", &y, &mo, &d) == 3 && strlen(age) < n) {
        snprintf(out, n, "%s", age);
        return 0;
    }
    cf_log_error("option '--older-than' expects an age (30d, 12h, 90m, 2w) or a date (2026-01-31), got '%s'", age);
    return CF_EXIT_USAGE;
}

static int prune(const cf_cli_options *o)
{
    if (!o->older_than) {
        cf_log_error("history prune needs --older-than AGE");
        cf_log_hint("e.g. 'cloudfit history prune --older-than 90d'");
        return CF_EXIT_USAGE;
    }
    char before[64];
    int rc = cutoff(o->older_than, before, sizeof before);
    if (rc)
        return rc;
    char path[1024];
    cf_db *db = NULL;
    if (cf_cli_db_open(o, 0, &db, path, sizeof path) != CF_OK)
        return cf_report_error();
    long long n = 0;
    cf_status st = cf_history_prune(db, before, &n);
    cf_db_close(db);
    if (st != CF_OK)
        return cf_report_error();
    printf("pruned %lld recommendation%s created before %s from %s\n", n, n == 1 ? "" : "s", before, path);
    return 0;
}

int cmd_history(int argc, char **argv, const cf_cli_options *o, int n_positional)
{
    (void)argc;
    out_format fmt;
    int rc = parse_format(o, &fmt);
    if (rc)
        return rc;
    const char *sub = n_positional ? argv[1] : "list";
    int n_args = n_positional ? n_positional - 1 : 0;
    if (strcmp(sub, "list") == 0 && n_args == 0)
        return list(o, fmt);
    if (strcmp(sub, "show") == 0 && n_args == 1)
        return show(o, fmt, argv[2]);
    if (strcmp(sub, "diff") == 0 && n_args == 2)
        return diff(o, fmt, argv[2], argv[3]);
    if (strcmp(sub, "prune") == 0 && n_args == 0)
        return prune(o);
    if (!strcmp(sub, "list") || !strcmp(sub, "show") || !strcmp(sub, "diff") || !strcmp(sub, "prune"))
        cf_log_error("history %s: wrong number of arguments (%d)", sub, n_args);
    else
        cf_log_error("'%s' is not a history command", sub);
    cf_log_hint("usage: cloudfit history [list] | show ID | diff ID1 ID2 | prune --older-than AGE");
    return CF_EXIT_USAGE;
}
