/* Comparing names that people spell differently ("ResNet-50", "resnet_50";
 * "A100 40GB", "a100-40gb"). */
#ifndef CLOUDFIT_COMMON_NAMES_H
#define CLOUDFIT_COMMON_NAMES_H

/* 1 when `a` and `b` are equal ignoring case and every character of
 * `separators`, else 0. */
int cf_names_equal(const char *a, const char *b, const char *separators);

#endif
