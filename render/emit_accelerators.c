/* The launchers' names for a catalog VM's GPUs, from
 * data/launch_accelerators.csv, compiled in (render/CMakeLists.txt runs
 * tools/cf_embed over it). A row names a cloud, an instance type ("*" =
 * any of that cloud) and cloudfit's GPU key; a row for the exact instance
 * type wins over the "*" row (GCP's a3-megagpu-8g carries SkyPilot's
 * "H100-MEGA", the other A3 types "H100"). The table is small: it is
 * parsed on each call. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/common/csvread.h"
#include "cloudfit/render/emit_common.h"

extern const unsigned char cf_embedded_launch_accelerators_csv[];
extern const unsigned long cf_embedded_launch_accelerators_csv_len;

#define TABLE_NAME "data/launch_accelerators.csv"

cf_status cf_emit_accelerator_for(const cf_vm *vm, cf_emit_accelerator *out)
{
    memset(out, 0, sizeof *out);
    cf_csv_doc doc;
    cf_status st = cf_csv_parse((const char *)cf_embedded_launch_accelerators_csv,
                                (size_t)cf_embedded_launch_accelerators_csv_len, TABLE_NAME, &doc);
    if (st != CF_OK)
        return st;
    int c_cloud, c_type, c_gpu, c_sky, c_k8s;
    if ((st = cf_csv_require_column(&doc, "cloud", &c_cloud)) == CF_OK &&
        (st = cf_csv_require_column(&doc, "instance_type", &c_type)) == CF_OK &&
        (st = cf_csv_require_column(&doc, "cloudfit_gpu", &c_gpu)) == CF_OK &&
        (st = cf_csv_require_column(&doc, "skypilot_accelerator", &c_sky)) == CF_OK)
        st = cf_csv_require_column(&doc, "k8s_gpu_resource", &c_k8s);
    const cf_csv_record *exact = NULL, *any = NULL;
    for (size_t i = 0; st == CF_OK && i < doc.n_records; i++) {
        const cf_csv_record *rec = &doc.records[i];
        if (strcmp(cf_csv_field(rec, c_cloud), vm->cloud) != 0 || strcmp(cf_csv_field(rec, c_gpu), vm->gpu_model) != 0)
            continue;
        const char *type = cf_csv_field(rec, c_type);
        if (strcmp(type, vm->instance_type) == 0 && !exact)
            exact = rec;
        else if (strcmp(type, "*") == 0 && !any)
            any = rec;
    }
    const cf_csv_record *row = exact ? exact : any;
    if (st == CF_OK && !row) {
        st = cf_error_set(CF_ERR_INVALID, "no launcher name for GPU %s on %s %s in %s", vm->gpu_model, vm->cloud,
                          vm->instance_type, TABLE_NAME);
        cf_error_hint("add a row for it (SkyPilot's accelerator name and the Kubernetes GPU resource; "
                      "docs/launch.md says where the names come from)");
    }
    if (st == CF_OK) {
        out->skypilot = strdup(cf_csv_field(row, c_sky));
        out->k8s_resource = strdup(cf_csv_field(row, c_k8s));
        if (!out->skypilot || !out->k8s_resource) {
            cf_emit_accelerator_free(out);
            st = cf_error_set(CF_ERR_NOMEM, "out of memory");
        }
    }
    cf_csv_free(&doc);
    return st;
}

void cf_emit_accelerator_free(cf_emit_accelerator *a)
{
    free(a->skypilot);
    free(a->k8s_resource);
    memset(a, 0, sizeof *a);
}
