/* `prices` and `prices update` as library calls (docs/pricing.md): a
 * request in, a result out. cf_prices_query selects from the catalog in
 * use (the cheapest $/GPU-hour per GPU model and cloud, or every offer of
 * GPU[:N], cheapest first) and says which prices are in use;
 * cf_prices_update_run fetches and merges live prices over the catalog in
 * use and stores the result as a snapshot through the caller's database
 * handle. What stays with the caller: options, opening the catalog and
 * the database, the progress display, saying each cloud's outcome, the
 * delivery of the report (the snapshot is committed only once it was
 * written) and the rendered bytes. */
#ifndef CLOUDFIT_USECASE_PRICES_H
#define CLOUDFIT_USECASE_PRICES_H
#include <stddef.h>

#include "cloudfit/db.h"
#include "cloudfit/pricing.h"
#include "cloudfit/pricing/price_views.h"
#include "cloudfit/pricing/source.h"
#include "cloudfit/pricing/update.h"
#include "cloudfit/render/prices_report.h"
#include "cloudfit/usecase/evidence.h"

typedef struct {
    cf_catalog_source *catalog_source; /* the catalog in use; cf_prices_query sets the prices in use */
    const char *gpu;                   /* "GPU" or "GPU:N": its offers; NULL = the summary */
    const char *const *gpus;           /* --gpu's GPU[:N] each, resolved as `gpu`: one (and no `gpu`) is */
    size_t n_gpus;                     /*   `gpu`; several: the summary of those; with `gpu`, each must
                                        *   name the same GPU (CF_ERR_USAGE otherwise) */
    const char *const *clouds;         /* none = all */
    size_t n_clouds;
    const char *const *regions;        /* none = all */
    size_t n_regions;
    int spot_only;
    int include_restricted_regions;
    const char *const *prefer_regions; /* tie order before `regions` */
    size_t n_prefer_regions;
    cf_note_fn note;                   /* CF_NOTE_PRICES_IN_USE once they are set; NULL = nothing */
    void *note_ctx;
} cf_prices_request;

/* Filled in place: the reports point into the struct, so do not copy it. */
typedef struct {
    cf_vm_list offers;
    cf_gpu_cloud_prices *summary_rows;
    char gpu[CF_GPU_NAME_MAX];
    int gpu_count;
    int one_gpu;                      /* the offers of one GPU (by_gpu), else the summary */
    cf_prices_summary_report summary; /* without one GPU; width 0: the caller sets it */
    cf_prices_offers_report by_gpu;   /* with one GPU; width 0: the caller sets it */
} cf_prices_result;

/* CF_OK and `out` filled, or a status with the last error set: a GPU[:N]
 * that does not parse, an unknown cloud or GPU, no offer of GPU:N or of
 * the GPUs asked for (CF_ERR_INFEASIBLE, with a hint), `gpu` and a `gpus`
 * entry that name different GPUs (CF_ERR_USAGE). cf_prices_result_free
 * `out` either way. */
cf_status cf_prices_query(const cf_prices_request *req, cf_prices_result *out);
void cf_prices_result_free(cf_prices_result *out);

typedef struct {
    const cf_catalog_source *base;     /* the catalog in use, without overrides: a snapshot holds list prices */
    cf_db *db;                         /* where the snapshot is stored */
    cf_price_update_options options;   /* clouds, regions, limits, progress; fetched_at set here */
} cf_prices_update_request;

typedef struct {
    cf_price_update_result result;
    cf_status fetch_status;   /* of the fetch and merge (cf_prices_update) */
    int any_cloud_failed;     /* a cloud asked for was not updated (result.clouds says why) */
    char fetched_at[32];
    cf_prices_update_report report; /* db_path: the caller's to set */
} cf_prices_update_run_result;

/* Fetches, merges and, when that worked, stores the snapshot inside a
 * hold on req->db (cf_db_hold: the caller releases it with whether the
 * report was delivered). Returns the fetch's status, else the store's;
 * out->fetch_status tells them apart. cf_prices_update_run_free `out`
 * either way. */
cf_status cf_prices_update_run(const cf_prices_update_request *req, cf_prices_update_run_result *out);
void cf_prices_update_run_free(cf_prices_update_run_result *out);

/* Which of prices' options the listing (`prices [GPU[:N]]`, named
 * "listing" here) and `prices update` take: one table (usecase/prices.c),
 * read by the check below and by the completion scripts. --gpu, --spot,
 * --prefer-region, --include-restricted-regions, --price-overrides,
 * --format, --width and --wide shape what the listing shows (update
 * fetches every GPU and prints its own report); --max-price-change is
 * update's. Returns "listing" or "update" for option `name` (a long name
 * without dashes), or NULL when both take it (--db, --cloud, --region, ...). */
const char *cf_prices_option_subcommands(const char *name);

/* The options given on the command line (`given`: long names without
 * dashes) checked against `sub` ("listing" or "update"): each one `sub`
 * does not take is noted as ignored through `note`. CF_OK. */
cf_status cf_prices_check_options(const char *sub, const char *const *given, size_t n_given, cf_note_fn note,
                                  void *note_ctx);

#endif
