/* Runs stored inputs through a fuzz target's LLVMFuzzerTestOneInput
 * without libFuzzer: every file named on the command line, and every
 * file in every directory named (not recursively; dot files skipped).
 * Built in every build (gcc included), so the seed corpus and the
 * regression inputs (fuzz/regressions/TARGET/) are replayed by ctest: a
 * crash, a sanitizer report or a hang fails the test, and so does a
 * missing corpus (the first argument) or no input at all. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 1 << 16, len = 0;
    unsigned char *data = malloc(cap);
    for (;;) {
        if (!data)
            abort();
        size_t got = fread(data + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
        if (len == cap)
            data = realloc(data, cap *= 2);
    }
    fclose(f);
    LLVMFuzzerTestOneInput(data, len);
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    int n = 0, failed = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            if (i == 1) { /* the seed corpus: a wrong path would replay nothing and pass */
                fprintf(stderr, "replay: no corpus at %s\n", argv[i]);
                failed = 1;
            }
            continue; /* an empty regressions folder may not exist in a checkout */
        }
        if (!S_ISDIR(st.st_mode)) {
            failed |= run_file(argv[i]);
            n++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                failed |= run_file(path);
                n++;
            }
        }
        if (d)
            closedir(d);
    }
    printf("replayed %d inputs\n", n);
    if (n == 0) {
        fprintf(stderr, "replay: no input replayed: nothing was checked\n");
        return 1;
    }
    return failed;
}
