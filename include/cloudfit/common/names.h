/* Comparing names that people spell differently ("ResNet-50", "resnet_50";
 * "A100 40GB", "a100-40gb"). */
#ifndef CLOUDFIT_COMMON_NAMES_H
#define CLOUDFIT_COMMON_NAMES_H
#include <stddef.h>

#include "cloudfit/status.h"

/* 1 when `a` and `b` are equal ignoring case and every character of
 * `separators`, else 0. */
int cf_names_equal(const char *a, const char *b, const char *separators);

/* `name` as a DNS-1035 label (Kubernetes object names; also a valid
 * SkyPilot cluster and task name): lower case, [a-z0-9-], starting with a
 * letter ("cf-" or "cf" put in front otherwise), at most `max_chars`. A
 * name that does not already have that form gets "-" and the first 8 hex
 * digits of its SHA-256 appended (the rest cut to fit), so distinct names
 * never share a label ("a.b" and "a_b"). max_chars >= 12. Malloc'd. */
cf_status cf_names_dns_label(const char *name, size_t max_chars, char **out);

#endif
