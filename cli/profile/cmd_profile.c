/* cloudfit profile MODEL.json: batch-size sweep, memory ceiling and noise
 * scale on a probe backend (docs/profiler.md), stored in the profile cache
 * for `recommend`. Nothing is stored or written unless the sweep
 * succeeded; a noise run that fails after it leaves the sweep stored with
 * the noise scale marked failed, and `--resume` re-runs only that. With
 * --runner: the light profile and the 2-node probe through a search
 * runner. The library runs it (cf_profile_run, usecase/profile.c); here
 * the options, the database, the progress display, the rendering and the
 * delivery, the profile stored only once its result was written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/pricing.h"
#include "cloudfit/common/escape.h"
#include "exit_codes.h"
#include "cloudfit/common/fileio.h"
#include "log.h"
#include "cloudfit/profiler.h"
#include "commands.h"
#include "io/spec_load.h"
#include "io/db_open.h"
#include "cloudfit/usecase/profile.h"
#include "io/catalog_source.h"
#include "io/price_option.h"
#include "term/output.h"
#include "term/progress.h"
#include "cloudfit/render/profile_report.h"

/* ---- the command --------------------------------------------------------------- */

static int backend_for(const cf_cli_options *o, const cf_spec *spec, cf_probe_backend *be)
{
    const char *name = o->backend ? o->backend : spec->probe.backend[0] ? spec->probe.backend : "cpu";
    if (strcmp(name, "cpu") && strcmp(name, "cuda") && strcmp(name, "exec")) {
        cf_log_error("option '--backend' does not accept '%s'", name);
        cf_log_hint("use one of: cpu, cuda, exec");
        return CF_EXIT_USAGE;
    }
    if (cf_probe_backend_by_name(name, be) == CF_OK)
        return 0;
    if (strcmp(name, "cuda") == 0) {
        /* cf_engine_cuda() names the reason: no CUDA in this build, or
         * what the driver answered. */
        cf_log_error("cannot profile on CUDA: %s", cf_error_message());
        if (cf_error_hint_text()[0])
            cf_log_hint("%s", cf_error_hint_text());
        return CF_EXIT_UNAVAILABLE;
    }
    return cf_report_error();
}

/* Stores the profile and delivers its result in one transaction: a result
 * that could not be written is not stored (term/output.h). Through `db`
 * when the run already opened it (--resume read the stored profile there,
 * shown as `db_name`), else the database is opened (created) here. */
static int store(const cf_cli_options *o, cf_db *db, const char *db_name, const cf_profile *p, char *path,
                 size_t n, cf_cli_result *result, char *kept_at, size_t kept_n)
{
    cf_db *own = NULL;
    if (db) {
        snprintf(path, n, "%s", db_name);
    } else if (cf_cli_db_open(o, 1, &own, path, n) != CF_OK) {
        return cf_report_error();
    }
    cf_db *to = db ? db : own;
    int rc = cf_db_hold(to) == CF_OK && cf_profile_store(to, p, kept_at, kept_n) == CF_OK ? 0 : cf_report_error();
    if (rc == 0)
        rc = cf_cli_result_deliver(result);
    rc = cf_cli_result_release(to, rc);
    cf_db_close_discard_new(own);
    return rc;
}

/* Whether a profile without a noise scale (its noise run failed or measured
 * none) would replace a complete one (cf_profile_store keeps that one): its
 * created_at in `kept_at`, else "". */
static void complete_stored(const cf_cli_options *o, cf_db *db, const cf_profile *p, char *kept_at, size_t n)
{
    kept_at[0] = '\0';
    if (p->has_noise)
        return;
    cf_db *own = NULL;
    char path[1024];
    if (!db && cf_cli_db_open(o, 0, &own, path, sizeof path) != CF_OK) {
        cf_error_clear(); /* none yet: nothing to keep (store() reports what cannot be opened) */
        return;
    }
    if (cf_profile_complete_stored(db ? db : own, p, kept_at, n) != CF_OK) {
        cf_error_clear();
        kept_at[0] = '\0';
    }
    cf_db_close(own);
}

/* `unchanged`: the stored profile, shown again (--resume with nothing to
 * resume): delivered, not written to the database again. */
static int finish(const cf_cli_options *o, cf_db *db, const char *db_name, const cf_profile *p,
                  const char *gpu_model, char *kept_at, size_t kept_n, int unchanged)
{
    /* a sweep without a noise scale, beside a complete stored profile:
     * shown, not stored, and the table does not offer --resume */
    cf_profile shown_copy;
    complete_stored(o, db, p, kept_at, kept_n);
    if (kept_at[0]) {
        shown_copy = *p;
        shown_copy.noise_failed = 0;
        snprintf(shown_copy.noise_error, sizeof shown_copy.noise_error, "%.95s; this sweep is not stored: the stored "
                 "profile of %.30s keeps its noise scale", p->noise_failed ? "the noise run failed" : p->noise_error,
                 kept_at);
    }
    const cf_profile *shown = kept_at[0] ? &shown_copy : p;
    int as_json = o->format && strcmp(o->format, "json") == 0;
    char *pretty = as_json ? cf_profile_to_json(p, 1) : NULL;
    if (as_json && !pretty) {
        cf_error_set(CF_ERR_NOMEM, "out of memory rendering the profile");
        return cf_report_error();
    }
    int rc = 0;
    cf_staged_set side; /* --csv: in place only once the profile is stored */
    memset(&side, 0, sizeof side);
    if (o->csv_path) {
        cf_buf text = CF_BUF_INIT;
        cf_profile_csv(p, gpu_model[0] ? gpu_model : NULL, &text);
        if (cf_buf_failed(&text))
            cf_error_set(CF_ERR_NOMEM, "out of memory writing the CSV");
        if (cf_buf_failed(&text))
            rc = cf_report_error();
        else if (cf_staged_set_add(&side, o->csv_path, text.data, text.len) != CF_OK)
            rc = cf_cli_side_file_error("csv", o->csv_path);
        cf_buf_free(&text);
    }
    cf_cli_result result;
    memset(&result, 0, sizeof result);
    if (rc == 0) {
        cf_buf out = CF_BUF_INIT;
        if (as_json) {
            cf_buf_puts(&out, pretty);
            cf_buf_puts(&out, "\n");
        } else {
            cf_profile_table(shown, gpu_model[0] ? gpu_model : NULL, &out);
        }
        if (cf_buf_failed(&out)) {
            cf_error_set(CF_ERR_NOMEM, "out of memory rendering the profile");
            rc = cf_report_error();
        } else { /* sanitised: the device name is the probe's */
            rc = cf_cli_result_stage(o, out.data ? out.data : "", out.len, NULL, &result);
        }
        cf_buf_free(&out);
    }
    char path[1024] = "";
    if (rc == 0 && !unchanged)
        rc = store(o, db, db_name, p, path, sizeof path, &result, kept_at, kept_n);
    if (rc == 0) /* --out-file into place once the profile is stored */
        rc = cf_cli_result_publish(&result);
    if (rc == 0 && cf_staged_set_commit(&side) != CF_OK)
        rc = cf_report_error();
    cf_staged_set_discard(&side);
    cf_cli_result_discard(&result);
    if (rc == 0) {
        if (kept_at[0])
            cf_log_info("kept the stored profile of %s in %s: a sweep without a noise scale does not replace one "
                        "that measured it", kept_at, path);
        else if (!unchanged) /* else "nothing to resume" said so */
            cf_log_info("stored the profile in %s; 'cloudfit recommend' on this spec uses it", path);
        if (o->csv_path)
            cf_log_info("wrote %d measurement row(s) to %s", p->n_runs ? p->n_runs : p->n_points, o->csv_path);
    }
    free(pretty);
    return rc;
}

/* A noise run that failed after a complete sweep: the sweep is stored and
 * shown, then the failure is reported with its exit code. */
static int finish_partial(const cf_cli_options *o, cf_db *db, const char *db_name, const cf_profile *p,
                          const char *gpu_model)
{
    cf_status failure = cf_error_status();
    char message[1024], hint[512];
    snprintf(message, sizeof message, "%s", cf_error_message());
    snprintf(hint, sizeof hint, "%s", cf_error_hint_text());
    char kept_at[64];
    int rc = finish(o, db, db_name, p, gpu_model, kept_at, sizeof kept_at, 0);
    cf_error_set(failure, "%s", message);
    if (hint[0])
        cf_error_hint("%s", hint);
    int failed = cf_report_error();
    /* the built-in engines have no script to fix, and training.lr is part of
     * the profile's key: a changed lr is a new profile, not a resume */
    if (rc == 0 && kept_at[0])
        cf_log_hint("the stored profile of %s, with its noise scale, is used until a profile succeeds", kept_at);
    else if (rc == 0 && strcmp(p->backend, "exec") == 0)
        cf_log_hint("the throughput sweep was stored without a noise scale; fix the script and run 'cloudfit profile "
                    "--resume' to re-run only the noise run");
    else if (rc == 0)
        cf_log_hint("the throughput sweep was stored without a noise scale; re-run only the noise run, shorter, with "
                    "'cloudfit profile --resume --noise-steps N', or profile again with a lower training.lr (a new "
                    "profile: the learning rate is part of its key)");
    return rc ? rc : failed;
}

static int usage(const char *message, const char *hint)
{
    cf_log_error("%s", message);
    cf_log_hint("%s", hint);
    return CF_EXIT_USAGE;
}

/* What the library says on the way: a warning, or a note (the probe's
 * shape when the trace lacks the default), unless -q. */
static void note(void *ctx, cf_note_kind kind, const char *text)
{
    const cf_cli_options *o = ctx;
    if (kind == CF_NOTE_WARNING && !o->quiet)
        cf_log_warning("%s", text);
    else if (kind == CF_NOTE_INFO && !o->quiet)
        cf_log_info("%s", text);
}

static int given(const void *ctx, const char *long_name) { return cf_cli_on_command_line(ctx, long_name); }

/* --runner (docs/profiler.md "Profiling through a runner"): the options
 * checked, the catalog in use opened and the GPU named found. 0, or the
 * exit code (message printed); *src to close on 0. */
static int runner_request(const cf_cli_options *o, cf_profile_request *req, cf_catalog_source *src)
{
    int is_trace = strncmp(o->runner, "trace:", 6) == 0;
    if (!is_trace && strncmp(o->runner, "exec:", 5))
        return usage("option '--runner' expects trace:MEASUREMENTS.csv or exec:'COMMAND TEMPLATE'",
                     "see 'cloudfit profile --help' and docs/profiler.md");
    if (o->backend)
        return usage("options '--runner' and '--backend' exclude each other",
                     "--backend profiles one local device; --runner starts VMs (or answers from a trace)");
    if (o->probe_nodes == 0 || o->probe_nodes == 1 || o->probe_gpus == 0)
        return usage(o->probe_gpus == 0 ? "option '--probe-gpus' expects a positive number of GPUs per VM"
                                        : "option '--probe-nodes' expects 2 or more VMs",
                     "e.g. --probe-nodes 4 --probe-gpus 8 (a probe runs across VMs)");
    if (o->gpus.n != 1)
        return usage("option '--runner' needs exactly one --gpu GPU (the GPU type to profile)",
                     "e.g. cloudfit profile model.json --runner trace:runs.csv --gpu T4");
    double noise = o->trace_noise ? cf_cli_parse_fraction(o->trace_noise) : 0.02; /* checked as the options were read */
    int rc = cf_cli_catalog_open(o, 0, src);
    if (rc)
        return rc;
    /* a model of the GPU table, or the name a tool prints for it ("Tesla T4") */
    const cf_gpu *gpu = cf_catalog_gpu_resolve(&src->catalog, o->gpus.items[0]);
    if (!gpu) {
        cf_catalog_source_close(src);
        cf_log_error("option '--gpu': unknown GPU model '%s'", o->gpus.items[0]);
        cf_log_hint("use a GPU name from the catalog (see docs/catalog.md), e.g. T4, A100-80GB, H100");
        return CF_EXIT_USAGE;
    }
    req->runner = o->runner;
    req->catalog = &src->catalog;
    req->gpu = gpu;
    req->instance_type = o->instance_type;
    req->trace_model = o->trace_model;
    req->trace_noise_sd = noise;
    req->trace_nic_gbps = o->trace_nic_gbps;
    cf_search_price *prices = NULL; /* freed by cmd_profile */
    rc = cf_cli_parse_prices(o, &prices, &req->n_prices);
    req->prices = prices;
    if (rc) {
        cf_catalog_source_close(src);
        return rc;
    }
    req->seed = o->seed > 0 ? (unsigned long)o->seed : 1;
    req->timeout_s = o->timeout_s;
    req->probe_nodes = o->probe_nodes;
    req->probe_gpus = o->probe_gpus;
    req->probe_steps = o->probe_steps;
    return 0;
}

/* A --backend profile's options: the backend and, for --resume, the
 * database of the stored profiles (none yet: NULL). 0 or the exit code. */
static int backend_request(const cf_cli_options *o, const cf_spec *spec, cf_probe_backend *be, cf_profile_request *req,
                           char *db_name, size_t n)
{
    int rc = backend_for(o, spec, be);
    if (rc)
        return rc;
    /* --noise-micro-batches's range (2 to 64) is the option parser's; a
     * --timeout typed for an in-process backend would time nothing */
    if (strcmp(be->name, "exec") != 0 && cf_cli_on_command_line(o, "timeout")) {
        cf_log_error("option '--timeout' applies to the exec backend and --runner, not to the %s backend", be->name);
        cf_log_hint("the %s backend runs in this process; stop it with Ctrl-C", be->name);
        return CF_EXIT_USAGE;
    }
    req->backend = be;
    req->resume = o->resume;
    req->timeout_s = o->timeout_s;
    req->noise_steps = o->noise_steps;
    req->noise_micro_batches = o->noise_micro_batches;
    req->seed = o->seed > 0 ? (unsigned long)o->seed : 0;
    if (!o->resume)
        return 0;
    cf_status st = cf_cli_db_open(o, 0, &req->db, db_name, n);
    if (st == CF_ERR_INVALID) { /* no database yet: nothing stored */
        cf_error_clear();
        return 0;
    }
    req->db_name = db_name;
    return st == CF_OK ? 0 : cf_report_error();
}

int cmd_profile(int argc, char **argv, const cf_cli_options *o, int n_positional)
{
    (void)argc;
    if (n_positional != 1) {
        cf_log_error(n_positional ? "profile takes one spec file, got %d arguments" : "missing the spec file%.0d",
                     n_positional);
        cf_log_hint("usage: cloudfit profile [--backend cpu|cuda|exec] [options] MODEL.json");
        cf_log_hint("   or: cloudfit profile --runner RUNNER --gpu GPU [--instance-type TYPE] [options] MODEL.json");
        return CF_EXIT_USAGE;
    }
    if (cf_profile_check_mode_options(o->runner, given, o) != CF_OK)
        return cf_report_error();
    cf_spec *spec = NULL;
    int rc = cf_cli_spec_open(o, argv[1], o->runner != NULL, &spec); /* --runner: --cloud/--region filter offers */
    if (rc)
        return rc;
    if (o->runner && o->resume) {
        cf_cli_spec_close(spec);
        cf_log_error("options '--runner' and '--resume' exclude each other");
        cf_log_hint("--resume re-runs the failed noise run of a --backend profile; a runner profile has none");
        return CF_EXIT_USAGE;
    }
    cf_profile_request req = {.spec = spec, .note = note, .note_ctx = (void *)o};
    cf_catalog_source src; /* --runner: the catalog in use */
    cf_probe_backend be;
    char db_name[1024] = "";
    rc = o->runner ? runner_request(o, &req, &src) : backend_request(o, spec, &be, &req, db_name, sizeof db_name);
    /* a sweep is paid for (a GPU VM, hours): where its profile is stored and
     * --csv and --out-file are written is checked before it, not found out
     * after it (the measured profile was discarded) */
    const char *const outputs[] = {o->csv_path, o->out_file};
    if (rc == 0 && (rc = cf_cli_check_before_run(o, !req.db, outputs, 2)) != 0 && o->runner)
        cf_catalog_source_close(&src);
    if (rc) {
        free((void *)req.prices);
        cf_db_close(req.db);
        cf_cli_spec_close(spec);
        return rc;
    }
    cf_cli_progress view; /* a bar on a terminal, plain lines otherwise (term/progress.c) */
    cf_cli_progress_begin(&view, o, "profile");
    req.progress = cf_cli_progress_runs_cb;
    req.progress_ctx = &view;
    cf_profile_result res;
    char kept_at[64] = "";
    cf_status st = cf_profile_run(&req, &res);
    cf_cli_progress_end(&view);
    if (st == CF_OK && res.nothing_to_resume) {
        cf_log_info("nothing to resume: the stored %s profile of '%s' on %s (%s) has no failed run", be.name,
                    res.profile->spec_name, res.profile->device.name, res.profile->created_at);
        rc = finish(o, req.db, db_name, res.profile, res.gpu_model, kept_at, sizeof kept_at, 1);
    } else if (st == CF_OK) {
        rc = finish(o, req.db, db_name, res.profile, res.gpu_model, kept_at, sizeof kept_at, 0);
    } else if (!o->runner && res.profile && res.profile->noise_failed) {
        rc = finish_partial(o, req.db, db_name, res.profile, res.gpu_model);
    } else if (o->runner) {
        rc = cf_report_error(); /* a stop signal says itself that nothing was kept: no other reason */
        if (res.n_light_planned && !o->quiet && st != CF_ERR_INTERRUPTED)
            cf_log_info("nothing was stored: the light profile is kept only when every run succeeded");
    } else {
        rc = cf_report_error();
        if (!o->quiet && cf_log_verbosity() >= 0 && !res.none_stored && st != CF_ERR_INTERRUPTED)
            cf_log_info(o->resume ? "nothing was changed: the stored profile is kept as it was"
                                  : "nothing was stored: a profile is kept only when its sweep succeeded");
    }
    cf_profile_result_free(&res);
    cf_db_close(req.db); /* --resume: the one handle it read and stores through */
    if (o->runner)
        cf_catalog_source_close(&src);
    free((void *)req.prices);
    cf_cli_spec_close(spec);
    return rc;
}
