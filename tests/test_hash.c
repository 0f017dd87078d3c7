/* Tests of common/hash.c: SHA-256 against the FIPS 180-2 example vectors
 * (history keys specs by this hash: a different digest would orphan every
 * stored row). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/hash.h"

static void assert_digest(const void *data, size_t len, const char *want)
{
    char out[CF_SHA256_HEX_LEN + 1];
    memset(out, 'x', sizeof out);
    assert_int_equal(cf_sha256_hex(data, len, out), CF_OK);
    assert_string_equal(out, want);
}

static void test_fips_vectors(void **state)
{
    (void)state;
    assert_digest("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_digest("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    assert_digest(two_blocks, strlen(two_blocks), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_million_a(void **state)
{
    (void)state;
    size_t n = 1000000;
    char *a = malloc(n);
    assert_non_null(a);
    memset(a, 'a', n);
    assert_digest(a, n, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_fips_vectors), cmocka_unit_test(test_million_a)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
