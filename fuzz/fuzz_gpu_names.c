/* GPU names from outside (a measurement CSV's gpu column, a profile's device
 * name, nvidia-smi output): cf_gpu_resolve over the shipped GPU table. A
 * resolved row must be a row of the table, and its own model name must
 * resolve to the same row. */
#include "fuzz.h"
#include "cloudfit/pricing.h"

static cf_catalog catalog;
static int loaded;

static void free_catalog(void)
{
    cf_catalog_free(&catalog);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!loaded) {
        if (cf_catalog_load_embedded(&catalog) != CF_OK) /* the shipped table must load */
            abort();
        loaded = 1;
        atexit(free_catalog);
    }
    char *name = fuzz_text(data, size);
    const cf_gpu *g = cf_gpu_resolve(catalog.gpus, catalog.n_gpus, name);
    if (g && (g < catalog.gpus || g >= catalog.gpus + catalog.n_gpus))
        abort();
    if (g && cf_gpu_resolve(catalog.gpus, catalog.n_gpus, g->model) != g)
        abort();
    if (getenv("CF_FUZZ_VERBOSE"))
        fprintf(stderr, "'%s' -> %s\n", name, g ? g->model : "(none)");
    free(name);
    return 0;
}
