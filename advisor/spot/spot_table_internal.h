/* The advisor's own half of cloudfit/advisor/spot_table.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_SPOT_TABLE_INTERNAL_H
#define CLOUDFIT_ADVISOR_SPOT_TABLE_INTERNAL_H
#include "cloudfit/advisor/spot_table.h"

/* Size class of a VM with `gpus_per_vm` GPUs. */
int cf_spot_size_class(int gpus_per_vm);

void cf_spot_offer_rows_in(const cf_spot_table_row *rows, size_t n_rows, const char *cloud, const char *gpu,
                           int gpus_per_vm, const char *region, cf_spot_offer_rows *out);
const cf_spot_table_row *cf_spot_offer_row(const cf_spot_offer_rows *o, int nodes, cf_spot_row_kind *kind);

/* cf_spot_model_lookup_in over the shipped table. */
void cf_spot_model_lookup(const char *cloud, const char *gpu, int gpus_per_vm, const char *region, int nodes,
                          cf_spot_lookup *out);

/* The shipped row cf_spot_model_lookup would pick, without the text (for
 * the enumeration, which asks for every offer). */
const cf_spot_table_row *cf_spot_model_row(const char *cloud, const char *gpu, int gpus_per_vm, const char *region,
                                           int nodes, cf_spot_row_kind *out_kind);

#endif
