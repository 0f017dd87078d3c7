/* What the advisor's search hands a runner (docs/search.md): a
 * configuration to run and the callback that runs it; profiler/'s runners
 * implement the callback. Any module may include this header (the layout
 * rule for `<module>/types.h`). */
#ifndef CLOUDFIT_ADVISOR_TYPES_H
#define CLOUDFIT_ADVISOR_TYPES_H
#include "cloudfit/common/shared_types.h"
#include "cloudfit/pricing/types.h"
#include "cloudfit/status.h"

/* ---- runners: real training runs on a configuration (search, profile --runner) ---- */

/* One configuration the search may pick: a VM type (on-demand), a node
 * count and a per-GPU batch (no accumulation: a probe measures what runs). */
typedef struct {
    const cf_vm *vm;              /* catalog row it is priced from; NULL allowed (tests, --price) */
    char gpu[CF_GPU_NAME_MAX];    /* GPU model; the refit groups probes by it */
    int nodes, gpus_per_node, local_batch;
    double usd_per_node_hr;       /* on-demand price of one VM */
    double network_gbps;          /* nominal NIC of the VM; 0 = unknown */
} cf_search_candidate;

/* Runs `steps` training steps on one candidate and reports the steady
 * step time. Anything but CF_OK is a failed run (non-zero exit, malformed
 * output, timeout); cf_error_message() says why. The search retries a
 * failed run once, then marks the configuration failed and goes on. */
typedef struct {
    void *ctx;
    cf_status (*probe)(void *ctx, const cf_search_candidate *candidate, int steps, double *out_step_time_s);
    /* How the last run that succeeded trained, as its probe said (the
     * 'device' event's precision and memory format, "" each where it did
     * not); NULL for a runner that cannot tell (a trace). A runner profile
     * stores them as a sweep does (profiler/runner_profile.c). */
    void (*trained)(void *ctx, const char **precision, const char **memory_format);
} cf_search_runner;

#endif
