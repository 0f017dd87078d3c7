/* Shared by the fuzz targets: each defines LLVMFuzzerTestOneInput, linked
 * either with libFuzzer (clang -fsanitize=fuzzer, CLOUDFIT_FUZZ=ON) or
 * with replay_main.c, which runs stored inputs (the seed corpus and the
 * regression inputs) through the same function in every build. */
#ifndef CLOUDFIT_FUZZ_H
#define CLOUDFIT_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (inputs may hold NUL bytes: the
 * length is what the code under test is given). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        abort();
    if (size)
        memcpy(text, data, size);
    text[size] = '\0';
    return text;
}

/* Every failure must come with a message: a cf_status without one would
 * print "cloudfit: " and nothing else. */
static inline void fuzz_check_error(cf_status st)
{
    if (st != CF_OK && cf_error_message()[0] == '\0')
        abort();
    if (getenv("CF_FUZZ_VERBOSE")) /* what a stored input does, when looking at one */
        fprintf(stderr, "%s: %s\n", cf_status_name(st), st == CF_OK ? "" : cf_error_message());
    cf_error_clear();
}

#endif
