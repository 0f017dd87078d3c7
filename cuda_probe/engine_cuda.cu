// The CUDA engine: the CPU twin's train step (engine_cpu.c) on the GPU,
// step for step — same weights from the same seed, the same samples in the
// same order (the data set stays on the host, as a data loader's would),
// the same kernels through mlp_cuda.h — so the parity test can compare the
// two at a fixed tolerance. Compiled only when nvcc is found.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>

#include "engine_cuda.h"
#include "data_cpu.h"
#include "engine_cpu.h"
#include "mlp_cuda.h"

#define MIB (1024.0 * 1024.0)
#define DEFAULT_SYNTHETIC_SAMPLES 10000

struct cf_engine {
    int n_layers;
    int widths[CF_ENGINE_MAX_LAYERS];
    cf_layer_act hidden_act;
    size_t w_off[CF_ENGINE_MAX_LAYERS], b_off[CF_ENGINE_MAX_LAYERS], n_params;
    float *params, *grads, *micro, *opt_m, *opt_v; // device
    cf_optim optim;
    cf_dataset data;
    int device;
    double device_bytes;
    // One micro-batch's workspace (device) and its host staging (pinned).
    int ws_batch;
    float *ws;
    cf_engine_ws w; // views into ws
    int *labels;
    float *x_host;
    int *labels_host;
    long *idx;
    long idx_cap;
};

namespace {

double now_s()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

cf_status cuda_error(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return CF_OK;
    cudaGetLastError(); // clear it
    if (e == cudaErrorMemoryAllocation)
        return cf_error_set(CF_ERR_DOES_NOT_FIT, "out of memory on the GPU (%s)", what);
    return cf_error_set(CF_ERR_UNAVAILABLE, "CUDA error in %s: %s", what, cudaGetErrorString(e));
}

size_t ws_floats_per_row(const cf_engine *e)
{
    return cf_engine_ws_floats_per_row(e->widths, e->n_layers, e->hidden_act);
}

cf_status out_of_memory(const cf_engine *e, int B, int micro)
{
    char micro_text[48] = "";
    if (micro > 1)
        std::snprintf(micro_text, sizeof micro_text, " (%d micro-batches per step)", micro);
    cf_status st = cf_error_set(CF_ERR_DOES_NOT_FIT, "out of memory: local batch %d%s does not fit the GPU's %.3g MiB",
                                B, micro_text, e->device_bytes / MIB);
    cf_error_hint("use a smaller batch");
    return st;
}

// Makes room for B rows per micro-batch (device and pinned host) and
// B·micro sample indices.
cf_status ensure_workspace(cf_engine *e, int B, int micro)
{
    if (micro > 1 && !e->micro && cudaMalloc(&e->micro, e->n_params * sizeof(float)) != cudaSuccess) {
        cudaGetLastError();
        e->micro = nullptr;
        return out_of_memory(e, B, micro);
    }
    if ((long)B * micro > e->idx_cap) {
        long *idx = (long *)std::realloc(e->idx, (size_t)B * (size_t)micro * sizeof *idx);
        if (!idx)
            return cf_error_set(CF_ERR_NOMEM, "out of host memory for %ld sample indices", (long)B * micro);
        e->idx = idx;
        e->idx_cap = (long)B * micro;
    }
    if (B <= e->ws_batch)
        return CF_OK;
    float *ws = nullptr, *x_host = nullptr;
    int *labels = nullptr, *labels_host = nullptr;
    // The device's memory, then the pinned host staging: a refusal of the
    // host's is the machine's memory, not the GPU's (CF_ERR_NOMEM, exit 1,
    // as the CPU twin's allocation_failed), never the GPU's ceiling.
    bool device_ok = cudaMalloc(&ws, (size_t)B * ws_floats_per_row(e) * sizeof(float)) == cudaSuccess &&
                     cudaMalloc(&labels, (size_t)B * sizeof(int)) == cudaSuccess;
    double host_bytes = (double)B * ((double)e->widths[0] * sizeof(float) + sizeof(int));
    bool host_ok = device_ok && cudaMallocHost(&x_host, (size_t)B * e->widths[0] * sizeof(float)) == cudaSuccess &&
                   cudaMallocHost(&labels_host, (size_t)B * sizeof(int)) == cudaSuccess;
    if (!host_ok) {
        cudaGetLastError();
        cudaFree(ws);
        cudaFree(labels);
        cudaFreeHost(x_host);
        cudaFreeHost(labels_host);
        if (!device_ok)
            return out_of_memory(e, B, micro);
        cf_status st = cf_error_set(CF_ERR_NOMEM,
                                    "out of memory: the system refused %.3g MiB of pinned host memory to stage local "
                                    "batch %d for the GPU", host_bytes / MIB, B);
        cf_error_hint("the machine's free memory or the process's memory limit (ulimit -v) was reached, not the "
                      "GPU's: free memory or raise that limit, or use a smaller batch");
        return st;
    }
    cudaFree(e->ws);
    cudaFree(e->labels);
    cudaFreeHost(e->x_host);
    cudaFreeHost(e->labels_host);
    e->ws = ws;
    e->labels = labels;
    e->x_host = x_host;
    e->labels_host = labels_host;
    e->ws_batch = B;
    cf_engine_ws_carve(e->widths, e->n_layers, e->hidden_act, B, ws, &e->w);
    return CF_OK;
}

void cuda_destroy(cf_engine *e)
{
    if (!e)
        return;
    cudaFree(e->params);
    cudaFree(e->grads);
    cudaFree(e->micro);
    cudaFree(e->opt_m);
    cudaFree(e->opt_v);
    cudaFree(e->ws);
    cudaFree(e->labels);
    cudaFreeHost(e->x_host);
    cudaFreeHost(e->labels_host);
    std::free(e->idx);
    cf_dataset_free(&e->data);
    std::free(e);
}

cf_status cuda_create(const cf_engine_config *config, cf_engine **out)
{
    *out = nullptr;
    cf_status st = cf_engine_check_config(config);
    if (st != CF_OK)
        return st;
    if ((st = cf_cuda_blas_init()) != CF_OK)
        return st;
    cf_engine *e = (cf_engine *)std::calloc(1, sizeof *e);
    if (!e)
        return cf_error_set(CF_ERR_NOMEM, "out of memory creating the CUDA engine");
    e->n_layers = config->n_widths - 1;
    std::memcpy(e->widths, config->widths, (size_t)config->n_widths * sizeof *e->widths);
    e->hidden_act = config->activation == CF_ACT_GELU ? CF_LAYER_GELU : CF_LAYER_RELU;
    cf_optim_init(&e->optim, config->optimizer, (float)config->lr);
    for (int l = 0; l < e->n_layers; l++) {
        e->w_off[l] = e->n_params;
        e->n_params += (size_t)e->widths[l] * e->widths[l + 1];
        e->b_off[l] = e->n_params;
        e->n_params += (size_t)e->widths[l + 1];
    }
    size_t free_bytes = 0, total_bytes = 0;
    if ((st = cuda_error(cudaGetDevice(&e->device), "cudaGetDevice")) != CF_OK ||
        (st = cuda_error(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo")) != CF_OK) {
        cuda_destroy(e);
        return st;
    }
    e->device_bytes = (double)total_bytes;
    size_t bytes = e->n_params * sizeof(float);
    int n_state = cf_optim_state_per_param(config->optimizer);
    if (cudaMalloc(&e->params, bytes) != cudaSuccess || cudaMalloc(&e->grads, bytes) != cudaSuccess ||
        (n_state >= 1 && cudaMalloc(&e->opt_m, bytes) != cudaSuccess) ||
        (n_state >= 2 && cudaMalloc(&e->opt_v, bytes) != cudaSuccess)) {
        cudaGetLastError();
        cuda_destroy(e);
        return cf_error_set(CF_ERR_DOES_NOT_FIT, "out of memory on the GPU: the model state needs %.3g MiB",
                            (double)bytes * (2 + n_state) / MIB);
    }
    // The optimizer state must start at zero: a failed clear is the engine's
    // failure here, not a "CUDA error in the training step" later.
    if ((st = cuda_error(cudaMemset(e->grads, 0, bytes), "clearing the gradients")) != CF_OK ||
        (e->opt_m && (st = cuda_error(cudaMemset(e->opt_m, 0, bytes), "clearing the optimizer state")) != CF_OK) ||
        (e->opt_v && (st = cuda_error(cudaMemset(e->opt_v, 0, bytes), "clearing the optimizer state")) != CF_OK)) {
        cuda_destroy(e);
        return st;
    }
    float *host = (float *)std::malloc(bytes);
    if (!host) {
        cuda_destroy(e);
        return cf_error_set(CF_ERR_NOMEM, "out of host memory for the initial weights");
    }
    cf_engine_init_weights(e->widths, e->n_layers, config->seed, host);
    st = cuda_error(cudaMemcpy(e->params, host, bytes, cudaMemcpyHostToDevice), "copying the weights");
    std::free(host);
    int in = e->widths[0], classes = e->widths[e->n_layers];
    if (st == CF_OK)
        st = config->npy_x ? cf_dataset_npy(&e->data, config->npy_x, config->npy_y, in, classes, config->seed)
                           : cf_dataset_synthetic(&e->data,
                                                  config->synthetic_samples ? config->synthetic_samples
                                                                            : DEFAULT_SYNTHETIC_SAMPLES,
                                                  in, classes, config->seed);
    if (st != CF_OK) {
        cuda_destroy(e);
        return st;
    }
    *out = e;
    return CF_OK;
}

cf_status cuda_describe(cf_engine *e, cf_device_info *out)
{
    std::memset(out, 0, sizeof *out);
    cudaDeviceProp prop;
    cf_status st = cuda_error(cudaGetDeviceProperties(&prop, e->device), "cudaGetDeviceProperties");
    if (st != CF_OK)
        return st;
    std::snprintf(out->name, sizeof out->name, "%s", prop.name);
    out->memory_gib = (double)prop.totalGlobalMem / (MIB * 1024.0);
    out->compute_major = prop.major;
    out->compute_minor = prop.minor;
    out->multiprocessors = prop.multiProcessorCount;
    return CF_OK;
}

// The CPU twin's forward_backward with the _cuda kernels.
double forward_backward(cf_engine *e, int B, float dscale, float *grads)
{
    const int L = e->n_layers;
    const float *inp = e->w.x_in;
    for (int l = 0; l < L; l++) {
        cf_layer_act act = l < L - 1 ? e->hidden_act : CF_LAYER_LINEAR;
        cf_dense_forward_cuda(e->w.pre[l], e->w.act[l], inp, e->params + e->w_off[l], e->params + e->b_off[l], B,
                              e->widths[l], e->widths[l + 1], act);
        inp = e->w.act[l];
    }
    double loss = cf_softmax_xent_cuda(e->w.dlogits, e->w.act[L - 1], e->labels, B, e->widths[L], dscale);
    float *dout = e->w.dlogits;
    for (int l = L - 1; l >= 0; l--) {
        cf_layer_act act = l < L - 1 ? e->hidden_act : CF_LAYER_LINEAR;
        float *dinp = l > 0 ? e->w.dbuf[l & 1] : nullptr;
        cf_dense_backward_cuda(dinp, grads + e->w_off[l], grads + e->b_off[l], dout,
                               act == CF_LAYER_LINEAR ? nullptr : e->w.pre[l], l > 0 ? e->w.act[l - 1] : e->w.x_in,
                               e->params + e->w_off[l], B, e->widths[l], e->widths[l + 1], act);
        dout = dinp;
    }
    return loss;
}

cf_status cuda_train_step(cf_engine *e, int local_batch, int micro_batches, cf_engine_step *out)
{
    std::memset(out, 0, sizeof *out);
    cf_status st = cf_engine_check_step(local_batch, micro_batches);
    if (st != CF_OK)
        return st;
    st = ensure_workspace(e, local_batch, micro_batches);
    if (st != CF_OK)
        return st;
    const int B = local_batch, k = micro_batches;
    cf_dataset_take(&e->data, (long)B * k, e->idx);

    cudaDeviceSynchronize();
    double t0 = now_s();
    float dscale = 1.0f / ((float)B * (float)k);
    double loss = 0.0;
    for (int i = 0; i < k; i++) {
        // Host gather and copy: a data loader's last step, inside the
        // timed step as in the CPU twin.
        cf_dataset_gather(&e->data, e->idx + (size_t)i * B, B, e->x_host, e->labels_host);
        cudaMemcpy(e->w.x_in, e->x_host, (size_t)B * e->widths[0] * sizeof(float), cudaMemcpyHostToDevice);
        cudaMemcpy(e->labels, e->labels_host, (size_t)B * sizeof(int), cudaMemcpyHostToDevice);
        float *target = (k == 1 || i == 0) ? e->grads : e->micro;
        loss += forward_backward(e, B, dscale, target);
        if (k > 1) {
            double sq = i == 0 ? cf_sqnorm_cuda(e->grads, e->n_params)
                               : cf_accumulate_sqnorm_cuda(e->grads, e->micro, e->n_params);
            out->micro_sqnorms[i] = sq * (double)k * (double)k;
        }
    }
    e->optim.t++;
    double mean_sq = 0.0;
    for (int l = 0; l < e->n_layers; l++) {
        size_t nw = (size_t)e->widths[l] * e->widths[l + 1], nb = (size_t)e->widths[l + 1];
        size_t offs[2] = {e->w_off[l], e->b_off[l]}, lens[2] = {nw, nb};
        for (int t = 0; t < 2; t++)
            mean_sq += cf_optim_update_cuda(&e->optim, e->params + offs[t], e->grads + offs[t],
                                            e->opt_m ? e->opt_m + offs[t] : nullptr,
                                            e->opt_v ? e->opt_v + offs[t] : nullptr, lens[t]);
    }
    cudaDeviceSynchronize();
    out->time_s = now_s() - t0;
    if ((st = cf_cuda_check("the training step")) != CF_OK)
        return st;
    out->mean_sqnorm = mean_sq;
    if (k == 1)
        out->micro_sqnorms[0] = mean_sq;
    out->samples = (long)B * k;
    out->n_micro = k;
    out->loss = loss / (double)out->samples;
    if (!std::isfinite(out->loss) || !std::isfinite(out->mean_sqnorm)) {
        /* name what is not finite: the gradient can overflow (or turn NaN)
         * while the loss is still a number */
        if (!std::isfinite(out->loss))
            cf_error_set(CF_ERR_INVALID, "training diverged: the loss is %g at step %ld", out->loss, e->optim.t);
        else
            cf_error_set(CF_ERR_INVALID, "training diverged: the gradient's squared norm is %g at step %ld (loss %g)",
                         out->mean_sqnorm, e->optim.t, out->loss);
        cf_error_hint("lower the learning rate, or scale the input features");
        return CF_ERR_INVALID;
    }
    return CF_OK;
}

const cf_engine_ops cuda_ops = {"cuda", cuda_create, cuda_describe, cuda_train_step, cuda_destroy};

} // namespace

extern "C" const cf_engine_ops *cf_cuda_engine_ops(void) { return &cuda_ops; }
