#include "cloudfit/common/hash.h"

#include <nettle/base16.h>
#include <nettle/sha2.h>

/* Nettle's SHA-256, not OpenSSL's EVP: libcrypto cost every cloudfit
 * process ~3 ms to load and its first digest ~5 M instructions of provider
 * set-up, for one hash of a spec (docs/architecture.md, "Start-up"). */
cf_status cf_sha256_hex(const void *data, size_t len, char out[CF_SHA256_HEX_LEN + 1])
{
    struct sha256_ctx ctx;
    uint8_t digest[SHA256_DIGEST_SIZE];
    sha256_init(&ctx);
    sha256_update(&ctx, len, data);
    sha256_digest(&ctx, sizeof digest, digest);
    base16_encode_update(out, sizeof digest, digest); /* lowercase, BASE16_ENCODE_LENGTH = 64 */
    out[CF_SHA256_HEX_LEN] = '\0';
    return CF_OK;
}
