#include "term/terminal.h"

#include <stdlib.h>
#include <sys/ioctl.h>

#include "cloudfit/common/number.h"

/* The terminal's width, else $COLUMNS, else 80 (docs/output.md "Width").
 * $COLUMNS goes through the strict number parser with --width's range: a
 * value that is not a plain decimal integer from 1 to 1000000 is ignored as
 * if unset (atoi read "1e9" as 1 column: thousands of one-word lines, and
 * "99999999999" overflowed an int). */
int cf_cli_terminal_columns(int fd)
{
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *columns = getenv("COLUMNS");
    int n = 0;
    if (columns && cf_number_int(columns, 1, 1000000, &n) == CF_NUMBER_OK)
        return n;
    return 80;
}
