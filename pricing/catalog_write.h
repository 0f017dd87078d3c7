/* gpu_vms.csv writing, shared by cf_catalog_write_vms_csv and the update
 * merge (private to pricing/). */
#ifndef CLOUDFIT_PRICING_CATALOG_WRITE_H
#define CLOUDFIT_PRICING_CATALOG_WRITE_H
#include "cloudfit/common/buf.h"
#include "cloudfit/pricing.h"

/* The header line of data/gpu_vms.csv. */
void cf_vms_csv_header(cf_buf *out);
/* One row; prices with %.10g so a round trip keeps them exactly enough
 * (micro-dollars), each with its kind and date from `vm`. spot <= 0 (and
 * an estimated spot price) is written empty. `spot_source` is written
 * only when it differs from `source` (NULL = the same). */
void cf_vms_csv_row(cf_buf *out, const cf_vm *vm, double spot_usd_per_hr, const char *source,
                    const char *spot_source);

#endif
