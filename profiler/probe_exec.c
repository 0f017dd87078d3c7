/* The exec probe backend: runs the spec's profile.command (argv, never a
 * shell) once per configuration with the run in CLOUDFIT_* environment
 * variables, and reads the JSON-lines protocol of docs/exec-protocol.md
 * from its standard output. Any protocol violation, crash, non-zero exit or
 * silence longer than the timeout is an error naming the stdout line; the
 * process group is killed and nothing of the run is kept. */
#include "cloudfit/profiler.h"
#include "cloudfit/common/escape.h"
#include "cloudfit/common/json.h"
#include "cloudfit/common/proc.h"
#include "cloudfit/profiler/exec_protocol.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_LINE_BYTES (1 << 20)
#define STDERR_TAIL 2048
/* The step times a probe may report (docs/exec-protocol.md) */
#define CF_PROBE_MIN_STEP_S 1e-9
#define CF_PROBE_MAX_STEP_S 1e6

struct cf_probe {
    char *const *argv;
    char label[160];          /* 'python3 train.py' for messages */
    double timeout_s;
};

static cf_status exec_open(const cf_probe_backend *self, const cf_job *job, const cf_probe_options *options,
                           cf_probe **out)
{
    (void)self;
    const cf_probe_settings *settings = options ? options->settings : NULL;
    if (!settings || settings->n_command < 1) {
        cf_error_set(CF_ERR_INVALID, "%s: profile.command: required for the exec backend",
                     job->source[0] ? job->source : "<spec>");
        cf_error_hint("give the training script as an argv list, e.g. \"command\": [\"python3\", \"train.py\"]; "
                      "the protocol is in docs/exec-protocol.md");
        return CF_ERR_INVALID;
    }
    /* A program that cannot run is refused before the first run, with the
     * reason (execvp's EACCES said "Permission denied" for a directory) */
    char why[4200];
    const char *problem = cf_exec_program_problem(settings->command[0], why, sizeof why);
    if (problem) {
        cf_error_set(CF_ERR_UNAVAILABLE, "%s: cannot run '%s': %s",
                     job->source[0] ? job->source : "<spec>", settings->command[0], problem);
        cf_error_hint("the command's first word (profile.command's, or the --runner template's) is the program, "
                      "run without a shell: give the path of an "
                      "executable file or put it on PATH");
        return CF_ERR_UNAVAILABLE;
    }
    cf_probe *p = calloc(1, sizeof *p);
    if (!p)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    p->argv = settings->command;
    p->timeout_s = options && options->timeout_s > 0 ? options->timeout_s : CF_PROBE_TIMEOUT_S_DEFAULT;
    size_t used = 0;
    for (int i = 0; i < settings->n_command && used + 2 < sizeof p->label; i++) {
        int n = snprintf(p->label + used, sizeof p->label - used, "%s%s", i ? " " : "", settings->command[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (used >= sizeof p->label)
        memcpy(p->label + sizeof p->label - 4, "...", 4);
    *out = p;
    return CF_OK;
}

static void exec_close(cf_probe *p)
{
    free(p);
}

/* ---- child process ---------------------------------------------------------------- */

typedef struct {
    char *vars[5];
    char **envp;
} child_env;

static void env_free(child_env *e)
{
    for (int i = 0; i < 5; i++)
        free(e->vars[i]);
    free(e->envp);
}

/* cloudfit's own settings that may carry a secret (an API key, a URL with
 * credentials, the history database: `postgresql://USER:PASSWORD@…`): a
 * probe never needs them, so they are not passed on. */
static int secret_setting(const char *entry)
{
    if (strncmp(entry, "CLOUDFIT_", 9) != 0)
        return 0;
    const char *eq = strchr(entry, '=');
    size_t len = eq ? (size_t)(eq - entry) : strlen(entry);
    return (len == 11 && memcmp(entry, "CLOUDFIT_DB", 11) == 0) ||
           (len >= 8 && memcmp(entry + len - 8, "_API_KEY", 8) == 0) ||
           (len >= 4 && memcmp(entry + len - 4, "_URL", 4) == 0 && strncmp(entry, "CLOUDFIT_CI_", 12) != 0);
}

/* The environment, explicitly: the parent's without cloudfit's secrets
 * (secret_setting) and without stale CLOUDFIT_* run variables, plus the
 * run's. */
static cf_status env_build(const cf_probe_run *run, child_env *e)
{
    memset(e, 0, sizeof *e);
    static const char *const names[] = {"CLOUDFIT_LOCAL_BATCH", "CLOUDFIT_MICRO_BATCHES", "CLOUDFIT_STEPS",
                                        "CLOUDFIT_WARMUP_STEPS", "CLOUDFIT_SEED"};
    const unsigned long values[] = {(unsigned long)run->local_batch, (unsigned long)run->micro_batches,
                                    (unsigned long)run->steps, (unsigned long)run->warmup_steps, run->seed};
    size_t n = 0;
    while (environ && environ[n])
        n++;
    e->envp = calloc(n + 6, sizeof *e->envp);
    if (!e->envp)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int ours = 0;
        for (int v = 0; v < 5; v++) {
            size_t len = strlen(names[v]);
            if (strncmp(environ[i], names[v], len) == 0 && environ[i][len] == '=')
                ours = 1;
        }
        if (!ours && !secret_setting(environ[i]))
            e->envp[k++] = environ[i];
    }
    for (int v = 0; v < 5; v++) {
        char buf[96];
        snprintf(buf, sizeof buf, "%s=%lu", names[v], values[v]);
        if (!(e->vars[v] = strdup(buf))) {
            env_free(e);
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        }
        e->envp[k++] = e->vars[v];
    }
    e->envp[k] = NULL;
    return CF_OK;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static int make_pipe(int fds[2])
{
    if (pipe(fds) != 0)
        return -1;
    for (int i = 0; i < 2; i++)
        fcntl(fds[i], F_SETFD, FD_CLOEXEC);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    return 0;
}

/* ---- parsing ------------------------------------------------------------------------ */

typedef struct {
    cf_probe *probe;
    const cf_probe_run *run;
    cf_probe_result *out;
    long line;                 /* stdout lines read */
    long events;               /* non-blank lines (events) read */
    int cap_steps;
    int done;
    long last_step;
} parse_state;

static cf_status line_error(const parse_state *ps, const char *fmt, ...) CF_PRINTF(2, 3);
static cf_status line_error(const parse_state *ps, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return cf_error_set(CF_ERR_INVALID, "'%s': stdout line %ld: %s", ps->probe->label, ps->line, what);
}

/* The same, naming the column (in characters, from 1). */
static cf_status column_error(const parse_state *ps, long column, const char *fmt, ...) CF_PRINTF(3, 4);
static cf_status column_error(const parse_state *ps, long column, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return cf_error_set(CF_ERR_INVALID, "'%s': stdout line %ld, column %ld: %s", ps->probe->label, ps->line, column,
                        what);
}

/* The first place where `text` stops being JSON, as a byte offset (cJSON's
 * own error position; `len` when the text is valid JSON, e.g. an array). */
static size_t json_error_offset(const char *text, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return len;
    memcpy(copy, text, len);
    copy[len] = '\0';
    const char *error_at = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(copy, len + 1, &error_at, 1);
    size_t offset = len;
    if (!doc && error_at && error_at >= copy && (size_t)(error_at - copy) <= len)
        offset = (size_t)(error_at - copy);
    cJSON_Delete(doc);
    free(copy);
    return offset;
}

/* 1 when byte `at` of the line is inside a JSON string (after an opening
 * quote, before its closing one). */
static int inside_string(const char *text, size_t at)
{
    int in = 0;
    for (size_t i = 0; i < at; i++) {
        if (in && text[i] == '\\')
            i++;
        else if (text[i] == '"')
            in = !in;
    }
    return in;
}

/* Column of byte `offset` in characters (UTF-8 continuation bytes do not
 * start a column), from 1. */
static long utf8_column(const char *text, size_t offset)
{
    long column = 1;
    for (size_t i = 0; i < offset; i++)
        if (((unsigned char)text[i] & 0xC0) != 0x80)
            column++;
    return column;
}

static int word_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '+' || c == '.';
}

/* The member name whose value starts at text[at] ("time_s" in
 * `"time_s": NaN`), into key; 0 when it is not a member's value (an array
 * element). */
static int key_before(const char *text, size_t at, char *key, size_t n)
{
    size_t i = at;
    while (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t'))
        i--;
    if (i == 0 || text[i - 1] != ':')
        return 0;
    i--;
    while (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t'))
        i--;
    if (i == 0 || text[i - 1] != '"')
        return 0;
    size_t end = --i;
    while (i > 0 && text[i - 1] != '"')
        i--;
    if (i == 0 || end - i >= n)
        return 0;
    snprintf(key, n, "%.*s", (int)(end - i), text + i);
    return 1;
}

/* A line that is not one JSON object: where it stops being JSON (column)
 * and the token there. Python's json.dumps writes the non-finite floats as
 * the bare words NaN, Infinity and -Infinity, which JSON does not have —
 * almost always a gradient norm or loss that overflowed. */
static cf_status not_json(const parse_state *ps, const char *text, size_t len, const char *shown)
{
    size_t at = json_error_offset(text, len);
    if (at >= len) /* valid JSON, but not an object (an array, a number) */
        return line_error(ps, "expected one JSON object per line, got '%s'", shown);
    /* cJSON reports a bad value at its first character; step back over a
     * sign or the letters of a word it stopped inside. */
    size_t start = at;
    while (start > 0 && word_char(text[start - 1]) && word_char(text[start]))
        start--;
    size_t end = start;
    while (end < len && end - start < 40 && word_char(text[end]))
        end++;
    if (end == start) /* a lone character: a quote, a brace, a control byte */
        end = start + 1;
    char token[48];
    snprintf(token, sizeof token, "%.*s", (int)(end - start), text + start);
    for (char *c = token; *c; c++)
        if ((unsigned char)*c < 0x20)
            *c = '?';
    long column = utf8_column(text, start);
    /* What leads up to the token (the start of a long line is in `shown`). */
    size_t from = start > 40 ? start - 40 : 0;
    while (from > 0 && from < start && ((unsigned char)text[from] & 0xC0) == 0x80)
        from++; /* not inside a UTF-8 sequence */
    char context[112];
    snprintf(context, sizeof context, "%s%.*s", from > 0 ? "..." : "", (int)(end - from), text + from);
    for (char *c = context; *c; c++)
        if ((unsigned char)*c < 0x20)
            *c = '?';
    const char *word = token[0] == '-' || token[0] == '+' ? token + 1 : token;
    if (strcmp(word, "Infinity") == 0 || strcmp(word, "inf") == 0 || strcmp(word, "Inf") == 0 ||
        strcmp(word, "NaN") == 0 || strcmp(word, "nan") == 0) {
        /* a gradient norm or the loss overflows in fp16; any other member
         * (a step time from a broken timer) is named as what it is */
        char key[40];
        if (key_before(text, start, key, sizeof key) && strcmp(key, "mean_sqnorm") != 0 &&
            strcmp(key, "loss") != 0) {
            for (char *c = key; *c; c++)
                if ((unsigned char)*c < 0x20)
                    *c = '?';
            cf_status st = column_error(ps, column, "'%s' is not JSON: \"%s\" must be a finite number, at '%s'", token,
                                        key, context);
            cf_error_hint("JSON has no NaN or Infinity: report an 'error' event when the script cannot measure it");
            return st;
        }
        cf_status st = column_error(ps, column, "'%s' is not JSON: a non-finite gradient norm? (fp16 overflow) at '%s'",
                                    token, context);
        cf_error_hint("JSON has no NaN or Infinity: report an 'error' event instead; with fp16 unscale the "
                      "gradients (GradScaler) before taking norms, or use bf16 — the cloudfit_probe helper does "
                      "both (docs/profiler.md)");
        return st;
    }
    if (from == start) /* the line starts with it: the line says it best */
        return column_error(ps, column, "expected one JSON object per line, got '%s'", shown);
    return column_error(ps, column, "expected one JSON object per line; '%s' is not JSON, at '%s'", token, context);
}

/* Shortens a line for a message. */
static void excerpt(const char *text, char *out, size_t n)
{
    size_t len = strlen(text);
    if (len + 1 <= n) {
        memcpy(out, text, len + 1);
        return;
    }
    snprintf(out, n, "%.*s...", (int)cf_utf8_prefix(text, n > 4 ? n - 4 : 0), text);
}

static cf_status field_number(const parse_state *ps, const cJSON *obj, const char *key, int required, double min,
                              int exclusive, double *out)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    char what[160];
    if (!item) {
        if (!required)
            return CF_OK;
        snprintf(what, sizeof what, "'%s' event without \"%s\"", cJSON_GetObjectItem(obj, "event")->valuestring, key);
        return line_error(ps, "%s", what);
    }
    if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) || item->valuedouble < min ||
        (exclusive && item->valuedouble <= min)) {
        if (exclusive || min == 0 || isinf(min))
            snprintf(what, sizeof what, "\"%s\": expected a %s number", key,
                     exclusive ? "positive" : min == 0 ? "non-negative" : "finite");
        else /* a bound of its own ("gpus": 0 is finite, yet not a GPU count) */
            snprintf(what, sizeof what, "\"%s\": expected a number of at least %g", key, min);
        return line_error(ps, "%s", what);
    }
    *out = item->valuedouble;
    return CF_OK;
}

static const char *const precision_names[] = {"fp32", "tf32", "fp16", "bf16", "amp", NULL};

/* An optional string member of the device event from a fixed list, the
 * same in every device event of the run. */
static cf_status device_setting(const parse_state *ps, const cJSON *ev, const char *key, const char *const *allowed,
                                char *out, size_t n)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(ev, key);
    if (!item)
        return CF_OK;
    int known = 0;
    for (int i = 0; cJSON_IsString(item) && allowed[i] && !known; i++)
        known = strcmp(item->valuestring, allowed[i]) == 0;
    if (!known) {
        char list[96] = "";
        size_t used = 0;
        for (int i = 0; allowed[i] && used < sizeof list; i++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s\"%s\"", i ? ", " : "", allowed[i]);
        /* the value as given, as the spec's checks show it (BF16 for bf16, a number for a name) */
        char got[64];
        if (cJSON_IsString(item)) {
            char text[48];
            cf_escape_into(item->valuestring, text, sizeof text);
            snprintf(got, sizeof got, "\"%s\"", text);
        } else
            snprintf(got, sizeof got, "%s", cJSON_IsNumber(item) ? "a number" : cJSON_IsNull(item) ? "null"
                                            : cJSON_IsBool(item) ? "a boolean" : cJSON_IsArray(item) ? "an array"
                                                                                                    : "an object");
        return line_error(ps, "'device' event: \"%s\": expected one of %s, got %s", key, list, got);
    }
    if (out[0] && strcmp(out, item->valuestring) != 0)
        return line_error(ps, "a second 'device' event gives another \"%s\" ('%s', then '%s')", key, out,
                          item->valuestring);
    snprintf(out, n, "%s", item->valuestring);
    return CF_OK;
}

static cf_status on_device(parse_state *ps, const cJSON *ev)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
    if (!cJSON_IsString(name) || !name->valuestring[0])
        return line_error(ps, "%s", "'device' event: \"name\": expected a non-empty string");
    cf_probe_device *d = &ps->out->device;
    double mem = 0, gpus = 1;
    cf_status st = field_number(ps, ev, "memory_gib", 0, 0, 0, &mem);
    if (st == CF_OK)
        st = field_number(ps, ev, "gpus", 0, 1, 0, &gpus);
    if (st != CF_OK)
        return st;
    /* Counts are stored in integers: range-checked, never cast blindly. */
    if (gpus != floor(gpus) || gpus > 65536)
        return line_error(ps, "%s", "'device' event: \"gpus\": expected an integer from 1 to 65536");
    if (mem > 1e9)
        return line_error(ps, "%s", "'device' event: \"memory_gib\": expected at most 1e9");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
    if (type && (!cJSON_IsString(type) || (strcmp(type->valuestring, "gpu") && strcmp(type->valuestring, "cpu"))))
        return line_error(ps, "%s", "'device' event: \"type\": expected \"gpu\" or \"cpu\"");
    /* The name as kept: control characters and bytes that are not UTF-8
     * escaped (stored raw, a non-UTF-8 name made the history unreadable to
     * strict UTF-8 readers), cut to the field; a second event is compared
     * the same way */
    char kept[sizeof d->name];
    cf_escape_into(name->valuestring, kept, sizeof kept);
    cf_probe_device reported = {.gpus = (int)gpus, .memory_gib = mem, .is_gpu = !(type && strcmp(type->valuestring, "cpu") == 0)};
    snprintf(reported.name, sizeof reported.name, "%s", kept);
    if (ps->out->has_device) {
        /* A second event restates the device: what it leaves out stays as
         * the first said, what it gives must agree (one run, one device). */
        if (!cJSON_GetObjectItemCaseSensitive(ev, "gpus"))
            reported.gpus = d->gpus;
        if (!type)
            reported.is_gpu = d->is_gpu;
        if (!cJSON_GetObjectItemCaseSensitive(ev, "memory_gib"))
            reported.memory_gib = d->memory_gib;
        const char *field = cf_probe_device_difference(d, &reported);
        if (field && strcmp(field, "name") == 0)
            return line_error(ps, "%s", "a second 'device' event names another device");
        if (field)
            return line_error(ps, "a second 'device' event gives another \"%s\"", field);
    }
    cf_status st_fmt = device_setting(ps, ev, "precision", precision_names, ps->out->precision,
                                      sizeof ps->out->precision);
    if (st_fmt == CF_OK)
        st_fmt = device_setting(ps, ev, "memory_format", cf_memory_formats, ps->out->memory_format,
                                sizeof ps->out->memory_format);
    if (st_fmt != CF_OK)
        return st_fmt;
    if (!(reported.memory_gib > 0))
        reported.memory_gib = d->memory_gib;
    *d = reported;
    ps->out->has_device = 1;
    if (cJSON_GetObjectItemCaseSensitive(ev, "gpus"))
        ps->out->device_gpus_given = 1;
    return CF_OK;
}

/* A step's "samples" is what the run was asked to train: one device's
 * samples of the step (CLOUDFIT_LOCAL_BATCH × CLOUDFIT_MICRO_BATCHES, as a
 * single process reports them) or all its devices' together (that times
 * the world size: a runner's nodes × GPUs per node, else the 'device'
 * event's "gpus"), as cloudfit_probe reports them under torchrun. Anything
 * else is a run that trained another batch (a launcher that dropped
 * {local_batch}, a hard-coded batch size): its step time would be stored
 * as the batch asked for. */
static cf_status check_samples(const parse_state *ps, double samples)
{
    const cf_probe_run *run = ps->run;
    const cf_probe_device *d = &ps->out->device;
    if (run->local_batch <= 0 || run->micro_batches <= 0)
        return CF_OK;
    /* a device event whose "gpus" is not the runner's world size fails the
     * run on that count (profiler/runner_exec.c), which says what went wrong */
    if (run->world_size > 0 && ps->out->device_gpus_given && d->gpus != run->world_size)
        return CF_OK;
    int world = run->world_size > 0 ? run->world_size : ps->out->device_gpus_given ? d->gpus : 1;
    double per_device = (double)run->local_batch * run->micro_batches;
    double all = per_device * world;
    if (samples == per_device || samples == all)
        return CF_OK;
    char asked[160];
    const char *unit = d->is_gpu ? "GPU" : "device";
    if (world > 1)
        snprintf(asked, sizeof asked, "%.0f per device (CLOUDFIT_LOCAL_BATCH %d × %d micro-batch%s), %.0f over its "
                 "%d %ss", per_device, run->local_batch, run->micro_batches, run->micro_batches == 1 ? "" : "es",
                 all, world, unit);
    else
        snprintf(asked, sizeof asked, "%.0f (CLOUDFIT_LOCAL_BATCH %d × %d micro-batch%s) on its one %s", per_device,
                 run->local_batch, run->micro_batches, run->micro_batches == 1 ? "" : "es", unit);
    cf_status st = line_error(ps, "\"samples\": %.0f, but the run was asked for %s", samples, asked);
    cf_error_hint("\"samples\" is the step's samples on one device (CLOUDFIT_LOCAL_BATCH × "
                  "CLOUDFIT_MICRO_BATCHES) or on all the run's devices together: a run that trains another batch "
                  "(a launcher that drops {local_batch}, a hard-coded batch size) measures another configuration");
    return st;
}

static cf_status on_step(parse_state *ps, const cJSON *ev)
{
    if (!ps->out->has_device)
        return line_error(ps, "%s", "a 'step' event before the 'device' event");
    cf_probe_step s;
    memset(&s, 0, sizeof s);
    s.mean_sqnorm = -1;
    s.loss = NAN;
    double step = 0, samples = 0;
    /* Steps count from 0 or 1, as training loops do: any increasing non-negative integer. */
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(ev, "step");
    if (!cJSON_IsNumber(n) || !(n->valuedouble >= 0 && n->valuedouble <= 1e15) || n->valuedouble != floor(n->valuedouble)) {
        char got[48] = "nothing";
        if (n && cJSON_IsNumber(n))
            snprintf(got, sizeof got, "%.10g", n->valuedouble);
        else if (n)
            snprintf(got, sizeof got, "%s", cJSON_IsString(n) ? "a string" : "not a number");
        return line_error(ps, "\"step\": expected a non-negative integer that increases with every step (from 0 or 1), "
                              "got %s", got);
    }
    step = n->valuedouble;
    cf_status st = field_number(ps, ev, "time_s", 1, 0, 1, &s.time_s);
    /* a step of a nanosecond to 10^6 s: 1e308 overflowed the median to
     * inf, and 1e-300 the fit's relative residual */
    if (st == CF_OK && !(s.time_s >= CF_PROBE_MIN_STEP_S && s.time_s <= CF_PROBE_MAX_STEP_S)) {
        char what[128];
        snprintf(what, sizeof what, "\"time_s\": %.10g s is not a step time (%g to %g s)", s.time_s,
                 CF_PROBE_MIN_STEP_S, CF_PROBE_MAX_STEP_S);
        return line_error(ps, "%s", what);
    }
    if (st == CF_OK)
        st = field_number(ps, ev, "samples", 1, 0, 1, &samples);
    if (st == CF_OK)
        st = field_number(ps, ev, "mean_sqnorm", 0, 0, 0, &s.mean_sqnorm);
    if (st == CF_OK)
        st = field_number(ps, ev, "loss", 0, -INFINITY, 0, &s.loss);
    if (st != CF_OK)
        return st;
    if (samples != floor(samples) || samples > 1e15)
        return line_error(ps, "%s", "\"samples\": expected an integer from 1 to 1e15");
    st = check_samples(ps, samples);
    if (st != CF_OK)
        return st;
    if (ps->out->n_steps > 0 && (long)step <= ps->last_step) { /* the first step may be 0 */
        char what[96];
        snprintf(what, sizeof what, "\"step\": expected a step after %ld (steps increase), got %ld", ps->last_step,
                 (long)step);
        return line_error(ps, "%s", what);
    }
    ps->last_step = (long)step;
    s.samples = (long)samples;
    const cJSON *micro = cJSON_GetObjectItemCaseSensitive(ev, "micro_sqnorms");
    if (micro) {
        if (!cJSON_IsArray(micro) || cJSON_GetArraySize(micro) > CF_PROBE_MAX_MICRO)
            return line_error(ps, "%s", "\"micro_sqnorms\": expected an array of at most 64 numbers");
        const cJSON *v;
        cJSON_ArrayForEach(v, micro)
        {
            if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
                return line_error(ps, "%s", "\"micro_sqnorms\": expected non-negative numbers");
            s.micro_sqnorms[s.n_micro++] = v->valuedouble;
        }
    }
    int expected = ps->run->warmup_steps + ps->run->steps;
    if (ps->out->n_steps >= expected) {
        char what[96];
        snprintf(what, sizeof what, "more than the %d steps asked for (CLOUDFIT_WARMUP_STEPS + CLOUDFIT_STEPS)",
                 expected);
        return line_error(ps, "%s", what);
    }
    if (ps->out->n_steps == ps->cap_steps) {
        int cap = ps->cap_steps ? 2 * ps->cap_steps : 64;
        cf_probe_step *grown = realloc(ps->out->steps, (size_t)cap * sizeof *grown);
        if (!grown)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        ps->out->steps = grown;
        ps->cap_steps = cap;
    }
    ps->out->steps[ps->out->n_steps++] = s;
    return CF_OK;
}

static int known_event(const char *kind)
{
    static const char *const events[] = {"device", "step", "oom", "error", "done"};
    for (size_t i = 0; i < sizeof events / sizeof *events; i++)
        if (strcmp(kind, events[i]) == 0)
            return 1;
    return 0;
}

/* 'oom' says the batch does not fit, and ends the run: the script prints
 * it and exits (docs/exec-protocol.md). Any event after it contradicts it
 * (a step: its steps were dropped and the run taken as out of memory) or
 * is a script that went on after it; an 'error' keeps its message. */
static cf_status after_oom(const parse_state *ps, const char *kind, const cJSON *ev)
{
    const char *article = strcmp(kind, "oom") == 0 || strcmp(kind, "error") == 0 ? "an" : "a";
    if (strcmp(kind, "error") != 0)
        return line_error(ps, "%s '%s' event after the 'oom' event (a run that reports 'oom' ends there)", article,
                          kind);
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(ev, "message");
    char said[400];
    cf_escape_into(cJSON_IsString(msg) ? msg->valuestring : "(no message)", said, sizeof said);
    return line_error(ps, "an 'error' event after the 'oom' event (a run that reports 'oom' ends there): %s", said);
}

static cf_status on_line(parse_state *ps, char *text, size_t len)
{
    ps->line++;
    if (memchr(text, '\0', len))
        return line_error(ps, "%s", "a NUL byte in the line (expected one JSON object per line)");
    while (len && (text[len - 1] == '\r' || text[len - 1] == ' ' || text[len - 1] == '\t'))
        text[--len] = '\0';
    if (len == 0)
        return CF_OK; /* blank lines are allowed */
    ps->events++;
    char shown[96];
    excerpt(text, shown, sizeof shown);
    if (ps->done)
        return line_error(ps, "output after the 'done' event: '%s'", shown);
    cJSON *ev = NULL;
    cf_status parsed = cf_json_parse_program_output(text, len, "stdout", &ev);
    if (parsed != CF_OK || !cJSON_IsObject(ev)) {
        cJSON_Delete(ev);
        /* Text cJSON takes that the strict reader refuses (a number out of
         * a double's range or subnormal, a leading zero, \u0000), or an
         * escape inside a string cJSON refuses (a lone surrogate \ud800,
         * \x41): the shared reader's reason, at its column
         * ("stdout:1:62: invalid JSON: ..."). */
        int line_in = 0, column = 0, used = 0;
        size_t at = json_error_offset(text, len);
        if (parsed == CF_ERR_INVALID && (at >= len || (text[at] == '\\' && inside_string(text, at))) &&
            sscanf(cf_error_message(), "stdout:%d:%d: %n", &line_in, &column, &used) == 2 && used > 0) {
            char why[400], hint[400];
            snprintf(why, sizeof why, "%s", cf_error_message() + used);
            snprintf(hint, sizeof hint, "%s", cf_error_hint_text());
            cf_status st = column_error(ps, column, "%s", why);
            if (hint[0])
                cf_error_hint("%s", hint);
            return st;
        }
        cf_error_clear();
        return not_json(ps, text, len, shown);
    }
    if (cf_json_check_unique_keys(ev, "event") != CF_OK) {
        char why[200];
        snprintf(why, sizeof why, "%s", cf_error_message());
        cJSON_Delete(ev);
        return line_error(ps, "%s in '%s'", why, shown);
    }
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(ev, "event");
    cf_status st = CF_OK;
    if (!cJSON_IsString(kind)) {
        st = line_error(ps, "expected an \"event\" member (device, step, oom, error or done) in '%s'", shown);
    } else if (ps->out->oom && known_event(kind->valuestring)) {
        st = after_oom(ps, kind->valuestring, ev);
    } else if (strcmp(kind->valuestring, "device") == 0) {
        st = on_device(ps, ev);
    } else if (strcmp(kind->valuestring, "step") == 0) {
        st = on_step(ps, ev);
    } else if (strcmp(kind->valuestring, "oom") == 0) {
        ps->out->oom = 1;
    } else if (strcmp(kind->valuestring, "done") == 0) {
        ps->done = 1;
    } else if (strcmp(kind->valuestring, "error") == 0) {
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(ev, "message");
        /* the script's text, escaped as its device name is: the message is
         * stored with a failed search probe (control characters were
         * stored raw) and shown */
        char said[512], what[600];
        cf_escape_into(cJSON_IsString(msg) ? msg->valuestring : "(no message)", said, sizeof said);
        snprintf(what, sizeof what, "the script reported an error: %s", said);
        st = cf_error_set(CF_ERR_UNAVAILABLE, "'%s': stdout line %ld: %s", ps->probe->label, ps->line, what);
    } else {
        excerpt(kind->valuestring, shown, sizeof shown);
        st = line_error(ps, "unknown event '%s' (expected device, step, oom, error or done)", shown);
    }
    cJSON_Delete(ev);
    return st;
}

/* ---- the run ----------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    char *data;
    size_t len, cap;
} bytes;

static int bytes_append(bytes *b, const char *data, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown)
            return -1;
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

/* Copies n bytes, a NUL as '?': the tail is a C string, and a NUL in it
 * (a binary log) cut off everything the script wrote after it, its last
 * line with it. */
static void copy_no_nul(char *to, const char *from, size_t n)
{
    for (size_t i = 0; i < n; i++)
        to[i] = from[i] ? from[i] : '?';
}

/* Keeps the last STDERR_TAIL bytes of the script's standard error. */
static void tail_append(char *tail, const char *data, size_t n)
{
    size_t have = strlen(tail);
    if (n >= STDERR_TAIL - 1) {
        copy_no_nul(tail, data + n - (STDERR_TAIL - 1), STDERR_TAIL - 1);
        tail[STDERR_TAIL - 1] = '\0';
        return;
    }
    if (have + n > STDERR_TAIL - 1) {
        size_t drop = have + n - (STDERR_TAIL - 1);
        memmove(tail, tail + drop, have - drop + 1);
        have -= drop;
    }
    copy_no_nul(tail + have, data, n);
    tail[have + n] = '\0';
}

/* The last non-empty line of the script's stderr, for messages: its
 * control characters and bytes that are not UTF-8 escaped, as the device
 * name's (a message is stored with a failed search probe and shown). */
static void last_stderr_line(const char *tail, char *out, size_t n)
{
    size_t len = strlen(tail);
    while (len && (tail[len - 1] == '\n' || tail[len - 1] == '\r' || tail[len - 1] == ' '))
        len--;
    size_t start = len;
    while (start && tail[start - 1] != '\n')
        start--;
    char line[STDERR_TAIL];
    snprintf(line, sizeof line, "%.*s", (int)(len - start), tail + start);
    cf_escape_into(line, out, n);
}

static void kill_group(pid_t pid)
{
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
}

/* Consumes complete lines from `pending`. */
static cf_status drain_lines(parse_state *ps, bytes *pending, int eof)
{
    size_t start = 0;
    cf_status st = CF_OK;
    for (;;) {
        char *nl = pending->len > start ? memchr(pending->data + start, '\n', pending->len - start) : NULL;
        /* a complete line is held to the limit too: a line whose newline
         * came in the read that took it past 1 MiB (or any line, when the
         * whole output is parsed at once) was read as an event */
        size_t len = nl ? (size_t)(nl - (pending->data + start)) : eof ? pending->len - start : 0;
        if (len > MAX_LINE_BYTES) {
            ps->line++;
            st = line_error(ps, "%s", "a line longer than 1 MiB");
            break;
        }
        if (!nl) {
            if (eof && pending->len > start) { /* a last line without its newline */
                st = on_line(ps, pending->data + start, pending->len - start);
                start = pending->len;
            }
            break;
        }
        *nl = '\0';
        st = on_line(ps, pending->data + start, (size_t)(nl - (pending->data + start)));
        start = (size_t)(nl - pending->data) + 1;
        if (st != CF_OK)
            break;
    }
    if (st == CF_OK && pending->len - start > MAX_LINE_BYTES) {
        ps->line++;
        return line_error(ps, "%s", "a line longer than 1 MiB");
    }
    if (!pending->data)
        return st; /* nothing was read */
    memmove(pending->data, pending->data + start, pending->len - start);
    pending->len -= start;
    pending->data[pending->len] = '\0';
    return st;
}

/* Where in the output a run ended: "after stdout line N", or "before any
 * stdout line" when it printed none. */
static const char *after_line(long line, char *buf, size_t n)
{
    if (line <= 0)
        snprintf(buf, n, "before any stdout line");
    else
        snprintf(buf, n, "after stdout line %ld", line);
    return buf;
}

static cf_status describe_exit(const parse_state *ps, int status, const char *tail)
{
    char where[48];
    char last[300];
    last_stderr_line(tail, last, sizeof last);
    const char *label = ps->probe->label;
    if (WIFSIGNALED(status)) {
        cf_error_set(CF_ERR_UNAVAILABLE, "'%s' crashed (signal %d, %s) %s", label, WTERMSIG(status),
                     strsignal(WTERMSIG(status)), after_line(ps->line, where, sizeof where));
    } else if (WEXITSTATUS(status) != 0) {
        cf_error_set(CF_ERR_UNAVAILABLE, "'%s' exited with status %d %s%s%s", label, WEXITSTATUS(status),
                     after_line(ps->line, where, sizeof where), last[0] ? ": " : "", last);
    } else {
        return CF_OK;
    }
    if (last[0] && WIFSIGNALED(status))
        cf_error_hint("its last words on stderr: %s", last);
    return CF_ERR_UNAVAILABLE;
}

/* `tail`: the script's stderr (NULL when there is none), quoted when
 * stdout was empty: protocol lines sent to the wrong stream, or a log. */
static cf_status check_complete(const parse_state *ps, const char *tail)
{
    if (ps->out->oom)
        return CF_OK;
    if (!ps->done && ps->line == 0) {
        char last[300] = "";
        if (tail)
            last_stderr_line(tail, last, sizeof last);
        return cf_error_set(CF_ERR_INVALID, "'%s': nothing on stdout, expected one JSON object per line ending "
                            "with a 'done' event%s%s", ps->probe->label, last[0] ? "; its last stderr line: " : "",
                            last);
    }
    if (!ps->done)
        return cf_error_set(CF_ERR_INVALID, "'%s': output ended at stdout line %ld without a 'done' event",
                            ps->probe->label, ps->line);
    int expected = ps->run->warmup_steps + ps->run->steps;
    if (ps->out->n_steps != expected)
        return cf_error_set(CF_ERR_INVALID, "'%s': %d 'step' events by stdout line %ld, expected %d "
                            "(CLOUDFIT_WARMUP_STEPS + CLOUDFIT_STEPS)", ps->probe->label, ps->out->n_steps,
                            ps->line, expected);
    return CF_OK;
}

/* Reads what is there without blocking (the leader has exited: a helper
 * may still hold the pipe open, so EOF may never come). */
static cf_status drain_now(parse_state *ps, int *fd, bytes *pending, char *tail, int is_stdout, size_t *total)
{
    char buf[65536];
    cf_status st = CF_OK;
    while (*fd >= 0 && st == CF_OK) {
        ssize_t n = read(*fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                close_fd(fd);
            break;
        }
        if (!is_stdout) {
            tail_append(tail, buf, (size_t)n);
            continue;
        }
        *total += (size_t)n;
        if (*total > CF_EXEC_MAX_STDOUT_BYTES)
            return cf_error_set(CF_ERR_INVALID, "'%s': more than %d MiB on stdout by line %ld: not the protocol",
                                ps->probe->label, CF_EXEC_MAX_STDOUT_BYTES >> 20, ps->line);
        if (bytes_append(pending, buf, (size_t)n) != 0)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        st = drain_lines(ps, pending, 0);
    }
    return st;
}

/* Stops the run's process group: SIGTERM, up to `grace` seconds for the
 * leader to exit, then SIGKILL to the group; reaps the leader. */
static void stop_group(pid_t pid, double grace, int *status, int *exited)
{
    if (*exited)
        return; /* what is left of the group is re-parented to us: cf_proc_kill_children */
    kill(-pid, SIGTERM);
    double until = now_s() + grace;
    while (now_s() < until) {
        if (waitpid(pid, status, WNOHANG) == pid) {
            *exited = 1;
            return;
        }
        struct timespec pause = {0, 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    kill_group(pid);
    while (!*exited) {
        pid_t w = waitpid(pid, status, 0);
        if (w == pid || (w < 0 && errno != EINTR))
            *exited = 1;
    }
}

static cf_status exec_run(cf_probe *p, const cf_probe_run *run, cf_probe_result *out)
{
    memset(out, 0, sizeof *out);
    cf_status st = cf_interrupt_check();
    if (st != CF_OK)
        return st;
    child_env env;
    st = env_build(run, &env);
    if (st != CF_OK)
        return st;
    /* exec_pipe: closed by a successful exec (CLOEXEC); a failed one
     * writes its errno there, so "cannot run" is told from "exited 127". */
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, exec_pipe[2] = {-1, -1};
    if (make_pipe(out_pipe) != 0 || make_pipe(err_pipe) != 0 || make_pipe(exec_pipe) != 0) {
        int e = errno;
        for (int i = 0; i < 2; i++) {
            close_fd(&out_pipe[i]);
            close_fd(&err_pipe[i]);
            close_fd(&exec_pipe[i]);
        }
        env_free(&env);
        return cf_error_set(CF_ERR_UNAVAILABLE, "cannot create a pipe for '%s': %s", p->label, strerror(e));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        for (int i = 0; i < 2; i++) {
            close_fd(&out_pipe[i]);
            close_fd(&err_pipe[i]);
            close_fd(&exec_pipe[i]);
        }
        env_free(&env);
        return cf_error_set(CF_ERR_UNAVAILABLE, "cannot start '%s': %s", p->label, strerror(e));
    }
    if (pid == 0) {
        /* Child: own process group (so a timeout kills its children too),
         * stdout/stderr to the pipes, the run's environment, no shell,
         * default signal handling. */
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        dup2(out_pipe[1], STDOUT_FILENO);
        dup2(err_pipe[1], STDERR_FILENO);
        int null_fd = open("/dev/null", O_RDONLY);
        if (null_fd >= 0)
            dup2(null_fd, STDIN_FILENO);
        environ = env.envp;
        execvp(p->argv[0], p->argv);
        int e = errno;
        ssize_t ignored = write(exec_pipe[1], &e, sizeof e);
        (void)ignored;
        _exit(127);
    }
    setpgid(pid, pid);
    cf_proc_track_group(pid);
    close_fd(&out_pipe[1]);
    close_fd(&err_pipe[1]);
    close_fd(&exec_pipe[1]);
    env_free(&env);

    /* Did the exec happen? EOF (0 bytes) says yes. */
    int exec_errno = 0;
    for (;;) {
        ssize_t n = read(exec_pipe[0], &exec_errno, sizeof exec_errno);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
            struct pollfd pf = {exec_pipe[0], POLLIN, 0};
            poll(&pf, 1, 100);
            continue;
        }
        if (n != (ssize_t)sizeof exec_errno)
            exec_errno = 0;
        break;
    }
    close_fd(&exec_pipe[0]);

    parse_state ps = {p, run, out, 0, 0, 0, 0, 0};
    bytes pending = {0};
    char tail[STDERR_TAIL] = "";
    size_t total = 0;
    double deadline = now_s() + p->timeout_s;
    int status = 0, exited = 0, timed_out = 0, interrupted = 0;
    int stop_fd = cf_interrupt_fd();
    while (st == CF_OK && !exec_errno && (out_pipe[0] >= 0 || err_pipe[0] >= 0)) {
        if (cf_interrupted()) {
            interrupted = 1;
            break;
        }
        /* The leader's exit ends the run: what it printed is in the pipe;
         * a helper that keeps the pipe open must not keep us waiting. */
        if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
            exited = 1;
            st = drain_now(&ps, &out_pipe[0], &pending, tail, 1, &total);
            if (st == CF_OK)
                drain_now(&ps, &err_pipe[0], &pending, tail, 0, &total);
            if (st == CF_OK)
                st = drain_lines(&ps, &pending, 1);
            break;
        }
        struct pollfd fds[3] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}, {stop_fd, POLLIN, 0}};
        double left = deadline - now_s();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        /* Wake at least every 50 ms to see whether the leader exited. */
        int r = poll(fds, 3, left > 0.05 ? 50 : (int)ceil(left * 1000));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            st = cf_error_set(CF_ERR_UNAVAILABLE, "waiting for '%s': %s", p->label, strerror(errno));
            break;
        }
        char buf[65536];
        for (int i = 0; i < 2 && st == CF_OK; i++) {
            int *fd = i == 0 ? &out_pipe[0] : &err_pipe[0];
            if (*fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t n = read(*fd, buf, sizeof buf);
            if (n < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            if (n <= 0) {
                close_fd(fd);
                if (i == 0)
                    st = drain_lines(&ps, &pending, 1);
                continue;
            }
            if (i == 1) {
                tail_append(tail, buf, (size_t)n);
                continue;
            }
            total += (size_t)n;
            if (total > CF_EXEC_MAX_STDOUT_BYTES) {
                st = cf_error_set(CF_ERR_INVALID, "'%s': more than %d MiB on stdout by line %ld: not the protocol",
                                  p->label, CF_EXEC_MAX_STDOUT_BYTES >> 20, ps.line);
                break;
            }
            if (bytes_append(&pending, buf, (size_t)n) != 0) {
                st = cf_error_set(CF_ERR_NOMEM, "out of memory");
                break;
            }
            long events_before = ps.events;
            st = drain_lines(&ps, &pending, 0);
            if (ps.events > events_before)
                deadline = now_s() + p->timeout_s; /* the timeout counts silence (blank lines are silence) */
        }
    }
    /* Both pipes closed: wait for the exit, still bounded by the deadline. */
    while (st == CF_OK && !exec_errno && !timed_out && !exited && !interrupted) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            exited = 1;
        } else if (cf_interrupted()) {
            interrupted = 1;
        } else if (now_s() >= deadline) {
            timed_out = 1;
        } else {
            struct timespec pause = {0, 10 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
    }
    /* Whatever happened, nothing of the run outlives it: the group gets
     * SIGTERM, the grace period to clean up (a runner tears its VMs down),
     * then SIGKILL; every orphan re-parented to us likewise, and all are
     * reaped. */
    double grace_ends = now_s() + cf_proc_stop_grace_s(); /* one grace period for the group and its orphans */
    stop_group(pid, cf_proc_stop_grace_s(), &status, &exited);
    cf_proc_kill_children(fmax(0, grace_ends - now_s()));
    kill(-pid, SIGKILL); /* without the subreaper (library use), the group's rest */
    cf_proc_untrack_group(pid);
    close_fd(&out_pipe[0]);
    close_fd(&err_pipe[0]);
    free(pending.data);
    if (interrupted || (st == CF_OK && cf_interrupted()))
        st = cf_interrupt_check();
    if (st == CF_OK && exec_errno) {
        st = cf_error_set(CF_ERR_UNAVAILABLE, "cannot run '%s': %s", p->argv[0], strerror(exec_errno));
        if (exec_errno == ENOENT)
            cf_error_hint("the program is not on PATH or the path is wrong; commands run without a shell");
    }
    if (st == CF_OK && timed_out && ps.done) {
        /* its output was complete: the wait was for its exit */
        st = cf_error_set(CF_ERR_UNAVAILABLE, "'%s' timed out: it printed the 'done' event (stdout line %ld) "
                          "but had not exited %g s later", p->label, ps.line, p->timeout_s);
        cf_error_hint("the run ends when the command exits: tear down before printing 'done', and exit after it");
    } else if (st == CF_OK && timed_out) {
        char where[48];
        st = cf_error_set(CF_ERR_UNAVAILABLE, "'%s' timed out: no output on stdout for %g s %s", p->label, p->timeout_s,
                          after_line(ps.line, where, sizeof where));
        cf_error_hint("a slow step needs a longer --timeout (seconds of silence allowed; lines on stderr do not count: "
                      "print progress as events on stdout)");
    }
    if (st == CF_OK)
        st = describe_exit(&ps, status, tail);
    if (st == CF_OK)
        st = check_complete(&ps, tail);
    if (st == CF_OK && out->oom) {
        free(out->steps);
        out->steps = NULL;
        out->n_steps = 0;
    }
    if (st != CF_OK) {
        cf_probe_result_free(out);
    }
    return st;
}

cf_status cf_probe_exec_parse_output(const char *text, size_t len, const cf_probe_run *run, cf_probe_result *out)
{
    memset(out, 0, sizeof *out);
    cf_probe probe;
    memset(&probe, 0, sizeof probe);
    snprintf(probe.label, sizeof probe.label, "%s", "stdout");
    parse_state ps = {&probe, run, out, 0, 0, 0, 0, 0};
    bytes pending = {0};
    cf_status st = CF_OK;
    if (len > CF_EXEC_MAX_STDOUT_BYTES)
        st = cf_error_set(CF_ERR_INVALID, "more than %d MiB of output", CF_EXEC_MAX_STDOUT_BYTES >> 20);
    if (st == CF_OK && len && bytes_append(&pending, text, len) != 0)
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    if (st == CF_OK)
        st = drain_lines(&ps, &pending, 1);
    free(pending.data);
    if (st == CF_OK)
        st = check_complete(&ps, NULL);
    if (st != CF_OK)
        cf_probe_result_free(out);
    return st;
}

cf_probe_backend cf_probe_exec(void)
{
    cf_probe_backend b = {"exec", exec_open, exec_run, exec_close, NULL};
    return b;
}
