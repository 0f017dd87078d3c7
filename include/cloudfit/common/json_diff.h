/* What changed between two JSON documents, field by field (common/json_diff.c):
 * the CI gate's "spec: training.epochs 90 → 270" (docs/ci.md). */
#ifndef CLOUDFIT_COMMON_JSON_DIFF_H
#define CLOUDFIT_COMMON_JSON_DIFF_H
#include <stddef.h>

#include <cjson/cJSON.h>

#include "cloudfit/common/buf.h"

/* Appends to `out` one "PATH BEFORE → AFTER" item per changed field,
 * separated by "; ", in the order of `after`'s keys (then keys only in
 * `before`). Objects are compared key by key (the path joins keys with
 * '.'); an array or a scalar is one field, shown as compact JSON (an array
 * of more than 40 characters as "N items"); a field on one side only shows
 * "(none)" on the other. After `max_items` items the rest is counted
 * ("and 3 more"). Returns how many fields changed. */
size_t cf_json_diff_text(const cJSON *before, const cJSON *after, size_t max_items, cf_buf *out);

#endif
