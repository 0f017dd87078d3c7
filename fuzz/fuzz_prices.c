/* The price API response parsers (pricing/fetch_azure.c, fetch_aws.c,
 * fetch_gcp.c, fetch_lambda.c) and the merge behind them (pricing/update.c), run as
 * `prices update --cloud CLOUD` does, over a fake transport (fake_http.c)
 * that answers the k-th request with the k-th document of the input
 * (documents separated by a line "--cloudfit-fuzz--"). CF_FUZZ_CLOUD is
 * set per target by CMake: azure, aws, gcp or lambda. */
#include <stdio.h>

#include "fuzz.h"
#include "fake_http.h"
#include "cloudfit/pricing.h"
#include "cloudfit/pricing/update.h"

#ifndef CF_FUZZ_CLOUD
#error "CF_FUZZ_CLOUD must name the cloud"
#endif

static const char *region_of(const char *cloud)
{
    return strcmp(cloud, "azure") == 0 ? "eastus"
           : strcmp(cloud, "aws") == 0 || strcmp(cloud, "lambda") == 0 ? "us-east-1"
                                                                          : "us-central1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static cf_catalog base;
    static int loaded;
    if (!loaded) {
        setenv("CLOUDFIT_GCP_API_KEY", "FUZZKEY", 1);
        setenv("CLOUDFIT_LAMBDA_API_KEY", "FUZZKEY", 1);
        setenv("CLOUDFIT_MAX_PAGES", "6", 1);
        /* The base: the embedded catalog's rows of this cloud and region
         * only, so an execution is spent on the response, not on
         * re-reading 1,900 rows. */
        cf_catalog full;
        char *csv = NULL;
        size_t len = 0;
        if (cf_catalog_load_embedded(&full) != CF_OK || cf_catalog_write_vms_csv(&full, &csv, &len) != CF_OK)
            abort();
        cf_catalog_free(&full);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "%s,%s,", CF_FUZZ_CLOUD, region_of(CF_FUZZ_CLOUD));
        char *kept = malloc(len + 1);
        size_t k = 0;
        for (char *line = csv; line && *line;) {
            char *nl = strchr(line, '\n');
            size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
            if (line == csv || strncmp(line, prefix, strlen(prefix)) == 0) {
                memcpy(kept + k, line, n);
                k += n;
            }
            line += n;
        }
        kept[k] = '\0';
        if (cf_catalog_load_with_vms(kept, k, "base.csv", &base) != CF_OK || base.n_vms == 0)
            abort();
        free(kept);
        free(csv);
        loaded = 1;
    }
    cf_fake_http_serve((const char *)data, size);
    const char *clouds[] = {CF_FUZZ_CLOUD};
    const char *regions[] = {region_of(CF_FUZZ_CLOUD)};
    cf_price_update_options o = {.clouds = clouds, .n_clouds = 1, .regions = regions, .n_regions = 1,
                                 .clouds_explicit = 1, .max_change_factor = 3, .fetched_at = "2026-01-01T00:00:00Z"};
    cf_price_update_result res;
    memset(&res, 0, sizeof res);
    cf_status st = cf_prices_update(&base, &o, &res);
    fuzz_check_error(st);
    cf_price_update_result_free(&res);
    return 0;
}
