/* Layer kernels of the CPU engine (private to cuda_probe/): float32,
 * row-major, matrix products through OpenBLAS cblas_sgemm. A dense layer
 * keeps its weight as [C_in, C_out] so the forward product needs no
 * transpose. These names and arguments are the contract the CUDA mirror
 * copies (llm.c style): same kernel, same buffers, same meaning. */
#ifndef CF_PROBE_MLP_CPU_H
#define CF_PROBE_MLP_CPU_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What follows a dense layer's affine map. */
typedef enum { CF_LAYER_LINEAR, CF_LAYER_RELU, CF_LAYER_GELU } cf_layer_act;

/* Elementwise activation: out[i] = act(inp[i]) for i < n. */
void cf_act_forward(float *out, const float *inp, size_t n, cf_layer_act act);
/* dinp[i] = dout[i] · act'(pre[i]) for i < n; dinp may alias dout. For ReLU
 * `pre` may be the activated output instead (same sign). */
void cf_act_backward(float *dinp, const float *dout, const float *pre, size_t n, cf_layer_act act);

/* Forward of a dense layer for a batch of B rows:
 *   pre[B, C_out] = inp[B, C_in] · weight[C_in, C_out] + bias
 *   out[B, C_out] = act(pre)
 * For CF_LAYER_LINEAR and CF_LAYER_RELU `pre` may equal `out` (ReLU's
 * backward only needs the sign); GELU needs both kept. */
void cf_dense_forward(float *pre, float *out, const float *inp, const float *weight, const float *bias,
                      int B, int C_in, int C_out, cf_layer_act act);

/* Backward of the same layer. `dout` [B, C_out] holds dL/d(out) on entry
 * and dL/d(pre) on return. Overwrites dweight [C_in, C_out] = inp^T·dpre
 * and dbias [C_out] = column sums of dpre; dinp [B, C_in] = dpre·weight^T
 * unless dinp is NULL (the first layer needs no input gradient). `pre` is
 * the pre-activation (GELU) or the output (ReLU); unused for LINEAR. */
void cf_dense_backward(float *dinp, float *dweight, float *dbias, float *dout, const float *pre,
                       const float *inp, const float *weight, int B, int C_in, int C_out, cf_layer_act act);

/* Softmax cross-entropy over B rows of C logits with integer labels in
 * [0, C). Writes dlogits = (softmax − onehot)·dscale (pass 1/B for the
 * gradient of the mean loss) and returns the summed (not mean) loss. */
double cf_softmax_xent(float *dlogits, const float *logits, const int *labels, int B, int C, float dscale);

/* Σ x[i]² accumulated in double. */
double cf_sqnorm(const float *x, size_t n);
/* acc[i] += x[i]; returns Σ x[i]² (the micro-batch norm, read in the same pass). */
double cf_accumulate_sqnorm(float *acc, const float *x, size_t n);

#ifdef __cplusplus
}
#endif

#endif
