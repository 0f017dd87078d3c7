#include "recommend/gates.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/fileio.h"
#include "exit_codes.h"
#include "log.h"

int cf_gate_parse_increase(const char *text, cf_gate_limits *limits)
{
    if (cf_gate_limits_set_increase(limits, text) == CF_OK)
        return 0;
    cf_log_error("option '--max-cost-increase' %s", cf_error_message());
    cf_log_hint("see 'cloudfit recommend --help'");
    cf_error_clear();
    return CF_EXIT_USAGE;
}

void cf_baseline_from_row(const cf_history_row *row, cf_baseline *out)
{
    memset(out, 0, sizeof *out);
    out->have = 1;
    out->id = row->id;
    if (row->ci.branch[0])
        snprintf(out->source, sizeof out->source, "recommendation %lld (%.64s, %s)", row->id, row->ci.branch,
                 row->created_at);
    else
        snprintf(out->source, sizeof out->source, "recommendation %lld (%s)", row->id, row->created_at);
    snprintf(out->created_at, sizeof out->created_at, "%s", row->created_at);
    snprintf(out->catalog, sizeof out->catalog, "%s %s", row->catalog_name, row->catalog_date);
    out->chosen = row->chosen;
    out->hours_p10 = row->hours_p10;
    out->hours_p90 = row->hours_p90;
    out->total_usd_p10 = row->total_usd_p10;
    out->total_usd_p90 = row->total_usd_p90;
}

cf_status cf_baseline_from_file(const char *path, cf_baseline *out)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    size_t len = 0;
    cf_status st = cf_read_file(path, &text, &len);
    if (st != CF_OK)
        return st;
    st = cf_baseline_from_text(text, len, path, out);
    free(text);
    return st;
}
