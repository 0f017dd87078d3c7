#include "cloudfit/common/names.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/common/hash.h"

int cf_names_equal(const char *a, const char *b, const char *separators)
{
    for (;;) {
        while (*a && strchr(separators, *a))
            a++;
        while (*b && strchr(separators, *b))
            b++;
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
        if (!*a)
            return 1;
        a++;
        b++;
    }
}

cf_status cf_names_split_list(const char *const *items, size_t n, char ***out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    size_t names = 0, bytes = 0;
    for (size_t i = 0; i < n; i++) {
        for (const char *p = items[i];; p++) { /* an empty name: at either end, or two commas together */
            size_t len = strcspn(p, ",");
            if (len == 0)
                return cf_error_set(CF_ERR_USAGE, "expects NAME[,NAME...], got '%s' (an empty name)", items[i]);
            names++;
            p += len;
            if (!*p)
                break;
        }
        bytes += strlen(items[i]) + 1;
    }
    char **list = malloc((names ? names : 1) * sizeof *list + bytes + 1);
    if (!list)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    char *text = (char *)(list + (names ? names : 1));
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(items[i]);
        memcpy(text, items[i], len + 1);
        for (char *p = text;; p++) {
            list[(*n_out)++] = p;
            p += strcspn(p, ",");
            if (!*p)
                break;
            *p = '\0';
        }
        text += len + 1;
    }
    *out = list;
    return CF_OK;
}

cf_status cf_names_dns_label(const char *name, size_t max_chars, char **out)
{
    *out = NULL;
    cf_buf base = CF_BUF_INIT;
    int dash = 0;
    for (const char *p = name; *p; p++) {
        unsigned char ch = (unsigned char)tolower((unsigned char)*p);
        if (isalnum(ch) && ch < 128) {
            if (dash && base.len)
                cf_buf_puts(&base, "-");
            dash = 0;
            cf_buf_append(&base, (const char *)&ch, 1);
        } else {
            dash = 1;
        }
    }
    cf_buf label = CF_BUF_INIT;
    if (!base.len || !isalpha((unsigned char)base.data[0]))
        cf_buf_puts(&label, base.len ? "cf-" : "cf");
    if (base.len)
        cf_buf_append(&label, base.data, base.len);
    cf_buf_free(&base);
    if (cf_buf_failed(&label)) {
        cf_buf_free(&label);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    int changed = strcmp(label.data, name) != 0 || label.len > max_chars;
    if (changed) {
        char hex[CF_SHA256_HEX_LEN + 1];
        cf_status st = cf_sha256_hex(name, strlen(name), hex);
        if (st != CF_OK) {
            cf_buf_free(&label);
            return st;
        }
        size_t keep = max_chars - 9; /* "-" and 8 hex digits */
        if (label.len > keep)
            label.len = keep;
        while (label.len && label.data[label.len - 1] == '-')
            label.len--;
        label.data[label.len] = '\0';
        cf_buf_printf(&label, "-%.8s", hex);
    }
    if (cf_buf_failed(&label)) {
        cf_buf_free(&label);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    *out = label.data;
    return CF_OK;
}
