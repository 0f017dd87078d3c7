/* The default catalog compiled into the binary (docs/catalog.md).
 *
 * pricing/CMakeLists.txt loads data/gpu_vms.csv, data/gpus.csv and
 * data/aws_spot_advisor.csv at build time with the same loader every CSV
 * catalog goes through (tools/catalog_compile.c) and compiles the loaded
 * structs in: cf_catalog_load_embedded copies them. The CSV texts are
 * embedded too (tools/cf_embed) for the GPU table and advisor data a
 * stored snapshot is loaded with. */
#include "cloudfit/pricing.h"
#include "cloudfit/pricing/update.h"
#include "catalog_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Defined in the generated embedded_catalog_*.c files. Each array ends with
 * an extra 0 byte that *_len does not count. */
extern const unsigned char cf_embedded_gpus_csv[];
extern const unsigned long cf_embedded_gpus_csv_len;
extern const unsigned char cf_embedded_aws_spot_advisor_csv[];
extern const unsigned long cf_embedded_aws_spot_advisor_csv_len;

/* Defined in the generated compiled_catalog.c. */
extern const unsigned char cf_compiled_vms[], cf_compiled_gpus[];
extern const size_t cf_compiled_n_vms, cf_compiled_vm_size, cf_compiled_n_gpus, cf_compiled_gpu_size;
extern const char *const cf_compiled_sources[];
extern const size_t cf_compiled_n_sources, cf_compiled_n_undated_prices;
extern const char cf_compiled_data_date[], cf_compiled_oldest_date[], cf_compiled_advisor_date[];

cf_status cf_catalog_load_embedded(cf_catalog *out)
{
    memset(out, 0, sizeof *out);
    if (cf_compiled_vm_size != sizeof(cf_vm) || cf_compiled_gpu_size != sizeof(cf_gpu))
        return cf_error_set(CF_ERR_INTERNAL, "the compiled catalog was built for another layout; rebuild");
    out->vms = malloc((cf_compiled_n_vms ? cf_compiled_n_vms : 1) * sizeof *out->vms);
    out->gpus = malloc((cf_compiled_n_gpus ? cf_compiled_n_gpus : 1) * sizeof *out->gpus);
    out->sources = calloc(cf_compiled_n_sources + 1, sizeof *out->sources);
    int ok = out->vms && out->gpus && out->sources;
    for (size_t i = 0; ok && i < cf_compiled_n_sources; i++)
        ok = (out->sources[i] = strdup(cf_compiled_sources[i])) != NULL;
    if (!ok) {
        out->n_sources = cf_compiled_n_sources;
        cf_catalog_free(out);
        return cf_error_set(CF_ERR_NOMEM, "out of memory loading the embedded catalog");
    }
    memcpy(out->vms, cf_compiled_vms, cf_compiled_n_vms * sizeof *out->vms);
    memcpy(out->gpus, cf_compiled_gpus, cf_compiled_n_gpus * sizeof *out->gpus);
    out->n_vms = cf_compiled_n_vms;
    out->n_gpus = cf_compiled_n_gpus;
    out->n_sources = cf_compiled_n_sources;
    out->n_undated_prices = cf_compiled_n_undated_prices;
    snprintf(out->name, sizeof out->name, "embedded");
    snprintf(out->data_date, sizeof out->data_date, "%s", cf_compiled_data_date);
    snprintf(out->oldest_date, sizeof out->oldest_date, "%s", cf_compiled_oldest_date);
    snprintf(out->advisor_date, sizeof out->advisor_date, "%s", cf_compiled_advisor_date);
    return CF_OK;
}

/* A stored snapshot offers nothing the embedded (availability-joined)
 * catalog does not: rows of a snapshot written before the availability
 * tables, or before newer ones, that are not launchable are left out and
 * counted (cf_catalog.n_not_launchable). */
cf_status cf_catalog_load_with_vms(const char *vms_csv, size_t vms_len, const char *vms_name, cf_catalog *out)
{
    cf_status status = cf_catalog_load_csv(vms_csv, vms_len, vms_name,
                                           (const char *)cf_embedded_gpus_csv, (size_t)cf_embedded_gpus_csv_len,
                                           "embedded:data/gpus.csv",
                                           (const char *)cf_embedded_aws_spot_advisor_csv,
                                           (size_t)cf_embedded_aws_spot_advisor_csv_len,
                                           "embedded:data/aws_spot_advisor.csv", out);
    if (status != CF_OK)
        return status;
    cf_catalog launchable;
    status = cf_catalog_load_embedded(&launchable);
    if (status == CF_OK)
        status = cf_catalog_keep_launchable(out, &launchable);
    cf_catalog_free(&launchable);
    if (status == CF_OK && out->n_vms == 0)
        status = cf_error_set(CF_ERR_INVALID, "%s: no row is offered where it can be launched", vms_name);
    if (status != CF_OK)
        cf_catalog_free(out);
    return status;
}
