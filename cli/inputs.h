/* Composes the advisor's inputs from the spec, its inline profile and
 * measurement CSVs, and the catalog: per-GPU performance parameters
 * (fitted, carried over or estimated) and the noise model. */
#ifndef CLOUDFIT_CLI_INPUTS_H
#define CLOUDFIT_CLI_INPUTS_H
#include "cloudfit/advisor.h"
#include "cloudfit/history.h"
#include "cloudfit/measurement.h"

#define CF_INPUTS_MAX_NOTES 16

typedef struct {
    cf_gpu_perf *perf;
    size_t n_perf;
    cf_perf_fit_report *fits;     /* parallel to perf; n_rows == 0 when not fitted */
    cf_noise_model noise;
    char noise_note[200];
    char notes[CF_INPUTS_MAX_NOTES][240];
    int n_notes;
} cf_inputs;

cf_status cf_inputs_build(const cf_spec *spec, const cf_catalog *catalog, const cf_vm *const *rows, size_t n_rows,
                          cf_inputs *out);
void cf_inputs_free(cf_inputs *in);
/* Adds a note for the explanation (dropped past CF_INPUTS_MAX_NOTES). */
void cf_inputs_add_note(cf_inputs *in, const char *fmt, ...) CF_PRINTF(2, 3);

/* Fits one GPU type's parameters to measured rows (cf_perf_fit; the spec's
 * measurements CSV and `cloudfit profile --runner` both come here, so they
 * use exactly what `cloudfit validate` scores). The inter-node bandwidth is
 * fitted only from ≥ 2 multi-node rows (else 0: each VM's default);
 * `reference_network_gbps` is the nominal NIC those rows ran on. */
cf_status cf_inputs_fit_rows(const cf_spec *spec, const cf_gpu *gpu, const cf_measurement *rows, size_t n,
                             double reference_network_gbps, cf_gpu_perf *perf, cf_perf_fit_report *rep);

/* Hook for `cloudfit record` (cli/inputs_recorded.c): measured step times
 * of earlier runs of this spec replace the estimate for their GPU type —
 * its compute time is scaled so the model reproduces them — with
 * provenance "measured" and a note. Call after cf_inputs_build. */
void cf_inputs_apply_recorded(const cf_spec *spec, const cf_catalog *catalog,
                              const cf_history_measurement *measurements, size_t n_measurements, cf_inputs *in);

/* Hook for `cloudfit profile` (cli/inputs_profiled.c): profiles cached for
 * this spec replace the noise scale and, for GPUs the catalog knows, the
 * throughput (before other GPU types are carried over from them). Off
 * until cf_inputs_use_profile_cache() names the database (NULL = default). */
void cf_inputs_use_profile_cache(const char *db_path);
cf_status cf_inputs_add_profiled(const cf_spec *spec, const cf_catalog *catalog, size_t cap, cf_inputs *in);

#endif
