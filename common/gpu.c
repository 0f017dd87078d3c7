/* Pure look-ups over the plain cf_gpu struct, shared by pricing/ (the
 * `prices` views) and advisor/ (roofline estimates). */
#include "cloudfit/catalog.h"

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
    }
    return gpu->fp32_tflops;
}
