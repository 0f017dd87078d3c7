/* RFC 4180 CSV output: fields with a comma, quote, CR or LF are quoted
 * and quotes doubled. A text field starting with = + - @ TAB or CR gets a
 * leading apostrophe (inside quotes) so spreadsheets do not run it as a
 * formula (branch names and snapshot rows come from outside). */
#ifndef CLOUDFIT_COMMON_CSVWRITE_H
#define CLOUDFIT_COMMON_CSVWRITE_H
#include "cloudfit/common/buf.h"

/* One text field, quoted and guarded as needed, with no separator after it. */
void cf_csv_put_field(cf_buf *out, const char *text);
/* The same without the spreadsheet guard: for files cloudfit or another
 * program reads back as data (measurement CSVs, catalog snapshots), where
 * an apostrophe would change a value that starts with '-'. */
void cf_csv_put_data_field(cf_buf *out, const char *text);
/* A field then "," or, when `last`, the record's end "\r\n". */
void cf_csv_put_text(cf_buf *out, const char *text, int last);
void cf_csv_put_number(cf_buf *out, double v, int last);
void cf_csv_put_int(cf_buf *out, long long v, int last);

#endif
