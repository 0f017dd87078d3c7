/* Writes catalog rows back as gpu_vms.csv text: how snapshots are stored,
 * so a snapshot is loaded by the same validated loader as the embedded
 * catalog. */
#include <stdlib.h>
#include <string.h>

#include "catalog_write.h"
#include "cloudfit/pricing/update.h"
#include "cloudfit/common/csvwrite.h"

void cf_vms_csv_header(cf_buf *out)
{
    cf_buf_puts(out, "cloud,region,zones,instance_type,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,network_gbps,"
                     "price_ondemand_usd_per_hour,ondemand_kind,ondemand_date,price_spot_usd_per_hour,spot_kind,spot_date,"
                     "source,spot_source\n");
}

/* One price with its kind and date; nothing (three empty fields) when the
 * price is absent. Estimates are never stored as prices. */
static void price_fields(cf_buf *out, double price, cf_price_kind kind, int regional, const char *date)
{
    if (price > 0 && (kind == CF_PRICE_LISTED || kind == CF_PRICE_OBSERVED))
        cf_buf_printf(out, "%.10g,%s%s,%s", price, cf_price_kind_name(kind),
                      kind == CF_PRICE_OBSERVED && regional ? "-regional" : "", date);
    else
        cf_buf_puts(out, ",,");
}

void cf_vms_csv_row(cf_buf *out, const cf_vm *vm, double spot_usd_per_hr, const char *source,
                    const char *spot_source)
{
    cf_csv_put_data_field(out, vm->cloud);
    cf_buf_puts(out, ",");
    cf_csv_put_data_field(out, vm->region);
    cf_buf_puts(out, ",");
    cf_csv_put_data_field(out, vm->zones);
    cf_buf_puts(out, ",");
    cf_csv_put_data_field(out, vm->instance_type);
    cf_buf_puts(out, ",");
    cf_csv_put_data_field(out, vm->gpu_model);
    cf_buf_printf(out, ",%d,%.10g,%d,%.10g,", vm->gpu_count, vm->gpu_memory_gib, vm->vcpus, vm->memory_gib);
    if (vm->network_gbps > 0)
        cf_buf_printf(out, "%.10g", vm->network_gbps);
    cf_buf_puts(out, ",");
    price_fields(out, vm->price_ondemand_usd_per_hr, vm->ondemand_kind, 0, vm->ondemand_date);
    cf_buf_puts(out, ",");
    price_fields(out, spot_usd_per_hr, spot_usd_per_hr > 0 ? vm->spot_kind : CF_PRICE_NONE, vm->spot_regional,
                 vm->spot_date);
    cf_buf_puts(out, ",");
    cf_csv_put_data_field(out, source);
    cf_buf_puts(out, ",");
    if (spot_usd_per_hr > 0 && spot_source && strcmp(spot_source, source) != 0)
        cf_csv_put_data_field(out, spot_source);
    cf_buf_puts(out, "\n");
}

cf_status cf_catalog_write_vms_csv(const cf_catalog *catalog, char **out_text, size_t *out_len)
{
    cf_buf out = CF_BUF_INIT;
    cf_vms_csv_header(&out);
    for (size_t i = 0; i < catalog->n_vms; i++) {
        const cf_vm *vm = &catalog->vms[i];
        cf_vms_csv_row(&out, vm, vm->spot_price_estimated ? 0 : vm->price_spot_usd_per_hr,
                       cf_vm_price_source(catalog, vm, 0), cf_vm_price_source(catalog, vm, 1));
    }
    if (cf_buf_failed(&out)) {
        cf_buf_free(&out);
        return cf_error_set(CF_ERR_NOMEM, "out of memory writing the catalog");
    }
    *out_text = out.data;
    *out_len = out.len;
    return CF_OK;
}
