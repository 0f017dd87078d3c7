/* cloudfit profile MODEL.json: batch-size sweep, memory ceiling and noise
 * scale on a probe backend (docs/profiler.md), stored in the profile cache
 * for `recommend`. Nothing is stored or written unless the sweep
 * succeeded; a noise run that fails after it leaves the sweep stored with
 * the noise scale marked failed, and `--resume` re-runs only that. */
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
#include "cloudfit/db/profiles.h"
#include "cloudfit/profiler.h"
#include "commands.h"
#include "io/spec_load.h"
#include "io/db_open.h"
#include "cloudfit/advisor/inputs.h"
#include "profile/profile_runner.h"
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
 * that could not be written is not stored (term/output.h). */
static int store(const cf_cli_options *o, const cf_profile *p, const char *json_text, char *path, size_t n,
                 cf_cli_result *result)
{
    cf_db *db = NULL;
    if (cf_cli_db_open(o, 1, &db, path, n) != CF_OK)
        return cf_report_error();
    cf_cached_profile row = {p->spec_key, p->backend, p->device.name, p->spec_name, p->created_at,
                             p->device.is_gpu, p->has_noise ? p->b_noise : 0, p->max_local_batch, json_text};
    int rc = cf_db_hold(db) == CF_OK && cf_profile_cache_put(db, &row) == CF_OK ? 0 : cf_report_error();
    if (rc == 0)
        rc = cf_cli_result_deliver(result);
    rc = cf_cli_result_release(db, rc);
    cf_db_close(db);
    return rc;
}

static int finish(const cf_cli_options *o, const cf_profile *p)
{
    int as_json = o->format && strcmp(o->format, "json") == 0;
    char *json_text = cf_profile_to_json(p, 0);
    char *pretty = as_json ? cf_profile_to_json(p, 1) : NULL;
    if (!json_text || (as_json && !pretty)) {
        free(json_text);
        free(pretty);
        cf_error_set(CF_ERR_NOMEM, "out of memory rendering the profile");
        return cf_report_error();
    }
    cf_catalog catalog;
    const cf_gpu *gpu = NULL;
    int have_catalog = cf_catalog_load_embedded(&catalog) == CF_OK;
    if (have_catalog && p->device.is_gpu)
        gpu = cf_catalog_gpu_resolve(&catalog, p->device.name);
    cf_error_clear();
    int rc = 0;
    cf_staged_set side; /* --csv: in place only once the profile is stored */
    memset(&side, 0, sizeof side);
    if (o->csv_path) {
        cf_buf text = CF_BUF_INIT;
        cf_profile_csv(p, gpu ? gpu->model : NULL, &text);
        if (cf_buf_failed(&text))
            cf_error_set(CF_ERR_NOMEM, "out of memory writing the CSV");
        if (cf_buf_failed(&text) || cf_staged_set_add(&side, o->csv_path, text.data, text.len) != CF_OK)
            rc = cf_report_error();
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
            cf_profile_table(p, gpu ? gpu->model : NULL, &out);
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
    if (rc == 0)
        rc = store(o, p, json_text, path, sizeof path, &result);
    if (rc == 0 && cf_staged_set_commit(&side) != CF_OK)
        rc = cf_report_error();
    cf_staged_set_discard(&side);
    cf_cli_result_discard(&result);
    if (rc == 0) {
        cf_log_info("stored the profile in %s; 'cloudfit recommend' on this spec uses it", path);
        if (o->csv_path)
            cf_log_info("wrote %d measurement row(s) to %s", p->n_runs ? p->n_runs : p->n_points, o->csv_path);
    }
    if (have_catalog)
        cf_catalog_free(&catalog);
    free(json_text);
    free(pretty);
    return rc;
}

/* The newest stored profile of this spec key and backend, for --resume:
 * CF_OK with *found = 0 when there is none. */
static cf_status stored_profile(const cf_cli_options *o, const char *spec_key, const char *backend, cf_profile *out,
                                int *found)
{
    *found = 0;
    char path[1024];
    cf_db *db = NULL;
    cf_status st = cf_cli_db_open(o, 0, &db, path, sizeof path);
    if (st == CF_ERR_INVALID) { /* no database yet: nothing stored */
        cf_error_clear();
        return CF_OK;
    }
    if (st != CF_OK)
        return st;
    cf_cached_profile_list list = {0};
    st = cf_profile_cache_get(db, spec_key, &list);
    for (size_t i = 0; st == CF_OK && i < list.n && !*found; i++) {
        if (strcmp(list.rows[i].backend, backend) != 0)
            continue;
        st = cf_profile_from_json(list.rows[i].profile_json, out);
        if (st != CF_OK)
            cf_error_prefix("%s: the stored %s profile on %s", path, backend, list.rows[i].device);
        *found = st == CF_OK;
    }
    cf_profile_cache_list_free(&list);
    cf_db_close(db);
    return st;
}

/* A noise run that failed after a complete sweep: the sweep is stored and
 * shown, then the failure is reported with its exit code. */
static int finish_partial(const cf_cli_options *o, const cf_profile *p)
{
    cf_status failure = cf_error_status();
    char message[1024], hint[512];
    snprintf(message, sizeof message, "%s", cf_error_message());
    snprintf(hint, sizeof hint, "%s", cf_error_hint_text());
    int rc = finish(o, p);
    cf_error_set(failure, "%s", message);
    if (hint[0])
        cf_error_hint("%s", hint);
    int failed = cf_report_error();
    if (rc == 0)
        cf_log_hint("the throughput sweep was stored without a noise scale; fix the script and run 'cloudfit profile "
                    "--resume' to re-run only the noise run");
    return rc ? rc : failed;
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
    if (o->format && strcmp(o->format, "table") && strcmp(o->format, "json")) {
        cf_log_error("option '--format' does not accept '%s'", o->format);
        cf_log_hint("use one of: table, json");
        return CF_EXIT_USAGE;
    }
    if (!o->runner && (o->probe_nodes >= 0 || o->probe_gpus >= 0)) {
        cf_log_error("options '--probe-nodes' and '--probe-gpus' need '--runner'");
        cf_log_hint("the probe runs across VMs a runner starts: cloudfit profile --runner RUNNER --gpu GPU "
                    "--probe-nodes N MODEL.json");
        return CF_EXIT_USAGE;
    }
    cf_spec *spec = NULL;
    int rc = cf_cli_spec_open(o, argv[1], 0, &spec);
    if (rc)
        return rc;
    cf_profile *profile = calloc(1, sizeof *profile);
    if (!profile) {
        cf_cli_spec_close(spec);
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        return cf_report_error();
    }
    cf_probe_backend be;
    if (o->runner && o->resume) {
        cf_cli_spec_close(spec);
        free(profile);
        cf_log_error("options '--runner' and '--resume' exclude each other");
        cf_log_hint("--resume re-runs the failed noise run of a --backend profile; a runner profile has none");
        return CF_EXIT_USAGE;
    }
    if (o->runner) { /* light profile + 2-node probe through a search runner (cli/profile_runner.c) */
        rc = cf_profile_with_runner(o, spec, profile);
        if (rc == 0)
            rc = finish(o, profile);
        cf_cli_spec_close(spec);
        free(profile);
        return rc;
    }
    rc = backend_for(o, spec, &be);
    if (rc == 0) {
        cf_profile_options po;
        cf_profile_options_init(&po);
        if (o->timeout_s > 0)
            po.probe.timeout_s = o->timeout_s;
        if (o->noise_steps > 0)
            po.noise_steps = o->noise_steps;
        if (o->noise_micro_batches != -1) {
            if (o->noise_micro_batches < 2 || o->noise_micro_batches > CF_PROBE_MAX_MICRO) {
                cf_log_error("option '--noise-micro-batches' expects 2 to %d, got %d", CF_PROBE_MAX_MICRO,
                             o->noise_micro_batches);
                cf_cli_spec_close(spec);
                free(profile);
                return CF_EXIT_USAGE;
            }
            po.noise_micro_batches = o->noise_micro_batches;
        }
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        po.probe.threads = cpus > 0 ? (int)cpus : 1; /* main() keeps BLAS at 1 thread for the advisor */
        cf_cli_progress view; /* a bar on a terminal, plain lines otherwise (term/progress.c) */
        cf_cli_progress_begin(&view, o, "profile");
        po.progress = cf_cli_progress_runs_cb;
        po.progress_ctx = &view;
        po.probe.settings = &spec->probe;
        cf_status st = cf_spec_profile_key(spec, po.spec_key);
        int found = 1;
        if (st == CF_OK && o->resume)
            st = stored_profile(o, po.spec_key, be.name, profile, &found);
        if (st == CF_OK && o->resume && found && !profile->noise_failed) {
            cf_cli_progress_end(&view);
            cf_log_info("nothing to resume: the stored %s profile of '%s' on %s (%s) has no failed run", be.name,
                        profile->spec_name, profile->device.name, profile->created_at);
            rc = finish(o, profile);
        } else if (st == CF_OK && o->resume && !found) {
            cf_cli_progress_end(&view);
            cf_error_set(CF_ERR_INVALID, "%s: no stored %s profile of '%s' to resume", spec->job.source, be.name,
                         spec->job.name);
            cf_error_hint("run 'cloudfit profile' without --resume first; a profile is stored once its sweep succeeded");
            rc = cf_report_error();
        } else {
            /* A resumed noise run is the one that failed unless told otherwise. */
            if (o->resume && o->noise_micro_batches == -1 && profile->noise_micro_batches >= 2)
                po.noise_micro_batches = profile->noise_micro_batches;
            if (o->resume && o->noise_steps <= 0 && profile->noise_steps > 0)
                po.noise_steps = profile->noise_steps;
            if (st == CF_OK)
                st = o->resume ? cf_profile_resume(&be, &spec->job, &po, profile)
                               : cf_profile_run(&be, &spec->job, &po, profile);
            cf_cli_progress_end(&view);
            if (st != CF_OK && profile->noise_failed) {
                rc = finish_partial(o, profile);
            } else if (st != CF_OK) {
                rc = cf_report_error();
                if (!o->quiet && cf_log_verbosity() >= 0)
                    cf_log_info(o->resume ? "nothing was changed: the stored profile is kept as it was"
                                          : "nothing was stored: a profile is kept only when its sweep succeeded");
            } else {
                rc = finish(o, profile);
            }
        }
    }
    cf_cli_spec_close(spec);
    free(profile);
    return rc;
}
