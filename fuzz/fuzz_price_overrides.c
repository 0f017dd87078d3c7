/* The price-overrides file (pricing/price_overrides.c): parsed, then
 * applied to a small catalog loaded once per input. */
#include "fuzz.h"
#include "cloudfit/pricing.h"
#include "cloudfit/pricing/overrides.h"
#include "cloudfit/pricing/update.h"

static const char vms_csv[] =
    "cloud,region,zones,instance_type,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,network_gbps,"
    "price_ondemand_usd_per_hour,ondemand_kind,ondemand_date,price_spot_usd_per_hour,spot_kind,spot_date,source\n"
    "aws,us-east-1,use1-az1,g4dn.12xlarge,T4,4,16,48,192,50,3.912,listed,2026-07-20,1.2875,observed,,test\n"
    "aws,us-east-1,use1-az1,p3.2xlarge,V100,1,16,8,61,2.5,3.06,listed,2026-07-20,0.3707,observed,,test\n"
    "gcp,us-central1,us-central1-a,a2-highgpu-1g,A100-40GB,1,40,12,85,24,3.673385,listed,2026-07-30,1.92802,listed,,test\n"
    "azure,eastus,,Standard_NV36ads_A10_v5,A10,1,24,36,440,,3.2,listed,2026-05-20,0.59136,listed,2026-05-20,test\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cf_price_overrides ov;
    cf_status st = cf_price_overrides_parse((const char *)data, size, "overrides.json", &ov);
    fuzz_check_error(st);
    if (st != CF_OK)
        return 0;
    cf_catalog catalog;
    st = cf_catalog_load_with_vms(vms_csv, sizeof vms_csv - 1, "vms.csv", &catalog);
    if (st != CF_OK) /* the fixed catalog must load */
        abort();
    int rule_of_row[16] = {0}, rule_of_price[32] = {0};
    fuzz_check_error(cf_price_overrides_apply_rules(&ov, &catalog, rule_of_row, rule_of_price));
    cf_catalog_free(&catalog);
    cf_price_overrides_free(&ov);
    return 0;
}
