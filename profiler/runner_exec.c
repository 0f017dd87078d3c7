/* The exec runner: one probe = one run of the user's command template
 * (e.g. a SkyPilot launch), with the configuration substituted into its
 * words; each word stays one argv element (no shell, no splitting after
 * substitution), so a value can never inject arguments. The command speaks
 * the exec protocol (docs/exec-protocol.md); the profiler's exec backend
 * (cf_probe_exec) runs it and parses its output. The probe's step time is
 * the median of the timed steps. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cloudfit/profiler.h"
#include "cloudfit/profiler/runners.h"

static int split_words(const char *text, cf_exec_runner *e)
{
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (!*p)
            break;
        if (e->n_words == CF_EXEC_MAX_WORDS - 1) {
            cf_error_set(CF_ERR_USAGE, "--runner exec: more than %d words", CF_EXEC_MAX_WORDS - 1);
            return -1;
        }
        char *word = malloc(strlen(p) + 1);
        if (!word) {
            cf_error_set(CF_ERR_NOMEM, "out of memory");
            return -1;
        }
        size_t n = 0;
        char quote = 0;
        for (; *p && (quote || (*p != ' ' && *p != '\t' && *p != '\n')); p++) {
            if (!quote && (*p == '\'' || *p == '"'))
                quote = *p;
            else if (quote && *p == quote)
                quote = 0;
            else
                word[n++] = *p;
        }
        word[n] = '\0';
        e->words[e->n_words++] = word;
        if (quote) {
            cf_error_set(CF_ERR_USAGE, "--runner exec: unterminated %c quote in the command template", quote);
            return -1;
        }
    }
    return 0;
}

/* The value of a placeholder for candidate c; NULL if the name is unknown. */
static const char *value_of(const char *name, size_t len, const cf_search_candidate *c, int steps, char *buf,
                            size_t n)
{
    const cf_vm *vm = c->vm;
    if (len == 5 && !strncmp(name, "cloud", len)) return vm ? vm->cloud : "";
    if (len == 6 && !strncmp(name, "region", len)) return vm ? vm->region : "";
    if (len == 13 && !strncmp(name, "instance_type", len)) return vm ? vm->instance_type : "";
    if (len == 3 && !strncmp(name, "gpu", len)) return c->gpu;
    int v;
    if (len == 5 && !strncmp(name, "nodes", len)) v = c->nodes;
    else if (len == 13 && !strncmp(name, "gpus_per_node", len)) v = c->gpus_per_node;
    else if (len == 11 && !strncmp(name, "local_batch", len)) v = c->local_batch;
    else if (len == 5 && !strncmp(name, "steps", len)) v = steps;
    else return NULL;
    snprintf(buf, n, "%d", v);
    return buf;
}

/* Substitutes the placeholders of one word; NULL + error for unknown ones. */
static char *substitute(const char *word, const cf_search_candidate *c, int steps)
{
    size_t cap = strlen(word) + 256, n = 0;
    char *out = malloc(cap);
    if (!out) {
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (const char *p = word; *p;) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        char buf[32];
        const char *v = close ? value_of(p + 1, (size_t)(close - p - 1), c, steps, buf, sizeof buf) : NULL;
        if (*p == '{' && !v) {
            cf_error_set(CF_ERR_USAGE, "--runner exec: unknown placeholder in '%s'", word);
            cf_error_hint("placeholders: {cloud} {region} {instance_type} {gpu} {nodes} {gpus_per_node} "
                          "{local_batch} {steps}");
            free(out);
            return NULL;
        }
        size_t add = v ? strlen(v) : 1;
        if (n + add + 1 > cap) {
            cap = 2 * (n + add + 1);
            char *grown = realloc(out, cap);
            if (!grown) {
                free(out);
                cf_error_set(CF_ERR_NOMEM, "out of memory");
                return NULL;
            }
            out = grown;
        }
        if (v) {
            memcpy(out + n, v, add);
            p = close + 1;
        } else {
            out[n] = *p++;
        }
        n += add;
    }
    out[n] = '\0';
    return out;
}

/* Why `path` cannot be executed ("is a directory", ...); NULL when it can:
 * what execve needs, a regular file we may execute. */
static const char *not_runnable(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno == ENOENT || errno == ENOTDIR ? "no such file" : strerror(errno);
    if (S_ISDIR(st.st_mode))
        return "is a directory";
    if (!S_ISREG(st.st_mode))
        return "is not a regular file";
    if (access(path, X_OK) != 0)
        return "is not executable";
    return NULL;
}

/* Whether execvp would run `program`: a path is checked as it is, a name
 * is looked up on PATH as execvp does (an entry that is no executable
 * regular file is skipped). NULL when it would; else why not, in `why`. */
const char *cf_exec_program_problem(const char *program, char *why, size_t n)
{
    if (!program[0])
        return "empty program name";
    if (strchr(program, '/'))
        return not_runnable(program);
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    char candidate[4096];
    int noted = 0; /* `why` names the first entry that exists but cannot run */
    for (const char *p = path;;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (snprintf(candidate, sizeof candidate, "%.*s%s%s", (int)len, p, len ? "/" : "", program) <
            (int)sizeof candidate) {
            const char *problem = not_runnable(candidate);
            if (!problem)
                return NULL;
            if (!noted && strcmp(problem, "no such file") != 0) {
                noted = 1;
                snprintf(why, n, "not found on PATH ('%s' %s)", candidate, problem);
            }
        }
        if (!colon)
            break;
        p = colon + 1;
    }
    if (!noted)
        snprintf(why, n, "%s", "not found on PATH");
    return why;
}

cf_status cf_exec_runner_open(const char *template_text, double timeout_s, unsigned long seed, cf_exec_runner *e)
{
    memset(e, 0, sizeof *e);
    e->timeout_s = timeout_s > 0 ? timeout_s : CF_PROBE_TIMEOUT_S_DEFAULT;
    e->seed = seed;
    e->warmup_steps = 3;
    if (split_words(template_text, e) != 0 || e->n_words == 0) {
        if (e->n_words == 0 && cf_error_status() == CF_OK)
            cf_error_set(CF_ERR_USAGE, "--runner exec: empty command template");
        cf_status st = cf_error_status();
        cf_exec_runner_close(e);
        return st;
    }
    /* Check every placeholder now rather than at the first probe. */
    cf_search_candidate probe = {.nodes = 1, .gpus_per_node = 1, .local_batch = 1};
    for (int i = 0; i < e->n_words; i++) {
        char *s = substitute(e->words[i], &probe, 1);
        if (!s) {
            cf_status st = cf_error_status();
            cf_exec_runner_close(e);
            return st;
        }
        free(s);
    }
    snprintf(e->label, sizeof e->label, "%s", e->words[0]);
    /* A program that cannot run fails now, not as N failed probes. */
    char why[4200];
    const char *problem = NULL;
    if (!strchr(e->words[0], '{'))
        problem = cf_exec_program_problem(e->words[0], why, sizeof why);
    if (problem) {
        cf_error_set(CF_ERR_UNAVAILABLE, "--runner exec: cannot run '%s': %s", e->words[0], problem);
        cf_error_hint("the template's first word is the program, run without a shell: give the path of an "
                      "executable file or put it on PATH");
        cf_exec_runner_close(e);
        return CF_ERR_UNAVAILABLE;
    }
    return CF_OK;
}

int cf_exec_runner_multi_node(const cf_exec_runner *e)
{
    for (int i = 0; i < e->n_words; i++)
        if (strstr(e->words[i], "{nodes}"))
            return 1;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* 1 when a 'device' event's name can be the configuration's GPU: it
 * resolves to that row, is a family name the row belongs to, or is a name
 * the table does not know. */
static int device_may_be(const cf_exec_runner *e, const char *reported, const char *gpu)
{
    if (!e->gpus || !reported[0])
        return 1;
    const cf_gpu *family[32];
    size_t n_family = cf_gpu_family_rows(e->gpus, e->n_gpus, reported, family, sizeof family / sizeof *family);
    for (size_t i = 0; i < n_family; i++)
        if (strcasecmp(family[i]->model, gpu) == 0)
            return 1;
    if (n_family)
        return 0;
    const cf_gpu *row = cf_gpu_resolve(e->gpus, e->n_gpus, reported);
    return !row || strcasecmp(row->model, gpu) == 0;
}

/* The run's command line as the exec backend's messages name it
 * ('python3 launch.py 2 64'), cut to the buffer with "...". */
static void run_label(const cf_probe_settings *settings, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < settings->n_command && settings->command[i] && used + 1 < n; i++) {
        int k = snprintf(buf + used, n - used, "%s%s", i ? " " : "", settings->command[i]);
        used = k < 0 ? n : used + (size_t)k;
    }
    if (used >= n && n > 4)
        memcpy(buf + n - 4, "...", 4);
}

static cf_status exec_probe(void *ctx, const cf_search_candidate *c, int steps, double *out)
{
    cf_exec_runner *e = ctx;
    cf_job *job = calloc(1, sizeof *job);
    cf_probe_settings *settings = calloc(1, sizeof *settings);
    if (!job || !settings) {
        free(job);
        free(settings);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    cf_status st = CF_OK;
    for (int i = 0; i < e->n_words && st == CF_OK; i++)
        if (!(settings->command[i] = substitute(e->words[i], c, steps)))
            st = cf_error_status();
    settings->n_command = e->n_words;
    snprintf(job->source, sizeof job->source, "%s", "--runner exec");
    cf_probe_backend backend = cf_probe_exec();
    cf_probe_options popts = {.timeout_s = e->timeout_s, .settings = settings};
    cf_probe *probe = NULL;
    if (st == CF_OK)
        st = backend.open(&backend, job, &popts, &probe);
    if (st == CF_OK) {
        cf_probe_run run = {.local_batch = c->local_batch, .micro_batches = 1, .steps = steps,
                            .warmup_steps = e->warmup_steps, .seed = e->seed,
                            .world_size = c->nodes * c->gpus_per_node};
        cf_probe_result res;
        st = backend.run(probe, &run, &res);
        e->n_runs++;
        char label[sizeof e->label];
        run_label(settings, label, sizeof label);
        if (st == CF_OK && res.oom) {
            st = cf_error_set(CF_ERR_UNAVAILABLE, "per-GPU batch %d does not fit in memory ('oom' event)",
                              c->local_batch);
        } else if (st == CF_OK && res.has_device && !res.device.is_gpu) {
            /* a CPU's step time is not the GPU's throughput (a VM without
             * a working CUDA, where the framework fell back to the CPU) */
            st = cf_error_set(CF_ERR_INVALID, "'%s': the 'device' event says the run was on a CPU ('%s', "
                              "\"type\": \"cpu\"), not on %s: a CPU's step time is not a GPU's throughput",
                              label, res.device.name, c->gpu);
            cf_error_hint("check that the job sees the GPU (CUDA driver, the framework's GPU build) on the VM");
        } else if (st == CF_OK && res.has_device && !device_may_be(e, res.device.name, c->gpu)) {
            /* the launcher gave another accelerator than asked for (a
             * fallback, a node pool of another type): its step time would
             * be stored as this GPU's throughput */
            st = cf_error_set(CF_ERR_INVALID, "'%s': the 'device' event says the run was on '%s', not on %s",
                              label, res.device.name, c->gpu);
            cf_error_hint("check which GPU the launcher gave the job (its node pool, instance type or accelerator "
                          "setting)");
        } else if (st == CF_OK && res.has_device && res.device_gpus_given &&
                   res.device.gpus != c->nodes * c->gpus_per_node) {
            /* the launcher started fewer (or more) GPUs than the shape
             * asked for (a node that never joined, a GPU request it
             * dropped): its step time would be stored as this shape's */
            int want = c->nodes * c->gpus_per_node;
            st = cf_error_set(CF_ERR_INVALID, "'%s': the 'device' event says the run used %d GPU%s (\"gpus\"), not "
                              "the %d asked for (%d node%s × %d %s)", label, res.device.gpus,
                              res.device.gpus == 1 ? "" : "s", want, c->nodes, c->nodes == 1 ? "" : "s",
                              c->gpus_per_node, c->gpu);
            cf_error_hint("\"gpus\" is the run's world size, every node's GPUs together; check that the launcher "
                          "started every node and gave each the GPUs asked for");
        } else if (st == CF_OK) {
            int timed = res.n_steps - run.warmup_steps;
            double *t = timed > 0 ? malloc((size_t)timed * sizeof *t) : NULL;
            if (!t) {
                st = timed > 0 ? cf_error_set(CF_ERR_NOMEM, "out of memory")
                               : cf_error_set(CF_ERR_UNAVAILABLE, "'%s' reported no timed step", label);
            } else {
                for (int i = 0; i < timed; i++)
                    t[i] = res.steps[run.warmup_steps + i].time_s;
                qsort(t, (size_t)timed, sizeof *t, cmp_double);
                *out = timed % 2 ? t[timed / 2] : t[timed / 2 - 1] + 0.5 * (t[timed / 2] - t[timed / 2 - 1]);
                free(t);
                snprintf(e->precision, sizeof e->precision, "%s", res.precision);
                snprintf(e->memory_format, sizeof e->memory_format, "%s", res.memory_format);
            }
        }
        if (st == CF_OK || res.steps)
            cf_probe_result_free(&res);
        backend.close(probe);
    }
    for (int i = 0; i < e->n_words; i++)
        free(settings->command[i]);
    free(settings);
    free(job);
    return st;
}

static void exec_trained(void *ctx, const char **precision, const char **memory_format)
{
    const cf_exec_runner *e = ctx;
    *precision = e->precision;
    *memory_format = e->memory_format;
}

cf_search_runner cf_exec_runner_iface(cf_exec_runner *e)
{
    return (cf_search_runner){e, exec_probe, exec_trained};
}

void cf_exec_runner_close(cf_exec_runner *e)
{
    for (int i = 0; i < e->n_words; i++)
        free(e->words[i]);
    memset(e, 0, sizeof *e);
}
