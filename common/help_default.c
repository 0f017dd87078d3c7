/* The default an option's help text states (docs: `config show`). */
#include "cloudfit/common/help_default.h"

#include <stdio.h>
#include <string.h>

void cf_help_stated_default(const char *help, char *out, size_t n)
{
    out[0] = '\0';
    for (const char *d = strstr(help, "default"); d; d = strstr(d + 1, "default")) {
        int opens = d > help && d[-1] == '(';
        int listed = d >= help + 2 && d[-2] == ',' && d[-1] == ' ';
        if (!opens && !listed)
            continue;
        const char *v = d + strlen("default");
        if (*v == ')') { /* the word before the parenthesis */
            const char *open = d;
            while (open > help && *open != '(')
                open--;
            const char *stop = open;
            while (stop > help && stop[-1] == ' ')
                stop--;
            const char *word = stop;
            while (word > help && word[-1] != ' ' && word[-1] != ':')
                word--;
            snprintf(out, n, "%.*s", (int)(stop - word), word);
        } else if (*v == ':' || *v == ' ') { /* a description after "default:" runs to ')' or ';' */
            const char *stops = *v == ':' ? ");" : ");:,";
            v += strspn(v, ": ");
            snprintf(out, n, "%.*s", (int)strcspn(v, stops), v);
        }
        return;
    }
}

