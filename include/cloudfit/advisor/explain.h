/* What a recommendation shows beyond its ranking, computed once by the
 * library (advisor/plan/explain.c) so that renderers compute nothing
 * (docs/architecture.md): the pick's step-time interval and the all-reduce
 * rate between its VMs, the elastic plans (the pick's and the best spot
 * plan's, as nodes come and go), and the curves behind the plots
 * (throughput vs node count of the pick's VM type, statistical efficiency
 * vs global batch). cf_advise fills advice->explained; so do
 * cf_search_advice and cf_search_spot. */
#ifndef CLOUDFIT_ADVISOR_EXPLAIN_H
#define CLOUDFIT_ADVISOR_EXPLAIN_H
#include <stddef.h>

#include "cloudfit/advisor.h"
#include "cloudfit/advisor/curves.h"
#include "cloudfit/advisor/elastic.h"
#include "cloudfit/common/shared_types.h"
#include "cloudfit/db/types.h"
#include "cloudfit/status.h"

#define CF_STATEFF_CURVE_POINTS 61

struct cf_advice_explained {
    /* the pick, advice->ranked[0] */
    double step_p10_s, step_p90_s;      /* the 80 % interval of its step time (CF_INTERVAL_LEVEL) */
    int have_network;                   /* more than one VM, and its GPU type has parameters */
    double inter_gbps;                  /* the effective all-reduce rate between its VMs */
    cf_provenance inter_provenance;     /* where that rate comes from */
    cf_elastic_plan *elastic;           /* its plan as nodes come and go; NULL when there is none */
    cf_status elastic_status;           /* why there is none (CF_OK when there is one) */
    char elastic_error[200];            /* and the model's words for it, for a launch spec to report */
    cf_history_config stored;           /* as the history stores it (rank 1): what a baseline is compared with */
    /* advice->best_spot's plan (NULL without one) */
    cf_elastic_plan *elastic_best_spot;
    /* Throughput vs node count of its VM type, per-GPU batch and
     * accumulation (empty when its GPU type has no parameters). */
    cf_scaling_point *scaling;
    size_t n_scaling;
    /* Statistical efficiency vs global batch, from a quarter of the
     * smaller of M0 and the pick's batch to 4× the larger (at least the
     * search's largest batch). */
    cf_stateff_point stateff[CF_STATEFF_CURVE_POINTS];
    size_t n_stateff;
    double recipe_batch;                /* M0 */
};

/* The elastic plan of `c` when it is advice's pick or its best spot plan,
 * else NULL: what renderers and launch specs show (a look-up). */
static inline const cf_elastic_plan *cf_advice_elastic(const cf_advice *a, const cf_config *c)
{
    if (!a->explained)
        return (const cf_elastic_plan *)0;
    if (a->n_ranked && c == &a->ranked[0])
        return a->explained->elastic;
    if (a->have_best_spot && c == &a->best_spot)
        return a->explained->elastic_best_spot;
    return (const cf_elastic_plan *)0;
}

#endif
