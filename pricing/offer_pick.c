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

const cf_vm *cf_offer_for_trace(const cf_catalog *catalog, const cf_trace_offer_query *q, char *note, size_t n_note)
{
    const cf_spot_trace_vm *tv = q->vm;
    note[0] = '\0';
    const char *gpu = q->gpu ? q->gpu : tv->gpu[0] ? tv->gpu : NULL;
    const char *instance = q->instance_type           ? q->instance_type
                           : q->gpu || !tv->instance_type[0] ? NULL
                                                             : tv->instance_type;
    const char *cloud = q->cloud ? q->cloud : tv->cloud[0] ? tv->cloud : NULL;
    const char *region = q->region ? q->region : tv->region[0] ? tv->region : NULL;
    if (!instance && !gpu)
        return NULL;
    const cf_vm *best = NULL;
    /* the trace's region first, then any; a region the user named is kept */
    for (int pass = 0; pass < (q->region ? 1 : 2) && !best; pass++) {
        cf_offer_match m = {.instance_type = instance, .gpu = gpu, .cloud = cloud,
                            .region = pass == 0 ? region : NULL, .gpus_per_vm = instance ? 0 : tv->gpus_per_vm};
        best = cf_offer_cheapest(catalog, &m);
    }
    if (!best && !q->gpu && !q->instance_type) {
        /* The trace's VM is not sold any more (p2 / K80): its availability
         * applied to the cheapest offer of that size in its region. */
        cf_offer_match m = {.cloud = cloud, .region = region, .gpus_per_vm = tv->gpus_per_vm > 0 ? tv->gpus_per_vm : 1};
        best = cf_offer_cheapest(catalog, &m);
        if (!best && !q->region) {
            m.region = NULL;
            best = cf_offer_cheapest(catalog, &m);
        }
        if (best)
            snprintf(note, n_note, "the trace's VM (%s, %s) is not in the catalog; its availability is applied to "
                     "%s (%s), the cheapest offer of that size%s", instance ? instance : "?", gpu ? gpu : "?",
                     best->instance_type, best->gpu_model, region && !strcmp(best->region, region) ? " in its region" : "");
    }
    return best;
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
