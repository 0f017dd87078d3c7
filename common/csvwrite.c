#include "cloudfit/common/csvwrite.h"

#include <math.h>
#include <string.h>

static void end_field(cf_buf *out, int last) { cf_buf_puts(out, last ? "\r\n" : ","); }

static void put_field(cf_buf *out, const char *text, int guard)
{
    int formula = guard && text[0] && strchr("=+-@\t\r", text[0]) != NULL;
    if (strpbrk(text, ",\"\r\n") || formula) {
        cf_buf_puts(out, formula ? "\"'" : "\"");
        for (const char *p = text; *p; p++)
            cf_buf_puts(out, *p == '"' ? "\"\"" : (char[2]){*p, '\0'});
        cf_buf_puts(out, "\"");
    } else {
        cf_buf_puts(out, text);
    }
}

void cf_csv_put_field(cf_buf *out, const char *text) { put_field(out, text, 1); }

void cf_csv_put_data_field(cf_buf *out, const char *text) { put_field(out, text, 0); }

void cf_csv_put_text(cf_buf *out, const char *text, int last)
{
    cf_csv_put_field(out, text);
    end_field(out, last);
}

void cf_csv_put_number(cf_buf *out, double v, int last)
{
    if (isfinite(v))
        cf_buf_printf(out, "%.15g", v);
    end_field(out, last);
}

void cf_csv_put_int(cf_buf *out, long long v, int last)
{
    cf_buf_printf(out, "%lld", v);
    end_field(out, last);
}
