/* RFC 4180 CSV output: fields with a comma, quote, CR or LF are quoted
 * and quotes doubled. A field starting with = + - @ gets a leading
 * apostrophe so spreadsheets do not run it as a formula (branch names
 * come from outside). */
#ifndef CLOUDFIT_CLI_RENDER_CSV_H
#define CLOUDFIT_CLI_RENDER_CSV_H
#include "cloudfit/common/buf.h"

void cf_csv_put_text(cf_buf *out, const char *text, int last);
void cf_csv_put_number(cf_buf *out, double v, int last);
void cf_csv_put_int(cf_buf *out, long long v, int last);

#endif
