/* What the launchers need to know about a catalog VM, from two small
 * tables compiled in (render/CMakeLists.txt runs tools/cf_embed over them):
 *
 *   data/launch_accelerators.csv: per cloud, instance type ("*" = any of
 *   that cloud) and cloudfit GPU key, SkyPilot's accelerator name, the
 *   device plugin's resource, the host's CPU architecture, whether the GPUs
 *   are attached to a host VM (GCP N1) and GKE's accelerator label value.
 *   A row for the exact instance type wins over the "*" row (GCP's
 *   a3-megagpu-8g carries SkyPilot's "H100-MEGA", the other A3 types "H100").
 *
 *   data/launch_images.csv: per GPU architecture (the GPU table's column)
 *   and CPU architecture, a container image whose PyTorch build has code
 *   for that GPU and is published for that CPU.
 *
 * The tables are small: they are parsed on each call. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/common/csvread.h"
#include "cloudfit/render/emit_common.h"

extern const unsigned char cf_embedded_launch_accelerators_csv[];
extern const unsigned long cf_embedded_launch_accelerators_csv_len;
extern const unsigned char cf_embedded_launch_images_csv[];
extern const unsigned long cf_embedded_launch_images_csv_len;

#define ACCELERATORS_TABLE "data/launch_accelerators.csv"
#define IMAGES_TABLE "data/launch_images.csv"

/* Column indexes of `names` (n of them) into `idx`. */
static cf_status columns(const cf_csv_doc *doc, const char *const *names, int *idx, size_t n)
{
    cf_status st = CF_OK;
    for (size_t i = 0; st == CF_OK && i < n; i++)
        st = cf_csv_require_column(doc, names[i], &idx[i]);
    return st;
}

static char *dup_field(const cf_csv_record *row, int col, int *failed)
{
    char *s = strdup(cf_csv_field(row, col));
    if (!s)
        *failed = 1;
    return s;
}

enum { A_CLOUD, A_TYPE, A_GPU, A_SKY, A_K8S, A_ARCH, A_ATTACHED, A_GKE, A_N };

cf_status cf_emit_accelerator_for(const cf_vm *vm, cf_emit_accelerator *out)
{
    static const char *const names[A_N] = {"cloud", "instance_type", "cloudfit_gpu", "skypilot_accelerator",
                                           "k8s_gpu_resource", "cpu_arch", "attached", "gke_accelerator"};
    memset(out, 0, sizeof *out);
    cf_csv_doc doc;
    cf_status st = cf_csv_parse((const char *)cf_embedded_launch_accelerators_csv,
                                (size_t)cf_embedded_launch_accelerators_csv_len, ACCELERATORS_TABLE, &doc);
    if (st != CF_OK)
        return st;
    int col[A_N];
    st = columns(&doc, names, col, A_N);
    const cf_csv_record *exact = NULL, *any = NULL;
    for (size_t i = 0; st == CF_OK && i < doc.n_records; i++) {
        const cf_csv_record *rec = &doc.records[i];
        if (strcmp(cf_csv_field(rec, col[A_CLOUD]), vm->cloud) != 0 ||
            strcmp(cf_csv_field(rec, col[A_GPU]), vm->gpu_model) != 0)
            continue;
        const char *type = cf_csv_field(rec, col[A_TYPE]);
        if (strcmp(type, vm->instance_type) == 0 && !exact)
            exact = rec;
        else if (strcmp(type, "*") == 0 && !any)
            any = rec;
    }
    const cf_csv_record *row = exact ? exact : any;
    if (st == CF_OK && !row) {
        /* An offer a price snapshot brought that the table built into
         * this cloudfit does not know: nothing the user gave is wrong, the
         * launch spec is not available in this build (never guessed). */
        st = cf_error_set(CF_ERR_UNAVAILABLE,
                          "no launch spec for GPU %s on %s %s: the launcher names built into this cloudfit (%s) have "
                          "no SkyPilot or Kubernetes name for it", vm->gpu_model, vm->cloud, vm->instance_type,
                          ACCELERATORS_TABLE);
        cf_error_hint("leave out --emit for this plan, or leave the offer out (--gpu, --cloud, --region); a newer "
                      "cloudfit may know it (docs/launch.md says where the names come from)");
    }
    if (st == CF_OK) {
        int failed = 0;
        out->skypilot = dup_field(row, col[A_SKY], &failed);
        out->k8s_resource = dup_field(row, col[A_K8S], &failed);
        out->cpu_arch = dup_field(row, col[A_ARCH], &failed);
        out->gke_accelerator = dup_field(row, col[A_GKE], &failed);
        out->attached = strcmp(cf_csv_field(row, col[A_ATTACHED]), "1") == 0;
        if (failed) {
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
    free(a->cpu_arch);
    free(a->gke_accelerator);
    memset(a, 0, sizeof *a);
}

cf_status cf_emit_image_for(const char *gpu_architecture, const char *cpu_arch, char **image)
{
    static const char *const names[] = {"gpu_architecture", "cpu_arch", "image"};
    *image = NULL;
    cf_csv_doc doc;
    cf_status st = cf_csv_parse((const char *)cf_embedded_launch_images_csv, (size_t)cf_embedded_launch_images_csv_len,
                                IMAGES_TABLE, &doc);
    if (st != CF_OK)
        return st;
    int col[3];
    st = columns(&doc, names, col, 3);
    const cf_csv_record *row = NULL;
    for (size_t i = 0; st == CF_OK && !row && i < doc.n_records; i++)
        if (strcasecmp(cf_csv_field(&doc.records[i], col[0]), gpu_architecture) == 0 &&
            strcmp(cf_csv_field(&doc.records[i], col[1]), cpu_arch) == 0)
            row = &doc.records[i];
    if (st == CF_OK && !row) {
        st = cf_error_set(CF_ERR_INVALID, "no container image for %s GPUs on %s hosts in %s", gpu_architecture,
                          cpu_arch, IMAGES_TABLE);
        cf_error_hint("add a row with an image whose PyTorch build has code for that GPU and is published for that "
                      "CPU (docs/launch.md)");
    }
    if (st == CF_OK && !(*image = strdup(cf_csv_field(row, col[2]))))
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    cf_csv_free(&doc);
    return st;
}
