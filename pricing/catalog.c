/* Catalog loading from CSV text, GPU look-up and peak rates (docs/catalog.md).
 *
 * cf_catalog_load_csv reads three documents (formats in data/README of the
 * shared catalog and docs/catalog.md):
 *   gpus.csv             the GPU table, read first so VM rows can be checked
 *   gpu_vms.csv          one row per VM offer (cloud, region, type, GPU, prices)
 *   aws_spot_advisor.csv optional; fills AWS spot estimates and interruption rates
 *
 * Every row is validated; the first bad value is an error that names the
 * document and line ("gpu_vms.csv:12: column 'gpu_count': ..."). On failure
 * the output catalog is left empty, so callers never see half a catalog. */
#include "cloudfit/pricing.h"
#include "cloudfit/common/names.h"
#include "catalog_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/common/csvread.h"
#include "cloudfit/common/escape.h"
#include "cloudfit/common/escape.h"

/* ---- row-level error helpers ------------------------------------------- */

/* Sets "NAME:LINE: column 'c': <message>" and returns CF_ERR_INVALID. */
static cf_status field_error(const cf_csv_doc *doc, const cf_csv_record *record, int col,
                             const char *fmt, ...) CF_PRINTF(4, 5);
static cf_status field_error(const cf_csv_doc *doc, const cf_csv_record *record, int col,
                             const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return cf_error_set(CF_ERR_INVALID, "%s:%ld: column '%s': %s", doc->name, record->line,
                        cf_csv_field(&doc->header, col), message);
}

/* Resolves every name in `names` to a column index; a missing one is an
 * error naming the file (cf_csv_require_column). */
static cf_status require_columns(const cf_csv_doc *doc, const char *const *names, size_t n,
                                 int *indices)
{
    for (size_t i = 0; i < n; i++) {
        cf_status status = cf_csv_require_column(doc, names[i], &indices[i]);
        if (status != CF_OK)
            return status;
    }
    return CF_OK;
}

/* Copies a key field (cloud, region, type, model) into a fixed-size member.
 * Empty or too long is an error: truncating a key could merge distinct rows. */
static cf_status copy_key(const cf_csv_doc *doc, const cf_csv_record *record, int col,
                          char *dst, size_t cap)
{
    const char *text = cf_csv_field(record, col);
    size_t len = strlen(text);
    if (len == 0)
        return field_error(doc, record, col, "must not be empty");
    if (len >= cap)
        return field_error(doc, record, col, "'%s' is too long (at most %zu characters)", text,
                           cap - 1);
    /* a name is printed into launch specs and markdown: a line end there
     * put a live line into torchrun.sh (no cloud's name holds one) */
    if (cf_has_controls(text)) {
        char shown[96];
        cf_escape_into(text, shown, sizeof shown);
        return field_error(doc, record, col, "'%s' holds a control or reordering character, or a byte that is not "
                                             "UTF-8: not a name",
                           shown);
    }
    memcpy(dst, text, len + 1);
    return CF_OK;
}

/* Copies a descriptive field; it is only shown to people, so a value longer
 * than the member is cut rather than rejected. */
static void copy_label(const cf_csv_record *record, int col, char *dst, size_t cap)
{
    snprintf(dst, cap, "%s", cf_csv_field(record, col));
}

/* Required number > 0. */
static cf_status read_positive(const cf_csv_doc *doc, const cf_csv_record *record, int col,
                               double *out)
{
    cf_status status = cf_csv_double(doc, record, col, 1, 0.0, out);
    if (status != CF_OK)
        return status;
    if (!(*out > 0.0))
        return field_error(doc, record, col, "must be > 0, got %g", *out);
    return CF_OK;
}

/* Number >= 0; an empty optional field reads as 0 (= not known). */
static cf_status read_nonnegative(const cf_csv_doc *doc, const cf_csv_record *record, int col,
                                  int required, double *out)
{
    cf_status status = cf_csv_double(doc, record, col, required, 0.0, out);
    if (status != CF_OK)
        return status;
    if (*out < 0.0)
        return field_error(doc, record, col, "must be >= 0, got %g", *out);
    return CF_OK;
}

/* Required integer in [min, max]. */
static cf_status read_int_range(const cf_csv_doc *doc, const cf_csv_record *record, int col,
                                long min, long max, int *out)
{
    long value = 0;
    cf_status status = cf_csv_int(doc, record, col, 1, 0, &value);
    if (status != CF_OK)
        return status;
    if (value < min || value > max)
        return field_error(doc, record, col, "must be between %ld and %ld, got %ld", min, max,
                           value);
    *out = (int)value;
    return CF_OK;
}

/* ---- gpus.csv ------------------------------------------------------------ */

enum {
    GPU_MODEL, GPU_ARCH, GPU_MEMORY, GPU_BANDWIDTH, GPU_FP32, GPU_TF32, GPU_FP16, GPU_BF16,
    GPU_INTERCONNECT, GPU_INTERCONNECT_GBS, GPU_NCOLS
};
static const char *const GPU_COLUMNS[GPU_NCOLS] = {
    "gpu_model", "architecture", "memory_gib", "memory_bandwidth_gbs", "fp32_tflops",
    "tf32_tensor_tflops_dense", "fp16_tensor_tflops_dense", "bf16_tensor_tflops_dense",
    "intra_node_interconnect", "interconnect_gbs_per_gpu",
};

static cf_status parse_gpu_rates(const cf_csv_doc *doc, const cf_csv_record *record,
                                 const int *col, cf_gpu *gpu)
{
    /* Empty peak rates mean "no such unit / not known" and read as 0. */
    struct { int col; double *dst; } rates[] = {
        {col[GPU_FP32], &gpu->fp32_tflops}, {col[GPU_TF32], &gpu->tf32_tflops},
        {col[GPU_FP16], &gpu->fp16_tflops}, {col[GPU_BF16], &gpu->bf16_tflops},
        {col[GPU_INTERCONNECT_GBS], &gpu->interconnect_gbs_per_gpu},
    };
    for (size_t i = 0; i < sizeof rates / sizeof *rates; i++) {
        cf_status status = read_nonnegative(doc, record, rates[i].col, 0, rates[i].dst);
        if (status != CF_OK)
            return status;
    }
    return CF_OK;
}

/* Descriptive columns the name resolver reads (cf_gpu_resolve): optional,
 * so a GPU table without them still loads; its rows then resolve only from
 * their own model words. -1 = column absent. */
enum { GPUX_FORM_FACTOR, GPUX_MEMORY_TYPE, GPUX_NCOLS };
static const char *const GPUX_COLUMNS[GPUX_NCOLS] = {"form_factor", "memory_type"};

static cf_status parse_gpu_row(const cf_csv_doc *doc, const cf_csv_record *record,
                               const int *col, const int *ext, cf_gpu *gpu)
{
    memset(gpu, 0, sizeof *gpu);
    cf_status status = copy_key(doc, record, col[GPU_MODEL], gpu->model, sizeof gpu->model);
    if (status == CF_OK)
        status = read_positive(doc, record, col[GPU_MEMORY], &gpu->memory_gib);
    if (status == CF_OK)
        status = read_positive(doc, record, col[GPU_BANDWIDTH], &gpu->memory_bandwidth_gbs);
    if (status == CF_OK)
        status = parse_gpu_rates(doc, record, col, gpu);
    if (status != CF_OK)
        return status;
    copy_label(record, col[GPU_ARCH], gpu->architecture, sizeof gpu->architecture);
    copy_label(record, col[GPU_INTERCONNECT], gpu->interconnect, sizeof gpu->interconnect);
    copy_label(record, ext[GPUX_FORM_FACTOR], gpu->form_factor, sizeof gpu->form_factor);
    copy_label(record, ext[GPUX_MEMORY_TYPE], gpu->memory_type, sizeof gpu->memory_type);
    return CF_OK;
}

static cf_status parse_gpus(const cf_csv_doc *doc, cf_catalog *cat)
{
    int col[GPU_NCOLS];
    cf_status status = require_columns(doc, GPU_COLUMNS, GPU_NCOLS, col);
    if (status != CF_OK)
        return status;
    int ext[GPUX_NCOLS];
    for (int i = 0; i < GPUX_NCOLS; i++)
        ext[i] = cf_csv_column(doc, GPUX_COLUMNS[i]);
    if (doc->n_records == 0)
        return cf_error_set(CF_ERR_INVALID, "%s: no GPU rows", doc->name);
    cat->gpus = calloc(doc->n_records, sizeof *cat->gpus);
    if (!cat->gpus)
        return cf_error_set(CF_ERR_NOMEM, "out of memory reading '%s'", doc->name);
    for (size_t i = 0; i < doc->n_records; i++) {
        const cf_csv_record *record = &doc->records[i];
        cf_gpu gpu;
        status = parse_gpu_row(doc, record, col, ext, &gpu);
        if (status != CF_OK)
            return status;
        /* Look-ups are case-insensitive, so names must be distinct that way. */
        if (cf_catalog_gpu(cat, gpu.model))
            return field_error(doc, record, col[GPU_MODEL], "duplicate GPU '%s'", gpu.model);
        cat->gpus[cat->n_gpus++] = gpu;
    }
    return CF_OK;
}

/* ---- gpu_vms.csv --------------------------------------------------------- */

enum {
    VM_CLOUD, VM_REGION, VM_TYPE, VM_GPU_MODEL, VM_GPU_COUNT, VM_GPU_MEMORY, VM_VCPUS,
    VM_MEMORY, VM_NETWORK, VM_ONDEMAND, VM_SPOT, VM_SOURCE, VM_NCOLS
};
static const char *const VM_COLUMNS[VM_NCOLS] = {
    "cloud", "region", "instance_type", "gpu_model", "gpu_count", "gpu_memory_gib", "vcpus",
    "memory_gib", "network_gbps", "price_ondemand_usd_per_hour", "price_spot_usd_per_hour",
    "source",
};
/* Columns added with price provenance. The four kind/date columns come
 * together; a document without them (a snapshot stored by an older
 * cloudfit) reads every present price as listed, dated by the first date in
 * its source. `zones` is optional on its own. */
enum { VMX_ZONES, VMX_OD_KIND, VMX_OD_DATE, VMX_SPOT_KIND, VMX_SPOT_DATE, VMX_SPOT_SOURCE, VMX_NCOLS };
static const char *const VMX_COLUMNS[VMX_NCOLS] = {
    "zones", "ondemand_kind", "ondemand_date", "spot_kind", "spot_date", "spot_source",
};
/* The four kind/date columns, which come together (zones and spot_source
 * are optional on their own). */
static int is_kind_column(int i) { return i >= VMX_OD_KIND && i <= VMX_SPOT_DATE; }

/* Upper bounds that only catch garbage (a 16-GPU VM is the largest today). */
enum { MAX_GPUS_PER_VM = 1024, MAX_VCPUS = 1 << 20 };

typedef struct {
    int col[VM_NCOLS];
    int ext[VMX_NCOLS];       /* -1 = column absent */
    int has_kinds;
} vm_columns;

/* Returns the index of `text` in cat->sources, adding it when new. Linear:
 * real catalogs have a handful of distinct sources. */
static cf_status intern_source(cf_catalog *cat, size_t *cap, const char *text, int *out_index)
{
    for (size_t i = 0; i < cat->n_sources; i++) {
        if (strcmp(cat->sources[i], text) == 0) {
            *out_index = (int)i;
            return CF_OK;
        }
    }
    if (cat->n_sources == *cap) {
        size_t grown_cap = *cap ? *cap * 2 : 8;
        char **grown = realloc(cat->sources, grown_cap * sizeof *grown);
        if (!grown)
            return cf_error_set(CF_ERR_NOMEM, "out of memory interning catalog sources");
        cat->sources = grown;
        *cap = grown_cap;
    }
    size_t len = strlen(text);
    char *copy = malloc(len + 1);
    if (!copy)
        return cf_error_set(CF_ERR_NOMEM, "out of memory interning catalog sources");
    memcpy(copy, text, len + 1);
    cat->sources[cat->n_sources] = copy;
    *out_index = (int)cat->n_sources++;
    return CF_OK;
}

static cf_status parse_vm_keys(const cf_csv_doc *doc, const cf_csv_record *record,
                               const int *col, const cf_catalog *cat, cf_vm *vm)
{
    cf_status status = copy_key(doc, record, col[VM_CLOUD], vm->cloud, sizeof vm->cloud);
    if (status == CF_OK)
        status = copy_key(doc, record, col[VM_REGION], vm->region, sizeof vm->region);
    if (status == CF_OK)
        status = copy_key(doc, record, col[VM_TYPE], vm->instance_type, sizeof vm->instance_type);
    if (status != CF_OK)
        return status;
    const char *model = cf_csv_field(record, col[VM_GPU_MODEL]);
    const cf_gpu *gpu = cf_catalog_gpu(cat, model);
    if (!gpu)
        return field_error(doc, record, col[VM_GPU_MODEL], "unknown GPU '%s' (not in the GPU table)",
                           model);
    /* Keep the GPU table's spelling so later exact comparisons agree. */
    snprintf(vm->gpu_model, sizeof vm->gpu_model, "%s", gpu->model);
    return CF_OK;
}

static cf_status parse_vm_sizes(const cf_csv_doc *doc, const cf_csv_record *record,
                                const int *col, cf_vm *vm)
{
    cf_status status = read_int_range(doc, record, col[VM_GPU_COUNT], 1, MAX_GPUS_PER_VM,
                                      &vm->gpu_count);
    if (status == CF_OK)
        status = read_positive(doc, record, col[VM_GPU_MEMORY], &vm->gpu_memory_gib);
    if (status == CF_OK)
        status = read_int_range(doc, record, col[VM_VCPUS], 0, MAX_VCPUS, &vm->vcpus);
    if (status == CF_OK)
        status = read_nonnegative(doc, record, col[VM_MEMORY], 1, &vm->memory_gib);
    if (status == CF_OK)
        status = read_nonnegative(doc, record, col[VM_NETWORK], 0, &vm->network_gbps);
    return status;
}

static int date_at(const char *text, size_t pos, size_t len);

/* The first 20YY-MM-DD in `text` into out[11]; "" when none. */
static void first_date(const char *text, char *out)
{
    size_t len = strlen(text);
    out[0] = '\0';
    for (size_t pos = 0; pos < len; pos++) {
        if (date_at(text, pos, len)) {
            memcpy(out, text + pos, 10);
            out[10] = '\0';
            return;
        }
    }
}

/* A price's kind and date columns: both empty without a price; with one,
 * the kind is listed or observed (estimates are derived on load, never
 * stored) and the date is YYYY-MM-DD or empty (not recorded). A spot
 * price may also be "observed-regional": one market price for the whole
 * region (the AWS spot feed), not the lowest of its zones' prices. */
static cf_status parse_kind_date(const cf_csv_doc *doc, const cf_csv_record *record, int kind_col,
                                 int date_col, int has_price, cf_price_kind *kind, char *date, int *regional)
{
    const char *k = cf_csv_field(record, kind_col), *d = cf_csv_field(record, date_col);
    *kind = CF_PRICE_NONE;
    date[0] = '\0';
    if (!has_price) {
        if (*k)
            return field_error(doc, record, kind_col, "'%s' without a price (leave it empty)", k);
        if (*d)
            return field_error(doc, record, date_col, "'%s' without a price (leave it empty)", d);
        return CF_OK;
    }
    if (strcmp(k, "listed") == 0)
        *kind = CF_PRICE_LISTED;
    else if (strcmp(k, "observed") == 0)
        *kind = CF_PRICE_OBSERVED;
    else if (regional && strcmp(k, "observed-regional") == 0)
        *kind = CF_PRICE_OBSERVED, *regional = 1;
    else
        return field_error(doc, record, kind_col, "expected 'listed'%s or 'observed', got '%s'",
                           regional ? ", 'observed-regional'" : "", k);
    if (*d && !(strlen(d) == 10 && date_at(d, 0, 10)))
        return field_error(doc, record, date_col, "expected a date YYYY-MM-DD or nothing, got '%s'", d);
    snprintf(date, 11, "%s", d);
    return CF_OK;
}

static cf_status parse_vm_prices(const cf_csv_doc *doc, const cf_csv_record *record,
                                 const vm_columns *c, const char *source, cf_vm *vm)
{
    const int *col = c->col;
    /* Empty = not offered that way (on-demand: spot / flex-start only
     * machines) or not known (spot); a present value must be a price. */
    cf_status status = CF_OK;
    vm->price_ondemand_usd_per_hr = vm->price_spot_usd_per_hr = 0.0;
    if (*cf_csv_field(record, col[VM_ONDEMAND]))
        status = read_positive(doc, record, col[VM_ONDEMAND], &vm->price_ondemand_usd_per_hr);
    if (status == CF_OK && *cf_csv_field(record, col[VM_SPOT]))
        status = read_positive(doc, record, col[VM_SPOT], &vm->price_spot_usd_per_hr);
    if (status != CF_OK)
        return status;
    if (vm->price_ondemand_usd_per_hr == 0.0 && vm->price_spot_usd_per_hr == 0.0)
        return field_error(doc, record, col[VM_ONDEMAND],
                           "empty, and so is the spot price: an offer needs at least one price");
    if (c->has_kinds) {
        status = parse_kind_date(doc, record, c->ext[VMX_OD_KIND], c->ext[VMX_OD_DATE],
                                 vm->price_ondemand_usd_per_hr > 0, &vm->ondemand_kind, vm->ondemand_date, NULL);
        if (status == CF_OK)
            status = parse_kind_date(doc, record, c->ext[VMX_SPOT_KIND], c->ext[VMX_SPOT_DATE],
                                     vm->price_spot_usd_per_hr > 0, &vm->spot_kind, vm->spot_date,
                                     &vm->spot_regional);
        if (status != CF_OK)
            return status;
    } else {
        char date[11];
        first_date(source, date);
        if (vm->price_ondemand_usd_per_hr > 0) {
            vm->ondemand_kind = CF_PRICE_LISTED;
            memcpy(vm->ondemand_date, date, sizeof date);
        }
        if (vm->price_spot_usd_per_hr > 0) {
            vm->spot_kind = CF_PRICE_LISTED;
            memcpy(vm->spot_date, date, sizeof date);
        }
    }
    /* A "spot" price that is not below on-demand means no discount was on
     * offer: it is not a spot price (Azure quotes some sizes that way). */
    if (vm->price_ondemand_usd_per_hr > 0 && vm->price_spot_usd_per_hr >= vm->price_ondemand_usd_per_hr) {
        vm->price_spot_usd_per_hr = 0.0;
        vm->spot_kind = CF_PRICE_NONE;
        vm->spot_date[0] = '\0';
        vm->spot_regional = 0;
    }
    return CF_OK;
}

static cf_status parse_vm_row(const cf_csv_doc *doc, const cf_csv_record *record, const vm_columns *c,
                              cf_catalog *cat, size_t *sources_cap, cf_vm *vm)
{
    memset(vm, 0, sizeof *vm);
    vm->interruptions_pct_per_month = -1.0; /* unknown until the advisor says otherwise */
    vm->interruption_band = -1;
    const char *source = cf_csv_field(record, c->col[VM_SOURCE]);
    if (!*source)
        return field_error(doc, record, c->col[VM_SOURCE],
                           "must not be empty (every price needs its provenance)");
    cf_status status = parse_vm_keys(doc, record, c->col, cat, vm);
    if (status == CF_OK)
        status = parse_vm_sizes(doc, record, c->col, vm);
    if (status == CF_OK)
        status = parse_vm_prices(doc, record, c, source, vm);
    if (status != CF_OK)
        return status;
    if (c->ext[VMX_ZONES] >= 0) {
        const char *zones = cf_csv_field(record, c->ext[VMX_ZONES]);
        if (strlen(zones) >= sizeof vm->zones)
            return field_error(doc, record, c->ext[VMX_ZONES], "too long (at most %zu characters)",
                               sizeof vm->zones - 1);
        snprintf(vm->zones, sizeof vm->zones, "%s", zones);
    }
    /* Where the spot price came from when it is not the row's source (an
     * update refreshed one price of the row and kept the other). */
    const char *spot_source = c->ext[VMX_SPOT_SOURCE] >= 0 ? cf_csv_field(record, c->ext[VMX_SPOT_SOURCE]) : "";
    if (*spot_source && vm->price_spot_usd_per_hr > 0) {
        status = intern_source(cat, sources_cap, spot_source, &vm->spot_source_index);
        if (status != CF_OK)
            return status;
        vm->has_spot_source = 1;
    }
    return intern_source(cat, sources_cap, source, &vm->source_index);
}

static cf_status find_vm_columns(const cf_csv_doc *doc, vm_columns *c)
{
    cf_status status = require_columns(doc, VM_COLUMNS, VM_NCOLS, c->col);
    if (status != CF_OK)
        return status;
    int present = 0;
    for (int i = 0; i < VMX_NCOLS; i++) {
        c->ext[i] = cf_csv_column(doc, VMX_COLUMNS[i]);
        present += is_kind_column(i) && c->ext[i] >= 0;
    }
    c->has_kinds = present == VMX_SPOT_DATE - VMX_OD_KIND + 1;
    if (present == 0 || c->has_kinds)
        return CF_OK;
    for (int i = VMX_OD_KIND; i <= VMX_SPOT_DATE; i++)
        if (c->ext[i] < 0)
            return cf_error_set(CF_ERR_INVALID, "%s: has some of the price kind/date columns but not '%s' "
                                "(ondemand_kind, ondemand_date, spot_kind and spot_date come together)",
                                doc->name, VMX_COLUMNS[i]);
    return CF_OK;
}

static cf_status parse_vms(const cf_csv_doc *doc, cf_catalog *cat)
{
    vm_columns c;
    cf_status status = find_vm_columns(doc, &c);
    if (status != CF_OK)
        return status;
    if (doc->n_records == 0)
        return cf_error_set(CF_ERR_INVALID, "%s: no VM rows", doc->name);
    cat->vms = calloc(doc->n_records, sizeof *cat->vms);
    if (!cat->vms)
        return cf_error_set(CF_ERR_NOMEM, "out of memory reading '%s'", doc->name);
    size_t sources_cap = 0;
    for (size_t i = 0; i < doc->n_records; i++) {
        status = parse_vm_row(doc, &doc->records[i], &c, cat, &sources_cap, &cat->vms[i]);
        if (status != CF_OK)
            return status;
        cat->n_vms++;
    }
    return CF_OK;
}

/* ---- aws_spot_advisor.csv ------------------------------------------------ */

enum { ADV_REGION, ADV_TYPE, ADV_OS, ADV_SAVINGS, ADV_BAND, ADV_NCOLS };
/* Interruption band labels, for people (the advisor's own wording). */
static const char *const BAND_LABEL[] = {"<5%", "5-10%", "10-15%", "15-20%", ">20%"};
static const char *const ADV_COLUMNS[ADV_NCOLS] = {
    "region", "instance_type", "os", "savings_pct_vs_ondemand", "interruption_range_index",
};

/* Midpoints of the advisor's interruption bands, % of instances interrupted
 * per month: "<5%", "5-10%", "10-15%", "15-20%", ">20%" (open band → 25). */
static const double BAND_MIDPOINT_PCT[] = {2.5, 7.5, 12.5, 17.5, 25.0};
enum { N_BANDS = sizeof BAND_MIDPOINT_PCT / sizeof *BAND_MIDPOINT_PCT };

typedef struct {
    const char *region;        /* points into the parsed document */
    const char *instance_type;
    double savings_pct;
    int band;
    long line;
    char date[11];             /* first date in the row's source; "" = none */
} advisor_row;

static int advisor_cmp(const void *a, const void *b)
{
    const advisor_row *x = a, *y = b;
    int c = strcmp(x->region, y->region);
    return c ? c : strcmp(x->instance_type, y->instance_type);
}

static cf_status parse_advisor_row(const cf_csv_doc *doc, const cf_csv_record *record,
                                   const int *col, int source_col, advisor_row *row)
{
    first_date(cf_csv_field(record, source_col), row->date);
    row->region = cf_csv_field(record, col[ADV_REGION]);
    row->instance_type = cf_csv_field(record, col[ADV_TYPE]);
    row->line = record->line;
    if (!*row->region)
        return field_error(doc, record, col[ADV_REGION], "must not be empty");
    if (!*row->instance_type)
        return field_error(doc, record, col[ADV_TYPE], "must not be empty");
    cf_status status = cf_csv_double(doc, record, col[ADV_SAVINGS], 1, 0.0, &row->savings_pct);
    if (status != CF_OK)
        return status;
    /* 100 % savings would make spot free: certainly a bad value. */
    if (row->savings_pct < 0.0 || row->savings_pct >= 100.0)
        return field_error(doc, record, col[ADV_SAVINGS], "must be in [0, 100), got %g",
                           row->savings_pct);
    return read_int_range(doc, record, col[ADV_BAND], 0, N_BANDS - 1, &row->band);
}

/* Parses the Linux rows into a sorted array (freed by the caller). The
 * catalog prices are Linux prices, so other OS rows are skipped. */
static cf_status parse_advisor(const cf_csv_doc *doc, advisor_row **out, size_t *out_n)
{
    int col[ADV_NCOLS];
    cf_status status = require_columns(doc, ADV_COLUMNS, ADV_NCOLS, col);
    if (status != CF_OK)
        return status;
    int source_col = cf_csv_column(doc, "source"); /* optional: dates the estimates */
    advisor_row *rows = calloc(doc->n_records ? doc->n_records : 1, sizeof *rows);
    if (!rows)
        return cf_error_set(CF_ERR_NOMEM, "out of memory reading '%s'", doc->name);
    size_t n = 0;
    for (size_t i = 0; i < doc->n_records && status == CF_OK; i++) {
        const cf_csv_record *record = &doc->records[i];
        if (strcasecmp(cf_csv_field(record, col[ADV_OS]), "linux") != 0)
            continue;
        status = parse_advisor_row(doc, record, col, source_col, &rows[n]);
        n += status == CF_OK;
    }
    qsort(rows, n, sizeof *rows, advisor_cmp);
    for (size_t i = 1; i < n && status == CF_OK; i++)
        if (advisor_cmp(&rows[i - 1], &rows[i]) == 0)
            status = cf_error_set(CF_ERR_INVALID, "%s:%ld: duplicate advisor row for %s %s",
                                  doc->name, rows[i].line, rows[i].region, rows[i].instance_type);
    if (status != CF_OK) {
        free(rows);
        return status;
    }
    *out = rows;
    *out_n = n;
    return CF_OK;
}

/* AWS rows: interruption rate from the advisor band; when the row has an
 * on-demand but no spot price, estimate spot from the advisor's average
 * savings. The estimate is marked (spot_kind CF_PRICE_ESTIMATED, dated by
 * the advisor data, savings kept) so reports can say how it was made. */
static void apply_advisor(cf_catalog *cat, const advisor_row *rows, size_t n)
{
    for (size_t i = 0; i < cat->n_vms; i++) {
        cf_vm *vm = &cat->vms[i];
        if (strcasecmp(vm->cloud, "aws") != 0)
            continue;
        advisor_row key = {.region = vm->region, .instance_type = vm->instance_type};
        const advisor_row *hit = bsearch(&key, rows, n, sizeof *rows, advisor_cmp);
        if (!hit)
            continue;
        vm->interruptions_pct_per_month = BAND_MIDPOINT_PCT[hit->band];
        vm->interruption_band = hit->band;
        if (hit->date[0] && strcmp(hit->date, cat->advisor_date) > 0)
            snprintf(cat->advisor_date, sizeof cat->advisor_date, "%s", hit->date);
        if (vm->price_spot_usd_per_hr == 0.0 && vm->price_ondemand_usd_per_hr > 0.0) {
            vm->price_spot_usd_per_hr = vm->price_ondemand_usd_per_hr * (1.0 - hit->savings_pct / 100.0);
            vm->spot_price_estimated = 1;
            vm->spot_kind = CF_PRICE_ESTIMATED;
            vm->spot_savings_pct = hit->savings_pct;
            snprintf(vm->spot_date, sizeof vm->spot_date, "%s", hit->date);
        }
    }
}

/* ---- dates --------------------------------------------------------------- */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Whether text[0..9] is a plausible 20YY-MM-DD date not glued to other digits. */
static int date_at(const char *text, size_t pos, size_t len)
{
    if (pos + 10 > len || (pos > 0 && is_digit(text[pos - 1])))
        return 0;
    const char *d = text + pos;
    if (d[0] != '2' || d[1] != '0' || !is_digit(d[2]) || !is_digit(d[3]) || d[4] != '-' ||
        !is_digit(d[5]) || !is_digit(d[6]) || d[7] != '-' || !is_digit(d[8]) || !is_digit(d[9]))
        return 0;
    if (pos + 10 < len && is_digit(d[10]))
        return 0;
    int month = (d[5] - '0') * 10 + (d[6] - '0');
    int day = (d[8] - '0') * 10 + (d[9] - '0');
    return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

/* Widens [oldest, newest] (YYYY-MM-DD, "" = none yet) with every date found
 * in `text`. ISO dates compare correctly as strings. */
static void scan_dates(const char *text, char *oldest, char *newest)
{
    size_t len = strlen(text);
    for (size_t pos = 0; pos < len; pos++) {
        if (!date_at(text, pos, len))
            continue;
        char date[11];
        memcpy(date, text + pos, 10);
        date[10] = '\0';
        if (!*oldest || strcmp(date, oldest) < 0)
            memcpy(oldest, date, sizeof date);
        if (!*newest || strcmp(date, newest) > 0)
            memcpy(newest, date, sizeof date);
        pos += 9;
    }
}

static void widen(const char *date, char *oldest, char *newest)
{
    if (!*oldest || strcmp(date, oldest) < 0)
        snprintf(oldest, 11, "%s", date);
    if (!*newest || strcmp(date, newest) > 0)
        snprintf(newest, 11, "%s", date);
}

/* The catalog's dates are those of its listed and observed prices; an
 * estimate (a savings average applied to a price) does not count, and a
 * price whose source records no date is counted apart. A catalog without
 * any dated price (hand-made test files) is dated by its sources' text. */
static void compute_dates(cf_catalog *cat)
{
    cat->data_date[0] = cat->oldest_date[0] = '\0';
    cat->n_undated_prices = 0;
    for (size_t i = 0; i < cat->n_vms; i++) {
        const cf_vm *vm = &cat->vms[i];
        const cf_price_kind kinds[2] = {vm->ondemand_kind, vm->spot_kind};
        const char *dates[2] = {vm->ondemand_date, vm->spot_date};
        for (int k = 0; k < 2; k++) {
            if (kinds[k] != CF_PRICE_LISTED && kinds[k] != CF_PRICE_OBSERVED)
                continue;
            if (dates[k][0])
                widen(dates[k], cat->oldest_date, cat->data_date);
            else
                cat->n_undated_prices++;
        }
    }
    if (cat->data_date[0])
        return;
    for (size_t i = 0; i < cat->n_sources; i++)
        scan_dates(cat->sources[i], cat->oldest_date, cat->data_date);
}

/* ---- public API ---------------------------------------------------------- */

static cf_status load_docs(const cf_csv_doc *vms, const cf_csv_doc *gpus, const cf_csv_doc *spot,
                           cf_catalog *out)
{
    cf_status status = parse_gpus(gpus, out);
    if (status == CF_OK)
        status = parse_vms(vms, out);
    if (status != CF_OK || !spot)
        return status;
    advisor_row *rows = NULL;
    size_t n_rows = 0;
    status = parse_advisor(spot, &rows, &n_rows);
    if (status == CF_OK)
        apply_advisor(out, rows, n_rows);
    free(rows);
    return status;
}

cf_status cf_catalog_load_csv(const char *vms_csv, size_t vms_len, const char *vms_name,
                              const char *gpus_csv, size_t gpus_len, const char *gpus_name,
                              const char *spot_csv, size_t spot_len, const char *spot_name,
                              cf_catalog *out)
{
    if (!out)
        return cf_error_set(CF_ERR_INTERNAL, "cf_catalog_load_csv: no output catalog");
    memset(out, 0, sizeof *out);
    if (!vms_csv || !gpus_csv || !vms_name || !gpus_name || (spot_csv && !spot_name))
        return cf_error_set(CF_ERR_INTERNAL, "cf_catalog_load_csv: missing CSV text or name");
    cf_csv_doc vms, gpus, spot;
    memset(&vms, 0, sizeof vms);
    memset(&gpus, 0, sizeof gpus);
    memset(&spot, 0, sizeof spot);
    cf_status status = cf_csv_parse(gpus_csv, gpus_len, gpus_name, &gpus);
    if (status == CF_OK)
        status = cf_csv_parse(vms_csv, vms_len, vms_name, &vms);
    if (status == CF_OK && spot_csv)
        status = cf_csv_parse(spot_csv, spot_len, spot_name, &spot);
    if (status == CF_OK)
        status = load_docs(&vms, &gpus, spot_csv ? &spot : NULL, out);
    cf_csv_free(&vms);
    cf_csv_free(&gpus);
    cf_csv_free(&spot);
    if (status != CF_OK) {
        cf_catalog_free(out);
        return status;
    }
    /* A file-based catalog is named after its VM document; snapshot loaders
     * and the embedded loader overwrite this. */
    snprintf(out->name, sizeof out->name, "%s", vms_name);
    compute_dates(out);
    return CF_OK;
}

static int offer_key_cmp(const void *a, const void *b)
{
    const cf_vm *x = *(const cf_vm *const *)a, *y = *(const cf_vm *const *)b;
    int c = strcmp(x->cloud, y->cloud);
    if (!c) c = strcmp(x->region, y->region);
    if (!c) c = strcmp(x->instance_type, y->instance_type);
    if (!c) c = strcmp(x->gpu_model, y->gpu_model);
    return c ? c : (x->gpu_count > y->gpu_count) - (x->gpu_count < y->gpu_count);
}

static int has_availability_table(const char *cloud)
{
    return strcmp(cloud, "gcp") == 0 || strcmp(cloud, "aws") == 0;
}

cf_status cf_catalog_keep_launchable(cf_catalog *cat, const cf_catalog *launchable)
{
    const cf_vm **keys = malloc((launchable->n_vms ? launchable->n_vms : 1) * sizeof *keys);
    if (!keys)
        return cf_error_set(CF_ERR_NOMEM, "out of memory checking where offers can be launched");
    size_t n_keys = 0;
    for (size_t i = 0; i < launchable->n_vms; i++)
        if (has_availability_table(launchable->vms[i].cloud))
            keys[n_keys++] = &launchable->vms[i];
    qsort(keys, n_keys, sizeof *keys, offer_key_cmp);
    size_t kept = 0;
    cat->n_not_launchable = 0;
    for (size_t i = 0; i < cat->n_vms; i++) {
        cf_vm *vm = &cat->vms[i];
        if (has_availability_table(vm->cloud)) {
            const cf_vm *key = vm;
            const cf_vm *const *hit = bsearch(&key, keys, n_keys, sizeof *keys, offer_key_cmp);
            if (!hit) {
                cat->n_not_launchable++;
                continue;
            }
            if (!vm->zones[0])
                memcpy(vm->zones, (*hit)->zones, sizeof vm->zones);
        }
        cat->vms[kept++] = *vm;
    }
    cat->n_vms = kept;
    free(keys);
    compute_dates(cat);
    return CF_OK;
}

void cf_catalog_free(cf_catalog *catalog)
{
    if (!catalog)
        return;
    for (size_t i = 0; i < catalog->n_sources; i++)
        free(catalog->sources[i]);
    free(catalog->sources);
    free(catalog->vms);
    free(catalog->gpus);
    memset(catalog, 0, sizeof *catalog);
}

const char *cf_price_kind_name(cf_price_kind kind)
{
    switch (kind) {
    case CF_PRICE_LISTED: return "listed";
    case CF_PRICE_OBSERVED: return "observed";
    case CF_PRICE_ESTIMATED: return "estimated";
    case CF_PRICE_GIVEN: return "given";
    case CF_PRICE_NONE: break;
    }
    return "none";
}

size_t cf_count_words(const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p; p++)
        n += *p != ' ' && (p == text || p[-1] == ' ');
    return n;
}

void cf_vm_price_origin(const cf_vm *vm, int spot, char *out, size_t cap)
{
    cf_price_kind kind = spot ? vm->spot_kind : vm->ondemand_kind;
    const char *date = spot ? vm->spot_date : vm->ondemand_date;
    char when[40];
    snprintf(when, sizeof when, "%s", date[0] ? date : "date not recorded");
    switch (kind) {
    case CF_PRICE_NONE:
        if ((spot ? vm->price_spot_usd_per_hr : vm->price_ondemand_usd_per_hr) > 0)
            snprintf(out, cap, "given, not from the catalog"); /* e.g. search --price */
        else
            snprintf(out, cap, "%s", spot ? "no spot price known" : "not offered on demand (spot or flex-start only)");
        break;
    case CF_PRICE_LISTED:
        snprintf(out, cap, "listed, %s", when);
        break;
    case CF_PRICE_OBSERVED: {
        size_t zones = cf_count_words(vm->zones);
        if (spot && vm->spot_regional)
            snprintf(out, cap, "observed, one price for the region (AWS spot feed), %s", when);
        else if (zones > 1)
            snprintf(out, cap, "observed, lowest of %zu zones, %s", zones, when);
        else
            snprintf(out, cap, "observed, %s", when);
        break;
    }
    case CF_PRICE_ESTIMATED:
        snprintf(out, cap, "estimated: on-demand × (1 − %.0f%% AWS Spot Advisor savings%s%s)", vm->spot_savings_pct,
                 date[0] ? " of " : "", date);
        break;
    case CF_PRICE_GIVEN:
        snprintf(out, cap, "given in the price overrides, not from the catalog");
        break;
    }
}

const char *cf_vm_price_source(const cf_catalog *catalog, const cf_vm *vm, int spot)
{
    int index = spot && vm->has_spot_source ? vm->spot_source_index : vm->source_index;
    return catalog && index >= 0 && (size_t)index < catalog->n_sources ? catalog->sources[index] : "unknown";
}

void cf_vm_interruptions_origin(const cf_catalog *catalog, const cf_vm *vm, char *out, size_t cap)
{
    if (vm->interruption_band < 0 || vm->interruption_band >= N_BANDS || vm->interruptions_pct_per_month < 0) {
        out[0] = '\0';
        return;
    }
    const char *date = catalog && catalog->advisor_date[0] ? catalog->advisor_date : "";
    snprintf(out, cap, "AWS Spot Advisor band %s%s%s%s", BAND_LABEL[vm->interruption_band], date[0] ? " (" : "",
             date, date[0] ? ")" : "");
}

const cf_gpu *cf_catalog_gpu(const cf_catalog *catalog, const char *model)
{
    return catalog ? cf_gpu_find(catalog->gpus, catalog->n_gpus, model) : NULL;
}

const cf_gpu *cf_catalog_gpu_resolve(const cf_catalog *catalog, const char *name)
{
    return catalog ? cf_gpu_resolve(catalog->gpus, catalog->n_gpus, name) : NULL;
}

const char *cf_catalog_gpu_filter_model(const cf_catalog *catalog, const char *word)
{
    return catalog ? cf_gpu_model_name(catalog->gpus, catalog->n_gpus, word) : word;
}

int cf_catalog_sells_gpu(const cf_catalog *catalog, const char *model)
{
    for (size_t v = 0; catalog && model && v < catalog->n_vms; v++)
        if (strcasecmp(catalog->vms[v].gpu_model, model) == 0)
            return 1;
    return 0;
}
