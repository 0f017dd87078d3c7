#include "cloudfit/common/env_settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/number.h"
#include "cloudfit/common/parallel.h"

typedef struct {
    const char *name;
    int whole;                 /* a whole number */
    double lo, hi;
    const char *unit;
} setting;

static const setting settings[] = {
    {"CLOUDFIT_THREADS", 1, 1, CF_PARALLEL_MAX_THREADS, "threads"},
    {"CLOUDFIT_MAX_INPUT_MIB", 1, 1, 4096, "MiB"},
    {"CLOUDFIT_STOP_GRACE_S", 0, 0, 600, "seconds"},
    {"CLOUDFIT_PROGRESS_INTERVAL_S", 0, 0, 86400, "seconds"},
    {"CLOUDFIT_DB_LOCK_TIMEOUT_S", 0, 0, 3600, "seconds"},
    {"CLOUDFIT_CPU_MEMORY_LIMIT_MIB", 0, 1, 1048576, "MiB"}, /* the CPU engine's device memory, up to 1 TiB */
};

static int parse(const setting *s, const char *text, double *out)
{
    if (s->whole) {
        long v = 0;
        if (cf_number_long(text, (long)s->lo, (long)s->hi, &v) != CF_NUMBER_OK)
            return 0;
        *out = (double)v;
        return 1;
    }
    return cf_number_double(text, s->lo, s->hi, out) == CF_NUMBER_OK;
}

int cf_env_setting(const char *name, double *out)
{
    for (size_t i = 0; i < sizeof settings / sizeof *settings; i++) {
        if (strcmp(settings[i].name, name) != 0)
            continue;
        const char *env = getenv(name);
        return env && *env && parse(&settings[i], env, out);
    }
    return 0;
}

int cf_env_setting_problem(size_t i, char *msg, size_t n)
{
    if (i >= sizeof settings / sizeof *settings)
        return -1;
    const setting *s = &settings[i];
    const char *env = getenv(s->name);
    double v;
    if (!env || !*env || parse(s, env, &v))
        return 0;
    snprintf(msg, n, "%s: expected %s from %.15g to %.15g %s, got '%.40s'; the default is used", s->name,
             s->whole ? "a whole number" : "a number", s->lo, s->hi, s->unit, env);
    return 1;
}
