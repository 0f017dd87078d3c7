#include "cloudfit/common/names.h"

#include <ctype.h>
#include <string.h>

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
