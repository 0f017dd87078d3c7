/* The rebalance protocol (advisor/plan/rebalance_lines.c): the input, line by
 * line, as `cloudfit rebalance` reads it, each line parsed, observed by
 * the controller and answered. The first byte chooses the workers (1–4)
 * and the window (1–4). Every answer must keep the batches in [1, M] and
 * summing to M. */
#include "fuzz.h"
#include "cloudfit/advisor/rebalance.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int workers = 2, window = 2;
    if (size > 0) {
        workers = 1 + data[0] % 4;
        window = 1 + (data[0] >> 2) % 4;
        data++;
        size--;
    }
    cf_rebalance *c = malloc(sizeof *c);
    if (!c)
        abort();
    cf_rebalance_settings s = cf_rebalance_defaults();
    s.window = window;
    if (cf_rebalance_init(c, workers, 256, NULL, NULL, &s) != CF_OK)
        abort();
    char *text = fuzz_text(data, size);
    double times[4];
    long number = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        number++;
        if (cf_rebalance_line_blank(line))
            continue;
        cf_status st = cf_rebalance_read_line(line, "stdin", number, workers, times);
        fuzz_check_error(st);
        int changed = 0;
        if (st == CF_OK && (changed = cf_rebalance_observe(c, times)) < 0)
            abort(); /* read_line accepts only positive finite times */
        cf_buf answer = CF_BUF_INIT;
        cf_rebalance_answer(c, changed, st == CF_OK ? NULL : "skipped", &answer);
        cf_buf_free(&answer);
        long sum = 0;
        for (int i = 0; i < workers; i++) {
            if (c->batch[i] < 1 || c->batch[i] > 256)
                abort();
            sum += c->batch[i];
        }
        if (sum != 256)
            abort();
    }
    free(text);
    cf_rebalance_free(c);
    free(c);
    return 0;
}
