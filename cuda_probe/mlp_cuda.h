/* The CUDA mirror of mlp_cpu.h and optim_cpu.h (private to cuda_probe/):
 * the same kernels under the same names with a _cuda suffix and the same
 * arguments, every pointer a device pointer (the standalone activation
 * kernels are not mirrored: the dense layers apply activations fused). Matrix products go through
 * cuBLAS; the row-major [rows, cols] layouts of the CPU twin are kept (a
 * row-major matrix is its transpose to column-major cuBLAS, so no copy is
 * needed). Calls run in order on the default stream; the ones that return
 * a number wait for it. Compiled only when nvcc is found. */
#ifndef CF_PROBE_MLP_CUDA_H
#define CF_PROBE_MLP_CUDA_H
#include <stddef.h>
#include "cloudfit/status.h"
#include "mlp_cpu.h"
#include "optim_cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The cuBLAS handle the products use; one per process, created on first
 * use. CF_ERR_UNAVAILABLE with cuBLAS's message when it cannot start. */
cf_status cf_cuda_blas_init(void);
void cf_cuda_blas_release(void);

/* The last CUDA or cuBLAS error since the previous call, as a status with
 * its message (`what` names the operation), or CF_OK. */
cf_status cf_cuda_check(const char *what);

void cf_dense_forward_cuda(float *pre, float *out, const float *inp, const float *weight, const float *bias,
                           int B, int C_in, int C_out, cf_layer_act act);
void cf_dense_backward_cuda(float *dinp, float *dweight, float *dbias, float *dout, const float *pre,
                            const float *inp, const float *weight, int B, int C_in, int C_out, cf_layer_act act);
double cf_softmax_xent_cuda(float *dlogits, const float *logits, const int *labels, int B, int C, float dscale);
double cf_sqnorm_cuda(const float *x, size_t n);
double cf_accumulate_sqnorm_cuda(float *acc, const float *x, size_t n);
/* `o` is host memory (the optimizer's scalars); the tensors are device
 * memory. Returns Σ grads[i]². */
double cf_optim_update_cuda(const cf_optim *o, float *params, const float *grads, float *m, float *v, size_t n);

#ifdef __cplusplus
}
#endif

#endif
