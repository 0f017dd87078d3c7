#ifndef CLOUDFIT_COMMON_HASH_H
#define CLOUDFIT_COMMON_HASH_H
#include <stddef.h>
#include "cloudfit/status.h"

#define CF_SHA256_HEX_LEN 64
/* SHA-256 of data as lowercase hex (nettle); out must hold 65 bytes. */
cf_status cf_sha256_hex(const void *data, size_t len, char out[CF_SHA256_HEX_LEN + 1]);

#endif
