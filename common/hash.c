#include "cloudfit/common/hash.h"

#include <nettle/sha2.h>
#include <stdio.h>

/* Nettle's SHA-256, not OpenSSL's EVP: libcrypto cost every cloudfit
 * process ~3 ms to load and its first digest ~5 M instructions of provider
 * set-up, for one hash of a spec (docs/architecture.md, "Start-up"). */
cf_status cf_sha256_hex(const void *data, size_t len, char out[CF_SHA256_HEX_LEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    struct sha256_ctx ctx;
    uint8_t digest[SHA256_DIGEST_SIZE];
    sha256_init(&ctx);
    sha256_update(&ctx, len, data);
    sha256_digest(&ctx, sizeof digest, digest);
    for (size_t i = 0; i < sizeof digest; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    out[CF_SHA256_HEX_LEN] = '\0';
    return CF_OK;
}
