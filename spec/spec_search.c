/* model.json section "search": objective, constraints and the search space
 * (docs/spec.md, docs/search.md). */
#include <stdio.h>
#include <string.h>

#include "spec_internal.h"

#define NAME_LIST_WIDTH 32   /* bytes per entry of clouds/regions/search_gpus */


/* A list of distinct strings: entries of `choices` (NULL-terminated) when
 * given, else free strings of 1..width-1 bytes. */
typedef struct {
    const char *key;
    const char *what;              /* "an array of 1 to 16 region names" */
    const char *const *choices;    /* NULL: free strings */
    int max_items;
    size_t width;                  /* bytes per stored entry, NUL included */
} string_list_rule;

/* Fails when the element i equals an earlier one. */
static cf_status check_distinct(const spec_ctx *c, const cJSON *element, const char *stored, size_t width,
                                int i)
{
    for (int k = 0; k < i; k++) {
        if (strcmp(stored + (size_t)k * width, element->valuestring) != 0)
            continue;
        cf_status st = spec_fail_value(c, "each entry once", element);
        cf_error_hint("remove the repeated entry");
        return st;
    }
    return CF_OK;
}

static cf_status read_list_element(spec_ctx *c, const cJSON *element,
                                   const string_list_rule *rule, char *stored, int i)
{
    char *slot = stored + (size_t)i * rule->width;
    cf_status st;
    if (rule->choices) {
        int index = 0;
        st = spec_read_enum(c, element, rule->choices, &index);
        if (st == CF_OK)
            snprintf(slot, rule->width, "%s", rule->choices[index]);
    } else {
        st = spec_read_string(c, element, rule->width - 1, slot);
    }
    if (st == CF_OK)
        st = check_distinct(c, element, stored, rule->width, i);
    return st;
}

/* Reads search[rule->key] into `stored` (rule->max_items × rule->width bytes). */
static cf_status read_string_list(spec_ctx *c, const cJSON *search, const string_list_rule *rule, char *stored,
                                  int *out_count)
{
    const cJSON *list = spec_member(search, rule->key);
    if (!list)
        return CF_OK;
    size_t mark = spec_push_key(c, rule->key);
    int n = 0;
    cf_status st = spec_read_array(c, list, 1, rule->max_items, rule->what, &n);
    int i = 0;
    for (const cJSON *element = st == CF_OK ? list->child : NULL; element; element = element->next, i++) {
        size_t element_mark = spec_push_index(c, i);
        st = read_list_element(c, element, rule, stored, i);
        spec_pop(c, element_mark);
        if (st != CF_OK)
            break;
    }
    spec_pop(c, mark);
    if (st == CF_OK)
        *out_count = n;
    return st;
}

static cf_status read_lists(spec_ctx *c, const cJSON *search, cf_spec *out)
{
    const string_list_rule clouds = {"clouds", "an array of distinct cloud names", cf_spec_enum_values("search.clouds"),
                                     CF_SPEC_MAX_LIST, sizeof out->search.clouds[0]};
    const string_list_rule regions = {"regions", "an array of 1 to 16 distinct region names", NULL,
                                      CF_SPEC_MAX_LIST, sizeof out->search.regions[0]};
    const string_list_rule gpus = {"gpus", "an array of 1 to 32 distinct GPU model names", NULL, CF_SPEC_MAX_GPUS,
                                   sizeof out->search.gpus[0]};
    cf_status st = read_string_list(c, search, &clouds, &out->search.clouds[0][0], &out->search.n_clouds);
    if (st == CF_OK)
        st = read_string_list(c, search, &regions, &out->search.regions[0][0], &out->search.n_regions);
    if (st == CF_OK)
        st = read_string_list(c, search, &gpus, &out->search.gpus[0][0], &out->search.n_gpus);
    return st;
}

/* max_global_batch: a positive integer, at least training.batch. */
static cf_status read_max_global_batch(spec_ctx *c, const cJSON *search, cf_spec *out)
{
    const cJSON *item = spec_member(search, "max_global_batch");
    if (!item)
        return CF_OK;
    size_t mark = spec_push_key(c, "max_global_batch");
    int limit = 0;
    cf_status st = spec_read_int(c, item, &SPEC_RULE_MAX_GLOBAL_BATCH, &limit);
    if (st == CF_OK && limit < out->job.batch) {
        char what[96];
        snprintf(what, sizeof what, "an integer >= training.batch (%d)", out->job.batch);
        st = spec_fail_value(c, what, item);
        cf_error_hint("the search starts from the base batch: raise max_global_batch to at least %d", out->job.batch);
    }
    spec_pop(c, mark);
    if (st == CF_OK)
        out->search.max_global_batch = limit;
    return st;
}

static cf_status read_enums(spec_ctx *c, const cJSON *search, cf_spec *out)
{
    int objective = (int)out->search.objective, spot = (int)out->search.spot;
    cf_status st = spec_field_enum(c, search, "objective", cf_spec_enum_values("search.objective"), &objective);
    if (st == CF_OK)
        st = spec_field_enum(c, search, "spot", cf_spec_enum_values("search.spot"), &spot);
    out->search.objective = (cf_objective)objective;
    out->search.spot = (cf_spot_policy)spot;
    out->search.spot_given = cJSON_GetObjectItemCaseSensitive(search, "spot") != NULL;
    return st;
}

static cf_status read_search_object(spec_ctx *c, const cJSON *search, cf_spec *out)
{
    cf_status st = spec_check_keys(c, search, cf_spec_allowed_keys("search"));
    if (st == CF_OK)
        st = read_enums(c, search, out);
    if (st == CF_OK)
        st = spec_field_number(c, search, "deadline_hours", &SPEC_RULE_DEADLINE_HOURS, NULL, &out->search.deadline_hours);
    if (st == CF_OK)
        st = spec_field_number(c, search, "budget_usd", &SPEC_RULE_BUDGET_USD, NULL, &out->search.budget_usd);
    if (st == CF_OK)
        st = read_lists(c, search, out);
    if (st == CF_OK)
        st = spec_field_int(c, search, "max_gpus", &SPEC_RULE_MAX_GPUS, NULL, &out->search.max_gpus);
    if (st == CF_OK)
        st = spec_field_int(c, search, "max_nodes", &SPEC_RULE_MAX_NODES, NULL, &out->search.max_nodes);
    if (st == CF_OK)
        st = spec_field_int(c, search, "max_accumulation", &SPEC_RULE_MAX_ACCUMULATION, NULL, &out->search.max_accumulation);
    if (st == CF_OK)
        st = read_max_global_batch(c, search, out);
    if (st == CF_OK)
        st = spec_field_number(c, search, "startup_minutes", &SPEC_RULE_MINUTES, NULL, &out->search.startup_minutes);
    if (st == CF_OK)
        st = spec_field_number(c, search, "checkpoint_minutes", &SPEC_RULE_MINUTES, NULL,
                               &out->search.checkpoint_minutes);
    if (st == CF_OK)
        st = spec_field_number(c, search, "confidence", &SPEC_RULE_CONFIDENCE, NULL, &out->search.confidence);
    if (st == CF_OK)
        st = spec_field_number(c, search, "storage_mb_per_s", &SPEC_RULE_STORAGE_MB_PER_S, NULL, &out->search.storage_mb_per_s);
    return st;
}

cf_status spec_read_search(spec_ctx *c, const cJSON *root, cf_spec *out)
{
    return spec_field_object(c, root, "search", NULL, read_search_object, out);
}
