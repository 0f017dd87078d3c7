/* Comparing names that people spell differently ("ResNet-50", "resnet_50";
 * "A100 40GB", "a100-40gb"). */
#ifndef CLOUDFIT_COMMON_NAMES_H
#define CLOUDFIT_COMMON_NAMES_H
#include <stddef.h>

#include "cloudfit/status.h"

/* 1 when `a` and `b` are equal ignoring case and every character of
 * `separators`, else 0. */
int cf_names_equal(const char *a, const char *b, const char *separators);
/* What model names are compared without ("ResNet-50" is "resnet_50"): the
 * built-in size table and validate's --params. */
#define CF_MODEL_NAME_SEPARATORS "-_ ."

/* The names of comma-separated lists ("A,B" "C": A, B, C) into one
 * malloc'd block: *out (free() it) holds *n_out pointers to the names.
 * No count or length limit. An empty name ("", ",", "A,,B", "A,") is
 * CF_ERR_USAGE "expects NAME[,NAME...], got 'A,'", naming the item. */
cf_status cf_names_split_list(const char *const *items, size_t n, char ***out, size_t *n_out);

/* `name` as a DNS-1035 label (Kubernetes object names; also a valid
 * SkyPilot cluster and task name): lower case, [a-z0-9-], starting with a
 * letter ("cf-" or "cf" put in front otherwise), at most `max_chars`. A
 * name that does not already have that form gets "-" and the first 8 hex
 * digits of its SHA-256 appended (the rest cut to fit), so distinct names
 * never share a label ("a.b" and "a_b"). max_chars >= 12. Malloc'd. */
cf_status cf_names_dns_label(const char *name, size_t max_chars, char **out);

#endif
