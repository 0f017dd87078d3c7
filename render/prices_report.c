/* Renders the results of `cloudfit prices` (prices_report.h). */
#include "cloudfit/render/text_table.h"
#include "cloudfit/render/prices_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/advisor.h"
#include "cloudfit/common/csvwrite.h"

enum { MAX_COLS = 12, CELL = 128 };

/* CSV carries the price itself, as the JSON does (15 significant digits, as cJSON
   writes it first), not the table's rounding. */
#define CSV_PRICE "%.15g"

static void fmt_price(char *out, size_t n, double v) { v > 0 ? snprintf(out, n, "%.4g", v) : snprintf(out, n, "-"); }

/* The rows of cells (row 0 is the header) as a table fitted to `width`
 * (0 = no limit); `columns` give alignment and what goes first
 * (cloudfit/render/text_table.h). */
static void put_table(cf_buf *b, char (*cells)[MAX_COLS][CELL], size_t n_rows, const cf_text_column *columns,
                      size_t n_cols, int width)
{
    const char **ptr = calloc(n_rows * n_cols + 1, sizeof *ptr);
    if (!ptr) {
        b->failed = 1;
        return;
    }
    cf_text_column cols[MAX_COLS];
    for (size_t c = 0; c < n_cols; c++) {
        cols[c] = columns[c];
        cols[c].title = cells[0][c];
    }
    for (size_t r = 1; r < n_rows; r++)
        for (size_t c = 0; c < n_cols; c++)
            ptr[(r - 1) * n_cols + c] = cells[r][c];
    cf_text_table t = {.columns = cols, .n_columns = n_cols, .cells = ptr, .n_rows = n_rows - 1, .width = width,
                       .gap = 2, .highlight_row = -1};
    cf_buf left_out = CF_BUF_INIT;
    cf_text_table_render(&t, b, &left_out);
    cf_text_table_note(&left_out, width, b);
    cf_buf_free(&left_out);
    free(ptr);
}

/* A table of `n_rows` rows under a header, or a failed buffer. */
static char (*new_cells(size_t n_rows, const char *const *head, size_t n_cols, cf_buf *out))[MAX_COLS][CELL]
{
    char(*cells)[MAX_COLS][CELL] = calloc(n_rows + 1, sizeof *cells);
    if (!cells) {
        out->failed = 1;
        return NULL;
    }
    for (size_t c = 0; c < n_cols; c++)
        snprintf(cells[0][c], CELL, "%s", head[c]);
    return cells;
}

/* ---- summary: GPU × cloud ------------------------------------------------- */

/* "1, 2, 4, 8" or "16, 32+". */
static void counts_text(const cf_gpu_cloud_prices *g, char *out, size_t n)
{
    size_t o = 0;
    out[0] = '\0';
    for (int k = 1; k < 32 && o + 4 < n; k++)
        if (g->gpu_counts_mask & (1u << k))
            o += (size_t)snprintf(out + o, n - o, "%s%d", o ? ", " : "", k);
    if (g->gpu_counts_32_plus && o + 6 < n)
        snprintf(out + o, n - o, "%s32+", o ? ", " : "");
}

/* Table mark of a spot price that is not a listed price. */
static const char *kind_mark(cf_price_kind kind)
{
    return kind == CF_PRICE_ESTIMATED ? " (est.)" : kind == CF_PRICE_OBSERVED ? " (obs.)" : "";
}

void cf_prices_summary_table(const cf_prices_summary_report *r, cf_buf *out)
{
    static const char *const head[] = {"GPU", "CLOUD", "GPUS/VM", "$/GPU-HR", "SPOT $/GPU-HR",
                                       "CHEAPEST (ON-DEMAND)"};
    /* narrow terminals: the VM sizes go first, then the spot price; the cheapest offer is cut */
    static const cf_text_column columns[] = {
        {NULL, 0, 0, 0, 0, NULL, NULL}, {NULL, 0, 0, 0, 0, NULL, NULL}, {NULL, 0, 2, 1, 0, NULL, NULL},
        {NULL, 1, 0, 0, 0, NULL, NULL}, {NULL, 1, 3, 0, 0, NULL, NULL}, {NULL, 0, 0, 1, 0, NULL, NULL}};
    char(*cells)[MAX_COLS][CELL] = new_cells(r->n_rows, head, 6, out);
    for (size_t i = 0; cells && i < r->n_rows; i++) {
        const cf_gpu_cloud_prices *g = &r->rows[i];
        char(*row)[CELL] = cells[i + 1], spot[32];
        snprintf(row[0], CELL, "%s", i > 0 && strcmp(r->rows[i - 1].gpu, g->gpu) == 0 ? "" : g->gpu);
        snprintf(row[1], CELL, "%s", g->cloud);
        counts_text(g, row[2], CELL);
        /* a price an override gave or changed: '*', as the offers' table marks its row */
        fmt_price(spot, sizeof spot, g->cheapest_usd_per_gpu_hr);
        snprintf(row[3], CELL, "%s%s", spot,
                 g->cheapest && cf_catalog_source_price_rule_of(r->source, g->cheapest, 0) ? " *" : "");
        fmt_price(spot, sizeof spot, g->cheapest_spot_usd_per_gpu_hr);
        snprintf(row[4], CELL, "%s%s%s", spot, g->cheapest_spot ? kind_mark(g->cheapest_spot_kind) : "",
                 g->cheapest_spot && cf_catalog_source_price_rule_of(r->source, g->cheapest_spot, 1) ? " *" : "");
        if (g->cheapest)
            snprintf(row[5], CELL, "%s %s", g->cheapest->instance_type, g->cheapest->region);
        else
            snprintf(row[5], CELL, "- (spot or flex-start only)");
    }
    if (cells)
        put_table(out, cells, r->n_rows + 1, columns, 6, r->width);
    free(cells);
    char line[512];
    cf_catalog_source_describe(r->source, line, sizeof line);
    cf_buf_printf(out, "\ncatalog: %s; %zu offer%s. 'cloudfit prices GPU' lists every offer of one GPU.\n", line,
                  r->n_offers, r->n_offers == 1 ? "" : "s");
    if (r->source->overrides.n)
        cf_buf_printf(out, "* price from %s\n", r->source->overrides.path);
    cf_buf_puts(out, "spot prices: (obs.) = observed AWS spot price, the lowest over the region's zones; (est.) = "
                     "AWS on-demand × (1 − Spot Instance Advisor average savings), an estimate; unmarked = the "
                     "cloud's listed spot price\n");
}

/* A CSV cell: the 1-based override rule that gave or changed the price of
 * `vm` (its spot price: `spot` 1; any of its prices: -1), empty when none
 * did (or there is no such offer). */
static void put_rule(cf_buf *out, const cf_catalog_source *src, const cf_vm *vm, int spot)
{
    int rule = !vm ? 0 : spot < 0 ? cf_catalog_source_rule_of(src, vm) : cf_catalog_source_price_rule_of(src, vm, spot);
    if (rule)
        cf_buf_printf(out, "%d", rule);
}

void cf_prices_summary_csv(const cf_prices_summary_report *r, cf_buf *out)
{
    cf_buf_puts(out, "gpu,cloud,gpu_counts,cheapest_usd_per_gpu_hr,cheapest_instance,cheapest_region,"
                     "cheapest_spot_usd_per_gpu_hr,spot_estimated,cheapest_spot_kind,price_override_rule,"
                     "spot_price_override_rule\n");
    for (size_t i = 0; i < r->n_rows; i++) {
        const cf_gpu_cloud_prices *g = &r->rows[i];
        char counts[64];
        counts_text(g, counts, sizeof counts);
        cf_csv_put_field(out, g->gpu);
        cf_buf_puts(out, ",");
        cf_csv_put_field(out, g->cloud);
        cf_buf_printf(out, ",\"%s\",", counts);
        if (g->cheapest) {
            cf_buf_printf(out, CSV_PRICE ",", g->cheapest_usd_per_gpu_hr);
            cf_csv_put_field(out, g->cheapest->instance_type);
            cf_buf_puts(out, ",");
            cf_csv_put_field(out, g->cheapest->region);
            cf_buf_puts(out, ",");
        } else {
            cf_buf_puts(out, ",,,");
        }
        if (g->cheapest_spot)
            cf_buf_printf(out, CSV_PRICE ",%d,%s", g->cheapest_spot_usd_per_gpu_hr,
                          g->cheapest_spot->spot_price_estimated, cf_price_kind_name(g->cheapest_spot_kind));
        else
            cf_buf_puts(out, ",,");
        /* the JSON's price_override_rule / spot_price_override_rule (the table's '*'); empty: the catalog's */
        cf_buf_puts(out, ",");
        put_rule(out, r->source, g->cheapest, 0);
        cf_buf_puts(out, ",");
        put_rule(out, r->source, g->cheapest_spot, 1);
        cf_buf_puts(out, "\n");
    }
}

cJSON *cf_prices_summary_json(const cf_prices_summary_report *r)
{
    const cf_catalog_source *src = r->source;
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddItemToObject(doc, "catalog", cf_catalog_source_json(src, &src->catalog, src->age_days, NULL, 0, 0));
    cJSON *arr = cJSON_AddArrayToObject(doc, "gpus");
    for (size_t i = 0; i < r->n_rows; i++) {
        const cf_gpu_cloud_prices *g = &r->rows[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "gpu", g->gpu);
        cJSON_AddStringToObject(e, "cloud", g->cloud);
        cJSON *c = cJSON_AddArrayToObject(e, "gpu_counts");
        for (int k = 1; k < 32; k++)
            if (g->gpu_counts_mask & (1u << k))
                cJSON_AddItemToArray(c, cJSON_CreateNumber(k));
        if (g->cheapest) { /* none: spot / flex-start only */
            cJSON_AddNumberToObject(e, "cheapest_usd_per_gpu_hr", g->cheapest_usd_per_gpu_hr);
            cJSON_AddStringToObject(e, "cheapest_instance", g->cheapest->instance_type);
            cJSON_AddStringToObject(e, "cheapest_region", g->cheapest->region);
            if (cf_catalog_source_price_rule_of(src, g->cheapest, 0))
                cJSON_AddNumberToObject(e, "price_override_rule", cf_catalog_source_price_rule_of(src, g->cheapest, 0));
        } else {
            cJSON_AddNullToObject(e, "cheapest_usd_per_gpu_hr");
        }
        if (g->cheapest_spot) {
            cJSON_AddNumberToObject(e, "cheapest_spot_usd_per_gpu_hr", g->cheapest_spot_usd_per_gpu_hr);
            cJSON_AddBoolToObject(e, "spot_estimated", g->cheapest_spot->spot_price_estimated);
            cJSON_AddStringToObject(e, "cheapest_spot_kind", cf_price_kind_name(g->cheapest_spot_kind));
            if (cf_catalog_source_price_rule_of(src, g->cheapest_spot, 1))
                cJSON_AddNumberToObject(e, "spot_price_override_rule",
                                        cf_catalog_source_price_rule_of(src, g->cheapest_spot, 1));
        } else {
            cJSON_AddNullToObject(e, "cheapest_spot_usd_per_gpu_hr");
        }
        cJSON_AddItemToArray(arr, e);
    }
    return doc;
}

/* ---- every offer of one GPU ------------------------------------------------ */

/* "observed", "estimated 2025-06-28", "listed 2026-07-30", "-": the kind
 * and date of a spot price, short enough for a table cell. */
static void spot_kind_cell(const cf_vm *vm, char *out, size_t n)
{
    if (vm->spot_kind == CF_PRICE_NONE)
        snprintf(out, n, "-");
    else if (vm->spot_kind == CF_PRICE_GIVEN) /* the overrides' price: no date of its own */
        snprintf(out, n, "%s", cf_price_kind_name(vm->spot_kind));
    else
        snprintf(out, n, "%s%s%s%s", cf_price_kind_name(vm->spot_kind), vm->spot_regional ? " (region)" : "",
                 vm->spot_date[0] ? " " : " (undated)", vm->spot_date);
}

/* "12.5%/mo advisor", "15%/mo default", "-" (no spot price). */
static void interruptions_cell(const cf_catalog *cat, const cf_vm *vm, char *out, size_t n)
{
    char origin[128];
    cf_vm_interruptions_origin(cat, vm, origin, sizeof origin);
    if (vm->spot_kind == CF_PRICE_NONE)
        snprintf(out, n, "-");
    else if (origin[0])
        snprintf(out, n, "%g%%/mo advisor", vm->interruptions_pct_per_month);
    else
        snprintf(out, n, "%g%%/mo default", CF_DEFAULT_SPOT_INTERRUPTIONS_PCT_PER_MONTH);
}

void cf_prices_offers_table(const cf_prices_offers_report *r, cf_buf *out)
{
    const cf_catalog_source *src = r->source;
    static const char *const head[] = {"CLOUD", "REGION",    "INSTANCE",   "GPUS",         "VCPUS", "MEM GIB",
                                       "NET GBPS", "$/HR", "SPOT $/HR", "SPOT PRICE", "INTERRUPTIONS"};
    /* narrow terminals: the spot price's kind goes first, then the VM's network, CPUs, memory and
     * interruption rate; names are cut last */
    static const cf_text_column columns[] = {
        {NULL, 0, 0, 0, 0, NULL, NULL}, {NULL, 0, 0, 1, 0, NULL, NULL}, {NULL, 0, 0, 1, 0, NULL, NULL},
        {NULL, 1, 0, 0, 0, NULL, NULL}, {NULL, 1, 3, 0, 0, NULL, NULL}, {NULL, 1, 4, 0, 0, NULL, NULL},
        {NULL, 1, 2, 0, 0, NULL, NULL}, {NULL, 1, 0, 0, 0, NULL, NULL}, {NULL, 1, 0, 0, 0, NULL, NULL},
        {NULL, 0, 1, 1, 0, NULL, NULL}, {NULL, 0, 5, 0, 0, NULL, NULL}};
    char(*cells)[MAX_COLS][CELL] = new_cells(r->n_offers, head, 11, out);
    for (size_t i = 0; cells && i < r->n_offers; i++) {
        const cf_vm *vm = r->offers[i];
        char(*row)[CELL] = cells[i + 1];
        snprintf(row[0], CELL, "%s", vm->cloud);
        snprintf(row[1], CELL, "%s", vm->region);
        snprintf(row[2], CELL, "%s%s", vm->instance_type, cf_catalog_source_rule_of(src, vm) ? " *" : "");
        snprintf(row[3], CELL, "%d×%s", vm->gpu_count, vm->gpu_model);
        snprintf(row[4], CELL, "%d", vm->vcpus);
        snprintf(row[5], CELL, "%g", vm->memory_gib);
        vm->network_gbps > 0 ? snprintf(row[6], CELL, "%g", vm->network_gbps) : snprintf(row[6], CELL, "-");
        fmt_price(row[7], CELL, vm->price_ondemand_usd_per_hr);
        fmt_price(row[8], CELL, vm->price_spot_usd_per_hr);
        spot_kind_cell(vm, row[9], CELL);
        interruptions_cell(&src->catalog, vm, row[10], CELL);
    }
    if (cells)
        put_table(out, cells, r->n_offers + 1, columns, 11, r->width);
    free(cells);
    char line[512];
    cf_catalog_source_describe(src, line, sizeof line);
    cf_buf_printf(out, "\n%zu offer%s; catalog: %s\n", r->n_offers, r->n_offers == 1 ? "" : "s", line);
    if (src->overrides.n)
        cf_buf_printf(out, "* price from %s\n", src->overrides.path);
    cf_buf_puts(out, "SPOT PRICE: observed = AWS spot price seen in the region, the lowest over its zones (observed "
                     "(region): the AWS spot feed's one price for the region); estimated = "
                     "AWS on-demand × (1 − Spot Instance Advisor average savings), not a price anyone quoted; "
                     "listed = the cloud's published spot price. INTERRUPTIONS: % of spot VMs interrupted per "
                     "month, from the AWS Spot Advisor band, else cloudfit's default.\n");
}

void cf_prices_offers_csv(const cf_prices_offers_report *r, cf_buf *out)
{
    cf_buf_puts(out, "cloud,region,instance_type,gpus,gpu_memory_gib,vcpus,memory_gib,network_gbps,usd_per_hour,"
                     "spot_usd_per_hour,spot_estimated,ondemand_kind,ondemand_date,spot_kind,spot_date,zones,gpu,"
                     "price_override_rule\n");
    for (size_t i = 0; i < r->n_offers; i++) {
        const cf_vm *vm = r->offers[i];
        const char *texts[] = {vm->cloud, vm->region, vm->instance_type};
        for (int k = 0; k < 3; k++) {
            cf_csv_put_field(out, texts[k]);
            cf_buf_puts(out, ",");
        }
        cf_buf_printf(out, "%d,%g,%d,%g,", vm->gpu_count, vm->gpu_memory_gib, vm->vcpus, vm->memory_gib);
        if (vm->network_gbps > 0)
            cf_buf_printf(out, "%g", vm->network_gbps);
        cf_buf_puts(out, ",");
        if (vm->price_ondemand_usd_per_hr > 0)
            cf_buf_printf(out, CSV_PRICE, vm->price_ondemand_usd_per_hr);
        cf_buf_puts(out, ",");
        if (vm->price_spot_usd_per_hr > 0)
            cf_buf_printf(out, CSV_PRICE, vm->price_spot_usd_per_hr);
        cf_buf_printf(out, ",%d,%s,", vm->spot_price_estimated,
                      vm->ondemand_kind ? cf_price_kind_name(vm->ondemand_kind) : "");
        cf_csv_put_field(out, vm->ondemand_date);
        cf_buf_printf(out, ",%s,", vm->spot_kind ? cf_price_kind_name(vm->spot_kind) : "");
        cf_csv_put_field(out, vm->spot_date);
        cf_buf_puts(out, ",");
        cf_csv_put_field(out, vm->zones);
        cf_buf_puts(out, ",");
        cf_csv_put_field(out, vm->gpu_model);
        cf_buf_puts(out, ",");
        put_rule(out, r->source, vm, -1);
        cf_buf_puts(out, "\n");
    }
}

/* Where each price of an offer comes from. */
static void add_price_provenance(cJSON *e, const cf_catalog *cat, const cf_vm *vm)
{
    char text[192];
    cJSON_AddStringToObject(e, "zones", vm->zones);
    const cf_price_kind kinds[2] = {vm->ondemand_kind, vm->spot_kind};
    const char *dates[2] = {vm->ondemand_date, vm->spot_date};
    static const char *const names[2][3] = {{"ondemand_kind", "ondemand_date", "ondemand_origin"},
                                            {"spot_kind", "spot_date", "spot_origin"}};
    for (int k = 0; k < 2; k++) {
        if (kinds[k] == CF_PRICE_NONE) {
            cJSON_AddNullToObject(e, names[k][0]);
            cJSON_AddNullToObject(e, names[k][1]);
        } else {
            cJSON_AddStringToObject(e, names[k][0], cf_price_kind_name(kinds[k]));
            if (dates[k][0])
                cJSON_AddStringToObject(e, names[k][1], dates[k]);
            else
                cJSON_AddNullToObject(e, names[k][1]);
        }
        cf_vm_price_origin(vm, k, text, sizeof text);
        cJSON_AddStringToObject(e, names[k][2], text);
    }
    cf_vm_interruptions_origin(cat, vm, text, sizeof text);
    if (vm->spot_kind == CF_PRICE_NONE) {
        cJSON_AddNullToObject(e, "interruptions_pct_per_month");
        cJSON_AddNullToObject(e, "interruptions_source");
    } else if (text[0]) {
        cJSON_AddNumberToObject(e, "interruptions_pct_per_month", vm->interruptions_pct_per_month);
        cJSON_AddStringToObject(e, "interruptions_source", text);
    } else {
        cJSON_AddNumberToObject(e, "interruptions_pct_per_month", CF_DEFAULT_SPOT_INTERRUPTIONS_PCT_PER_MONTH);
        cJSON_AddStringToObject(e, "interruptions_source", "default (no interruption data for this offer)");
    }
}

/* A positive number, or null (0 = not known or not offered). */
static void add_or_null(cJSON *e, const char *key, double v)
{
    if (v > 0)
        cJSON_AddNumberToObject(e, key, v);
    else
        cJSON_AddNullToObject(e, key);
}

cJSON *cf_prices_offers_json(const cf_prices_offers_report *r)
{
    const cf_catalog_source *src = r->source;
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddItemToObject(doc, "catalog", cf_catalog_source_json(src, &src->catalog, src->age_days, NULL, 0, 0));
    cJSON_AddStringToObject(doc, "gpu", r->gpu);
    if (r->gpu_count)
        cJSON_AddNumberToObject(doc, "gpu_count", r->gpu_count);
    else
        cJSON_AddNullToObject(doc, "gpu_count");
    cJSON *arr = cJSON_AddArrayToObject(doc, "offers");
    for (size_t i = 0; i < r->n_offers; i++) {
        const cf_vm *vm = r->offers[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "cloud", vm->cloud);
        cJSON_AddStringToObject(e, "region", vm->region);
        cJSON_AddStringToObject(e, "instance_type", vm->instance_type);
        cJSON_AddStringToObject(e, "gpu", vm->gpu_model);
        cJSON_AddNumberToObject(e, "gpus", vm->gpu_count);
        cJSON_AddNumberToObject(e, "gpu_memory_gib", vm->gpu_memory_gib);
        cJSON_AddNumberToObject(e, "vcpus", vm->vcpus);
        cJSON_AddNumberToObject(e, "memory_gib", vm->memory_gib);
        add_or_null(e, "network_gbps", vm->network_gbps);
        add_or_null(e, "usd_per_hour", vm->price_ondemand_usd_per_hr);
        add_or_null(e, "spot_usd_per_hour", vm->price_spot_usd_per_hr);
        cJSON_AddBoolToObject(e, "spot_estimated", vm->spot_price_estimated);
        add_price_provenance(e, &src->catalog, vm);
        if (cf_catalog_source_rule_of(src, vm))
            cJSON_AddNumberToObject(e, "price_override_rule", cf_catalog_source_rule_of(src, vm));
        cJSON_AddStringToObject(e, "source", cf_vm_price_source(&src->catalog, vm, 0));
        if (vm->price_spot_usd_per_hr > 0 && vm->has_spot_source)
            cJSON_AddStringToObject(e, "spot_source", cf_vm_price_source(&src->catalog, vm, 1));
        cJSON_AddItemToArray(arr, e);
    }
    return doc;
}

/* ---- update ------------------------------------------------------------------ */

void cf_prices_update_table(const cf_prices_update_report *r, cf_buf *out)
{
    static const char *const outcomes[] = {"updated", "FAILED", "skipped"};
    const cf_price_update_result *res = r->result;
    cf_buf_printf(out, "%-6s  %-8s  %7s  %7s\n", "CLOUD", "STATUS", "PRICES", "UPDATED");
    for (size_t i = 0; i < res->n_clouds; i++) {
        const cf_cloud_update *c = &res->clouds[i];
        cf_buf_printf(out, "%-6s  %-8s  %7zu  %7zu\n", c->cloud, outcomes[c->outcome], c->n_quotes,
                      c->n_rows_updated);
    }
    cf_buf_printf(out, "stored snapshot-%lld: %zu row%s, %zu price%s kept out, fetched %s (in %s)\n", r->snapshot_id,
                  res->n_rows, res->n_rows == 1 ? "" : "s", res->n_rejected, res->n_rejected == 1 ? "" : "s",
                  r->fetched_at, r->db_path);
}
