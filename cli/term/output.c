#include "term/output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/common/escape.h"
#include "cloudfit/common/fileio.h"
#include "cloudfit/common/text_wrap.h"
#include "commands.h"

int cf_cli_output_width(const cf_cli_options *o)
{
    if (o->wide)
        return 0;
    if (o->width > 0)
        return o->width;
    if (o->out_file || !isatty(STDOUT_FILENO))
        return 0;
    return cf_cli_terminal_columns(STDOUT_FILENO);
}

void cf_cli_fit_text(int width, cf_buf *text)
{
    if (width <= 0 || cf_buf_failed(text))
        return;
    cf_buf fitted = CF_BUF_INIT;
    cf_text_wrap(cf_buf_cstr(text), width, &fitted);
    if (cf_buf_failed(&fitted)) {
        cf_buf_free(&fitted);
        text->failed = 1;
        return;
    }
    cf_buf_free(text);
    *text = fitted;
}

int cf_cli_format_is(const cf_cli_options *o, const char *format)
{
    return o->format ? strcmp(o->format, format) == 0 : strcmp(format, "table") == 0;
}

static int out_of_memory(void)
{
    cf_error_set(CF_ERR_NOMEM, "out of memory rendering the result");
    return cf_report_error();
}

int cf_cli_result_stage_as(cf_escape_mode mode, const char *out_file, const char *text, size_t len,
                           const char *const *keep, cf_cli_result *r)
{
    memset(r, 0, sizeof *r);
    cf_escape_output(text ? text : "", text ? len : 0, mode, keep, &r->text);
    if (cf_buf_failed(&r->text)) {
        cf_buf_free(&r->text);
        return out_of_memory();
    }
    if (!out_file || strcmp(out_file, "-") == 0) /* -o - is standard output, as for most tools */
        return 0;
    r->to_file = 1;
    cf_status st = cf_file_stage(out_file, r->text.data ? r->text.data : "", r->text.len, &r->file);
    cf_buf_free(&r->text);
    return st == CF_OK ? 0 : cf_report_error();
}

int cf_cli_result_stage(const cf_cli_options *o, const char *text, size_t len, const char *const *keep,
                        cf_cli_result *r)
{
    cf_escape_mode mode = !o ? CF_ESCAPE_TEXT
                          : cf_cli_format_is(o, "json") ? CF_ESCAPE_JSON
                          : cf_cli_format_is(o, "csv") ? CF_ESCAPE_CSV : CF_ESCAPE_TEXT;
    return cf_cli_result_stage_as(mode, o ? o->out_file : NULL, text, len, keep, r);
}

int cf_cli_deliver_held(const cf_cli_options *o, cf_db *db, int rc, cf_buf *text)
{
    cf_cli_result result;
    memset(&result, 0, sizeof result);
    if (rc == 0)
        rc = cf_cli_result_stage_buf(o, text, &result);
    if (rc == 0)
        rc = cf_cli_result_deliver(&result);
    rc = cf_cli_result_release(db, rc);
    cf_cli_result_discard(&result);
    cf_buf_free(text);
    return rc;
}

int cf_cli_result_stage_buf(const cf_cli_options *o, const cf_buf *text, cf_cli_result *r)
{
    if (cf_buf_failed(text)) {
        memset(r, 0, sizeof *r);
        return out_of_memory();
    }
    return cf_cli_result_stage(o, text->data ? text->data : "", text->len, NULL, r);
}

/* Bytes of the result to standard output; flushed with `flush`. */
static cf_status stdout_write(const char *data, size_t len, int flush)
{
    errno = 0;
    if (len && fwrite(data, 1, len, stdout) != len) {
        cf_error_set(CF_ERR_WRITE, "cannot write the result to standard output%s%s", errno ? ": " : "",
                     errno ? strerror(errno) : "");
        clearerr(stdout);
        return CF_ERR_WRITE;
    }
    if (flush && fflush(stdout) != 0) {
        cf_error_set(CF_ERR_WRITE, "cannot write the result to standard output: %s", strerror(errno));
        clearerr(stdout);
        return CF_ERR_WRITE;
    }
    return CF_OK;
}

int cf_cli_result_deliver(cf_cli_result *r)
{
    if (r->to_file || r->delivered)
        return 0;
    r->delivered = 1;
    return stdout_write(r->text.data, r->text.len, 1) == CF_OK ? 0 : cf_report_error();
}

void cf_cli_stream_init(cf_cli_stream *s, const cf_cli_options *o, int width)
{
    memset(s, 0, sizeof *s);
    s->out_file = o->out_file && strcmp(o->out_file, "-") != 0 ? o->out_file : NULL;
    s->mode = cf_cli_format_is(o, "json") ? CF_ESCAPE_JSON : cf_cli_format_is(o, "csv") ? CF_ESCAPE_CSV : CF_ESCAPE_TEXT;
    s->width = width;
}

/* --out-file: staged when the first bytes come (or at the end, empty), so
 * an error found before leaves nothing there, as for a result written at once. */
static cf_status stream_stage(cf_cli_stream *s)
{
    if (!s->out_file || s->staged)
        return CF_OK;
    cf_status st = cf_file_stage_open(s->out_file, 0600, &s->file);
    s->staged = st == CF_OK;
    return st;
}

cf_status cf_cli_stream_write(void *ctx, const char *text, size_t len)
{
    cf_cli_stream *s = ctx;
    cf_buf fitted = CF_BUF_INIT, *piece = NULL;
    if (s->width > 0) { /* whole lines come: each is wrapped alone, as in cf_cli_fit_text */
        cf_buf line = CF_BUF_INIT;
        cf_buf_append(&line, text, len);
        cf_text_wrap(cf_buf_cstr(&line), s->width, &fitted);
        cf_buf_free(&line);
        piece = &fitted;
    }
    s->text.len = 0;
    cf_escape_output(piece ? piece->data : text, piece ? piece->len : len, s->mode, NULL, &s->text);
    int failed = cf_buf_failed(&s->text) || (piece && cf_buf_failed(piece));
    cf_buf_free(&fitted);
    if (failed)
        return cf_error_set(CF_ERR_NOMEM, "out of memory rendering the result");
    cf_status st = stream_stage(s);
    if (st == CF_OK)
        st = s->out_file ? cf_file_stage_write(&s->file, s->text.data, s->text.len)
                         : stdout_write(s->text.data, s->text.len, 0);
    if (st != CF_OK && s->out_file)
        s->staged = 0; /* the failed write discarded it */
    return st;
}

int cf_cli_stream_finish(cf_cli_stream *s, int rc)
{
    cf_status st = CF_OK;
    if (rc == 0)
        st = stream_stage(s);
    if (rc == 0 && st == CF_OK)
        st = s->out_file ? cf_file_stage_close(&s->file) : stdout_write(NULL, 0, 1);
    if (rc == 0 && st == CF_OK && s->out_file)
        st = cf_file_commit(&s->file);
    if (s->staged)
        cf_file_discard(&s->file); /* committed: nothing left to remove */
    cf_buf_free(&s->text);
    memset(s, 0, sizeof *s);
    return rc == 0 && st != CF_OK ? cf_report_error() : rc;
}

int cf_cli_result_release(cf_db *db, int rc)
{
    if (cf_db_release(db, rc == 0) != CF_OK)
        return cf_report_error();
    return rc;
}

int cf_cli_result_publish(cf_cli_result *r)
{
    int rc = cf_cli_result_deliver(r);
    if (rc == 0 && r->to_file && cf_file_commit(&r->file) != CF_OK)
        rc = cf_report_error();
    return rc;
}

void cf_cli_result_discard(cf_cli_result *r)
{
    if (r->to_file)
        cf_file_discard(&r->file);
    cf_buf_free(&r->text);
}

int cf_cli_write_buf(const cf_cli_options *o, const cf_buf *text)
{
    cf_cli_result r;
    int rc = cf_cli_result_stage_buf(o, text, &r);
    if (rc == 0)
        rc = cf_cli_result_publish(&r);
    cf_cli_result_discard(&r);
    return rc;
}

cf_status cf_cli_json_text(const cJSON *doc, cf_buf *out)
{
    char *text = doc ? cJSON_Print(doc) : NULL;
    if (!text)
        return cf_error_set(CF_ERR_NOMEM, "out of memory rendering the result");
    cf_buf_puts(out, text);
    cf_buf_puts(out, "\n");
    free(text);
    return cf_buf_failed(out) ? cf_error_set(CF_ERR_NOMEM, "out of memory rendering the result") : CF_OK;
}

int cf_cli_emit(const cf_cli_options *o, const cJSON *doc, const cf_buf *table)
{
    if (cf_cli_format_is(o, "json")) {
        cf_buf text = CF_BUF_INIT;
        int rc = cf_cli_json_text(doc, &text) == CF_OK ? cf_cli_write_buf(o, &text) : cf_report_error();
        cf_buf_free(&text);
        return rc;
    }
    if (!table)
        return out_of_memory();
    return cf_cli_write_buf(o, table);
}
