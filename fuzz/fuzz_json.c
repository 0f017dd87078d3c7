/* The one JSON reader (common/json.c): syntax diagnostics, the token
 * checks (numbers, \u0000) and the duplicate-key check, on the input and
 * on large documents made from it.
 *
 * Parsers must stay linear in their input (docs/reliability.md), but
 * libFuzzer's inputs are small, so super-linear work would never show.
 * Every fourth valid input (by length) is therefore also read as members
 * of an object of 20,000 members (distinct keys, the input repeated in up
 * to 128 KiB of them) and of an array as long: linear work on that is
 * ~0.05 s under ASan, a pairwise key check 20,000²/2 comparisons, seconds; run with -timeout=2
 * (scripts/fuzz.sh does for this target), a quadratic step anywhere in the
 * reader makes a timeout. */
#include "fuzz.h"
#include "cloudfit/common/buf.h"
#include "cloudfit/common/json.h"

#define AMPLIFY_MEMBERS 20000
#define AMPLIFY_BYTES (1u << 17)

/* {"0":V,"1":V,...} (object) or [V,V,...]: V repeated while the copies
 * stay within AMPLIFY_BYTES, then 0 up to AMPLIFY_MEMBERS members (the
 * count is what a quadratic step feels, whatever V's size), and with
 * `duplicate` a repeat of the first key at the end. Built with plain
 * appends: the build itself must stay cheap under ASan. */
static void amplified(const char *value, size_t len, int object, int duplicate, cf_buf *out)
{
    size_t with_value = AMPLIFY_BYTES / (len + 10);
    cf_buf_append(out, object ? "{" : "[", 1);
    for (size_t i = 0; i < AMPLIFY_MEMBERS; i++) {
        if (i)
            cf_buf_append(out, ",", 1);
        if (object) {
            char key[24];
            size_t n = sizeof key;
            key[--n] = ':';
            key[--n] = '"';
            size_t v = i;
            do
                key[--n] = (char)('0' + v % 10);
            while ((v /= 10) > 0);
            key[--n] = '"';
            cf_buf_append(out, key + n, sizeof key - n);
        }
        if (i < with_value || i == 0)
            cf_buf_append(out, value, len);
        else
            cf_buf_append(out, "0", 1);
    }
    if (duplicate) {
        cf_buf_append(out, ",\"0\":", 5);
        cf_buf_append(out, value, len);
    }
    cf_buf_append(out, object ? "}" : "]", 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    cJSON *doc = NULL;
    cf_status st = cf_json_read(text, size, "fuzz.json", &doc);
    fuzz_check_error(st);
    if (st != CF_OK)
        return 0;
    /* What the reader accepts, printed back, is accepted again. */
    char *printed = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    if (!printed)
        abort();
    st = cf_json_read(printed, strlen(printed), "printed.json", &doc);
    if (st != CF_OK) {
        fprintf(stderr, "printed back and refused: %s\n", cf_error_message());
        abort();
    }
    cJSON_Delete(doc);
    free(printed);
    if (size % 4 != 0)
        return 0;
    if (size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) { /* a BOM counts only at the start */
        text += 3;
        size -= 3;
    }
    for (int object = 0; object <= 1; object++) {
        cf_buf big = CF_BUF_INIT;
        amplified(text, size, object, 0, &big);
        if (cf_buf_failed(&big))
            abort();
        st = cf_json_read(big.data, big.len, "big.json", &doc);
        fuzz_check_error(st); /* may fail: one level deeper than the input can pass the nesting limit */
        cJSON_Delete(doc);
        cf_buf_free(&big);
        if (object && st == CF_OK) {
            amplified(text, size, 1, 1, &big);
            if (cf_buf_failed(&big))
                abort();
            if (cf_json_read(big.data, big.len, "big.json", &doc) != CF_ERR_INVALID ||
                !strstr(cf_error_message(), "big.json: 0: duplicate key"))
                abort();
            cf_error_clear();
            cf_buf_free(&big);
        }
    }
    return 0;
}
