/* Which catalog offer stands for a VM that was measured elsewhere
 * (pricing/offer_pick.c): the offer an availability trace was recorded on
 * (`cloudfit simulate`), and the VM a profiling trace row really ran on
 * (`cloudfit profile --runner trace:`). Pure look-ups over a loaded
 * catalog; rows are borrowed from it. */
#ifndef CLOUDFIT_PRICING_OFFER_PICK_H
#define CLOUDFIT_PRICING_OFFER_PICK_H
#include <stddef.h>

#include "cloudfit/pricing.h"
#include "cloudfit/pricing/types.h"
#include "cloudfit/profiler/types.h"

/* What an offer must match; NULL / 0 = any. GPU models match in any case. */
typedef struct {
    const char *instance_type;
    const char *gpu;
    const char *cloud;
    const char *region;
    int gpus_per_vm;
} cf_offer_match;

/* The cheapest offer that matches, by its spot price when it has one,
 * else its on-demand price; offers with neither are never picked. NULL
 * when none. */
const cf_vm *cf_offer_cheapest(const cf_catalog *catalog, const cf_offer_match *match);

/* The offer for the VM an availability trace was recorded on (its index
 * row `vm`), with the user's choices on top (NULL = the trace's own):
 * `gpu` replaces the trace's VM type (its instance type then no longer
 * applies), `instance_type` names one, `cloud` and `region` narrow. The
 * cheapest such offer, in the trace's region first. The trace's own GPU
 * name is read as cf_gpu_resolve reads it ("v100", "Tesla T4"); a bare
 * family ("a100") is the one member of it sold as such VMs there. When
 * the trace's GPU is sold no more (K80: in the GPU table, on no offer; no
 * `gpu` or `instance_type` given), its availability is applied to the
 * cheapest offer with as many GPUs, in its region first, and `note` says
 * so ("" otherwise); a GPU the catalog sells is never swapped for another.
 * CF_OK with *offer NULL when the trace names no VM and none was given, or
 * nothing matches; CF_ERR_INVALID, with a hint to name the GPU, when the
 * trace's GPU name is no GPU of the table or a family of which more than
 * one member is sold there ("A100": A100-40GB or A100-80GB). */
typedef struct {
    const cf_spot_trace_vm *vm;
    const char *gpu, *instance_type, *cloud, *region;
} cf_trace_offer_query;
cf_status cf_offer_for_trace(const cf_catalog *catalog, const cf_trace_offer_query *query, const cf_vm **offer,
                             char *note, size_t note_size);

/* The on-demand offer with `gpus_per_vm` GPUs of `gpu` that a measurement
 * taken on `cloud` most likely ran on: on that cloud when there is one,
 * then the cheapest. NULL when the catalog has none. */
const cf_vm *cf_offer_for_hardware(const cf_catalog *catalog, const char *gpu, int gpus_per_vm, const char *cloud);

#endif
