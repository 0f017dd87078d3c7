/* The default catalog compiled into the binary (DESIGN.md §5).
 *
 * pricing/CMakeLists.txt runs tools/cf_embed over data/gpu_vms.csv,
 * data/gpus.csv and data/aws_spot_advisor.csv; the generated arrays are
 * parsed here on each call. Parsing takes a few milliseconds (measured by
 * tests/test_catalog.c), cheap enough to run on every `recommend`, and keeps
 * one code path for the embedded catalog and for CSV files. */
#include "cloudfit/pricing.h"
#include "cloudfit/pricing/update.h"
#include "catalog_internal.h"

#include <stdio.h>

/* Defined in the generated embedded_catalog_*.c files. Each array ends with
 * an extra 0 byte that *_len does not count. */
extern const unsigned char cf_embedded_gpu_vms_csv[];
extern const unsigned long cf_embedded_gpu_vms_csv_len;
extern const unsigned char cf_embedded_gpus_csv[];
extern const unsigned long cf_embedded_gpus_csv_len;
extern const unsigned char cf_embedded_aws_spot_advisor_csv[];
extern const unsigned long cf_embedded_aws_spot_advisor_csv_len;

cf_status cf_catalog_load_embedded(cf_catalog *out)
{
    cf_status status = cf_catalog_load_csv(
        (const char *)cf_embedded_gpu_vms_csv, (size_t)cf_embedded_gpu_vms_csv_len,
        "embedded:data/gpu_vms.csv",
        (const char *)cf_embedded_gpus_csv, (size_t)cf_embedded_gpus_csv_len,
        "embedded:data/gpus.csv",
        (const char *)cf_embedded_aws_spot_advisor_csv, (size_t)cf_embedded_aws_spot_advisor_csv_len,
        "embedded:data/aws_spot_advisor.csv", out);
    if (status == CF_OK)
        snprintf(out->name, sizeof out->name, "embedded");
    return status;
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
