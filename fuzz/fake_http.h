/* A fake transport for the price fuzz targets: the same functions as
 * pricing/http.c, answering request k with document k of the input. */
#ifndef CLOUDFIT_FUZZ_FAKE_HTTP_H
#define CLOUDFIT_FUZZ_FAKE_HTTP_H
#include <stddef.h>

/* Documents are separated by a line "--cloudfit-fuzz--"; a request beyond
 * the last document gets HTTP 404. */
void cf_fake_http_serve(const char *data, size_t size);

#endif
