#include "cloudfit/render/text_table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/text_wrap.h"

#define GREEN_BOLD "\033[32m\033[1m"
#define RESET "\033[0m"

static const char *title(const cf_text_table *t, const int *is_short, size_t col)
{
    return is_short[col] && t->columns[col].short_title ? t->columns[col].short_title : t->columns[col].title;
}

/* A column's width: its title's, or its widest cell's as measured. */
static int column_width(const cf_text_table_stream *s, size_t c)
{
    int w = cf_utf8_width(title(s->t, s->is_short, c));
    int cells = s->is_short[c] ? s->measured_short[c] : s->measured[c];
    return cells > w ? cells : w;
}

/* The table's width with these columns shown: the rules run a blank past
 * the last column, as far as the lead before the first. */
static int total_width(const cf_text_table *t, const int *widths, const int *shown)
{
    int total = t->lead + (t->rules ? t->lead : 0), n = 0;
    for (size_t c = 0; c < t->n_columns; c++)
        if (shown[c]) {
            total += widths[c] + (n ? t->gap : 0);
            n++;
        }
    return total;
}

static void rule(cf_buf *out, int total)
{
    for (int i = 0; i < total; i++)
        cf_buf_puts(out, "-");
    cf_buf_puts(out, "\n");
}

/* Whether the short cells of `col` give up what those of `other` do. */
static int gives_up_same(const cf_text_column *col, const cf_text_column *other)
{
    return col->short_gives_up && other->short_gives_up && strcmp(col->short_gives_up, other->short_gives_up) == 0;
}

/* `left_out` from what was given up, in order (`given_up`: the columns, `as_short`: shown short, not
 * left out): a column left out by its title; the columns shown short that say what that leaves out
 * once, at the first of them: "the 80% interval of TIME", "the 80% intervals of TIME and TOTAL $"
 * (a column left out after it was shown short is named by its title only). */
static void name_left_out(const cf_text_table *t, const size_t *given_up, int *as_short, size_t n, const int *shown,
                          cf_buf *left_out)
{
    for (size_t e = 0; e < n; e++)
        if (as_short[e] && !shown[given_up[e]])
            as_short[e] = -1; /* shown short, then left out: named by its title only */
    for (size_t e = 0; e < n; e++) {
        const cf_text_column *col = &t->columns[given_up[e]];
        if (as_short[e] < 0)
            continue;
        if (!as_short[e]) {
            cf_buf_printf(left_out, "%s%s", left_out->len ? ", " : "", col->title);
            continue;
        }
        if (!col->short_gives_up)
            continue;
        int named = 0;
        size_t alike = 0;
        for (size_t k = 0; k < n; k++)
            if (as_short[k] > 0 && gives_up_same(col, &t->columns[given_up[k]])) {
                if (k < e)
                    named = 1;
                alike++;
            }
        if (named)
            continue;
        cf_buf_printf(left_out, "%sthe %s%s of ", left_out->len ? ", " : "", col->short_gives_up, alike > 1 ? "s" : "");
        for (size_t k = e, i = 0; k < n; k++) {
            const cf_text_column *other = &t->columns[given_up[k]];
            if (as_short[k] <= 0 || !gives_up_same(col, other))
                continue;
            cf_buf_printf(left_out, "%s%s", i == 0 ? "" : i + 1 == alike ? " and " : ", ",
                          other->short_title ? other->short_title : other->title);
            i++;
        }
    }
}

cf_status cf_text_table_stream_init(cf_text_table_stream *s, const cf_text_table *t)
{
    memset(s, 0, sizeof *s);
    s->t = t;
    size_t nc = t->n_columns ? t->n_columns : 1;
    s->measured = calloc(nc, sizeof *s->measured);
    s->measured_short = calloc(nc, sizeof *s->measured_short);
    s->widths = calloc(nc, sizeof *s->widths);
    s->shown = calloc(nc, sizeof *s->shown);
    s->is_short = calloc(nc, sizeof *s->is_short);
    if (!s->measured || !s->measured_short || !s->widths || !s->shown || !s->is_short) {
        cf_text_table_stream_free(s);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    return CF_OK;
}

void cf_text_table_stream_free(cf_text_table_stream *s)
{
    free(s->measured);
    free(s->measured_short);
    free(s->widths);
    free(s->shown);
    free(s->is_short);
    memset(s, 0, sizeof *s);
}

/* A row's cell of `col`, short (when `as_short` and it has one) or full. */
static const char *row_cell(const char *const *cells, const char *const *short_cells, int as_short, size_t col)
{
    const char *c = as_short && short_cells ? short_cells[col] : NULL;
    if (!c)
        c = cells[col];
    return c ? c : "";
}

void cf_text_table_stream_measure(cf_text_table_stream *s, const char *const *cells, const char *const *short_cells)
{
    for (size_t c = 0; c < s->t->n_columns; c++) {
        int w = cf_utf8_width(row_cell(cells, short_cells, 0, c));
        int ws = cf_utf8_width(row_cell(cells, short_cells, 1, c));
        if (w > s->measured[c])
            s->measured[c] = w;
        if (ws > s->measured_short[c])
            s->measured_short[c] = ws;
    }
}

void cf_text_table_stream_head(cf_text_table_stream *s, cf_buf *out, cf_buf *left_out)
{
    const cf_text_table *t = s->t;
    size_t nc = t->n_columns;
    int *widths = s->widths, *shown = s->shown, *is_short = s->is_short;
    /* what was given up, in order: each column at most once left out and once shown short */
    size_t *given_up = calloc(nc ? 2 * nc : 1, sizeof *given_up), n_given_up = 0;
    int *as_short = calloc(nc ? 2 * nc : 1, sizeof *as_short);
    if (!given_up || !as_short) {
        free(given_up);
        free(as_short);
        out->failed = 1;
        return;
    }
    for (size_t c = 0; c < nc; c++) {
        shown[c] = 1;
        widths[c] = column_width(s, c);
    }
    /* Give up detail step by step: the lowest step first, the rightmost
     * column of equals; leaving out before shortening at the same step. */
    while (t->width > 0 && total_width(t, widths, shown) > t->width) {
        size_t pick = nc;
        int pick_step = 0, pick_short = 0;
        for (size_t c = 0; c < nc; c++) {
            if (!shown[c])
                continue;
            int drop = t->columns[c].priority, shorten = is_short[c] ? 0 : t->columns[c].short_priority;
            if (drop > 0 && (pick == nc || drop < pick_step || (drop == pick_step && (pick_short || c > pick)))) {
                pick = c, pick_step = drop, pick_short = 0;
            }
            if (shorten > 0 && (pick == nc || shorten < pick_step || (shorten == pick_step && pick_short && c > pick))) {
                pick = c, pick_step = shorten, pick_short = 1;
            }
        }
        if (pick == nc)
            break;
        given_up[n_given_up] = pick;
        as_short[n_given_up++] = pick_short;
        if (pick_short) {
            is_short[pick] = 1;
            widths[pick] = column_width(s, pick);
            continue;
        }
        shown[pick] = 0;
    }
    /* Then shorten the cut columns, the widest first, down to 6 columns or their title. */
    while (t->width > 0 && total_width(t, widths, shown) > t->width) {
        size_t widest = nc;
        for (size_t c = 0; c < nc; c++) {
            int tw = cf_utf8_width(title(t, is_short, c)), floor_w = tw > 6 ? tw : 6;
            if (shown[c] && t->columns[c].cut && widths[c] > floor_w && (widest == nc || widths[c] > widths[widest]))
                widest = c;
        }
        if (widest == nc)
            break;
        widths[widest]--;
    }
    /* Then the columns of negative priority: -1 first, then -2, …; of
     * equals the rightmost first. */
    while (t->width > 0 && total_width(t, widths, shown) > t->width) {
        size_t pick = nc;
        for (size_t c = nc; c-- > 0;)
            if (shown[c] && t->columns[c].priority < 0 &&
                (pick == nc || t->columns[c].priority > t->columns[pick].priority))
                pick = c;
        if (pick == nc)
            break;
        shown[pick] = 0;
        given_up[n_given_up] = pick;
        as_short[n_given_up++] = 0;
    }
    if (left_out)
        name_left_out(t, given_up, as_short, n_given_up, shown, left_out);
    int total = total_width(t, widths, shown);
    /* the rules' blank past the last column goes before the width is
     * passed: a rule one column wider than rows that just fit was wrapped
     * into a line of its own ("  -") */
    int rule_width = t->width > 0 && total > t->width ? t->width : total;
    size_t last = 0;
    for (size_t c = 0; c < nc; c++)
        if (shown[c])
            last = c;
    s->last = last;
    s->rule_width = rule_width;
    if (t->rules)
        rule(out, rule_width);
    for (int i = 0; i < t->lead; i++)
        cf_buf_puts(out, " ");
    for (size_t c = 0; c < nc; c++) {
        if (!shown[c])
            continue;
        int pad = c < last || t->pad_last_title || t->columns[c].right;
        cf_buf_pad(out, title(t, is_short, c), pad ? widths[c] : 0, t->columns[c].right);
        if (c < last)
            for (int i = 0; i < t->gap; i++)
                cf_buf_puts(out, " ");
    }
    cf_buf_puts(out, "\n");
    if (t->rules)
        rule(out, rule_width);
    free(given_up);
    free(as_short);
}

void cf_text_table_stream_row(cf_text_table_stream *s, size_t r, const char *const *cells,
                              const char *const *short_cells, cf_buf *out)
{
    const cf_text_table *t = s->t;
    char text[512];
    int hl = t->color && (int)r == t->highlight_row;
    if (hl)
        cf_buf_puts(out, GREEN_BOLD);
    for (int i = 0; i < t->lead; i++)
        cf_buf_puts(out, " ");
    for (size_t c = 0; c < t->n_columns; c++) {
        if (!s->shown[c])
            continue;
        cf_text_cut(row_cell(cells, short_cells, s->is_short[c], c), s->widths[c], text, sizeof text);
        cf_buf_pad(out, text, c < s->last || t->columns[c].right ? s->widths[c] : 0, t->columns[c].right);
        if (c < s->last)
            for (int i = 0; i < t->gap; i++)
                cf_buf_puts(out, " ");
    }
    if (hl)
        cf_buf_puts(out, RESET);
    cf_buf_puts(out, "\n");
}

void cf_text_table_stream_foot(cf_text_table_stream *s, cf_buf *out)
{
    if (s->t->rules)
        rule(out, s->rule_width);
}

void cf_text_table_render(const cf_text_table *t, cf_buf *out, cf_buf *left_out)
{
    cf_text_table_stream s;
    if (cf_text_table_stream_init(&s, t) != CF_OK) {
        out->failed = 1;
        return;
    }
    size_t nc = t->n_columns;
    for (size_t r = 0; r < t->n_rows; r++)
        cf_text_table_stream_measure(&s, t->cells + r * nc, t->short_cells ? t->short_cells + r * nc : NULL);
    cf_text_table_stream_head(&s, out, left_out);
    for (size_t r = 0; r < t->n_rows; r++)
        cf_text_table_stream_row(&s, r, t->cells + r * nc, t->short_cells ? t->short_cells + r * nc : NULL, out);
    cf_text_table_stream_foot(&s, out);
    cf_text_table_stream_free(&s);
}

void cf_text_table_note(const cf_buf *left_out, int width, cf_buf *out)
{
    if (!left_out->len)
        return;
    cf_buf_printf(out, "(left out to fit %d columns: %s; --wide shows every column)\n", width, cf_buf_cstr(left_out));
}

/* The number in the unit and with the decimals of `unit_of` (hours):
 * minutes under an hour with one decimal below 10, hours with one decimal
 * below 100. */
static void duration_number(double hours, double unit_of, char *out, size_t n)
{
    if (unit_of < 1) {
        double min = hours * 60, ref = unit_of * 60;
        snprintf(out, n, ref < 9.95 ? "%.1f" : "%.0f", min);
    } else {
        snprintf(out, n, unit_of < 99.95 ? "%.1f" : "%.0f", hours);
    }
}

void cf_text_duration(double hours, char *out, size_t n)
{
    char number[32];
    duration_number(hours, hours, number, sizeof number);
    snprintf(out, n, "%s %s", number, hours < 1 ? "min" : "h");
}

void cf_text_duration_range(double hours, double lo_hours, double hi_hours, char *out, size_t n)
{
    char point[32], lo[32], hi[32];
    duration_number(hours, hours, point, sizeof point);
    duration_number(lo_hours, hours, lo, sizeof lo);
    duration_number(hi_hours, hours, hi, sizeof hi);
    snprintf(out, n, "%s %s (%s–%s)", point, hours < 1 ? "min" : "h", lo, hi);
}
