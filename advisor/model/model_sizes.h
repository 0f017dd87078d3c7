/* (Private to advisor/.) Parameter counts of common models, for the communication term when a
 * measurements CSV names a model but not its size (`cloudfit validate`).
 * Sources are in advisor/model/model_sizes.c and docs/model.md. */
#ifndef CLOUDFIT_ADVISOR_MODEL_SIZES_H
#define CLOUDFIT_ADVISOR_MODEL_SIZES_H

typedef struct {
    const char *name;          /* as in the measurements CSV's model column */
    const char *architecture;
    double parameters;
    const char *source;
} cf_model_size;

/* The entry for `name` (ignoring case and the separators - _ . and space), or NULL. */
const cf_model_size *cf_model_size_find(const char *name);
const cf_model_size *cf_model_sizes(int *out_count);

#endif
