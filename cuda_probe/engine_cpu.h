/* Inside views of the CPU engine for tests and the benchmark (private to
 * cuda_probe/). Parameters are one array: for each layer l its weight
 * [in_l, out_l] (row-major) then its bias [out_l]. */
#ifndef CF_PROBE_ENGINE_CPU_H
#define CF_PROBE_ENGINE_CPU_H
#include <stddef.h>
#include <stdint.h>
#include "cloudfit/cuda_probe.h"
#include "mlp_cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shared with the CUDA mirror: the same checks and the same initial
 * weights (from `seed`) for the same config. */
cf_status cf_engine_check_config(const cf_engine_config *config);
void cf_engine_init_weights(const int *widths, int n_layers, uint64_t seed, float *params);

/* CF_ERR_INVALID unless 1 ≤ local_batch and 1 ≤ micro_batches ≤ CF_ENGINE_MAX_MICRO. */
cf_status cf_engine_check_step(int local_batch, int micro_batches);
/* One micro-batch's workspace, shared layout of both engines: input rows,
 * each layer's output (and pre-activation for GELU hidden layers), the
 * logits' gradient and two backward buffers. */
typedef struct {
    float *x_in, *act[CF_ENGINE_MAX_LAYERS], *pre[CF_ENGINE_MAX_LAYERS], *dlogits, *dbuf[2];
} cf_engine_ws;
/* Floats of workspace per row of a micro-batch. */
size_t cf_engine_ws_floats_per_row(const int *widths, int n_layers, cf_layer_act hidden_act);
/* Points `out` into `ws` (B rows × the floats per row above). */
void cf_engine_ws_carve(const int *widths, int n_layers, cf_layer_act hidden_act, int B, float *ws,
                        cf_engine_ws *out);

size_t cf_engine_cpu_n_params(const cf_engine *engine);
/* Writable: tests set weights to chosen values. */
float *cf_engine_cpu_params(cf_engine *engine);
/* The mean gradient of the last step (before the update was applied). */
const float *cf_engine_cpu_grads(const cf_engine *engine);
/* Sample indices of the last step: micro-batch i is entries
 * [i·local_batch, (i+1)·local_batch). */
const long *cf_engine_cpu_last_indices(const cf_engine *engine);

#ifdef __cplusplus
}
#endif

#endif
