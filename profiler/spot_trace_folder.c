/* A folder of spot traces (docs/spot.md "Trace folders"): its index.csv,
 * or without one the traces whose paths describe their VMs
 * (profiler/spot_trace_names.c); one trace with its folder's description. */
#include "cloudfit/profiler/spot_traces.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cloudfit/common/clock.h"
#include "cloudfit/common/csvread.h"
#include "cloudfit/common/fileio.h"

/* The index.csv row of `base` (a file name), copied into vm; 1 when found. */
typedef struct {
    char file[256], kind[32], source[512];
    long line;                          /* in index.csv, for messages */
    cf_spot_trace_vm vm;
} index_row;

static int by_file_then_line(const void *a, const void *b)
{
    const index_row *x = *(const index_row *const *)a, *y = *(const index_row *const *)b;
    int c = strcmp(x->file, y->file);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* A file listed twice would be scored (and fitted on) twice, and its rows
 * may disagree on the VM: an error naming both lines (the earliest such
 * repeat). Sorted, not compared pairwise: an index may hold many rows. */
static cf_status check_unique_files(const char *path, const index_row *rows, size_t n_rows)
{
    if (n_rows < 2)
        return CF_OK;
    const index_row **order = malloc(n_rows * sizeof *order);
    if (!order)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n_rows; i++)
        order[i] = &rows[i];
    qsort(order, n_rows, sizeof *order, by_file_then_line);
    const index_row *first = NULL, *again = NULL;
    for (size_t i = 1; i < n_rows; i++)
        if (strcmp(order[i]->file, order[i - 1]->file) == 0 && (!again || order[i]->line < again->line)) {
            first = order[i - 1];
            again = order[i];
        }
    cf_status st = CF_OK;
    if (again) {
        st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'file': '%s' is listed again (first at line %ld)", path,
                          again->line, again->file, first->line);
        cf_error_hint("list each trace file once in %s", path);
    }
    free(order);
    return st;
}

/* A file name of the index as one spelling: `.` and empty names dropped
 * (`./a.csv`, `.//a.csv` and `a.csv` are one file; `./a.csv` named no
 * --trace a.csv, and `a.csv` with `./a.csv` were two traces). */
static void normalise_file(char *file)
{
    char *out = file;
    for (const char *p = file; *p;) {
        while (*p == '/')
            p++;
        size_t n = strcspn(p, "/");
        if (n > 0 && !(n == 1 && p[0] == '.')) {
            if (out != file)
                *out++ = '/';
            memmove(out, p, n);
            out += n;
        }
        p += n;
    }
    *out = '\0';
}

static cf_status read_index(const char *dir, index_row **rows, size_t *n_rows)
{
    char path[CF_PATH_MAX], *text = NULL;
    size_t len = 0;
    *rows = NULL;
    *n_rows = 0;
    snprintf(path, sizeof path, "%s/index.csv", dir);
    cf_status st = cf_read_file(path, &text, &len);
    if (st != CF_OK)
        return st;
    cf_csv_doc doc;
    st = cf_csv_parse(text, len, path, &doc);
    free(text);
    if (st != CF_OK)
        return st;
    /* Required: file, nodes_requested, zone, gpu, gpus_per_vm. cloud (else
     * from the zone's form), instance_type (else the catalog's cheapest
     * offer of that GPU and size) and start_date may be left out. */
    static const char *const names[] = {"file", "nodes_requested", "cloud", "zone", "instance_type", "gpu",
                                        "gpus_per_vm", "start_date"};
    static const int optional[] = {0, 0, 1, 0, 1, 0, 0, 1};
    int col[8];
    for (int i = 0; i < 8 && st == CF_OK; i++) {
        if (optional[i])
            col[i] = cf_csv_column(&doc, names[i]);
        else
            st = cf_csv_require_column(&doc, names[i], &col[i]);
    }
    if (st == CF_OK && !(*rows = calloc(doc.n_records ? doc.n_records : 1, sizeof **rows)))
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == CF_OK && i < doc.n_records; i++) {
        const cf_csv_record *rec = &doc.records[i];
        index_row *r = &(*rows)[i];
        long nodes = 0, gpus = 0;
        if ((st = cf_csv_int(&doc, rec, col[1], 1, 0, &nodes)) != CF_OK ||
            (st = cf_csv_int(&doc, rec, col[6], 1, 0, &gpus)) != CF_OK) /* empty: said so, not "got 0" */
            break;
        if (nodes < 1) {
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'nodes_requested': expected a positive integer", path,
                              rec->line);
            break;
        }
        if (gpus < 1 || gpus > CF_SPOT_MAX_GPUS_PER_VM) { /* as a trace named by its file is held to */
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'gpus_per_vm': expected 1 to %d GPUs per VM, got %ld",
                              path, rec->line, CF_SPOT_MAX_GPUS_PER_VM, gpus);
            break;
        }
        snprintf(r->file, sizeof r->file, "%s", cf_csv_field(rec, col[0]));
        normalise_file(r->file);
        r->line = rec->line;
        snprintf(r->vm.index_row, sizeof r->vm.index_row, "%s:%ld", path, rec->line);
        r->vm.requested = (int)nodes;
        r->vm.gpus_per_vm = (int)gpus;
        snprintf(r->vm.cloud, sizeof r->vm.cloud, "%s", col[2] >= 0 ? cf_csv_field(rec, col[2]) : "");
        for (char *c = r->vm.cloud; *c; c++) /* "AWS" is aws, as --cloud takes it */
            *c = (char)tolower((unsigned char)*c);
        snprintf(r->vm.zone, sizeof r->vm.zone, "%s", cf_csv_field(rec, col[3]));
        snprintf(r->vm.instance_type, sizeof r->vm.instance_type, "%s", col[4] >= 0 ? cf_csv_field(rec, col[4]) : "");
        snprintf(r->vm.gpu, sizeof r->vm.gpu, "%s", cf_csv_field(rec, col[5]));
        const char *start = col[7] >= 0 ? cf_csv_field(rec, col[7]) : "";
        char stamp[32];
        if (start[0] && (strlen(start) != 10 || cf_iso8601_normalize(start, stamp, sizeof stamp) != CF_OK)) {
            /* a label of the trace (the calibration's table names traces by it), held to a real date */
            if (strlen(start) == 10) /* "'2023-02-30' is not a date: 2023-02 has days 1-28, not 30" */
                cf_error_prefix("%s:%ld: column 'start_date'", path, rec->line);
            else
                cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'start_date': expected a date YYYY-MM-DD, got '%.40s'",
                             path, rec->line, start);
            st = CF_ERR_INVALID;
            break;
        }
        snprintf(r->vm.start_date, sizeof r->vm.start_date, "%s", start);
        if (!r->vm.zone[0]) {
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'zone': expected the zone the trace was recorded in "
                              "(e.g. us-east-1a), got an empty field", path, rec->line);
            break;
        }
        /* A zone is its region plus a letter: us-east-2b (AWS), us-central1-a (Google Cloud). */
        char zone_cloud[CF_CLOUD_NAME_MAX], region[CF_REGION_NAME_MAX];
        int zone_known = cf_spot_zone_cloud(r->vm.zone, zone_cloud, sizeof zone_cloud, region, sizeof region);
        if (zone_known && r->vm.cloud[0] && strcmp(zone_cloud, r->vm.cloud) != 0) {
            /* priced on the named cloud in a region of another: the plan would be on neither */
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'cloud': '%s' disagrees with zone '%s', a zone of %s",
                              path, rec->line, r->vm.cloud, r->vm.zone, zone_cloud);
            break;
        }
        if (zone_known && !r->vm.cloud[0])
            snprintf(r->vm.cloud, sizeof r->vm.cloud, "%s", zone_cloud);
        if (zone_known && strcmp(zone_cloud, r->vm.cloud) == 0)
            snprintf(r->vm.region, sizeof r->vm.region, "%s", region);
        else
            snprintf(r->vm.region, sizeof r->vm.region, "%s", r->vm.zone);
        (*n_rows)++;
    }
    cf_csv_free(&doc);
    if (st == CF_OK)
        st = check_unique_files(path, *rows, *n_rows);
    if (st != CF_OK) {
        free(*rows);
        *rows = NULL;
        *n_rows = 0;
    }
    return st;
}

/* Whether dir/index.csv is there to be read: anything but "no such file"
 * (one that cannot be read is an error to report, not a missing index). */
static int has_index(const char *dir)
{
    char path[CF_PATH_MAX + 16];
    struct stat sb;
    snprintf(path, sizeof path, "%s/index.csv", dir);
    return !(stat(path, &sb) != 0 && errno == ENOENT);
}

/* Reads the trace at `path` and gives it the VM description `meta` (NULL:
 * none); `requested` > 0 sets the requested nodes, else meta's, else the
 * largest count. */
static cf_status load_described(const char *path, int requested, const cf_spot_trace_vm *meta, cf_spot_trace *out)
{
    char *text = NULL;
    size_t len = 0;
    cf_status st = cf_read_file(path, &text, &len);
    if (st != CF_OK && meta && meta->index_row[0]) {
        /* the row that lists it, as the index's other errors name it (it
         * said only "cannot open 'DIR/x.csv'") */
        cf_error_prefix("%s: column 'file'", meta->index_row);
        if (!cf_error_hint_text()[0])
            cf_error_hint("put the file beside index.csv, or correct or remove the row");
    }
    if (st != CF_OK)
        return st;
    st = cf_spot_trace_parse(text, len, path, requested > 0 ? requested : meta ? meta->requested : 0, out);
    free(text);
    if (st == CF_OK && meta && out->n_types == 1) {
        int req = out->vm[0].requested;
        out->vm[0] = *meta;
        out->vm[0].requested = req;
    }
    return st;
}

cf_status cf_spot_trace_load(const char *path, int requested, cf_spot_trace *out)
{
    /* The index beside the file, when it lists it (the requested count
     * decides what a full cluster is: a 16-node trace may never hold all
     * 16); else what the file's path says (the public traces' layout). */
    char dir[CF_PATH_MAX];
    cf_dirname(path, dir, sizeof dir);
    index_row *rows = NULL;
    size_t n_rows = 0;
    const cf_spot_trace_vm *meta = NULL;
    /* An index that exists is read whole, as --calibrate reads it: a broken
     * row (of any file) is the error, not a reason to fall back to the path,
     * which would replay another VM type or cluster size without a word. */
    if (has_index(dir)) {
        cf_status st = read_index(dir, &rows, &n_rows);
        if (st != CF_OK)
            return st;
    }
    for (size_t i = 0; i < n_rows && !meta; i++)
        if (strcmp(rows[i].file, cf_basename(path)) == 0)
            meta = &rows[i].vm;
    cf_spot_trace_vm named;
    if (!meta && cf_spot_trace_vm_from_path(path, &named) && named.gpus_per_vm <= CF_SPOT_MAX_GPUS_PER_VM)
        meta = &named;
    cf_status st = load_described(path, requested, meta, out);
    free(rows);
    return st;
}

void cf_spot_trace_set_free(cf_spot_trace_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        cf_spot_trace_free(&set->traces[i]);
    free(set->traces);
    memset(set, 0, sizeof *set);
}

static int by_path(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every *.csv and *.json under dir (index.csv and dot-files excluded),
 * `depth` folders down at most. */
static cf_status walk(const char *dir, int depth, char ***paths, size_t *n, size_t *cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return cf_error_set(CF_ERR_IO, "cannot open '%s': %s", dir, strerror(errno));
    cf_status st = CF_OK;
    struct dirent *e;
    while (st == CF_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "index.csv") == 0)
            continue;
        char path[CF_PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        struct stat sb;
        if (stat(path, &sb) != 0)
            continue;
        size_t len = strlen(e->d_name);
        if (S_ISDIR(sb.st_mode)) {
            if (depth > 0)
                st = walk(path, depth - 1, paths, n, cap);
        } else if (S_ISREG(sb.st_mode) && ((len > 4 && strcmp(e->d_name + len - 4, ".csv") == 0) ||
                                           (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0))) {
            if (*n == *cap) {
                size_t grow = *cap ? 2 * *cap : 32;
                char **more = realloc(*paths, grow * sizeof *more);
                if (!more) {
                    st = cf_error_set(CF_ERR_NOMEM, "out of memory");
                    break;
                }
                *paths = more;
                *cap = grow;
            }
            if (!((*paths)[*n] = strdup(path)))
                st = cf_error_set(CF_ERR_NOMEM, "out of memory");
            else
                (*n)++;
        }
    }
    closedir(d);
    return st;
}

static void note_skipped(cf_spot_trace_set *set, const char *path, const char *why)
{
    size_t used = strlen(set->skipped);
    if (set->n_skipped < 4)
        snprintf(set->skipped + used, sizeof set->skipped - used, "%s'%s' (%s)", used ? "; " : "", path, why);
    else if (set->n_skipped == 4)
        snprintf(set->skipped + used, sizeof set->skipped - used, "; …");
    set->n_skipped++;
}

static size_t folders_in(const char *path)
{
    size_t k = 0;
    for (; *path; path++)
        k += *path == '/';
    return k;
}

/* The path by which paths[i]'s file is read: a file reached by more than
 * one path (a link to the folder itself or one above it, two links to one
 * file) is one trace, read by its path with the fewest folders, then the
 * first in path order (it was scored once per path: a link `again -> .`
 * scored a folder's every trace five times, four levels down). */
static size_t first_path_of(char *const *paths, const struct stat *ids, const int *known, size_t n, size_t i)
{
    size_t best = i;
    for (size_t j = 0; known[i] && j < n; j++)
        if (j != i && known[j] && ids[j].st_dev == ids[i].st_dev && ids[j].st_ino == ids[i].st_ino &&
            (folders_in(paths[j]) < folders_in(paths[best]) ||
             (folders_in(paths[j]) == folders_in(paths[best]) && j < best)))
            best = j;
    return best;
}

/* A folder without index.csv: the traces its file names describe. */
static cf_status load_by_name(const char *dir, cf_spot_trace_set *out)
{
    char **paths = NULL;
    size_t n = 0, cap = 0;
    cf_status st = walk(dir, 4, &paths, &n, &cap);
    if (st == CF_OK && n)
        qsort(paths, n, sizeof *paths, by_path);
    struct stat *ids = NULL;
    int *known = NULL;
    if (st == CF_OK && (!(out->traces = calloc(n ? n : 1, sizeof *out->traces)) ||
                        !(ids = calloc(n ? n : 1, sizeof *ids)) || !(known = calloc(n ? n : 1, sizeof *known))))
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == CF_OK && i < n; i++)
        known[i] = stat(paths[i], &ids[i]) == 0;
    for (size_t i = 0; st == CF_OK && i < n; i++) {
        size_t first = first_path_of(paths, ids, known, n, i);
        if (first != i) {
            char why[CF_PATH_MAX + 32];
            snprintf(why, sizeof why, "the same file as '%s'", paths[first]);
            note_skipped(out, paths[i], why);
            continue;
        }
        cf_spot_trace_vm vm;
        if (!cf_spot_trace_vm_from_path(paths[i], &vm)) {
            note_skipped(out, paths[i], "its name says neither the nodes, zone, GPU nor VM size");
            continue;
        }
        if (vm.gpus_per_vm < 1 || vm.gpus_per_vm > CF_SPOT_MAX_GPUS_PER_VM) {
            note_skipped(out, paths[i], "not a GPU VM");
            continue;
        }
        st = load_described(paths[i], vm.requested, &vm, &out->traces[out->n]);
        if (st == CF_OK)
            out->n++;
    }
    if (st == CF_OK && out->n == 0) {
        st = cf_error_set(CF_ERR_INVALID, "%s: no trace found: no index.csv, and no file named like a public trace%s%s",
                          dir, out->n_skipped ? "; skipped " : "", out->skipped);
        cf_error_hint("name each trace like availability/1-node/aws-02-15-2023/us-east-1a_v100_1.json or "
                      "availability_1node_02-15-2023_us-east-1a_V100x1.csv, or list them in %s/index.csv "
                      "(columns file, nodes_requested, zone, gpu, gpus_per_vm; docs/spot.md \"Trace folders\")", dir);
    }
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    free(ids);
    free(known);
    return st;
}

cf_status cf_spot_trace_set_load(const char *dir, cf_spot_trace_set *out)
{
    memset(out, 0, sizeof *out);
    struct stat sb;
    /* the folder itself first: its index.csv is optional, so "cannot open
     * 'DIR/index.csv'" named a file the user never gave */
    if (stat(dir, &sb) != 0)
        return cf_error_set(CF_ERR_IO, "cannot open '%s': %s", dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return cf_error_set(CF_ERR_IO, "cannot open '%s': %s", dir, strerror(ENOTDIR));
    if (!has_index(dir)) {
        cf_status st = load_by_name(dir, out);
        if (st != CF_OK)
            cf_spot_trace_set_free(out);
        return st;
    }
    index_row *rows = NULL;
    size_t n_rows = 0;
    cf_status st = read_index(dir, &rows, &n_rows);
    if (st != CF_OK)
        return st;
    out->traces = calloc(n_rows ? n_rows : 1, sizeof *out->traces);
    if (!out->traces)
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == CF_OK && i < n_rows; i++) {
        char path[CF_PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", dir, rows[i].file);
        st = load_described(path, rows[i].vm.requested, &rows[i].vm, &out->traces[i]);
        if (st == CF_OK)
            out->n++;
    }
    free(rows);
    if (st != CF_OK)
        cf_spot_trace_set_free(out);
    return st;
}
