/* Composes the advisor's inputs from the spec, its inline profile and
 * measurement CSVs, and the catalog: per-GPU performance parameters
 * (fitted, carried over or estimated) and the noise model. */
#ifndef CLOUDFIT_CLI_INPUTS_H
#define CLOUDFIT_CLI_INPUTS_H
#include "cloudfit/advisor.h"

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

#endif
