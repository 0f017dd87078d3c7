/* What the advisor runs on (advisor/model/inputs.c): per-GPU-type performance
 * parameters and the noise model, assembled from every piece of evidence
 * the caller has read (the spec's profile section and its measurement
 * CSVs, cached profiles, recorded runs) and from estimates for the rest.
 *
 * Which evidence wins, per GPU type (docs/architecture.md):
 *   1. a recorded run of this spec (`cloudfit record`) rescales the compute
 *      time of whatever model step 2–5 produced, so the model reproduces
 *      the measured step time;
 *   2. a cached profile measured on that GPU (`cloudfit profile`): its
 *      runner runs fitted like a measurements CSV, else its t_c(m) line;
 *   3. the spec's profile.gpus entry: a measurements CSV fitted, or the
 *      inline numbers;
 *   4. carried over from the measured type with the closest memory
 *      bandwidth (a roofline per term, advisor/carry.h);
 *   5. estimated from model.flops_per_sample and the GPU table.
 * Noise scale: a cached profile's measurement, unless the spec's trace
 * covers more of training; else the spec's trace or constant; else the
 * recipe batch (a default that penalises larger batches).
 *
 * Pure computation over plain arrays: the caller reads files and the
 * database; nothing here does I/O. */
#ifndef CLOUDFIT_ADVISOR_INPUTS_H
#define CLOUDFIT_ADVISOR_INPUTS_H
#include <stddef.h>
#include "cloudfit/advisor.h"
#include "cloudfit/advisor/perf.h"
#include "cloudfit/advisor/stateff.h"
#include "cloudfit/status.h"
#include "cloudfit/db/types.h"
#include "cloudfit/pricing/types.h"
#include "cloudfit/profiler/types.h"

/* How far a recorded step time may move its GPU type's compute time (×). */
#define CF_RECORD_SCALE_MAX 20.0
#include "cloudfit/spec/types.h"

#define CF_INPUTS_MAX_NOTES 16

typedef struct {
    cf_gpu_perf *perf;
    size_t n_perf;
    cf_perf_fit_report *fits;     /* parallel to perf; n_rows == 0 when not fitted */
    cf_noise_model noise;
    char noise_note[200];
    char notes[CF_INPUTS_MAX_NOTES][240];  /* for the explanation, in the order they arose */
    int n_notes;
} cf_inputs;

typedef struct {
    const cf_job *job;
    /* The GPU table, and every offer of the catalog (a measurement's
     * nominal NIC, a recorded run's VM). */
    const cf_gpu *gpus;
    size_t n_gpus;
    const cf_vm *vms;
    size_t n_vms;
    /* Offers to rank: every GPU type among them gets parameters (steps 4
     * and 5 above). None: only the types with evidence. */
    const cf_vm *const *candidates;
    size_t n_candidates;
    /* The spec's profile.gpus, and for an entry naming a measurements CSV
     * the rows read from it (given_rows[i], same index; the caller reads the
     * file). given_rows may be NULL when no entry names a file. */
    const cf_gpu_profile_given *given;
    size_t n_given;
    const cf_measurement_set *given_rows;
    /* The spec's noise scale: a trace, else a constant (> 0), else none. */
    const cf_noise_point *noise_trace;
    int n_noise_trace;
    double noise_scale;
    /* Profiles cached for this spec, newest first, and where they came
     * from (the database path, for the notes). */
    const cf_profile *profiles;
    size_t n_profiles;
    const char *profiles_source;
    /* Runs of this spec recorded with `cloudfit record`: each rescales its
     * GPU type's compute by at most CF_RECORD_SCALE_MAX either way (a
     * record beyond that is clamped, and said; `record` refuses one). */
    const cf_recorded_run *recorded;
    size_t n_recorded;
} cf_inputs_request;

/* Assembles the inputs. CF_ERR_INVALID names the spec key or the file
 * when the evidence itself is wrong (an unknown GPU in profile.gpus, a
 * measurements file without rows for its GPU, a fit that fails). */
cf_status cf_inputs_build(const cf_inputs_request *request, cf_inputs *out);
void cf_inputs_free(cf_inputs *in);

/* What a runner profile's probe is called wherever it is named (the
 * profile's table, recommend's notes): its shape as it ran, "4-node ×
 * 4-GPU probe" (from its runs; the default is 2 × 1, --probe-nodes and
 * --probe-gpus name another), or "network probe" when none of its runs is
 * stored (skipped, or failed at once: probe_note names the shape then). */
void cf_profile_probe_name(const cf_profile *p, char *out, size_t n);

#endif
