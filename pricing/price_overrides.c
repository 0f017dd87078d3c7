/* Price overrides file: parse strictly, apply to a catalog (see
 * cloudfit/price_overrides.h). */
#include "cloudfit/common/escape.h"
#include "cloudfit/pricing/overrides.h"
#include "cloudfit/common/json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/common/fileio.h"
#include "cloudfit/common/hash.h"
#include "cloudfit/pricing.h"

static cf_status bad(const char *name, const char *path, const char *what)
{
    return cf_error_set(CF_ERR_INVALID, "%s: %s: %s", name, path, what);
}

static cf_status get_string(const char *name, const char *path, const cJSON *item, char *dst, size_t cap)
{
    char where[96];
    snprintf(where, sizeof where, "%s.%s", path, item->string);
    if (!cJSON_IsString(item) || !*item->valuestring)
        return bad(name, where, "expected a non-empty string");
    if (strlen(item->valuestring) >= cap) {
        char what[64];
        snprintf(what, sizeof what, "is too long (at most %zu bytes)", cap - 1);
        return bad(name, where, what);
    }
    snprintf(dst, cap, "%s", item->valuestring);
    return CF_OK;
}

static cf_status get_price(const char *name, const char *path, const cJSON *item, double max, double *out)
{
    char where[96], what[128];
    snprintf(where, sizeof where, "%s.%s", path, item->string);
    if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) || item->valuedouble <= 0 || item->valuedouble >= max) {
        snprintf(what, sizeof what, "expected a number > 0 and < %g", max);
        return bad(name, where, what);
    }
    *out = item->valuedouble;
    return CF_OK;
}

static cf_status parse_rule(const char *name, const cJSON *obj, cf_override_kind kind, cf_price_override *r)
{
    const char *path = r->key_path;
    if (!cJSON_IsObject(obj))
        return bad(name, path, "expected an object");
    r->kind = kind;
    r->applies_ondemand = r->applies_spot = 1;
    const cJSON *item;
    cf_status st = CF_OK;
    cJSON_ArrayForEach(item, obj)
    {
        const char *k = item->string;
        if (strcmp(k, "cloud") == 0)
            st = get_string(name, path, item, r->cloud, sizeof r->cloud);
        else if (strcmp(k, "region") == 0)
            st = get_string(name, path, item, r->region, sizeof r->region);
        else if (strcmp(k, "instance_type") == 0)
            st = get_string(name, path, item, r->instance_type, sizeof r->instance_type);
        else if (strcmp(k, "gpu") == 0)
            st = get_string(name, path, item, r->gpu, sizeof r->gpu);
        else if (strcmp(k, "note") == 0) {
            st = get_string(name, path, item, r->note, sizeof r->note);
            if (st == CF_OK)
                cf_text_fit(item->valuestring, sizeof r->note - 1, r->note, sizeof r->note); /* shown in one line */
        }
        else if (kind == CF_OVERRIDE_DISCOUNT && strcmp(k, "percent") == 0)
            st = get_price(name, path, item, 100, &r->percent);
        else if (kind == CF_OVERRIDE_DISCOUNT && strcmp(k, "applies_to") == 0) {
            char v[16] = "";
            st = get_string(name, path, item, v, sizeof v);
            if (st == CF_OK && strcmp(v, "ondemand") == 0)
                r->applies_spot = 0;
            else if (st == CF_OK && strcmp(v, "spot") == 0)
                r->applies_ondemand = 0;
            else if (st == CF_OK && strcmp(v, "both") != 0) {
                char where[96];
                snprintf(where, sizeof where, "%s.applies_to", path);
                st = bad(name, where, "expected \"ondemand\", \"spot\" or \"both\"");
            }
        } else if (kind == CF_OVERRIDE_INSTANCE && strcmp(k, "price_ondemand_usd_per_hr") == 0)
            st = get_price(name, path, item, 1e5, &r->price_ondemand_usd_per_hr);
        else if (kind == CF_OVERRIDE_INSTANCE && strcmp(k, "price_spot_usd_per_hr") == 0)
            st = get_price(name, path, item, 1e5, &r->price_spot_usd_per_hr);
        else {
            char where[96];
            snprintf(where, sizeof where, "%s.%s", path, k);
            st = bad(name, where, kind == CF_OVERRIDE_DISCOUNT
                                      ? "unknown key (expected cloud, region, instance_type, gpu, percent, applies_to, note)"
                                      : "unknown key (expected cloud, region, instance_type, gpu, "
                                        "price_ondemand_usd_per_hr, price_spot_usd_per_hr, note)");
        }
        if (st != CF_OK)
            return st;
    }
    if (kind == CF_OVERRIDE_DISCOUNT && r->percent <= 0)
        return bad(name, path, "missing 'percent'");
    if (kind == CF_OVERRIDE_INSTANCE) {
        if (!r->cloud[0] || !r->instance_type[0])
            return bad(name, path, "an instance override needs 'cloud' and 'instance_type'");
        if (r->price_ondemand_usd_per_hr <= 0 && r->price_spot_usd_per_hr <= 0)
            return bad(name, path, "needs 'price_ondemand_usd_per_hr' or 'price_spot_usd_per_hr'");
    }
    return CF_OK;
}

static int same_offer(const cf_price_override *a, const cf_price_override *b)
{
    return strcasecmp(a->cloud, b->cloud) == 0 && strcmp(a->region, b->region) == 0 &&
           strcmp(a->instance_type, b->instance_type) == 0 && strcasecmp(a->gpu, b->gpu) == 0;
}

/* Two instance rules that give the same price of the same offer contradict
 * each other (or repeat it): the later one would silently win. */
static cf_status check_duplicates(const char *name, const cf_price_overrides *ov)
{
    for (size_t j = 0; j < ov->n; j++)
        for (size_t i = 0; i < j; i++) {
            const cf_price_override *a = &ov->items[i], *b = &ov->items[j];
            if (a->kind != CF_OVERRIDE_INSTANCE || b->kind != CF_OVERRIDE_INSTANCE || !same_offer(a, b))
                continue;
            int od = a->price_ondemand_usd_per_hr > 0 && b->price_ondemand_usd_per_hr > 0;
            int spot = a->price_spot_usd_per_hr > 0 && b->price_spot_usd_per_hr > 0;
            if (!od && !spot)
                continue; /* one gives the on-demand price, the other the spot price */
            cf_error_set(CF_ERR_INVALID, "%s: %s: gives the %s price of %s%s%s %s%s%s again (%s gives it)", name,
                         b->key_path, od ? "on-demand" : "spot", a->cloud, a->region[0] ? "/" : "", a->region,
                         a->instance_type, a->gpu[0] ? " " : "", a->gpu, a->key_path);
            cf_error_hint("give each offer's price once: remove one of the two rules");
            return CF_ERR_INVALID;
        }
    return CF_OK;
}

static cf_status parse_doc(const cJSON *doc, const char *name, cf_price_overrides *out)
{
    if (!cJSON_IsObject(doc))
        return cf_error_set(CF_ERR_INVALID, "%s: expected a JSON object with 'discounts' and/or 'instances'", name);
    const cJSON *item;
    size_t n = 0;
    cJSON_ArrayForEach(item, doc)
    {
        if (strcmp(item->string, "discounts") != 0 && strcmp(item->string, "instances") != 0)
            return cf_error_set(CF_ERR_INVALID, "%s: %s: unknown key (expected discounts, instances)", name,
                                item->string);
        if (!cJSON_IsArray(item))
            return cf_error_set(CF_ERR_INVALID, "%s: %s: expected an array", name, item->string);
        n += (size_t)cJSON_GetArraySize(item);
    }
    out->items = calloc(n ? n : 1, sizeof *out->items);
    if (!out->items)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    static const char *const sections[] = {"discounts", "instances"};
    for (int s = 0; s < 2; s++) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(doc, sections[s]);
        int i = 0;
        cJSON_ArrayForEach(item, arr)
        {
            cf_price_override *r = &out->items[out->n];
            snprintf(r->key_path, sizeof r->key_path, "%s[%d]", sections[s], i++);
            cf_status st = parse_rule(name, item, s == 0 ? CF_OVERRIDE_DISCOUNT : CF_OVERRIDE_INSTANCE, r);
            if (st != CF_OK)
                return st;
            out->n++;
        }
    }
    return check_duplicates(name, out);
}

cf_status cf_price_overrides_parse(const char *text, size_t len, const char *name, cf_price_overrides *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", name);
    cJSON *doc = NULL;
    cf_status st = cf_json_read(text, len, name, &doc);
    if (st != CF_OK)
        return st;
    if ((st = cf_sha256_hex(text, len, out->sha256)) != CF_OK) {
        cJSON_Delete(doc);
        return st;
    }
    st = parse_doc(doc, name, out);
    cJSON_Delete(doc);
    if (st != CF_OK)
        cf_price_overrides_free(out);
    return st;
}

cf_status cf_price_overrides_load(const char *path, cf_price_overrides *out)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    size_t len = 0;
    cf_status st = cf_read_file(path, &text, &len);
    if (st != CF_OK)
        return st;
    st = cf_price_overrides_parse(text, len, path, out);
    free(text);
    return st;
}

/* gpu_model: the rule's "gpu" as the model it names (cf_catalog_gpu_filter_model: "Tesla T4" is T4, as in
 * every other GPU filter), NULL when the rule names none. */
static int matches(const cf_price_override *r, const char *gpu_model, const cf_vm *vm)
{
    return (!r->cloud[0] || strcasecmp(r->cloud, vm->cloud) == 0) && (!r->region[0] || strcmp(r->region, vm->region) == 0) &&
           (!r->instance_type[0] || strcmp(r->instance_type, vm->instance_type) == 0) &&
           (!gpu_model || strcasecmp(gpu_model, vm->gpu_model) == 0);
}

cf_status cf_price_overrides_apply(cf_price_overrides *ov, cf_catalog *catalog, int *rule_of_row)
{
    return cf_price_overrides_apply_rules(ov, catalog, rule_of_row, NULL);
}

cf_status cf_price_overrides_apply_rules(cf_price_overrides *ov, cf_catalog *catalog, int *rule_of_row,
                                         int *rule_of_price)
{
    /* Work on a copy of the prices so a failure leaves the catalog as it was. */
    cf_vm *work = malloc((catalog->n_vms ? catalog->n_vms : 1) * sizeof *work);
    if (!work)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    memcpy(work, catalog->vms, catalog->n_vms * sizeof *work);
    int *rules = calloc(catalog->n_vms + 1, sizeof *rules);
    /* per price: [2i] on-demand, [2i + 1] spot; the rule that last changed it */
    int *price_rules = calloc(2 * catalog->n_vms + 1, sizeof *price_rules);
    if (!rules || !price_rules) {
        free(price_rules);
        free(rules);
        free(work);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    /* The part of each row's list price that compounded discounts keep:
     * at least 1 % (99 % off in all), else the prices fall towards 0 and
     * every later message would blame something else. */
    double *kept = malloc((catalog->n_vms ? catalog->n_vms : 1) * 2 * sizeof *kept);
    if (!kept) {
        free(price_rules);
        free(rules);
        free(work);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < 2 * catalog->n_vms; i++)
        kept[i] = 1;
    cf_status st = CF_OK;
    for (int pass = 0; pass < 2 && st == CF_OK; pass++) {
        for (size_t k = 0; k < ov->n && st == CF_OK; k++) {
            cf_price_override *r = &ov->items[k];
            if ((pass == 0) != (r->kind == CF_OVERRIDE_DISCOUNT))
                continue;
            r->rows_matched = 0;
            r->spot_left_out = 0;
            r->spot_left_out_example[0] = '\0';
            const char *gpu_model = r->gpu[0] ? cf_catalog_gpu_filter_model(catalog, r->gpu) : NULL;
            for (size_t i = 0; i < catalog->n_vms; i++) {
                cf_vm *vm = &work[i];
                if (!matches(r, gpu_model, vm))
                    continue;
                r->rows_matched++;
                rules[i] = (int)k + 1;
                if (r->kind == CF_OVERRIDE_DISCOUNT) {
                    double keep = 1 - r->percent / 100;
                    /* a price the row does not have is not changed by a discount of it */
                    if (r->applies_ondemand && vm->price_ondemand_usd_per_hr > 0)
                        price_rules[2 * i] = (int)k + 1;
                    if (r->applies_spot && vm->price_spot_usd_per_hr > 0)
                        price_rules[2 * i + 1] = (int)k + 1;
                    if (r->applies_ondemand)
                        vm->price_ondemand_usd_per_hr *= keep, kept[2 * i] *= keep;
                    if (r->applies_spot)
                        vm->price_spot_usd_per_hr *= keep, kept[2 * i + 1] *= keep;
                    if (kept[2 * i] < 0.01 || kept[2 * i + 1] < 0.01) {
                        st = cf_error_set(CF_ERR_INVALID, "%s: %s: the discounts up to this one compound to %.4g%% "
                                          "off the list price of %s/%s %s: more than 99%% in all", ov->path,
                                          r->key_path, 100 * (1 - (kept[2 * i] < kept[2 * i + 1] ? kept[2 * i]
                                                                                                  : kept[2 * i + 1])),
                                          vm->cloud, vm->region, vm->instance_type);
                        cf_error_hint("discounts compound in file order (two of 50%% make 75%% off); for a "
                                      "negotiated price, give it in \"instances\" instead");
                        break;
                    }
                } else {
                    /* Two instance rules that give one price of one offer contradict each other,
                     * also when their text differs (one without a region or GPU covers the other's
                     * offer): the later would silently win. */
                    int od_by = r->price_ondemand_usd_per_hr > 0 ? price_rules[2 * i] : 0;
                    int spot_by = r->price_spot_usd_per_hr > 0 ? price_rules[2 * i + 1] : 0;
                    int od_again = od_by > 0 && ov->items[od_by - 1].kind == CF_OVERRIDE_INSTANCE;
                    int spot_again = spot_by > 0 && ov->items[spot_by - 1].kind == CF_OVERRIDE_INSTANCE;
                    if (od_again || spot_again) {
                        const cf_price_override *a = &ov->items[(od_again ? od_by : spot_by) - 1];
                        int gpu = r->gpu[0] || a->gpu[0];
                        st = cf_error_set(CF_ERR_INVALID, "%s: %s: gives the %s price of %s/%s %s%s%s again (%s "
                                          "gives it)", ov->path, r->key_path, od_again ? "on-demand" : "spot",
                                          vm->cloud, vm->region, vm->instance_type, gpu ? " " : "",
                                          gpu ? vm->gpu_model : "", a->key_path);
                        cf_error_hint("give each offer's price once: remove one of the two rules, or give each "
                                      "its region (and GPU) so that they name different offers");
                        break;
                    }
                    /* The user's price: not the catalog's kind or date (it has none) */
                    if (r->price_ondemand_usd_per_hr > 0) {
                        price_rules[2 * i] = (int)k + 1;
                        vm->price_ondemand_usd_per_hr = r->price_ondemand_usd_per_hr;
                        vm->ondemand_kind = CF_PRICE_GIVEN;
                        vm->ondemand_date[0] = '\0';
                    }
                    if (r->price_spot_usd_per_hr > 0) {
                        price_rules[2 * i + 1] = (int)k + 1;
                        vm->price_spot_usd_per_hr = r->price_spot_usd_per_hr;
                        vm->spot_price_estimated = 0;
                        vm->spot_kind = CF_PRICE_GIVEN;
                        vm->spot_date[0] = '\0';
                        vm->spot_regional = 0;
                    }
                }
                if (vm->price_ondemand_usd_per_hr > 0 &&
                    vm->price_spot_usd_per_hr > vm->price_ondemand_usd_per_hr * (1 + 1e-9) &&
                    r->kind == CF_OVERRIDE_INSTANCE) {
                    st = cf_error_set(CF_ERR_INVALID, "%s: %s: makes the spot price of %s/%s %s ($%.4g/h) higher "
                                      "than its on-demand price ($%.4g/h)", ov->path, r->key_path, vm->cloud,
                                      vm->region, vm->instance_type, vm->price_spot_usd_per_hr,
                                      vm->price_ondemand_usd_per_hr);
                    break;
                }
            }
            if (st == CF_OK && r->kind == CF_OVERRIDE_INSTANCE && r->rows_matched == 0) {
                st = cf_error_set(CF_ERR_INVALID, "%s: %s: no catalog row matches %s%s%s %s%s%s%s", ov->path,
                                  r->key_path, r->cloud, r->region[0] ? "/" : "", r->region, r->instance_type,
                                  r->gpu[0] ? " with GPU '" : "", r->gpu, r->gpu[0] ? "'" : "");
                cf_error_hint("check the spelling against 'cloudfit prices GPU' (the catalog's instance types and "
                              "their GPUs)");
            }
        }
    }
    /* A discount on on-demand prices only (a committed-use deal) can bring
     * on-demand to or below the spot price. The user stated neither price,
     * so it is no contradiction to refuse (an instance rule's is, above):
     * that spot price is no discount any more and is left out, as `prices
     * update` and the catalog loader keep out a spot price not below
     * on-demand; the discount that did it counts the rows for a warning. */
    for (size_t i = 0; st == CF_OK && i < catalog->n_vms; i++) {
        cf_vm *vm = &work[i];
        if (!(vm->price_ondemand_usd_per_hr > 0 && vm->price_spot_usd_per_hr > 0 &&
              vm->price_spot_usd_per_hr >= vm->price_ondemand_usd_per_hr * (1 - 1e-9)))
            continue;
        /* the rule that set its prices last: an instance rule's prices are the user's (checked above) */
        cf_price_override *r = rules[i] > 0 ? &ov->items[rules[i] - 1] : NULL;
        if (!r || r->kind != CF_OVERRIDE_DISCOUNT)
            continue;
        if (r->spot_left_out++ == 0)
            snprintf(r->spot_left_out_example, sizeof r->spot_left_out_example,
                     "%s/%s %s: spot $%.4g/h, on-demand $%.4g/h", vm->cloud, vm->region, vm->instance_type,
                     vm->price_spot_usd_per_hr, vm->price_ondemand_usd_per_hr);
        vm->price_spot_usd_per_hr = 0.0;
        price_rules[2 * i + 1] = 0;
        vm->spot_kind = CF_PRICE_NONE;
        vm->spot_date[0] = '\0';
        vm->spot_regional = 0;
        vm->spot_price_estimated = 0;
    }
    if (st == CF_OK) {
        memcpy(catalog->vms, work, catalog->n_vms * sizeof *work);
        if (rule_of_row)
            memcpy(rule_of_row, rules, catalog->n_vms * sizeof *rules);
        if (rule_of_price)
            memcpy(rule_of_price, price_rules, 2 * catalog->n_vms * sizeof *price_rules);
    }
    free(price_rules);
    free(kept);
    free(rules);
    free(work);
    return st;
}

void cf_price_overrides_free(cf_price_overrides *ov)
{
    free(ov->items);
    memset(ov, 0, sizeof *ov);
}
