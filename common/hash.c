#include "cloudfit/common/hash.h"

#include <openssl/evp.h>
#include <stdio.h>

cf_status cf_sha256_hex(const void *data, size_t len, char out[CF_SHA256_HEX_LEN + 1])
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    if (!EVP_Digest(data, len, digest, &digest_len, EVP_sha256(), NULL) || digest_len != 32)
        return cf_error_set(CF_ERR_INTERNAL, "SHA-256 failed");
    for (unsigned int i = 0; i < digest_len; i++)
        snprintf(out + 2 * i, 3, "%02x", digest[i]);
    out[CF_SHA256_HEX_LEN] = '\0';
    return CF_OK;
}
