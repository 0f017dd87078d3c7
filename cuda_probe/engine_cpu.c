/* The CPU twin of the training engine: an MLP trained in float32 with
 * OpenBLAS (see include/cloudfit/engine.h for the contract). */
#include "cloudfit/cuda_probe.h"

#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "data_cpu.h"
#include "engine_cpu.h"
#include "mlp_cpu.h"
#include "npy.h"
#include "optim_cpu.h"
#include "cloudfit/common/env_settings.h"
#include "cloudfit/common/number.h"

#define MIB (1024.0 * 1024.0)
#define DEFAULT_SYNTHETIC_SAMPLES 10000

struct cf_engine {
    int n_layers;                       /* dense layers = n_widths − 1 */
    int widths[CF_ENGINE_MAX_LAYERS];
    cf_layer_act hidden_act;
    size_t w_off[CF_ENGINE_MAX_LAYERS], b_off[CF_ENGINE_MAX_LAYERS], n_params;
    float *params, *grads;
    float *micro;                       /* a micro-batch's gradient when a step has several */
    float *opt_m, *opt_v;
    cf_optim optim;
    cf_dataset data;
    double limit_bytes;
    char limit_source[96];
    int threads;
    /* Workspace for ws_batch rows (one micro-batch), grown on demand. */
    int ws_batch;
    float *ws;
    cf_engine_ws w;                     /* views into ws */
    int *labels;
    long *idx;
    long idx_cap;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- memory accounting ---------------------------------------------------- */

static double state_bytes(const cf_engine *e, int with_micro)
{
    int floats = 2 + cf_optim_state_per_param(e->optim.kind) + (with_micro ? 1 : 0);
    return (double)e->n_params * floats * sizeof(float);
}

static int widest_hidden(const int *widths, int n_layers)
{
    int m = 1;
    for (int l = 1; l < n_layers; l++)
        if (widths[l] > m)
            m = widths[l];
    return m;
}

cf_status cf_engine_check_step(int local_batch, int micro_batches)
{
    if (local_batch < 1)
        return cf_error_set(CF_ERR_INVALID, "the local batch must be at least 1, got %d", local_batch);
    if (micro_batches < 1 || micro_batches > CF_ENGINE_MAX_MICRO)
        return cf_error_set(CF_ERR_INVALID, "micro-batches per step must be 1 to %d, got %d", CF_ENGINE_MAX_MICRO,
                            micro_batches);
    return CF_OK;
}

size_t cf_engine_ws_floats_per_row(const int *widths, int n_layers, cf_layer_act hidden_act)
{
    size_t f = (size_t)widths[0];
    for (int l = 0; l < n_layers; l++) {
        int keep_pre = hidden_act == CF_LAYER_GELU && l < n_layers - 1;
        f += (size_t)widths[l + 1] * (keep_pre ? 2 : 1);
    }
    f += (size_t)widths[n_layers];              /* dlogits */
    f += 2 * (size_t)widest_hidden(widths, n_layers); /* backward ping-pong */
    return f;
}

void cf_engine_ws_carve(const int *widths, int n_layers, cf_layer_act hidden_act, int B, float *ws,
                        cf_engine_ws *out)
{
    float *p = ws;
    out->x_in = p;
    p += (size_t)B * widths[0];
    for (int l = 0; l < n_layers; l++) {
        size_t len = (size_t)B * widths[l + 1];
        out->act[l] = p;
        p += len;
        if (hidden_act == CF_LAYER_GELU && l < n_layers - 1) {
            out->pre[l] = p;
            p += len;
        } else {
            out->pre[l] = out->act[l];
        }
    }
    out->dlogits = p;
    p += (size_t)B * widths[n_layers];
    out->dbuf[0] = p;
    p += (size_t)B * widest_hidden(widths, n_layers);
    out->dbuf[1] = p;
}

static size_t ws_floats_per_row(const cf_engine *e)
{
    return cf_engine_ws_floats_per_row(e->widths, e->n_layers, e->hidden_act);
}

static double ws_bytes(const cf_engine *e, int B, int micro)
{
    return (double)B * (double)(ws_floats_per_row(e) * sizeof(float) + sizeof(int)) +
           (double)B * micro * sizeof(long);
}

static cf_status out_of_memory(const cf_engine *e, int B, int micro, double need)
{
    char micro_text[48] = "";
    if (micro > 1)
        snprintf(micro_text, sizeof micro_text, " (%d micro-batches per step)", micro);
    cf_status st = cf_error_set(CF_ERR_DOES_NOT_FIT,
                                "out of memory: local batch %d%s needs %.3g MiB "
                                "(model state %.3g MiB + activations %.3g MiB), over the %.3g MiB limit (%s)",
                                B, micro_text, need / MIB, state_bytes(e, micro > 1) / MIB,
                                ws_bytes(e, B, micro) / MIB, e->limit_bytes / MIB, e->limit_source);
    cf_error_hint("use a smaller batch or raise CLOUDFIT_CPU_MEMORY_LIMIT_MIB");
    return st;
}

/* Smallest of cgroup v2, cgroup v1 and physical memory. */
static double machine_memory_bytes(char *source, size_t n)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double bytes = (pages > 0 && page > 0) ? (double)pages * (double)page : 1e12;
    snprintf(source, n, "physical memory");
    static const char *const cgroup_files[] = {"/sys/fs/cgroup/memory.max",
                                               "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (size_t i = 0; i < 2; i++) {
        FILE *f = fopen(cgroup_files[i], "r");
        if (!f)
            continue;
        double v = 0;
        if (fscanf(f, "%lf", &v) == 1 && v > 0 && v < bytes) {
            bytes = v;
            snprintf(source, n, "cgroup memory limit");
        }
        fclose(f);
    }
    return bytes;
}

static cf_status memory_limit(const cf_engine_config *config, double *bytes, char *source, size_t n)
{
    if (config->memory_limit_mib > 0) {
        *bytes = config->memory_limit_mib * MIB;
        snprintf(source, n, "the engine's memory limit");
        return CF_OK;
    }
    /* a value it cannot use is a warning of the CLI's, and the default (common/env_settings.c) */
    double v = 0;
    if (cf_env_setting("CLOUDFIT_CPU_MEMORY_LIMIT_MIB", &v)) {
        *bytes = v * MIB;
        snprintf(source, n, "CLOUDFIT_CPU_MEMORY_LIMIT_MIB");
        return CF_OK;
    }
    /* By default a device of a quarter of the machine's memory, at most
     * 4 GiB: the sweep looks for the largest batch that fits, and a limit
     * of the whole machine let it allocate gigabytes (3.1 GB at a quarter
     * of the largest accepted batch) and push the machine into swap. */
    char machine[32];
    double whole = machine_memory_bytes(machine, sizeof machine);
    *bytes = fmin(whole / 4, 4096 * MIB);
    snprintf(source, n, "default: 1/4 of %s, at most 4 GiB", machine);
    return CF_OK;
}

/* An allocation the engine's own limit allowed and the system refused
 * (the process's address-space limit, ulimit -v, or the machine's memory):
 * CF_ERR_NOMEM, exit 1, never CF_ERR_DOES_NOT_FIT. That one is a property
 * of the device the sweep records (its ceiling) and reports as infeasible
 * with the hint to raise CLOUDFIT_CPU_MEMORY_LIMIT_MIB, which cannot help
 * here. */
static cf_status allocation_failed(const cf_engine *e, const char *what, double bytes)
{
    cf_status st = cf_error_set(CF_ERR_NOMEM,
                                "out of memory: the system refused %.3g MiB for %s (within the engine's %.0f MiB "
                                "limit, %s)", bytes / MIB, what, e->limit_bytes / MIB, e->limit_source);
    cf_error_hint("the process's memory limit (ulimit -v) or the machine's free memory was reached, not "
                  "CLOUDFIT_CPU_MEMORY_LIMIT_MIB: raise that limit or free memory, or use a smaller batch");
    return st;
}

/* Makes room for B rows per micro-batch and B·micro sample indices. */
static cf_status ensure_workspace(cf_engine *e, int B, int micro)
{
    double need = state_bytes(e, micro > 1) + ws_bytes(e, B, micro);
    if (need > e->limit_bytes)
        return out_of_memory(e, B, micro, need);
    if (micro > 1 && !e->micro) {
        e->micro = malloc(e->n_params * sizeof *e->micro);
        if (!e->micro)
            return allocation_failed(e, "the micro-batch gradients", (double)(e->n_params * sizeof *e->micro));
    }
    if ((long)B * micro > e->idx_cap) {
        long *idx = realloc(e->idx, (size_t)B * (size_t)micro * sizeof *idx);
        if (!idx)
            return allocation_failed(e, "the sample indices", (double)B * micro * sizeof *idx);
        e->idx = idx;
        e->idx_cap = (long)B * micro;
    }
    if (B <= e->ws_batch)
        return CF_OK;
    float *ws = malloc((size_t)B * ws_floats_per_row(e) * sizeof *ws);
    int *labels = malloc((size_t)B * sizeof *labels);
    if (!ws || !labels) {
        free(ws);
        free(labels);
        char what[64];
        snprintf(what, sizeof what, "the activations of local batch %d", B);
        return allocation_failed(e, what, (double)B * (double)(ws_floats_per_row(e) * sizeof(float) + sizeof(int)));
    }
    free(e->ws);
    free(e->labels);
    e->ws = ws;
    e->labels = labels;
    e->ws_batch = B;
    cf_engine_ws_carve(e->widths, e->n_layers, e->hidden_act, B, ws, &e->w);
    return CF_OK;
}

/* ---- creation --------------------------------------------------------------- */

cf_status cf_engine_check_config(const cf_engine_config *c)
{
    if (c->n_widths < 2 || c->n_widths > CF_ENGINE_MAX_LAYERS)
        return cf_error_set(CF_ERR_INVALID, "the MLP needs 2 to %d layer widths (input … classes), got %d",
                            CF_ENGINE_MAX_LAYERS, c->n_widths);
    for (int i = 0; i < c->n_widths; i++)
        if (c->widths[i] < 1 || c->widths[i] > 1 << 20)
            return cf_error_set(CF_ERR_INVALID, "layer width %d is %d; expected 1 to %d", i, c->widths[i], 1 << 20);
    if (c->widths[c->n_widths - 1] < 2)
        return cf_error_set(CF_ERR_INVALID, "the output layer needs at least 2 classes, got %d",
                            c->widths[c->n_widths - 1]);
    if (c->activation != CF_ACT_RELU && c->activation != CF_ACT_GELU)
        return cf_error_set(CF_ERR_INVALID, "unknown activation %d", (int)c->activation);
    if ((unsigned)c->optimizer > (unsigned)CF_OPT_LAMB)
        return cf_error_set(CF_ERR_INVALID, "unknown optimizer %d", (int)c->optimizer);
    if (!(c->lr > 0) || !isfinite(c->lr))
        return cf_error_set(CF_ERR_INVALID, "the learning rate must be a positive number, got %g", c->lr);
    if (!c->npy_x != !c->npy_y)
        return cf_error_set(CF_ERR_INVALID, "NumPy data needs both an x file and a y file");
    if (!c->npy_x && c->synthetic_samples < 0)
        return cf_error_set(CF_ERR_INVALID, "synthetic_samples must be positive, got %ld", c->synthetic_samples);
    if (c->threads < 0)
        return cf_error_set(CF_ERR_INVALID, "threads must be 0 (library default) or positive, got %d", c->threads);
    return CF_OK;
}

void cf_engine_init_weights(const int *widths, int n_layers, uint64_t seed, float *params)
{
    /* PyTorch's nn.Linear default: weight and bias ~ U(−1/√in, 1/√in),
     * laid out layer by layer as weight [in, out] then bias [out]. */
    cf_rng rng;
    cf_rng_seed(&rng, seed, 0);
    size_t off = 0;
    for (int l = 0; l < n_layers; l++) {
        double bound = 1.0 / sqrt((double)widths[l]);
        size_t n = (size_t)widths[l] * widths[l + 1] + (size_t)widths[l + 1];
        for (size_t i = 0; i < n; i++)
            params[off + i] = (float)((2.0 * cf_rng_uniform(&rng) - 1.0) * bound);
        off += n;
    }
}

static void cpu_destroy(cf_engine *e)
{
    if (!e)
        return;
    free(e->params);
    free(e->grads);
    free(e->micro);
    free(e->opt_m);
    free(e->opt_v);
    free(e->ws);
    free(e->labels);
    free(e->idx);
    cf_dataset_free(&e->data);
    free(e);
}

static cf_status cpu_create(const cf_engine_config *config, cf_engine **out)
{
    *out = NULL;
    cf_status st = cf_engine_check_config(config);
    if (st != CF_OK)
        return st;
    cf_engine *e = calloc(1, sizeof *e);
    if (!e)
        return cf_error_set(CF_ERR_NOMEM, "out of memory creating the CPU engine");
    e->n_layers = config->n_widths - 1;
    memcpy(e->widths, config->widths, (size_t)config->n_widths * sizeof *e->widths);
    e->hidden_act = config->activation == CF_ACT_GELU ? CF_LAYER_GELU : CF_LAYER_RELU;
    e->threads = config->threads;
    cf_optim_init(&e->optim, config->optimizer, (float)config->lr);
    for (int l = 0; l < e->n_layers; l++) {
        e->w_off[l] = e->n_params;
        e->n_params += (size_t)e->widths[l] * e->widths[l + 1];
        e->b_off[l] = e->n_params;
        e->n_params += (size_t)e->widths[l + 1];
    }
    if ((st = memory_limit(config, &e->limit_bytes, e->limit_source, sizeof e->limit_source)) != CF_OK) {
        cpu_destroy(e);
        return st;
    }
    double need = state_bytes(e, 0);
    if (need > e->limit_bytes) {
        st = cf_error_set(CF_ERR_DOES_NOT_FIT,
                          "out of memory: the model state needs %.3g MiB, over the %.3g MiB limit (%s)", need / MIB,
                          e->limit_bytes / MIB, e->limit_source);
        cpu_destroy(e);
        return st;
    }
    int n_state = cf_optim_state_per_param(config->optimizer);
    e->params = malloc(e->n_params * sizeof *e->params);
    e->grads = calloc(e->n_params, sizeof *e->grads);
    if (n_state >= 1)
        e->opt_m = calloc(e->n_params, sizeof *e->opt_m);
    if (n_state >= 2)
        e->opt_v = calloc(e->n_params, sizeof *e->opt_v);
    if (!e->params || !e->grads || (n_state >= 1 && !e->opt_m) || (n_state >= 2 && !e->opt_v)) {
        st = allocation_failed(e, "the model state", need);
        cpu_destroy(e);
        return st;
    }
    cf_engine_init_weights(e->widths, e->n_layers, config->seed, e->params);
    int in = e->widths[0], classes = e->widths[e->n_layers];
    if (config->npy_x)
        st = cf_dataset_npy(&e->data, config->npy_x, config->npy_y, in, classes, config->seed);
    else
        st = cf_dataset_synthetic(&e->data,
                                  config->synthetic_samples ? config->synthetic_samples : DEFAULT_SYNTHETIC_SAMPLES,
                                  in, classes, config->seed);
    if (st != CF_OK) {
        cpu_destroy(e);
        return st;
    }
    if (e->threads > 0)
        openblas_set_num_threads(e->threads);
    *out = e;
    return CF_OK;
}

/* ---- description -------------------------------------------------------------- */

static void cpu_model_name(char *out, size_t n)
{
    snprintf(out, n, "CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        char *colon = strchr(line, ':');
        if (!colon)
            break;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(out, n, "%s", colon);
        break;
    }
    fclose(f);
}

static cf_status cpu_describe(cf_engine *e, cf_device_info *out)
{
    memset(out, 0, sizeof *out);
    char model[96];
    cpu_model_name(model, sizeof model);
    int threads = e->threads > 0 ? e->threads : openblas_get_num_threads();
    snprintf(out->name, sizeof out->name, "%s (CPU, %d thread%s)", model, threads, threads == 1 ? "" : "s");
    out->memory_gib = e->limit_bytes / (MIB * 1024.0);
    out->multiprocessors = threads;
    return CF_OK;
}

/* ---- the step ----------------------------------------------------------------- */

/* Forward and backward of one micro-batch of B rows already in x_in and
 * labels; writes the gradient of (loss sum × dscale) into grads and
 * returns the summed loss. */
static double forward_backward(cf_engine *e, int B, float dscale, float *grads)
{
    const int L = e->n_layers;
    const float *inp = e->w.x_in;
    for (int l = 0; l < L; l++) {
        cf_layer_act act = l < L - 1 ? e->hidden_act : CF_LAYER_LINEAR;
        cf_dense_forward(e->w.pre[l], e->w.act[l], inp, e->params + e->w_off[l], e->params + e->b_off[l], B,
                         e->widths[l], e->widths[l + 1], act);
        inp = e->w.act[l];
    }
    double loss = cf_softmax_xent(e->w.dlogits, e->w.act[L - 1], e->labels, B, e->widths[L], dscale);
    float *dout = e->w.dlogits;
    for (int l = L - 1; l >= 0; l--) {
        cf_layer_act act = l < L - 1 ? e->hidden_act : CF_LAYER_LINEAR;
        float *dinp = l > 0 ? e->w.dbuf[l & 1] : NULL;
        cf_dense_backward(dinp, grads + e->w_off[l], grads + e->b_off[l], dout,
                          act == CF_LAYER_LINEAR ? NULL : e->w.pre[l], l > 0 ? e->w.act[l - 1] : e->w.x_in,
                          e->params + e->w_off[l], B, e->widths[l], e->widths[l + 1], act);
        dout = dinp;
    }
    return loss;
}

static cf_status cpu_train_step(cf_engine *e, int local_batch, int micro_batches, cf_engine_step *out)
{
    memset(out, 0, sizeof *out);
    cf_status st = cf_engine_check_step(local_batch, micro_batches);
    if (st != CF_OK)
        return st;
    st = ensure_workspace(e, local_batch, micro_batches);
    if (st != CF_OK)
        return st;
    if (e->threads > 0 && openblas_get_num_threads() != e->threads)
        openblas_set_num_threads(e->threads);
    const int B = local_batch, k = micro_batches;
    /* Choosing (and, for synthetic data, generating) the samples is the
     * data loader's work and stays outside the timed step. */
    cf_dataset_take(&e->data, (long)B * k, e->idx);

    double t0 = now_s();
    /* Gradients of the mean loss over all B·k samples: each micro-batch
     * contributes its mean gradient / k, so |g_i|² = k²·|contribution|². */
    float dscale = 1.0f / ((float)B * (float)k);
    double loss = 0.0;
    for (int i = 0; i < k; i++) {
        cf_dataset_gather(&e->data, e->idx + (size_t)i * B, B, e->w.x_in, e->labels);
        float *target = (k == 1 || i == 0) ? e->grads : e->micro;
        loss += forward_backward(e, B, dscale, target);
        if (k > 1) {
            double sq = i == 0 ? cf_sqnorm(e->grads, e->n_params)
                               : cf_accumulate_sqnorm(e->grads, e->micro, e->n_params);
            out->micro_sqnorms[i] = sq * (double)k * (double)k;
        }
    }
    /* The update reads every gradient anyway: |mean gradient|² comes from
     * the same pass. */
    e->optim.t++;
    double mean_sq = 0.0;
    for (int l = 0; l < e->n_layers; l++) {
        size_t nw = (size_t)e->widths[l] * e->widths[l + 1], nb = (size_t)e->widths[l + 1];
        size_t offs[2] = {e->w_off[l], e->b_off[l]}, lens[2] = {nw, nb};
        for (int t = 0; t < 2; t++)
            mean_sq += cf_optim_update(&e->optim, e->params + offs[t], e->grads + offs[t],
                                       e->opt_m ? e->opt_m + offs[t] : NULL, e->opt_v ? e->opt_v + offs[t] : NULL,
                                       lens[t]);
    }
    out->mean_sqnorm = mean_sq;
    if (k == 1)
        out->micro_sqnorms[0] = mean_sq;
    out->time_s = now_s() - t0;
    out->samples = (long)B * k;
    out->n_micro = k;
    out->loss = loss / (double)out->samples;
    if (!isfinite(out->loss) || !isfinite(out->mean_sqnorm)) {
        /* name what is not finite: the gradient can overflow (or turn NaN)
         * while the loss is still a number */
        if (!isfinite(out->loss))
            cf_error_set(CF_ERR_INVALID, "training diverged: the loss is %g at step %ld", out->loss, e->optim.t);
        else
            cf_error_set(CF_ERR_INVALID, "training diverged: the gradient's squared norm is %g at step %ld (loss %g)",
                         out->mean_sqnorm, e->optim.t, out->loss);
        cf_error_hint("lower the learning rate, or scale the input features");
        return CF_ERR_INVALID;
    }
    return CF_OK;
}

static const cf_engine_ops cpu_ops = {"cpu", cpu_create, cpu_describe, cpu_train_step, cpu_destroy};

const cf_engine_ops *cf_engine_cpu(void) { return &cpu_ops; }

/* ---- helpers for tests and tools (engine_cpu.h) ---------------------------- */

size_t cf_engine_cpu_n_params(const cf_engine *e) { return e->n_params; }
float *cf_engine_cpu_params(cf_engine *e) { return e->params; }
const float *cf_engine_cpu_grads(const cf_engine *e) { return e->grads; }
const long *cf_engine_cpu_last_indices(const cf_engine *e) { return e->idx; }

double cf_engine_flops_per_sample(const cf_engine_config *config)
{
    double fwd = 0.0, dinp = 0.0;
    for (int l = 0; l + 1 < config->n_widths; l++) {
        double mac = (double)config->widths[l] * config->widths[l + 1];
        fwd += 2.0 * mac;
        if (l > 0)
            dinp += 2.0 * mac;
    }
    return 2.0 * fwd + dinp;
}

cf_status cf_engine_write_synthetic_npy(const cf_engine_config *config, const char *x_path, const char *y_path)
{
    cf_status st = cf_engine_check_config(config);
    if (st != CF_OK)
        return st;
    cf_dataset ds;
    long n = config->synthetic_samples ? config->synthetic_samples : DEFAULT_SYNTHETIC_SAMPLES;
    if ((st = cf_dataset_synthetic(&ds, n, config->widths[0], config->widths[config->n_widths - 1], config->seed)) !=
        CF_OK)
        return st;
    cf_dataset_materialize(&ds);
    st = cf_npy_save_f32_matrix(x_path, ds.x, ds.n, ds.in);
    if (st == CF_OK)
        st = cf_npy_save_i64_vector(y_path, ds.y, ds.n);
    cf_dataset_free(&ds);
    return st;
}
