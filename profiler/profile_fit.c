/* The linear compute fit of a profile and the key it is cached under. */
#include "cloudfit/profiler.h"

#include <cjson/cJSON.h>
#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/hash.h"

cf_status cf_profile_fit(cf_profile *p)
{
    int n = p->n_points;
    p->has_fit = 0;
    if (n < 2)
        return cf_error_set(CF_ERR_INVALID, "profile: a fit needs at least 2 batch sizes, got %d", n);
    double m[CF_PROFILE_MAX_POINTS], t[CF_PROFILE_MAX_POINTS];
    for (int i = 0; i < n; i++) {
        m[i] = p->points[i].local_batch;
        t[i] = p->points[i].step_time_s;
        if (i > 0 && m[i] <= m[i - 1])
            return cf_error_set(CF_ERR_INVALID, "profile: batch sizes must be distinct and increasing");
    }
    double c0, c1, cov00, cov01, cov11, ss_res;
    if (gsl_fit_linear(m, 1, t, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &ss_res) != 0)
        return cf_error_set(CF_ERR_INTERNAL, "profile: the linear fit failed");
    double mean = 0, ss_tot = 0, rel = 0;
    for (int i = 0; i < n; i++)
        mean += t[i] / n;
    for (int i = 0; i < n; i++) {
        ss_tot += (t[i] - mean) * (t[i] - mean);
        p->points[i].residual_s = t[i] - (c0 + c1 * m[i]);
        rel += pow(p->points[i].residual_s / t[i], 2);
    }
    p->alpha_s = c0;
    p->beta_s = c1;
    p->r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : NAN;
    p->rel_rmse = sqrt(rel / n);
    p->has_fit = 1;
    return CF_OK;
}

static cJSON *copy_member(const cJSON *from, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(from, key);
    return item ? cJSON_Duplicate(item, 1) : NULL;
}

cf_status cf_profile_spec_key(const cf_spec *spec, char out[65])
{
    if (!spec->canonical_json)
        return cf_error_set(CF_ERR_INTERNAL, "profile: the spec has no canonical JSON to key the profile");
    cJSON *doc = cJSON_Parse(spec->canonical_json);
    cJSON *key = cJSON_CreateObject();
    if (!doc || !key) {
        cJSON_Delete(doc);
        cJSON_Delete(key);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    cJSON *item;
    if ((item = copy_member(doc, "model")))
        cJSON_AddItemToObject(key, "model", item);
    if ((item = copy_member(doc, "data")))
        cJSON_AddItemToObject(key, "data", item);
    const cJSON *training = cJSON_GetObjectItemCaseSensitive(doc, "training");
    cJSON *t = cJSON_AddObjectToObject(key, "training");
    static const char *const training_keys[] = {"batch", "lr", "optimizer"};
    for (size_t i = 0; training && t && i < sizeof training_keys / sizeof *training_keys; i++)
        if ((item = copy_member(training, training_keys[i])))
            cJSON_AddItemToObject(t, training_keys[i], item);
    const cJSON *profile = cJSON_GetObjectItemCaseSensitive(doc, "profile");
    if (profile && (item = copy_member(profile, "command")))
        cJSON_AddItemToObject(key, "command", item);
    char *text = cJSON_PrintUnformatted(key);
    cJSON_Delete(doc);
    cJSON_Delete(key);
    if (!text)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    cf_status st = cf_sha256_hex(text, strlen(text), out);
    free(text);
    return st;
}
