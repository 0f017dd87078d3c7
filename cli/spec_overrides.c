/* Command-line overrides of the spec's search section, shared by the
 * commands that search (recommend, search). */
#include <stdio.h>
#include <string.h>

#include "cloudfit/exit_codes.h"
#include "cloudfit/log.h"
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
