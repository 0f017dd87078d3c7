/* A text table that fits a width: the command-line tables of recommend,
 * prices and history. When the table is wider than the width, it gives up
 * detail in steps, the lowest number first: a column with `priority` p is
 * left out at step p (the caller is told which, so the reader learns that
 * --wide shows them), a column with `short_priority` q switches to its
 * short cells at step q ("11.1 h" for "11.1 h (6.8–18.2)"; what they
 * give up is named with the columns left out when the column says what:
 * `short_gives_up`); then the
 * columns marked `cut` are shortened with "…"; then, only if that was not
 * enough, the columns of negative `priority` are left out, -1 first, then
 * -2 and so on, the rightmost of equals first (else the rows would be
 * wrapped as prose). Width 0 = no limit: every column in full. */
#ifndef CLOUDFIT_RENDER_TEXT_TABLE_H
#define CLOUDFIT_RENDER_TEXT_TABLE_H
#include <stddef.h>

#include "cloudfit/common/buf.h"

typedef struct {
    const char *title;
    int right;           /* right-aligned */
    int priority;        /* step at which it is left out; 0 = always shown; < 0 = only when cutting is not
                          * enough, -1 first */
    int cut;             /* may be shortened with "…" (text such as names) */
    int short_priority;  /* step at which it shows its short cells; 0 = never */
    const char *short_title; /* its title then; NULL = the same */
    const char *short_gives_up; /* what the short cells leave out, for the left-out line ("80% interval":
                                   "the 80% interval of TIME", or "the 80% intervals of TIME and
                                   TOTAL $" for every short column saying the same); NULL = not named */
} cf_text_column;

typedef struct {
    const cf_text_column *columns;
    size_t n_columns;
    const char *const *cells;  /* row-major: n_rows × n_columns; NULL cells are "" */
    const char *const *short_cells; /* the same shape, for columns with a short_priority; NULL = none */
    size_t n_rows;
    int width;                 /* columns of the terminal; 0 = no limit */
    int lead;                  /* blanks before the first cell */
    int gap;                   /* blanks between cells */
    int rules;                 /* '-' lines above and below the header and below the rows */
    int pad_last_title;        /* pad the last header cell to its column's width */
    int highlight_row;         /* drawn bold green when `color`; -1 = none */
    int color;
} cf_text_table;

/* Appends the table. `left_out` gets what was left out, ", "-separated, in
 * the order it was given up ("" when none): the titles of the columns left
 * out and, for the columns shown short with a `short_gives_up`, what their
 * short cells leave out ("the 80% intervals of TIME and TOTAL $"). */
void cf_text_table_render(const cf_text_table *t, cf_buf *out, cf_buf *left_out);

/* The same a row at a time, for a table too long to hold: measure every
 * row (a first pass), then the head (what fits is decided from the widths
 * measured), each row again in order, and the foot; the bytes are those
 * cf_text_table_render gives for the same rows. The table's cells and
 * n_rows are not read; a row's cells are its n_columns cells (short_cells
 * NULL: none). init: CF_OK or CF_ERR_NOMEM (last error set). */
typedef struct {
    const cf_text_table *t;
    int *measured, *measured_short; /* the widest cell of each column, full and short */
    int *widths, *shown, *is_short; /* the layout, from the head on */
    size_t last;                    /* the last column shown */
    int rule_width;
} cf_text_table_stream;
cf_status cf_text_table_stream_init(cf_text_table_stream *s, const cf_text_table *t);
void cf_text_table_stream_measure(cf_text_table_stream *s, const char *const *cells, const char *const *short_cells);
void cf_text_table_stream_head(cf_text_table_stream *s, cf_buf *out, cf_buf *left_out);
/* Row `r` (0-based: the highlight_row test) */
void cf_text_table_stream_row(cf_text_table_stream *s, size_t r, const char *const *cells,
                              const char *const *short_cells, cf_buf *out);
void cf_text_table_stream_foot(cf_text_table_stream *s, cf_buf *out);
void cf_text_table_stream_free(cf_text_table_stream *s);

/* The line that says what was left out: "(left out to fit N columns: A,
 * B; --wide shows every column)\n", nothing when `left_out` is empty. */
void cf_text_table_note(const cf_buf *left_out, int width, cf_buf *out);

/* A duration in the unit that shows differences: minutes under an hour
 * ("12 min", "7.5 min"), hours above ("1.4 h", "18.9 h", "240 h"). */
void cf_text_duration(double hours, char *out, size_t n);
/* The same with its interval in the point's unit: "12 min (10–15)",
 * "18.9 h (16.4–21.8)". */
void cf_text_duration_range(double hours, double lo_hours, double hi_hours, char *out, size_t n);

#endif
