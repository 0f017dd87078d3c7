/* Offers that stand for VMs measured elsewhere (cloudfit/pricing/offer_pick.h). */
#include "cloudfit/pricing/offer_pick.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static double pick_price(const cf_vm *vm)
{
    return vm->price_spot_usd_per_hr > 0 ? vm->price_spot_usd_per_hr : vm->price_ondemand_usd_per_hr;
}

const cf_vm *cf_offer_cheapest(const cf_catalog *catalog, const cf_offer_match *m)
{
    const cf_vm *best = NULL;
    for (size_t i = 0; i < catalog->n_vms; i++) {
        const cf_vm *vm = &catalog->vms[i];
        if ((m->instance_type && strcmp(vm->instance_type, m->instance_type)) ||
            (m->gpu && strcasecmp(vm->gpu_model, m->gpu)) || (m->cloud && strcmp(vm->cloud, m->cloud)) ||
            (m->region && strcmp(vm->region, m->region)))
            continue;
        if (m->gpus_per_vm > 0 && vm->gpu_count != m->gpus_per_vm)
            continue;
        double p = pick_price(vm);
        if (p > 0 && (!best || p < pick_price(best)))
            best = vm;
    }
    return best;
}

/* The message's hint for a trace GPU name the catalog does not read as one GPU. */
static void hint_gpu_name(void)
{
    cf_error_hint("name the GPU as the catalog does: --gpu GPU with --trace, or the gpu column of the index.csv "
                  "beside the trace ('cloudfit prices' lists the catalog's GPUs; docs/spot.md \"Trace folders\")");
}

/* What the trace's own GPU name means in the catalog: the model it names
 * in any spelling cf_gpu_resolve reads ("v100", "Tesla T4"), *retired set
 * when no offer sells it any more (K80); a bare family name ("a100", as
 * the public traces' paths write it) is the one member of the family sold
 * as such VMs (`where`: instance type, cloud, GPUs per VM; its region
 * first, then any unless `keep_region`), never a guess between two.
 * CF_ERR_INVALID, with a hint, for a name of no GPU of the table, or of a
 * family of which more than one member is sold there. */
static cf_status trace_gpu_model(const cf_catalog *catalog, const char *name, const cf_offer_match *where,
                                 int keep_region, const char **model, int *retired)
{
    *model = name;
    *retired = 0;
    if (cf_catalog_sells_gpu(catalog, name))
        return CF_OK;
    enum { MAX_FAMILY = 16 };
    const cf_gpu *rows[MAX_FAMILY];
    size_t n_rows = cf_gpu_family_rows(catalog->gpus, catalog->n_gpus, name, rows, MAX_FAMILY);
    if (n_rows == 0) {
        const cf_gpu *row = cf_catalog_gpu_resolve(catalog, name);
        if (!row) {
            cf_error_set(CF_ERR_INVALID, "the trace's GPU '%s' is no GPU the catalog knows", name);
            hint_gpu_name();
            return CF_ERR_INVALID;
        }
        *model = row->model;
        *retired = !cf_catalog_sells_gpu(catalog, row->model);
        return CF_OK;
    }
    const char *sold[MAX_FAMILY];
    size_t n_sold = 0;
    cf_offer_match m = *where;
    for (int pass = 0; pass < (keep_region ? 1 : 2) && n_sold == 0; pass++) {
        m.region = pass == 0 ? where->region : NULL;
        for (size_t i = 0; i < n_rows; i++) {
            m.gpu = rows[i]->model;
            if (cf_offer_cheapest(catalog, &m))
                sold[n_sold++] = rows[i]->model;
        }
    }
    if (n_sold == 1) {
        *model = sold[0];
        return CF_OK;
    }
    if (n_sold == 0) { /* no such VM of the family: its first row, as cf_gpu_resolve reads the name */
        *model = rows[0]->model;
        *retired = 1;
        for (size_t i = 0; i < n_rows; i++)
            *retired &= !cf_catalog_sells_gpu(catalog, rows[i]->model);
        return CF_OK;
    }
    char list[256] = "";
    for (size_t i = 0, used = 0; i < n_sold && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? (i + 1 < n_sold ? ", " : " or ") : "",
                                 sold[i]);
    char size[32] = "";
    if (m.gpus_per_vm > 0)
        snprintf(size, sizeof size, " as %d-GPU VMs", m.gpus_per_vm);
    cf_error_set(CF_ERR_INVALID, "the trace's GPU '%s' may be %s: the catalog sells each%s%s%s%s%s%s%s", name, list,
                 size, m.instance_type ? " as " : "", m.instance_type ? m.instance_type : "", m.cloud ? " on " : "",
                 m.cloud ? m.cloud : "", m.region ? " in " : "", m.region ? m.region : "");
    hint_gpu_name();
    return CF_ERR_INVALID;
}

cf_status cf_offer_for_trace(const cf_catalog *catalog, const cf_trace_offer_query *q, const cf_vm **offer,
                             char *note, size_t n_note)
{
    const cf_spot_trace_vm *tv = q->vm;
    note[0] = '\0';
    *offer = NULL;
    const char *gpu = q->gpu ? q->gpu : tv->gpu[0] ? tv->gpu : NULL;
    const char *instance = q->instance_type           ? q->instance_type
                           : q->gpu || !tv->instance_type[0] ? NULL
                                                             : tv->instance_type;
    const char *cloud = q->cloud ? q->cloud : tv->cloud[0] ? tv->cloud : NULL;
    const char *region = q->region ? q->region : tv->region[0] ? tv->region : NULL;
    if (!instance && !gpu)
        return CF_OK;
    int retired = 0;
    if (gpu) { /* the trace's own name or --gpu, read alike: a retired GPU (K80) either way */
        cf_offer_match where = {.instance_type = instance, .cloud = cloud, .region = region,
                                .gpus_per_vm = instance ? 0 : tv->gpus_per_vm};
        cf_status st = trace_gpu_model(catalog, gpu, &where, q->region != NULL, &gpu, &retired);
        if (st != CF_OK)
            return st;
    }
    const cf_vm *best = NULL;
    /* the trace's region first, then any; a region the user named is kept */
    for (int pass = 0; pass < (q->region ? 1 : 2) && !best; pass++) {
        cf_offer_match m = {.instance_type = instance, .gpu = gpu, .cloud = cloud,
                            .region = pass == 0 ? region : NULL, .gpus_per_vm = instance ? 0 : tv->gpus_per_vm};
        best = cf_offer_cheapest(catalog, &m);
        if (best && pass == 1 && region)
            /* the trace's region sells no such VM (or names none the catalog knows) */
            snprintf(note, n_note, "the catalog has no %s%s%s offer in %s, the trace's region; its availability is "
                     "applied to %s/%s %s", instance ? instance : gpu, instance ? "" : " ",
                     instance ? "" : "VM", region, best->cloud, best->region, best->instance_type);
    }
    if (!best && retired && !q->instance_type) {
        /* The trace's GPU is sold no more (p2 / K80): its availability
         * applied to the cheapest offer of that size in its region. Only
         * then: a GPU the catalog sells is never swapped for another. */
        cf_offer_match m = {.cloud = cloud, .region = region, .gpus_per_vm = tv->gpus_per_vm > 0 ? tv->gpus_per_vm : 1};
        best = cf_offer_cheapest(catalog, &m);
        if (!best && !q->region) {
            m.region = NULL;
            best = cf_offer_cheapest(catalog, &m);
        }
        char vm[160];
        if (instance)
            snprintf(vm, sizeof vm, "%s, %s", instance, gpu);
        else
            snprintf(vm, sizeof vm, "%d × %s per VM, instance type not recorded", m.gpus_per_vm, gpu);
        if (best)
            snprintf(note, n_note, "the trace's VM (%s) is not in the catalog; its availability is applied to "
                     "%s (%s), the cheapest offer of that size%s", vm, best->instance_type, best->gpu_model,
                     region && !strcmp(best->region, region) ? " in its region" : "");
    }
    /* The row's own instance type holds its own GPUs per VM: p3.8xlarge
     * (4 × V100) in a row of gpus_per_vm 1 was replayed as a 4-GPU VM, on
     * a multi-GPU model row, without a word. */
    int own_instance = instance && !q->instance_type && !q->gpu;
    if (best && own_instance && tv->gpus_per_vm > 0 && best->gpu_count != tv->gpus_per_vm) {
        cf_error_set(CF_ERR_INVALID, "%s%scolumn 'instance_type': '%s' is a VM of %d × %s, the row's gpus_per_vm "
                     "says %d", tv->index_row, tv->index_row[0] ? ": " : "", instance, best->gpu_count,
                     best->gpu_model, tv->gpus_per_vm);
        cf_error_hint("correct instance_type or gpus_per_vm (an empty instance_type takes the catalog's cheapest VM "
                      "of that GPU and size)");
        return CF_ERR_INVALID;
    }
    *offer = best;
    return CF_OK;
}

const cf_vm *cf_offer_for_hardware(const cf_catalog *catalog, const char *gpu, int gpus_per_vm, const char *cloud)
{
    const cf_vm *best = NULL;
    for (size_t v = 0; v < catalog->n_vms; v++) {
        const cf_vm *vm = &catalog->vms[v];
        if (strcasecmp(vm->gpu_model, gpu) || vm->gpu_count != gpus_per_vm || !(vm->price_ondemand_usd_per_hr > 0))
            continue;
        int pref = !strcmp(vm->cloud, cloud), best_pref = best && !strcmp(best->cloud, cloud);
        if (!best || pref > best_pref ||
            (pref == best_pref && vm->price_ondemand_usd_per_hr < best->price_ondemand_usd_per_hr))
            best = vm;
    }
    return best;
}
