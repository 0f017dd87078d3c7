/* The elastic plan of a ranked configuration (cloudfit/advisor/elastic.h):
 * what the spot/elastic renderers and the launch specs show, from the
 * same parameters the enumeration used. */
#include "cloudfit/advisor/elastic.h"

#include <stdlib.h>
#include "../advisor_internal.h"
#include "elastic_internal.h"

cf_status cf_elastic_plan_of_config(const cf_job *job, const cf_constraints *limits, const cf_gpu_perf *perf,
                                    const cf_noise_model *noise, const cf_config *c, cf_elastic_plan **out)
{
    *out = NULL;
    if (!perf)
        return cf_error_set(CF_ERR_INTERNAL, "no performance parameters for %s", c->vm->gpu_model);
    cf_perf_params params = cf_gpu_perf_on_vm(perf, c->vm->network_gbps); /* the VM's own network, as the plan */
    cf_elastic_plan *plan = malloc(sizeof *plan);
    if (!plan)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    cf_elastic_request req = {.job = job, .perf = &params, .gradient_bytes = job->parameters * job->gradient_bytes,
                              .nodes = c->nodes, .gpus_per_node = c->gpus_per_node, .local_batch = c->local_batch,
                              .accumulation = c->accumulation, .max_accumulation = limits->max_accumulation,
                              .max_local_batch = params.max_local_batch > 0 ? params.max_local_batch : 0,
                              .max_global_batch = limits->max_global_batch,
                              .noise = noise, .batch = CF_ELASTIC_HOLD};
    cf_status st = cf_elastic_plan_for(&req, plan);
    if (st != CF_OK) {
        free(plan);
        return st;
    }
    *out = plan;
    return CF_OK;
}
