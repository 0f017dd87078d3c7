#include "cloudfit/common/csvread.h"

#include <csv.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/common/escape.h"
#include "cloudfit/common/number.h"

typedef struct {
    cf_csv_record *records;
    size_t n_records, cap_records;
    cf_csv_record current;
    size_t cap_fields;
    long line;          /* physical line being fed */
    size_t n_fields_total;
    int failed;         /* out of memory */
    int too_big;        /* over a limit below */
    long too_big_line;  /* the line of the row or field that went over it */
} csv_state;

static void on_field(void *data, size_t len, void *ctx)
{
    csv_state *st = ctx;
    if (st->failed || st->too_big)
        return;
    if (st->current.n_fields == 0)
        st->current.line = st->line;
    if (st->current.n_fields >= CF_CSV_MAX_FIELDS || ++st->n_fields_total > CF_CSV_MAX_CELLS) {
        st->too_big = 1;
        st->too_big_line = st->line;
        return;
    }
    if (st->current.n_fields == st->cap_fields) {
        size_t cap = st->cap_fields ? st->cap_fields * 2 : 16;
        char **grown = realloc(st->current.fields, cap * sizeof *grown);
        if (!grown) {
            st->failed = 1;
            return;
        }
        st->current.fields = grown;
        st->cap_fields = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        st->failed = 1;
        return;
    }
    if (len)
        memcpy(copy, data, len);
    copy[len] = '\0';
    st->current.fields[st->current.n_fields++] = copy;
}

static void on_record(int terminator, void *ctx)
{
    (void)terminator;
    csv_state *st = ctx;
    if (st->failed || st->too_big)
        return;
    if (st->n_records > CF_CSV_MAX_RECORDS) { /* the header and CF_CSV_MAX_RECORDS rows */
        st->too_big = 1;
        st->too_big_line = st->current.line;
        return;
    }
    if (st->n_records == st->cap_records) {
        size_t cap = st->cap_records ? st->cap_records * 2 : 256;
        cf_csv_record *grown = realloc(st->records, cap * sizeof *grown);
        if (!grown) {
            st->failed = 1;
            return;
        }
        st->records = grown;
        st->cap_records = cap;
    }
    st->records[st->n_records++] = st->current;
    memset(&st->current, 0, sizeof st->current);
    st->cap_fields = 0;
}

static void record_free(cf_csv_record *record)
{
    for (size_t i = 0; i < record->n_fields; i++)
        free(record->fields[i]);
    free(record->fields);
    memset(record, 0, sizeof *record);
}

/* RFC 4180: spaces are part of a field (libcsv trims them by default, which
 * would let " 16" pass as a number). */
static int no_space(unsigned char c)
{
    (void)c;
    return 0;
}

/* A header of one field that holds another separator: a spreadsheet's
 * export in a locale that writes ';' (and a decimal comma), or
 * tab-separated values. The separator as a hint names it, else NULL. */
static const char *other_separator(const cf_csv_record *head)
{
    if (head->n_fields != 1)
        return NULL;
    return strchr(head->fields[0], ';') ? "';'" : strchr(head->fields[0], '\t') ? "tabs" : NULL;
}

static void other_separator_hint(const char *sep)
{
    cf_error_hint("the header is one field: the file looks separated by %s, where a CSV separates its fields by "
                  "commas (RFC 4180)", sep);
}

static int record_is_blank(const cf_csv_record *record)
{
    return record->n_fields == 1 && record->fields[0][0] == '\0';
}

/* 1-based line and column (in characters) of byte `offset`. */
static void locate(const char *text, size_t offset, long *line, long *column)
{
    *line = 1;
    *column = 1;
    for (size_t i = 0; i < offset; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *column = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            (*column)++;
        }
    }
}

/* The character at text[at] (a whole UTF-8 sequence), escaped, into out. */
static void char_at(const char *text, size_t len, size_t at, char *out, size_t n)
{
    unsigned char lead = (unsigned char)text[at];
    size_t k = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    char one[5] = "";
    if (at + k > len)
        k = len - at;
    memcpy(one, text + at, k);
    one[k] = '\0';
    cf_escape_into(one, out, n);
}

/* A quote error found again by the rules libcsv applies in strict mode
 * (RFC 4180, no space trimming), to name its place and cause: libcsv says
 * only "error parsing data while strict checking enabled", and a quote
 * left open at the line after the end of the file. Sets the error and
 * returns 1, or returns 0 when the text breaks no quoting rule. */
static int quote_error(const char *text, size_t len, const char *name)
{
    enum { FIELD_START, UNQUOTED, QUOTED, AFTER_QUOTE } state = FIELD_START;
    size_t open = 0; /* the opening quote of the current quoted field */
    long line, column, open_line, open_column;
    char shown[32];
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        int ends = c == ',' || c == '\n' || c == '\r';
        switch (state) {
        case FIELD_START:
            state = c == '"' ? QUOTED : ends ? FIELD_START : UNQUOTED;
            open = i;
            break;
        case UNQUOTED:
            if (c == '"') {
                locate(text, i, &line, &column);
                cf_error_set(CF_ERR_INVALID, "%s:%ld:%ld: quote inside a field that does not start with one", name,
                             line, column);
                cf_error_hint("a field holding a quote is quoted whole, its quotes written twice: \"say \"\"hi\"\"\"");
                return 1;
            }
            state = ends ? FIELD_START : UNQUOTED;
            break;
        case QUOTED: state = c == '"' ? AFTER_QUOTE : QUOTED; break;
        case AFTER_QUOTE:
            if (c == '"') { /* "" is a quote inside the field */
                state = QUOTED;
                break;
            }
            if (ends) {
                state = FIELD_START;
                break;
            }
            locate(text, open, &open_line, &open_column);
            locate(text, i - 1, &line, &column);
            char_at(text, len, i, shown, sizeof shown);
            if (line != open_line)
                cf_error_set(CF_ERR_INVALID, "%s:%ld:%ld: unterminated quoted field (opened here): it runs on to "
                             "line %ld, where the quote at column %ld is followed by '%s', not by a comma or the "
                             "line's end", name, open_line, open_column, line, column, shown);
            else
                cf_error_set(CF_ERR_INVALID, "%s:%ld:%ld: '%s' after the closing quote of the quoted field opened "
                             "at column %ld (expected a comma or the line's end)", name, line, column + 1, shown,
                             open_column);
            cf_error_hint("close each quoted field with a quote followed by a comma or the line's end; a quote "
                          "inside a quoted field is written twice (\"\")");
            return 1;
        }
    }
    if (state != QUOTED)
        return 0;
    locate(text, open, &open_line, &open_column);
    cf_error_set(CF_ERR_INVALID, "%s:%ld:%ld: unterminated quoted field (opened here; it runs to the end of the file)",
                 name, open_line, open_column);
    cf_error_hint("close the quote; a quote inside a quoted field is written twice (\"\")");
    return 1;
}

cf_status cf_csv_parse(const char *text, size_t len, const char *name, cf_csv_doc *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    /* A UTF-8 byte order mark, as spreadsheets write it, is not part of
     * the first column's name. */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    /* A NUL byte would silently cut a field short: refuse the file. */
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        long line, column;
        locate(text, (size_t)(nul - text), &line, &column);
        cf_error_set(CF_ERR_INVALID, "%s:%ld:%ld: NUL byte in the text", name, line, column);
        cf_error_hint("is this a binary file? a CSV file is UTF-8 text");
        return CF_ERR_INVALID;
    }
    struct csv_parser parser;
    if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
        return cf_error_set(CF_ERR_NOMEM, "cannot initialise the CSV parser");
    csv_set_space_func(&parser, no_space);
    csv_state st;
    memset(&st, 0, sizeof st);
    st.line = 1;
    size_t pos = 0;
    cf_status status = CF_OK;
    /* Feed one physical line at a time so fields know their line number. */
    while (pos < len && !st.failed && !st.too_big) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t chunk = nl ? (size_t)(nl - (text + pos)) + 1 : len - pos;
        if (csv_parse(&parser, text + pos, chunk, on_field, on_record, &st) != chunk) {
            if (csv_error(&parser) != CSV_EPARSE || !quote_error(text, len, name))
                cf_error_set(CF_ERR_INVALID, "%s:%ld: malformed CSV: %s", name, st.line,
                             csv_strerror(csv_error(&parser)));
            status = CF_ERR_INVALID;
            break;
        }
        pos += chunk;
        st.line++;
    }
    if (status == CF_OK && !st.failed && !st.too_big && csv_fini(&parser, on_field, on_record, &st) != 0) {
        /* a quoted field still open at the end: named where its quote opened */
        if (csv_error(&parser) != CSV_EPARSE || !quote_error(text, len, name))
            cf_error_set(CF_ERR_INVALID, "%s:%ld: malformed CSV: %s", name, st.line,
                         csv_strerror(csv_error(&parser)));
        status = CF_ERR_INVALID;
    }
    csv_free(&parser);
    record_free(&st.current);
    if (status == CF_OK && st.failed)
        status = cf_error_set(CF_ERR_NOMEM, "out of memory reading '%s'", name);
    if (status == CF_OK && st.too_big) {
        status = cf_error_set(CF_ERR_INVALID, "%s:%ld: too large: cloudfit reads at most %d rows, %d fields per row "
                              "and %d fields in all", name, st.too_big_line, CF_CSV_MAX_RECORDS, CF_CSV_MAX_FIELDS,
                              CF_CSV_MAX_CELLS);
        cf_error_hint("split the file, or keep only the rows you need");
    }
    /* Drop blank lines (a lone empty field). */
    size_t kept = 0;
    for (size_t i = 0; i < st.n_records; i++) {
        if (record_is_blank(&st.records[i]))
            record_free(&st.records[i]);
        else
            st.records[kept++] = st.records[i];
    }
    st.n_records = kept;
    if (status == CF_OK && st.n_records == 0)
        status = cf_error_set(CF_ERR_INVALID, "%s: empty CSV file (expected a header line)", name);
    if (status != CF_OK) {
        for (size_t i = 0; i < st.n_records; i++)
            record_free(&st.records[i]);
        free(st.records);
        return status;
    }
    /* A column named twice: which one a reader took was the first, silently
     * (a second step_time_s full of other values changed nothing). Empty
     * names are exempt: a spreadsheet's trailing separators. */
    const cf_csv_record *head = &st.records[0];
    for (size_t i = 0; i < head->n_fields && status == CF_OK; i++)
        for (size_t j = i + 1; j < head->n_fields && head->fields[i][0] && status == CF_OK; j++)
            if (strcmp(head->fields[i], head->fields[j]) == 0) {
                char shown[96];
                cf_escape_into(head->fields[i], shown, sizeof shown);
                status = cf_error_set(CF_ERR_INVALID, "%s:%ld: column '%s' appears twice in the header (columns %zu "
                                      "and %zu)", name, head->line, shown, i + 1, j + 1);
                cf_error_hint("remove or rename one of them");
            }
    if (status != CF_OK) {
        for (size_t i = 0; i < st.n_records; i++)
            record_free(&st.records[i]);
        free(st.records);
        return status;
    }
    /* A row of another width than the header: a value past the last
     * column was silently dropped, a short row read its missing optional
     * columns as empty. Trailing empty fields (a spreadsheet's) are not
     * values. */
    for (size_t i = 1; i < st.n_records && status == CF_OK; i++) {
        const cf_csv_record *row = &st.records[i];
        size_t width = row->n_fields;
        while (width > head->n_fields && row->fields[width - 1][0] == '\0')
            width--;
        if (width != head->n_fields) {
            status = cf_error_set(CF_ERR_INVALID, "%s:%ld: expected %zu fields (the header's columns), got %zu", name,
                                  row->line, head->n_fields, row->n_fields);
            if (other_separator(head)) /* "0,15" of a ';' file is two fields of a one-column header */
                other_separator_hint(other_separator(head));
            else
                cf_error_hint("quote a field that holds a comma (\"a,b\"), and give every row one field per column");
        }
    }
    if (status != CF_OK) {
        for (size_t i = 0; i < st.n_records; i++)
            record_free(&st.records[i]);
        free(st.records);
        return status;
    }
    out->header = st.records[0];
    out->n_records = st.n_records - 1;
    if (out->n_records) {
        out->records = st.records;
        memmove(out->records, out->records + 1, out->n_records * sizeof *out->records);
    } else {
        free(st.records);
    }
    return CF_OK;
}

int cf_csv_column(const cf_csv_doc *doc, const char *column)
{
    for (size_t i = 0; i < doc->header.n_fields; i++)
        if (strcmp(doc->header.fields[i], column) == 0)
            return (int)i;
    return -1;
}

/* Why a header lacks a column, when the header shows it: one field holding
 * another separator (a spreadsheet's export in a locale that writes ';',
 * or tab-separated values), or the column in another case or with spaces
 * around it ("Model", " gpu"). The bare "missing required column 'model'"
 * named a column the file plainly has. */
static void missing_column_hint(const cf_csv_doc *doc, const char *column)
{
    const char *sep = other_separator(&doc->header);
    if (sep) {
        other_separator_hint(sep);
        return;
    }
    size_t want = strlen(column);
    for (size_t i = 0; i < doc->header.n_fields; i++) {
        const char *f = doc->header.fields[i];
        while (*f == ' ' || *f == '\t')
            f++;
        size_t len = strlen(f);
        while (len && (f[len - 1] == ' ' || f[len - 1] == '\t'))
            len--;
        if (len == want && strncasecmp(f, column, want) == 0) {
            char shown[96];
            cf_escape_into(doc->header.fields[i], shown, sizeof shown);
            cf_error_hint("column %zu of the header is '%s': column names are matched exactly ('%s')", i + 1, shown,
                          column);
            return;
        }
    }
}

cf_status cf_csv_require_column(const cf_csv_doc *doc, const char *column, int *out_index)
{
    *out_index = cf_csv_column(doc, column);
    if (*out_index < 0) {
        cf_error_set(CF_ERR_INVALID, "%s:%ld: missing required column '%s'", doc->name,
                     doc->header.line, column);
        missing_column_hint(doc, column);
        return CF_ERR_INVALID;
    }
    return CF_OK;
}

const char *cf_csv_field(const cf_csv_record *record, int col)
{
    if (col < 0 || (size_t)col >= record->n_fields)
        return "";
    return record->fields[col];
}

static const char *column_name(const cf_csv_doc *doc, int col)
{
    return cf_csv_field(&doc->header, col);
}

/* "file:line: column 'c': expected WHAT, got 'text' (why)" with the
 * text's control characters escaped. */
static cf_status number_error(const cf_csv_doc *doc, const cf_csv_record *record, int col, const char *what,
                              const char *text, cf_number_result r)
{
    char shown[96];
    cf_escape_into(text, shown, sizeof shown);
    if (r == CF_NUMBER_SYNTAX || r == CF_NUMBER_NOT_INT)
        return cf_error_set(CF_ERR_INVALID, "%s:%ld: column '%s': expected %s, got '%s'", doc->name, record->line,
                            column_name(doc, col), what, shown);
    return cf_error_set(CF_ERR_INVALID, "%s:%ld: column '%s': expected %s, got '%s' (%s)", doc->name,
                        record->line, column_name(doc, col), what, shown, cf_number_why(r));
}

cf_status cf_csv_double(const cf_csv_doc *doc, const cf_csv_record *record, int col,
                        int required, double fallback, double *out)
{
    const char *text = cf_csv_field(record, col);
    if (!*text) {
        if (required)
            return cf_error_set(CF_ERR_INVALID, "%s:%ld: column '%s': expected a number, got an empty field",
                                doc->name, record->line, column_name(doc, col));
        *out = fallback;
        return CF_OK;
    }
    double value = 0;
    cf_number_result r = cf_number_double(text, -HUGE_VAL, HUGE_VAL, &value);
    if (r != CF_NUMBER_OK)
        return number_error(doc, record, col, "a number", text, r);
    *out = value;
    return CF_OK;
}

cf_status cf_csv_int(const cf_csv_doc *doc, const cf_csv_record *record, int col,
                     int required, long fallback, long *out)
{
    const char *text = cf_csv_field(record, col);
    if (!*text) {
        if (required)
            return cf_error_set(CF_ERR_INVALID, "%s:%ld: column '%s': expected an integer, got an empty field",
                                doc->name, record->line, column_name(doc, col));
        *out = fallback;
        return CF_OK;
    }
    /* Every integer column is stored in an int: range-checked into one. */
    long value = 0;
    cf_number_result r = cf_number_long(text, INT_MIN, INT_MAX, &value);
    if (r != CF_NUMBER_OK)
        return number_error(doc, record, col, "an integer", text, r);
    *out = value;
    return CF_OK;
}

cf_status cf_csv_text(const cf_csv_doc *doc, const cf_csv_record *record, int col, char *out, size_t cap)
{
    const char *text = cf_csv_field(record, col);
    size_t len = strlen(text);
    if (len >= cap)
        return cf_error_set(CF_ERR_INVALID, "%s:%ld: column '%s': expected at most %zu characters, got %zu ('%.*s...')",
                            doc->name, record->line, column_name(doc, col), cap - 1, len,
                            (int)cf_utf8_prefix(text, 40), text);
    memcpy(out, text, len + 1);
    return CF_OK;
}

void cf_csv_free(cf_csv_doc *doc)
{
    record_free(&doc->header);
    for (size_t i = 0; i < doc->n_records; i++)
        record_free(&doc->records[i]);
    free(doc->records);
    memset(doc, 0, sizeof *doc);
}
