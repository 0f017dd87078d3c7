#include "recommend/recommend_visual.h"

#include <string.h>
#include <unistd.h>

#include "cloudfit/common/fileio.h"
#include "commands.h"
#include "options.h"
#include "term/output.h"
#include "cloudfit/render/plots.h"

int cf_recommend_chart(const cf_cli_options *o, const cf_report *r, cf_buf *text, int color)
{
    if (o->no_chart || o->out_file || !cf_cli_format_is(o, "table") || !isatty(STDOUT_FILENO))
        return 0;
    cf_report_plots plots;
    if (cf_report_plots_build(r, &plots) != CF_OK)
        return cf_report_error();
    int columns = cf_cli_output_width(o);
    int width = (columns > 0 ? columns : cf_cli_terminal_columns(STDOUT_FILENO)) - 12;
    cf_report_front_chart(&plots, width > 72 ? 72 : width, 12, color, text);
    cf_report_plots_free(&plots);
    return 0;
}

static int write_rendered(const char *option, const char *path, const cf_buf *text, cf_staged_set *side)
{
    if (cf_buf_failed(text)) {
        cf_error_set(CF_ERR_NOMEM, "out of memory rendering %s", path);
        return cf_report_error();
    }
    if (cf_staged_set_add(side, path, text->data, text->len) != CF_OK)
        return cf_cli_side_file_error(option, path);
    return 0;
}

int cf_recommend_visual_files(const cf_cli_options *o, const cf_report *r, cf_staged_set *side)
{
    if (!o->report_path && !o->plot_path)
        return 0;
    cf_report_plots plots;
    if (cf_report_plots_build(r, &plots) != CF_OK)
        return cf_report_error();
    int rc = 0;
    if (o->plot_path) {
        cf_buf svg = CF_BUF_INIT;
        cf_buf_puts(&svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        cf_render_front_svg(&plots, &svg);
        rc = write_rendered("plot", o->plot_path, &svg, side);
        cf_buf_free(&svg);
    }
    if (rc == 0 && o->report_path) {
        cf_buf html = CF_BUF_INIT;
        cf_report_html(&plots, &html);
        rc = write_rendered("report", o->report_path, &html, side);
        cf_buf_free(&html);
    }
    cf_report_plots_free(&plots);
    return rc;
}
