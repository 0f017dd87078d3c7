/* Probe backends over the built-in training engine (include/cloudfit/engine.h):
 * cpu (cf_engine_cpu) and cuda (cf_engine_cuda). Each run creates a fresh
 * engine from the spec's seed, so every batch size and the noise run start
 * from the same weights. */
/* The largest synthetic data set the engine builds (512 MiB of sample order),
 * and the most features it reserves for it (samples × input width floats:
 * 16 GiB of address space, of which only the rows drawn are ever touched). */
#define CF_ENGINE_MAX_SYNTHETIC_SAMPLES (1 << 26)
#define CF_ENGINE_MAX_SYNTHETIC_FLOATS 4294967296.0

#include "cloudfit/profiler.h"
#include "cloudfit/common/proc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cf_probe {
    const cf_engine_ops *ops;
    cf_engine_config config;
    const char *backend;
};

static cf_status config_from_job(const cf_job *job, const char *backend, cf_engine_config *c)
{
    memset(c, 0, sizeof *c);
    if (strcmp(job->architecture_type, "mlp") != 0) {
        cf_error_set(CF_ERR_INVALID, "%s: the %s backend trains model.architecture of type \"mlp\", got %s%s%s",
                     job->source[0] ? job->source : "<spec>", backend, job->architecture_type[0] ? "\"" : "none",
                     job->architecture_type, job->architecture_type[0] ? "\"" : "");
        cf_error_hint("describe the model in model.architecture, or profile your own training script with "
                      "--backend exec (profile.command)");
        return CF_ERR_INVALID;
    }
    if (job->n_mlp_layers < 2 || job->n_mlp_layers > CF_ENGINE_MAX_LAYERS)
        return cf_error_set(CF_ERR_INVALID, "%s: model.architecture.layers: expected 2 to %d widths, got %d",
                            job->source, CF_ENGINE_MAX_LAYERS, job->n_mlp_layers);
    /* the engine trains a classifier (softmax over the last width): a
     * single output has no second class, refused here with the key rather
     * than by the engine mid-sweep */
    if (job->mlp_layers[job->n_mlp_layers - 1] < 2) {
        cf_error_set(CF_ERR_INVALID, "%s: model.architecture.layers[%d]: the %s backend trains a classifier: the "
                     "output width is its classes, at least 2, got %d", job->source, job->n_mlp_layers - 1, backend,
                     job->mlp_layers[job->n_mlp_layers - 1]);
        cf_error_hint("a regression head of width 1 cannot be profiled by the built-in engine: use 2 outputs (the "
                      "step time is the same), or measure your own script with --backend exec");
        return CF_ERR_INVALID;
    }
    for (int i = 0; i < job->n_mlp_layers; i++)
        c->widths[i] = job->mlp_layers[i];
    c->n_widths = job->n_mlp_layers;
    c->activation = strcmp(job->activation, "gelu") == 0 ? CF_ACT_GELU : CF_ACT_RELU;
    c->optimizer = job->optimizer;
    c->lr = job->lr;
    if (strcmp(job->data_source, "npy") == 0) {
        c->npy_x = job->npy_x;
        c->npy_y = job->npy_y;
    } else if (strcmp(job->data_source, "tokens") == 0) {
        return cf_error_set(CF_ERR_INVALID, "%s: data.source: the %s backend's MLP reads \"synthetic\" or npy data, "
                            "not tokens", job->source, backend);
    }
    c->synthetic_samples = (long)job->samples_per_epoch;
    /* The built-in engine keeps the sample order of the whole synthetic
     * data set in memory (8 bytes a sample, and the rows it draws): bounded
     * before it sizes an allocation. */
    if (!c->npy_x && job->samples_per_epoch > CF_ENGINE_MAX_SYNTHETIC_SAMPLES) {
        cf_error_set(CF_ERR_INVALID, "%s: data.samples: the %s backend's synthetic data set holds at most %d samples, "
                     "got %.0f", job->source, backend, CF_ENGINE_MAX_SYNTHETIC_SAMPLES, job->samples_per_epoch);
        cf_error_hint("profile with a smaller data.samples (the step times and the noise scale do not depend on "
                      "it), or measure your own script with --backend exec");
        return CF_ERR_INVALID;
    }
    double floats = job->samples_per_epoch * job->mlp_layers[0];
    if (!c->npy_x && floats > CF_ENGINE_MAX_SYNTHETIC_FLOATS) {
        cf_error_set(CF_ERR_INVALID, "%s: data.samples × model.architecture.layers[0]: the %s backend's synthetic "
                     "data set of %.0f samples × %d features is %.3g GiB, more than %.0f GiB", job->source, backend,
                     job->samples_per_epoch, job->mlp_layers[0], floats * 4 / (1 << 30),
                     CF_ENGINE_MAX_SYNTHETIC_FLOATS * 4 / (1 << 30));
        cf_error_hint("profile with a smaller data.samples (the step times and the noise scale do not depend on "
                      "it), or measure your own script with --backend exec");
        return CF_ERR_INVALID;
    }
    return CF_OK;
}

static cf_status engine_open(const cf_probe_backend *self, const cf_job *job, const cf_probe_options *options,
                             cf_probe **out)
{
    cf_probe *p = calloc(1, sizeof *p);
    if (!p)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    p->ops = self->impl;
    p->backend = self->name;
    cf_status st = config_from_job(job, self->name, &p->config);
    if (st != CF_OK) {
        free(p);
        return st;
    }
    p->config.threads = options ? options->threads : 0;
    *out = p;
    return CF_OK;
}

/* An out-of-memory answer of the engine (the batch or the model does not
 * fit: CF_ERR_DOES_NOT_FIT), its message kept in `reason` before the error
 * is cleared. */
static int take_oom(cf_status st, char *reason, size_t n)
{
    if (st != CF_ERR_DOES_NOT_FIT)
        return 0;
    snprintf(reason, n, "%s", cf_error_message());
    cf_error_clear();
    return 1;
}

static cf_status engine_run(cf_probe *p, const cf_probe_run *run, cf_probe_result *out)
{
    memset(out, 0, sizeof *out);
    if (run->micro_batches < 1 || run->micro_batches > CF_ENGINE_MAX_MICRO)
        return cf_error_set(CF_ERR_INVALID, "%s backend: micro-batches per step must be 1 to %d, got %d", p->backend,
                            CF_ENGINE_MAX_MICRO, run->micro_batches);
    cf_engine_config config = p->config;
    config.seed = run->seed;
    cf_engine *engine = NULL;
    cf_status st = p->ops->create(&config, &engine);
    if (take_oom(st, out->oom_reason, sizeof out->oom_reason)) { /* not even the model state fits */
        out->oom = 1;
        out->oom_model = 1;
        return CF_OK;
    }
    if (st != CF_OK)
        return st;
    cf_device_info info;
    memset(&info, 0, sizeof info);
    if ((st = p->ops->describe(engine, &info)) != CF_OK) {
        p->ops->destroy(engine);
        return st;
    }
    snprintf(out->device.name, sizeof out->device.name, "%s", info.name);
    out->device.memory_gib = info.memory_gib;
    out->device.gpus = 1;
    out->device.is_gpu = strcmp(p->backend, "cpu") != 0;
    out->has_device = 1;
    /* Both engines keep activations, weights and gradients in fp32 (the
     * CUDA one with cuBLAS's pedantic FP32 math: no TF32). */
    snprintf(out->precision, sizeof out->precision, "fp32");
    int total = run->warmup_steps + run->steps;
    out->steps = calloc((size_t)(total > 0 ? total : 1), sizeof *out->steps);
    if (!out->steps) {
        p->ops->destroy(engine);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < total; i++) {
        cf_engine_step es;
        memset(&es, 0, sizeof es);
        if ((st = cf_interrupt_check()) != CF_OK) /* a stop signal: between steps */
            break;
        st = p->ops->train_step(engine, run->local_batch, run->micro_batches, &es);
        if (take_oom(st, out->oom_reason, sizeof out->oom_reason)) {
            free(out->steps);
            out->steps = NULL;
            out->n_steps = 0;
            out->oom = 1;
            st = CF_OK;
            break;
        }
        if (st != CF_OK) {
            cf_error_prefix("step %d", i + 1);
            break;
        }
        cf_probe_step *s = &out->steps[out->n_steps++];
        s->time_s = es.time_s;
        s->samples = es.samples;
        s->loss = es.loss;
        s->n_micro = es.n_micro > 1 ? es.n_micro : 0;
        for (int k = 0; k < s->n_micro && k < CF_PROBE_MAX_MICRO; k++)
            s->micro_sqnorms[k] = es.micro_sqnorms[k];
        s->mean_sqnorm = es.n_micro > 1 ? es.mean_sqnorm : -1;
    }
    p->ops->destroy(engine);
    if (st != CF_OK)
        cf_probe_result_free(out);
    return st;
}

static void engine_close(cf_probe *p)
{
    free(p);
}

cf_probe_backend cf_probe_engine_backend(const cf_engine_ops *ops)
{
    cf_probe_backend b = {ops->name, engine_open, engine_run, engine_close, ops};
    return b;
}

cf_probe_backend cf_probe_cpu(void)
{
    return cf_probe_engine_backend(cf_engine_cpu());
}

cf_status cf_probe_cuda(cf_probe_backend *out)
{
    const cf_engine_ops *ops = cf_engine_cuda();
    if (!ops) {
        if (!cf_error_message()[0])
            cf_error_set(CF_ERR_UNAVAILABLE, "the CUDA engine is not available on this build or machine");
        else if (cf_error_status() != CF_ERR_UNAVAILABLE) {
            char message[1024], hint[1024];
            snprintf(message, sizeof message, "%s", cf_error_message());
            snprintf(hint, sizeof hint, "%s", cf_error_hint_text());
            cf_error_set(CF_ERR_UNAVAILABLE, "%s", message);
            if (hint[0])
                cf_error_hint("%s", hint);
        }
        return CF_ERR_UNAVAILABLE;
    }
    *out = cf_probe_engine_backend(ops);
    return CF_OK;
}

cf_status cf_probe_backend_by_name(const char *name, cf_probe_backend *out)
{
    if (strcmp(name, "cpu") == 0) {
        *out = cf_probe_cpu();
        return CF_OK;
    }
    if (strcmp(name, "cuda") == 0)
        return cf_probe_cuda(out);
    if (strcmp(name, "exec") == 0) {
        *out = cf_probe_exec();
        return CF_OK;
    }
    return cf_error_set(CF_ERR_USAGE, "unknown probe backend '%s'", name);
}
