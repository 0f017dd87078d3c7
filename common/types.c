#include "cloudfit/common/shared_types.h"
#include "cloudfit/pricing/types.h"
#include "cloudfit/spec/types.h"

#include <string.h>
#include <strings.h>

const char *cf_optimizer_name(cf_optimizer v)
{
    static const char *const names[] = {"sgd", "momentum", "adam", "adamw", "lamb"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "?";
}
const char *cf_lr_rule_name(cf_lr_rule v)
{
    static const char *const names[] = {"auto", "gain", "linear", "sqrt", "none"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "?";
}
const char *cf_objective_name(cf_objective v)
{
    static const char *const names[] = {"cost", "time", "balanced"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "?";
}
const char *cf_spot_policy_name(cf_spot_policy v)
{
    static const char *const names[] = {"never", "allow", "only"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "?";
}
const char *const cf_memory_formats[] = {"contiguous", "channels_last", "channels_last_3d", NULL};

int cf_memory_format_known(const char *name)
{
    for (int i = 0; name && cf_memory_formats[i]; i++)
        if (strcmp(name, cf_memory_formats[i]) == 0)
            return 1;
    return 0;
}

const char *cf_precision_name(cf_precision v)
{
    static const char *const names[] = {"fp32", "tf32", "fp16", "bf16", "amp"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "?";
}
int cf_precision_parse(const char *name, cf_precision *out)
{
    for (int v = CF_PREC_FP32; v <= CF_PREC_AMP; v++)
        if (strcasecmp(name, cf_precision_name((cf_precision)v)) == 0) {
            *out = (cf_precision)v;
            return 1;
        }
    return 0;
}
const char *cf_provenance_name(cf_provenance v)
{
    static const char *const names[] = {"measured", "fitted", "estimated", "default"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "?";
}

/* ---- GPUs ---------------------------------------------------------------- */

/* A tensor rate when the GPU has one, else the FP32 rate: frameworks fall
 * back to plain FP32 arithmetic when there are no tensor units for a type. */
static double rate_or_fp32(double rate, double fp32)
{
    return rate > 0.0 ? rate : fp32;
}

double cf_gpu_peak_tflops(const cf_gpu *gpu, cf_precision precision)
{
    if (!gpu)
        return 0.0;
    switch (precision) {
    case CF_PREC_FP32: return gpu->fp32_tflops;
    case CF_PREC_TF32: return rate_or_fp32(gpu->tf32_tflops, gpu->fp32_tflops);
    case CF_PREC_FP16: return rate_or_fp32(gpu->fp16_tflops, gpu->fp32_tflops);
    case CF_PREC_BF16: return rate_or_fp32(gpu->bf16_tflops, gpu->fp32_tflops);
    case CF_PREC_AMP: return rate_or_fp32(gpu->fp16_tflops > 0 ? gpu->fp16_tflops : gpu->bf16_tflops, gpu->fp32_tflops);
    }
    return gpu->fp32_tflops;
}

const cf_gpu *cf_gpu_find(const cf_gpu *gpus, size_t n_gpus, const char *model)
{
    if (!gpus || !model)
        return NULL;
    for (size_t i = 0; i < n_gpus; i++)
        if (strcasecmp(gpus[i].model, model) == 0)
            return &gpus[i];
    return NULL;
}
