/* RFC 4180 CSV (quoted fields, embedded commas and newlines) via libcsv,
 * with the line number of every record for error messages. */
#ifndef CLOUDFIT_COMMON_CSVREAD_H
#define CLOUDFIT_COMMON_CSVREAD_H
#include <stddef.h>
#include "cloudfit/status.h"

typedef struct {
    char **fields;
    size_t n_fields;
    long line;        /* 1-based physical line where the record starts */
} cf_csv_record;

typedef struct {
    char name[256];           /* file name used in messages */
    cf_csv_record header;     /* first record */
    cf_csv_record *records;   /* data records (header excluded) */
    size_t n_records;
} cf_csv_doc;

/* Limits that keep memory bounded whatever the input (a file over them is
 * an error naming the limit, not a slow death by swapping). */
#define CF_CSV_MAX_RECORDS 200000    /* data rows after the header */
#define CF_CSV_MAX_FIELDS 1024       /* fields per row */
#define CF_CSV_MAX_CELLS 4000000     /* fields in the whole file */

/* Parses `text`; `name` is used in error messages ("name:LINE: ..."). An
 * empty document or one without a header is an error. A leading UTF-8 BOM
 * is skipped; a NUL byte is an error "name:LINE:COLUMN: NUL byte". */
cf_status cf_csv_parse(const char *text, size_t len, const char *name, cf_csv_doc *out);
/* Column index of `column` in the header, or -1. */
int cf_csv_column(const cf_csv_doc *doc, const char *column);
/* Like cf_csv_column, but a missing column is an error naming the file. */
cf_status cf_csv_require_column(const cf_csv_doc *doc, const char *column, int *out_index);
/* Field text, "" when the record is shorter than the header or col < 0. */
const char *cf_csv_field(const cf_csv_record *record, int col);
/* Typed getters (common/number.h: decimal only, no spaces, hex, inf or
 * nan): an empty field yields `fallback` when `required` is 0 and an error
 * otherwise; a malformed or out-of-range number is always an error naming
 * "file:line: column 'c'". cf_csv_int's values fit an int. */
cf_status cf_csv_double(const cf_csv_doc *doc, const cf_csv_record *record, int col,
                        int required, double fallback, double *out);
cf_status cf_csv_int(const cf_csv_doc *doc, const cf_csv_record *record, int col,
                     int required, long fallback, long *out);
/* Copies the field into out[cap]; a field of cap characters or more is an
 * error naming "file:line: column 'c'" and the limit (copying a prefix of
 * it silently made another name: "NVIDIA RTX PRO 6000 Blackwell S"). */
cf_status cf_csv_text(const cf_csv_doc *doc, const cf_csv_record *record, int col, char *out, size_t cap);
void cf_csv_free(cf_csv_doc *doc);

#endif
