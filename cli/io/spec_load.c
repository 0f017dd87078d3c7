#include "io/spec_load.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "io/db_open.h"
#include "exit_codes.h"
#include "log.h"
#include "cloudfit/common/number.h"

/* Index of `value` among the spec's allowed values at `key_path`; a usage
 * error naming `option` otherwise. */
static int enum_option(const char *value, const char *key_path, const char *option, int *out)
{
    const char *const *names = cf_spec_enum_values(key_path);
    char allowed[160] = "";
    size_t used = 0;
    for (int i = 0; names && names[i]; i++) {
        if (strcmp(value, names[i]) == 0) {
            *out = i;
            return 0;
        }
        used += (size_t)snprintf(allowed + used, used < sizeof allowed ? sizeof allowed - used : 0, "%s%s",
                                 i ? ", " : "", names[i]);
    }
    cf_log_error("option '--%s' does not accept '%s'", option, value);
    cf_log_hint("use one of: %s", allowed);
    return CF_EXIT_USAGE;
}

static int build_overrides(const cf_cli_options *o, cf_spec_overrides *ov)
{
    cf_spec_overrides_init(ov);
    int rc = 0;
    if (o->objective && (rc = enum_option(o->objective, "search.objective", "objective", &ov->objective)))
        return rc;
    if (o->spot && (rc = enum_option(o->spot, "search.spot", "spot", &ov->spot)))
        return rc;
    for (int i = 0; i < o->clouds.n; i++) {
        int ignored;
        if ((rc = enum_option(o->clouds.items[i], "search.clouds", "cloud", &ignored)))
            return rc;
    }
    /* an empty --gpu or --region and --confidence's range were checked as
     * the options were read (cf_cli_option_check_value), from the command
     * line or the configuration file */
    ov->deadline_hours = o->deadline_hours;
    ov->budget_usd = o->budget_usd;
    if (o->confidence)
        ov->confidence = cf_cli_parse_fraction(o->confidence);
    ov->max_nodes = o->max_nodes;
    ov->max_gpus = o->max_gpus;
    ov->clouds = o->clouds.items;
    ov->n_clouds = o->clouds.n;
    ov->regions = o->regions.items;
    ov->n_regions = o->regions.n;
    ov->gpus = o->gpus.items;
    ov->n_gpus = o->gpus.n;
    return 0;
}

int cf_cli_spec_open(const cf_cli_options *o, const char *path, int with_overrides, cf_spec **out)
{
    *out = NULL;
    cf_spec_overrides ov;
    int rc = with_overrides ? build_overrides(o, &ov) : (cf_spec_overrides_init(&ov), 0);
    if (rc)
        return rc;
    cf_spec *effective = calloc(1, sizeof *effective);
    if (!effective) {
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        return cf_report_error();
    }
    if (cf_spec_load_effective(path, &ov, effective) != CF_OK) {
        free(effective);
        return cf_report_error();
    }
    /* no output may replace a file the spec names: checked before anything runs */
    if ((rc = cf_cli_check_more_outputs(o, NULL, 0, effective, NULL, 0, NULL)) != 0) {
        cf_cli_spec_close(effective);
        return rc;
    }
    *out = effective;
    return 0;
}

void cf_cli_spec_close(cf_spec *spec)
{
    if (!spec)
        return;
    cf_spec_free(spec);
    free(spec);
}

double cf_cli_parse_fraction(const char *text)
{
    double v = -1;
    if (cf_number_fraction(text, 1, &v) != CF_NUMBER_OK)
        return -1;
    return v < 1 ? v : -1;
}
