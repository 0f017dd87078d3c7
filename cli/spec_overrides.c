/* The spec as the commands take it from the command line: loading it,
 * overriding its search section from options (recommend, search), and the
 * fraction-valued options ("3%"). Shared so the commands agree. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/exit_codes.h"
#include "cloudfit/log.h"
#include "commands.h"
#include "spec_overrides.h"

static int parse_enum(const char *value, const char *const *names, int n, const char *option, int *out)
{
    for (int i = 0; i < n; i++)
        if (strcmp(value, names[i]) == 0) {
            *out = i;
            return 0;
        }
    cf_log_error("option '--%s' does not accept '%s'", option, value);
    cf_log_hint("use one of: %s, %s%s%s", names[0], names[1], n > 2 ? ", " : "", n > 2 ? names[2] : "");
    return CF_EXIT_USAGE;
}

int cf_cli_apply_search_overrides(const cf_cli_options *o, cf_spec *spec)
{
    static const char *const objectives[] = {"cost", "time", "balanced"};
    static const char *const spots[] = {"never", "allow", "only"};
    int v, rc;
    if (o->objective) {
        if ((rc = parse_enum(o->objective, objectives, 3, "objective", &v)))
            return rc;
        spec->objective = (cf_objective)v;
    }
    if (o->spot) {
        if ((rc = parse_enum(o->spot, spots, 3, "spot", &v)))
            return rc;
        spec->spot = (cf_spot_policy)v;
    }
    if (o->deadline_hours > 0)
        spec->deadline_hours = o->deadline_hours;
    if (o->budget_usd > 0)
        spec->budget_usd = o->budget_usd;
    if (o->max_nodes > 0)
        spec->max_nodes = o->max_nodes;
    if (o->max_gpus > 0)
        spec->max_gpus = o->max_gpus;
    if (o->clouds.n) {
        spec->n_clouds = 0;
        for (int i = 0; i < o->clouds.n && i < CF_SPEC_MAX_LIST; i++)
            snprintf(spec->clouds[spec->n_clouds++], sizeof spec->clouds[0], "%s", o->clouds.items[i]);
    }
    if (o->regions.n) {
        spec->n_regions = 0;
        for (int i = 0; i < o->regions.n && i < CF_SPEC_MAX_LIST; i++)
            snprintf(spec->regions[spec->n_regions++], sizeof spec->regions[0], "%s", o->regions.items[i]);
    }
    if (o->gpus.n) {
        spec->n_search_gpus = 0;
        for (int i = 0; i < o->gpus.n && i < CF_SPEC_MAX_GPUS; i++)
            snprintf(spec->search_gpus[spec->n_search_gpus++], sizeof spec->search_gpus[0], "%s", o->gpus.items[i]);
    }
    return 0;
}

int cf_cli_load_spec(const char *path, cf_spec **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out) {
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        return cf_report_error();
    }
    if (cf_spec_load_file(path, *out) != CF_OK) {
        int rc = cf_report_error();
        free(*out);
        *out = NULL;
        return rc;
    }
    return 0;
}

double cf_cli_parse_fraction(const char *text)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || !isfinite(v))
        return -1;
    if (*end == '%' && end[1] == '\0')
        v /= 100;
    else if (*end)
        return -1;
    return v >= 0 && v < 1 ? v : -1;
}
