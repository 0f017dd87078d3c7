#include "term/output.h"

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

int cf_cli_safe_result(const cf_cli_options *o, const char *text, size_t len, const char *const *keep, cf_buf *out)
{
    cf_escape_mode mode = cf_cli_format_is(o, "json") ? CF_ESCAPE_JSON
                          : cf_cli_format_is(o, "csv") ? CF_ESCAPE_CSV : CF_ESCAPE_TEXT;
    cf_escape_output(text, len, mode, keep, out);
    if (!cf_buf_failed(out))
        return 0;
    cf_error_set(CF_ERR_NOMEM, "out of memory rendering the result");
    return cf_report_error();
}

int cf_cli_write_result(const cf_cli_options *o, const char *text, size_t len)
{
    cf_buf safe = CF_BUF_INIT;
    int rc = cf_cli_safe_result(o, text, len, NULL, &safe);
    const char *data = safe.data ? safe.data : "";
    if (rc == 0 && o->out_file) {
        rc = cf_write_file_atomic(o->out_file, data, safe.len) == CF_OK ? 0 : cf_report_error();
    } else if (rc == 0 && (fwrite(data, 1, safe.len, stdout) != safe.len || fflush(stdout) != 0)) {
        cf_error_set(CF_ERR_IO, "cannot write the result to standard output");
        rc = cf_report_error();
    }
    cf_buf_free(&safe);
    return rc;
}

int cf_cli_emit(const cf_cli_options *o, const cJSON *doc, const cf_buf *table)
{
    if (cf_cli_format_is(o, "json")) {
        char *text = doc ? cJSON_Print(doc) : NULL;
        if (!text) {
            cf_error_set(CF_ERR_NOMEM, "out of memory rendering the result");
            return cf_report_error();
        }
        size_t len = strlen(text);
        char *with_newline = realloc(text, len + 2);
        if (!with_newline) {
            free(text);
            cf_error_set(CF_ERR_NOMEM, "out of memory rendering the result");
            return cf_report_error();
        }
        memcpy(with_newline + len, "\n", 2);
        int rc = cf_cli_write_result(o, with_newline, len + 1);
        free(with_newline);
        return rc;
    }
    if (!table || cf_buf_failed(table)) {
        cf_error_set(CF_ERR_NOMEM, "out of memory rendering the result");
        return cf_report_error();
    }
    return cf_cli_write_result(o, table->data ? table->data : "", table->len);
}
