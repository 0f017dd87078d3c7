/* `profile` as a library call (docs/profiler.md): a request in, a result
 * out. cf_profile_run owns the pipeline from the spec to the profile
 * `recommend` uses: on a local probe backend the batch-size sweep, memory
 * ceiling and noise scale (or, resuming, the stored profile's failed noise
 * run, found through the caller's database handle); through a runner the
 * light profile and the 2-node probe as the search plans them, on the
 * VMs the trace says they ran on. cf_profile_store puts the result in the
 * profile cache. What stays with the caller: options, the backend and the
 * catalog chosen by name, opening the database, the progress display,
 * holding the database while the result is delivered, the CSV and the
 * rendered bytes. */
#ifndef CLOUDFIT_USECASE_PROFILE_H
#define CLOUDFIT_USECASE_PROFILE_H
#include <stddef.h>

#include "cloudfit/db.h"
#include "cloudfit/pricing.h"
#include "cloudfit/profiler.h"
#include "cloudfit/profiler/runners.h"
#include "cloudfit/spec.h"
#include "cloudfit/usecase/evidence.h"

typedef struct {
    const cf_spec *spec;
    cf_profile_progress_fn progress; /* each run as it starts; NULL = none */
    void *progress_ctx;
    cf_note_fn note;                 /* a planned probe that cannot run (warning); NULL = nothing */
    void *note_ctx;
    /* On a local backend (runner NULL): */
    const cf_probe_backend *backend;
    int resume;                      /* re-run the stored profile's failed noise run */
    cf_db *db;                       /* resume: the stored profiles; NULL = none stored yet */
    const char *db_name;             /* how messages name it */
    double timeout_s;                /* exec: silence allowed; <= 0 = the probe's default */
    int noise_steps;                 /* <= 0 = the stored run's (resume), else the default */
    int noise_micro_batches;         /* -1 = the stored run's (resume), else the default */
    /* Through a runner: */
    const char *runner;              /* "trace:MEASUREMENTS.csv" or "exec:'COMMAND TEMPLATE'" */
    const cf_catalog *catalog;       /* the catalog in use */
    const cf_gpu *gpu;               /* the GPU type to profile (of `catalog`) */
    const char *instance_type;       /* full-VM runs on this type; NULL = any */
    const char *trace_model;         /* trace rows of this model; NULL = the spec's name */
    double trace_noise_sd;           /* the trace runner's relative noise */
    double trace_nic_gbps;           /* > 0: the NIC of the cluster the trace was measured on */
    const cf_search_price *prices;   /* --price: the trace's GPU priced where the catalog sells none */
    size_t n_prices;
    unsigned long seed;
    int probe_nodes, probe_gpus;     /* the probe's shape; <= 0 = the search's */
    int probe_steps;                 /* steps of each run; <= 0 = the search's */
} cf_profile_request;

typedef struct {
    cf_profile *profile;     /* owned; filled on CF_OK, on a failed noise run (noise_failed) and with nothing_to_resume */
    int nothing_to_resume;   /* resume: the stored profile has no failed run; `profile` is it, unchanged */
    int none_stored;         /* resume: no stored profile of the spec on the backend (the error says so) */
    size_t n_light_planned;  /* runner: the light profile's runs (a failure stores nothing) */
    char gpu_model[CF_GPU_NAME_MAX]; /* the catalog's model of the profiled GPU; "" = a CPU or one it does not list */
} cf_profile_result;

/* The profile for req->spec. CF_OK and `out` filled, or a status with the
 * last error set: the backend or runner failed (a failed noise run after a
 * complete sweep keeps the sweep in out->profile with noise_failed set, to
 * be stored and resumed), nothing stored to resume (CF_ERR_INVALID, with
 * a hint), the runner cannot be opened or planned for. cf_profile_result_free
 * `out` either way. */
cf_status cf_profile_run(const cf_profile_request *req, cf_profile_result *out);
/* The options that belong to one way of profiling (docs/profiler.md), given
 * with the other: a usage error naming the first (CF_ERR_USAGE). runner: the
 * --runner value or NULL (a local --backend profile); given(ctx, "gpu"):
 * whether the user gave --gpu (on the command line: a configuration file's
 * default is for whichever way applies). */
cf_status cf_profile_check_mode_options(const char *runner, int (*given)(const void *ctx, const char *long_name),
                                        const void *ctx);
void cf_profile_result_free(cf_profile_result *out);
/* Puts `p` (as cf_profile_to_json writes it) in the profile cache of
 * `db`; inside the caller's hold, if any. With `kept_at` (n bytes), a
 * profile whose noise run failed does not replace a stored one of the same
 * spec, backend and device that has a noise scale: nothing is written and
 * kept_at is that one's created_at (else ""). */
cf_status cf_profile_store(cf_db *db, const cf_profile *p, char *kept_at, size_t n);
/* Whether `db` holds a profile of p's spec key, backend and device with a
 * measured noise scale: its created_at in `created_at` (n bytes), else "". */
cf_status cf_profile_complete_stored(cf_db *db, const cf_profile *p, char *created_at, size_t n);

#endif
