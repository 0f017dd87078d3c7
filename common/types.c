#include "cloudfit/types.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/common/names.h"

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

/* Words are alphanumeric runs. */
static size_t word_len(const char *w)
{
    size_t n = 0;
    while (isalnum((unsigned char)w[n]))
        n++;
    return n;
}

static const char *next_word(const char *p)
{
    while (*p && !isalnum((unsigned char)*p))
        p++;
    return p;
}

static int has_word(const char *text, const char *w, size_t len)
{
    for (const char *v = next_word(text); *v; v = next_word(v + word_len(v)))
        if (word_len(v) == len && strncasecmp(v, w, len) == 0)
            return 1;
    return 0;
}

/* "16GB", "80GB": a memory size. */
static int is_memory_word(const char *w, size_t len)
{
    size_t digits = 0;
    while (digits < len && isdigit((unsigned char)w[digits]))
        digits++;
    return digits > 0 && len == digits + 2 && strncasecmp(w + digits, "GB", 2) == 0;
}

/* Words of a device name that do not tell GPU products apart: vendor and
 * product-line names, the SXM form factor, the HBM generation, and the
 * memory size when the table entry does not name one. "PCIE", "NVL",
 * "Ada", "Ti" do tell products apart and are never ignored. */
static int ignorable_word(const char *w, size_t len, int entry_has_memory)
{
    static const char *const words[] = {"NVIDIA", "Tesla", "AMD", "Quadro", "RTX"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (len == strlen(words[i]) && strncasecmp(w, words[i], len) == 0)
            return 1;
    if ((len >= 3 && strncasecmp(w, "SXM", 3) == 0) || (len >= 3 && strncasecmp(w, "HBM", 3) == 0))
        return 1;
    return !entry_has_memory && is_memory_word(w, len);
}

/* Number of words of `entry` when every one of them is a word of `name`
 * and every other word of `name` is ignorable; else 0. */
static int words_match(const char *entry, const char *name)
{
    int words = 0, entry_has_memory = 0;
    for (const char *w = next_word(entry); *w; w = next_word(w + word_len(w))) {
        if (!has_word(name, w, word_len(w)))
            return 0;
        entry_has_memory |= is_memory_word(w, word_len(w));
        words++;
    }
    for (const char *v = next_word(name); *v; v = next_word(v + word_len(v)))
        if (!has_word(entry, v, word_len(v)) && !ignorable_word(v, word_len(v), entry_has_memory))
            return 0;
    return words;
}

const cf_gpu *cf_gpu_resolve(const cf_gpu *gpus, size_t n_gpus, const char *name)
{
    const cf_gpu *exact = cf_gpu_find(gpus, n_gpus, name);
    if (exact || !name)
        return exact;
    static const char *const vendor[] = {"NVIDIA ", "Tesla ", "AMD ", "Quadro "};
    for (size_t v = 0; v < sizeof vendor / sizeof *vendor; v++)
        if (strncasecmp(name, vendor[v], strlen(vendor[v])) == 0)
            name += strlen(vendor[v]);
    for (size_t i = 0; i < n_gpus; i++)
        if (cf_names_equal(name, gpus[i].model, "-_ "))
            return &gpus[i];
    /* "A100" → "A100-40GB": the name is the start of a table entry. */
    size_t len = strlen(name);
    for (size_t i = 0; i < n_gpus; i++) {
        const char *m = gpus[i].model;
        if (strncasecmp(m, name, len) == 0 && (m[len] == '-' || m[len] == ' '))
            return &gpus[i];
    }
    /* "V100-SXM2-16GB" → "V100", "NVIDIA H100 80GB HBM3" → "H100": the
     * entry with the most words that, up to ignorable words, is the name. */
    const cf_gpu *best = NULL;
    int best_words = 0;
    for (size_t i = 0; i < n_gpus; i++) {
        int words = words_match(gpus[i].model, name);
        if (words > best_words) {
            best = &gpus[i];
            best_words = words;
        }
    }
    return best;
}
