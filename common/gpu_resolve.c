/* cf_gpu_resolve: the row of the GPU table a device name means. The rules
 * are stated in cloudfit/pricing/types.h; docs/catalog.md lists the spellings real
 * tools print and tests/test_gpu_names.c checks each, with its source.
 *
 * A name is cut into lowercase alphanumeric words. A row matches when all
 * of its model's words are in the name and every other word of the name
 * only describes that row, judged by the row's own columns (memory size and
 * type, architecture, form factor) and by two small tables below. */
#include "cloudfit/pricing/types.h"

#include "cloudfit/common/escape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { WORD_CAP = 32, MAX_WORDS = 24, JOINED_CAP = 128 };

typedef struct {
    char word[MAX_WORDS][WORD_CAP];
    int n;
} word_list;

/* Makers and product lines: they tell no two rows apart, and tools glue
 * them to the model (Slurm GRES types and Lambda's benchmark directories
 * say "QuadroRTX6000"). "GRID" is NVIDIA's virtual GPU line ("GRID T4-16Q",
 * what a vGPU guest's older drivers print). "RTX" is not one: "Quadro 6000"
 * (Fermi) and "Quadro RTX 6000" are different GPUs. */
static const char *const LINE_WORDS[] = {"nvidia", "amd", "tesla", "quadro", "geforce", "instinct", "grid"};

/* Words a driver adds to a row's name that no column of the row carries. */
static const struct {
    const char *model, *word;
} EXTRA_WORDS[] = {
    /* "NVIDIA GH200 480GB" and "NVIDIA GH200 120GB" (both PCI 10de:2342, the
     * 96 GB HBM3 GPU; the size is the Grace CPU's LPDDR5X):
     * NVIDIA/open-gpu-kernel-modules README, supported GPUs */
    {"GH200", "480gb"},
    {"GH200", "120gb"},
    /* "NVIDIA B300 SXM6 AC": the same README */
    {"B300", "ac"},
    /* "AMD Instinct MI300X VF": what amd-smi, rccl-tests and
     * torch.cuda.get_device_name() print for the whole MI300X an SR-IOV
     * guest is given (a virtual function): Azure's ND MI300X v5 (the
     * catalog's MI300X VM), DigitalOcean, Hot Aisle */
    {"MI300X", "vf"},
    /* "Aqua Vanjaram [Instinct MI300X]" and "... [Instinct MI300X VF]": the
     * PCI database's name (chip codename, then the product), which
     * rocm-smi prints as the card series and device name (ROCM-SMI 2.2.0,
     * DigitalOcean's and Hot Aisle's MI300X guests) and lspci shows */
    {"MI300X", "aqua"},
    {"MI300X", "vanjaram"},
};

/* Exact driver names of products that are not the row their words match. */
static const char *const OTHER_PRODUCTS[] = {
    /* PCI 10de:2339, the H100 SXM5 94GB (more memory and bandwidth than the
     * table's 80 GB H100): open-gpu-kernel-modules README, pci.ids */
    "NVIDIA H100",
};

static int is_alnum(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_line_word(const char *w)
{
    for (size_t i = 0; i < sizeof LINE_WORDS / sizeof *LINE_WORDS; i++)
        if (strcmp(w, LINE_WORDS[i]) == 0)
            return 1;
    return 0;
}

/* "quadrortx6000" → "rtx6000", "nvidiageforcertx3090" → "rtx3090". */
static void strip_glued_line_words(char *w)
{
    for (size_t i = 0; i < sizeof LINE_WORDS / sizeof *LINE_WORDS; i++) {
        size_t len = strlen(LINE_WORDS[i]);
        if (strncmp(w, LINE_WORDS[i], len) == 0 && w[len]) {
            memmove(w, w + len, strlen(w + len) + 1);
            i = (size_t)-1; /* again from the first: they stack */
        }
    }
}

/* Writes "80g", "80gib" and "80gb" alike as "80gb". */
static void canonical_memory_word(char *w)
{
    size_t digits = strspn(w, "0123456789");
    if (digits == 0)
        return;
    const char *unit = w + digits;
    if (strcmp(unit, "g") == 0 || strcmp(unit, "gib") == 0)
        strcpy(w + digits, "gb");
}

/* 0 when the text has more words, or longer ones, than any GPU name: such
 * text names no GPU. A number followed by the word "GB" is one word. */
static int split_words(const char *text, word_list *out)
{
    out->n = 0;
    for (const char *p = text; *p;) {
        if (!is_alnum(*p)) {
            p++;
            continue;
        }
        size_t len = 0;
        while (is_alnum(p[len]))
            len++;
        if (len >= WORD_CAP || out->n == MAX_WORDS)
            return 0;
        char *w = out->word[out->n];
        for (size_t i = 0; i < len; i++)
            w[i] = (char)(p[i] >= 'A' && p[i] <= 'Z' ? p[i] - 'A' + 'a' : p[i]);
        w[len] = '\0';
        p += len;
        strip_glued_line_words(w);
        if (out->n > 0 && (!strcmp(w, "gb") || !strcmp(w, "g") || !strcmp(w, "gib"))) {
            char *prev = out->word[out->n - 1];
            if (strspn(prev, "0123456789") == strlen(prev) && strlen(prev) + 2 < WORD_CAP) {
                strcat(prev, "gb");
                continue;
            }
        }
        canonical_memory_word(w);
        out->n++;
    }
    return 1;
}

/* The size a memory word states, in GB; 0 when the word is not one. */
static double memory_word_gb(const char *w)
{
    size_t digits = strspn(w, "0123456789");
    if (digits == 0 || digits > 6 || strcmp(w + digits, "gb") != 0)
        return 0.0;
    return strtod(w, NULL);
}

/* The table mixes GB (datasheets: H100 "80") and GiB (B300 268.6 from the
 * EC2 API, sold as 288 GB): a size matches in either unit. */
static int memory_matches(double stated_gb, double table_gib)
{
    return fabs(stated_gb - table_gib) <= 0.5 || fabs(stated_gb * 1e9 / 1073741824.0 - table_gib) <= 1.0;
}

static int has_digit(const char *w)
{
    return strcspn(w, "0123456789") != strlen(w);
}

static int has_letter(const char *w)
{
    return strspn(w, "0123456789") != strlen(w);
}

/* "sxm", "sxm2", "sxm5": the SXM form factor and its generation. */
static int is_sxm_word(const char *w)
{
    return strncmp(w, "sxm", 3) == 0 && strspn(w + 3, "0123456789") == strlen(w + 3);
}

/* Whether `w` is a word (with a letter) of a descriptive column; a bare
 * "sxm" on either side stands for any SXM generation. */
static int column_has_word(const char *column, const char *w)
{
    word_list words;
    if (!column[0] || !split_words(column, &words))
        return 0;
    for (int i = 0; i < words.n; i++) {
        const char *c = words.word[i];
        if (has_letter(c) && strcmp(c, w) == 0)
            return 1;
        if (is_sxm_word(c) && is_sxm_word(w) && (!strcmp(c, "sxm") || !strcmp(w, "sxm")))
            return 1;
    }
    return 0;
}

static int in_family(const cf_gpu *g, const char *word);
static int model_words(const cf_gpu *g, word_list *out);

/* The frame buffer, in GB, of a vGPU profile word: "24q" of "NVIDIA
 * A10-24Q" (what nvidia-smi and torch print in Azure's NV36ads_A10_v5),
 * "16q" of "GRID T4-16Q": a size and the profile's series letter (Q, C,
 * B, A); 0 when the word is not one. */
static double vgpu_profile_gb(const char *w)
{
    size_t digits = strspn(w, "0123456789");
    if (digits == 0 || digits > 4 || !w[digits] || w[digits + 1] || !strchr("qcba", w[digits]))
        return 0.0;
    return strtod(w, NULL);
}

/* Whether no other row of the table is of g's family ("A10" alone; not
 * "H100", "V100", "A100"). */
static int alone_in_family(const cf_gpu *gpus, size_t n_gpus, const cf_gpu *g)
{
    word_list model;
    if (!model_words(g, &model))
        return 0;
    for (size_t i = 0; i < n_gpus; i++)
        if (&gpus[i] != g && in_family(&gpus[i], model.word[0]))
            return 0;
    return 1;
}

/* Whether a word of a name that is not one of the row's model words only
 * describes the row. A vGPU profile of the row's whole memory does ("24q"
 * of the 24 GB A10), a smaller one is a share of the GPU ("A10-4Q"); and
 * only for a row alone in its family: vGPU names tell a family's boards
 * apart by letters glued to the model ("H100-80C" is the H100 PCIe,
 * "H100XM-80C" the SXM5), so "NVIDIA H100-80C" would be the wrong row. */
static int describes(const cf_gpu *gpus, size_t n_gpus, const cf_gpu *g, const char *w)
{
    if (is_line_word(w))
        return 1;
    double vgpu_gb = vgpu_profile_gb(w);
    if (vgpu_gb > 0)
        return memory_matches(vgpu_gb, g->memory_gib) && alone_in_family(gpus, n_gpus, g);
    for (size_t i = 0; i < sizeof EXTRA_WORDS / sizeof *EXTRA_WORDS; i++)
        if (strcasecmp(g->model, EXTRA_WORDS[i].model) == 0 && strcmp(w, EXTRA_WORDS[i].word) == 0)
            return 1;
    double gb = memory_word_gb(w);
    if (gb > 0)
        return memory_matches(gb, g->memory_gib);
    return column_has_word(g->memory_type, w) || column_has_word(g->architecture, w) ||
           column_has_word(g->form_factor, w);
}

/* Joins words [from, to] into out; 0 when it does not fit. */
static int join(const word_list *l, int from, int to, char *out)
{
    size_t len = 0;
    for (int i = from; i <= to; i++) {
        size_t n = strlen(l->word[i]);
        if (len + n >= JOINED_CAP)
            return 0;
        memcpy(out + len, l->word[i], n);
        len += n;
    }
    out[len] = '\0';
    return 1;
}

/* Whether the model words model[mi..] are all in the name's unused words,
 * marking those used. Runs of words count once joined, on either side:
 * "RTX 6000" is the model word RTX6000, "RTXPRO6000" the words RTX-PRO-6000. */
static int cover(const word_list *model, int mi, const word_list *name, int *used)
{
    if (mi == model->n)
        return 1;
    char want[JOINED_CAP], have[JOINED_CAP];
    for (int mj = mi; mj < model->n && join(model, mi, mj, want); mj++) {
        for (int s = 0; s < name->n; s++) {
            for (int t = s; t < name->n && !used[t] && join(name, s, t, have); t++) {
                if (strlen(have) > strlen(want))
                    break;
                if (strcmp(have, want) != 0)
                    continue;
                for (int k = s; k <= t; k++)
                    used[k] = 1;
                if (cover(model, mj + 1, name, used))
                    return 1;
                for (int k = s; k <= t; k++)
                    used[k] = 0;
            }
        }
    }
    return 0;
}

/* The model's words without maker/line words ("Tesla-T4" is T4). */
static int model_words(const cf_gpu *g, word_list *out)
{
    if (!split_words(g->model, out))
        return 0;
    int kept = 0;
    for (int i = 0; i < out->n; i++)
        if (!is_line_word(out->word[i]))
            memmove(out->word[kept++], out->word[i], WORD_CAP);
    out->n = kept;
    return kept > 0;
}

/* A word of the row's columns glued in front of a model word is the two
 * words: "rtxa6000" (Slurm's GRES type for the RTX A6000, whose form
 * factor column says "RTX A6000") is RTX A6000, as "RTX_A6000" is. Only
 * letters, and only a word that describes the row: "gb200" is no B200. */
static void split_glued_prefixes(const cf_gpu *gpus, size_t n_gpus, const cf_gpu *g, const word_list *model,
                                 word_list *name)
{
    for (int i = 0; i < name->n && name->n < MAX_WORDS; i++) {
        const char *w = name->word[i];
        size_t wl = strlen(w);
        for (int m = 0; m < model->n; m++) {
            size_t ml = strlen(model->word[m]), pl = wl - ml;
            if (wl <= ml || strcmp(w + pl, model->word[m]) != 0)
                continue;
            char prefix[WORD_CAP];
            memcpy(prefix, w, pl);
            prefix[pl] = '\0';
            size_t letters = 0;
            while (letters < pl && prefix[letters] >= 'a' && prefix[letters] <= 'z')
                letters++;
            if (letters != pl || !describes(gpus, n_gpus, g, prefix))
                continue;
            memmove(name->word[i + 2], name->word[i + 1], (size_t)(name->n - i - 1) * WORD_CAP);
            memcpy(name->word[i + 1], model->word[m], ml + 1);
            memcpy(name->word[i], prefix, pl + 1);
            name->n++;
            i++;
            break;
        }
    }
}

/* Rule 3: the number of model words when `g` matches the name, else 0. */
static int match_words(const cf_gpu *gpus, size_t n_gpus, const cf_gpu *g, const word_list *given)
{
    word_list model, name = *given;
    int used[MAX_WORDS] = {0};
    if (!model_words(g, &model))
        return 0;
    split_glued_prefixes(gpus, n_gpus, g, &model, &name);
    if (!cover(&model, 0, &name, used))
        return 0;
    for (int i = 0; i < name.n; i++)
        if (!used[i] && !describes(gpus, n_gpus, g, name.word[i]))
            return 0;
    return model.n;
}

static int same_words(const word_list *a, const word_list *b)
{
    if (a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->word[i], b->word[i]) != 0)
            return 0;
    return 1;
}

/* Rule 4's word: a name that, without maker/line words, is one word with
 * a digit ("a100"); NULL otherwise. */
static const char *family_word(const word_list *name)
{
    const char *only = NULL;
    for (int i = 0; i < name->n; i++) {
        if (is_line_word(name->word[i]))
            continue;
        if (only)
            return NULL;
        only = name->word[i];
    }
    return only && strcspn(only, "0123456789") != strlen(only) ? only : NULL;
}

static int in_family(const cf_gpu *g, const char *word)
{
    word_list model;
    return model_words(g, &model) && strcmp(model.word[0], word) == 0;
}

/* Rules 1 to 3: the row the name names, or NULL; `words` gets the name's
 * words for rule 4 (none when rule 2 refuses the name or it is no GPU's). */
static const cf_gpu *named_row(const cf_gpu *gpus, size_t n_gpus, const char *name, word_list *words)
{
    words->n = 0;
    const cf_gpu *exact = cf_gpu_find(gpus, n_gpus, name);
    if (exact || !name)
        return exact;
    /* A control character or a byte that is not UTF-8 is no separator: it
     * was skipped as one, and "T\xff4" or "T4\x01" (a damaged CSV field)
     * was T4. Such a name names no GPU. */
    if (cf_has_controls(name))
        return NULL;
    if (!split_words(name, words)) {
        words->n = 0;
        return NULL;
    }
    for (size_t i = 0; i < sizeof OTHER_PRODUCTS / sizeof *OTHER_PRODUCTS; i++) {
        word_list other;
        if (split_words(OTHER_PRODUCTS[i], &other) && same_words(words, &other)) {
            words->n = 0;
            return NULL;
        }
    }
    const cf_gpu *best = NULL;
    int best_words = 0;
    for (size_t i = 0; i < n_gpus; i++) {
        int n = match_words(gpus, n_gpus, &gpus[i], words);
        if (n > best_words) {
            best = &gpus[i];
            best_words = n;
        }
    }
    return best;
}

const cf_gpu *cf_gpu_resolve(const cf_gpu *gpus, size_t n_gpus, const char *name)
{
    word_list words;
    const cf_gpu *row = named_row(gpus, n_gpus, name, &words);
    const char *word = row ? NULL : family_word(&words);
    for (size_t i = 0; word && i < n_gpus; i++)
        if (in_family(&gpus[i], word))
            return &gpus[i]; /* rule 4: the family's first row */
    return row;
}

size_t cf_gpu_family_rows(const cf_gpu *gpus, size_t n_gpus, const char *name, const cf_gpu **rows, size_t max_rows)
{
    word_list words;
    if (named_row(gpus, n_gpus, name, &words))
        return 0;
    const char *word = family_word(&words);
    size_t n = 0;
    for (size_t i = 0; word && i < n_gpus && n < max_rows; i++)
        if (in_family(&gpus[i], word))
            rows[n++] = &gpus[i];
    return n;
}

const char *cf_gpu_model_name(const cf_gpu *gpus, size_t n_gpus, const char *name)
{
    if (!gpus || !name || cf_gpu_find(gpus, n_gpus, name))
        return name;
    const cf_gpu *family[2];
    size_t n_family = cf_gpu_family_rows(gpus, n_gpus, name, family, 2);
    if (n_family > 1)
        return name; /* several rows: not the resolver's first of them */
    const cf_gpu *row = n_family == 1 ? family[0] : cf_gpu_resolve(gpus, n_gpus, name);
    return row ? row->model : name;
}

size_t cf_gpu_near_rows(const cf_gpu *gpus, size_t n_gpus, const char *name, const cf_gpu **rows, size_t max_rows)
{
    word_list words, model;
    if (!name || named_row(gpus, n_gpus, name, &words) || cf_has_controls(name) || !split_words(name, &words))
        return 0;
    size_t n = 0;
    /* most model words in the name first, then table order */
    for (int score = MAX_WORDS; score > 0; score--) {
        for (size_t i = 0; i < n_gpus && n < max_rows; i++) {
            if (!model_words(&gpus[i], &model))
                continue;
            /* a model number ("a100", "6000") names the family; "rtx" or a size ("80gb") alone does not:
             * "NVIDIA RTX A4000" is no RTX PRO 6000 */
            int family = 0, found = 0;
            for (int m = 0; m < model.n; m++)
                for (int w = 0; w < words.n; w++)
                    if (strcmp(model.word[m], words.word[w]) == 0) {
                        family += has_digit(model.word[m]) && memory_word_gb(model.word[m]) == 0;
                        found++;
                        break;
                    }
            if (family && found == score)
                rows[n++] = &gpus[i];
        }
    }
    return n;
}
