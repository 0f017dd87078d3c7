/* Optimizer updates of the CPU engine (private to cuda_probe/), with
 * PyTorch's conventions so the engine and a PyTorch script given the same
 * gradients take the same step:
 *   sgd       w −= lr·g
 *   momentum  b = μ·b + g;  w −= lr·b                       (μ = 0.9, no dampening)
 *   adam      m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²;
 *             w −= lr·m̂ / (√v̂ + ε),  m̂ = m/(1−β1^t), v̂ = v/(1−β2^t)   (0.9, 0.999, 1e-8)
 *   adamw     w −= lr·λ·w first (decoupled decay, λ = 0.01), then adam
 *   lamb      r = m̂/(√v̂ + ε) + λ·w;  w −= lr·(|w|/|r|)·r per tensor (trust ratio 1 when a norm is 0)
 */
#ifndef CF_PROBE_OPTIM_CPU_H
#define CF_PROBE_OPTIM_CPU_H
#include <stddef.h>
#include "cloudfit/spec/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    cf_optimizer kind;
    float lr, momentum, beta1, beta2, eps, weight_decay;
    long t; /* update number, 1 for the first; the caller increments it once per step */
} cf_optim;

/* Defaults above for `kind` at learning rate `lr`, t = 0. */
void cf_optim_init(cf_optim *o, cf_optimizer kind, float lr);
/* Floats of optimizer state per parameter (0, 1 or 2). */
int cf_optim_state_per_param(cf_optimizer kind);
/* One update of one parameter tensor params[n] from its gradient grads[n].
 * m and v are the tensor's state (each n floats, zero at the start; unused
 * ones may be NULL). Returns Σ grads[i]², read in the same pass (the
 * engine's |mean gradient|² costs no extra pass over memory). */
double cf_optim_update(const cf_optim *o, float *params, const float *grads, float *m, float *v, size_t n);

#ifdef __cplusplus
}
#endif

#endif
