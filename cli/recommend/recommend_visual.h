/* recommend's pictures (issue 16): --report FILE.html, --plot FILE.svg and
 * the text chart of the front on a terminal (--no-chart turns it off). */
#ifndef CLOUDFIT_CLI_RECOMMEND_VISUAL_H
#define CLOUDFIT_CLI_RECOMMEND_VISUAL_H
#include "cloudfit/common/buf.h"
#include "cloudfit/common/fileio.h"
#include "options.h"
#include "cloudfit/render.h"

/* Appends the text chart of the front to `text` when the table goes to a
 * terminal (standard output, no --out-file, no --no-chart). 0 or the exit code. */
int cf_recommend_chart(const cf_cli_options *o, const cf_report *r, cf_buf *text, int color);
/* Stages --report and --plot in `side` (renamed into place after the
 * history commit). 0 or the exit code. */
int cf_recommend_visual_files(const cf_cli_options *o, const cf_report *r, cf_staged_set *side);

#endif
