/* `cloudfit completion words KIND [ARG]`: the words the completion scripts
 * offer that come from data, one per line, "WORD:DESCRIPTION" where there is
 * one (bash keeps the word, zsh shows both). Quiet: no output and exit 0
 * when there is nothing to offer (no database yet), so a TAB never prints
 * an error into the command line.
 *
 *   history-ids      stored recommendation ids, newest first (history show/diff, record)
 *   gpus             GPU models with an offer in the catalog in use (--gpu, prices GPU)
 *   commands         command names but config (config show COMMAND: the configuration file's sections)
 *   options COMMAND  COMMAND's options (the keys of its section; the scripts now complete a config show
 *                    COMMAND line as COMMAND's own, but scripts an earlier cloudfit generated still ask) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/db/history.h"
#include "commands.h"
#include "config.h"
#include "exit_codes.h"
#include "io/catalog_source.h"
#include "io/db_open.h"
#include "log.h"
#include "term/output.h"

#define MAX_IDS 100

static void history_ids(cf_buf *out)
{
    cf_cli_options o;
    cf_cli_options_init(&o);
    char path[1024];
    cf_db *db = NULL;
    if (cf_cli_config_apply(CMD_HISTORY, "history", &o) == 0 &&
        cf_cli_db_open_readonly(&o, &db, path, sizeof path) == CF_OK) {
        cf_history_filter f = {.limit = MAX_IDS};
        cf_history_row *rows = NULL;
        size_t n = 0;
        if (cf_history_list(db, &f, &rows, &n) == CF_OK)
            for (size_t i = 0; i < n; i++)
                cf_buf_printf(out, "%lld:%s %s %s/%s\n", rows[i].id, rows[i].spec_name, rows[i].created_at,
                              rows[i].chosen.cloud, rows[i].chosen.instance_type);
        cf_history_rows_free(rows, n);
        cf_db_close(db);
    }
    cf_cli_options_free(&o);
}

static int by_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static void gpus(cf_buf *out)
{
    cf_cli_options o;
    cf_cli_options_init(&o);
    cf_catalog_source src;
    if (cf_cli_config_apply(CMD_PRICES, "prices", &o) == 0 && cf_cli_catalog_open(&o, 0, &src) == 0) {
        const cf_catalog *cat = &src.catalog;
        const char **names = calloc(cat->n_vms + 1, sizeof *names);
        size_t n = 0;
        for (size_t i = 0; names && i < cat->n_vms; i++)
            names[n++] = cat->vms[i].gpu_model;
        if (names)
            qsort(names, n, sizeof *names, by_name);
        for (size_t i = 0; names && i < n; i++)
            if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
                cf_buf_printf(out, "%s\n", names[i]);
        free(names);
        cf_catalog_source_close(&src);
    }
    cf_cli_options_free(&o);
}

int cf_cli_completion_words(const char *kind, const char *arg)
{
    cf_log_init(CF_COLOR_NEVER, -1); /* nothing on stderr while the user presses TAB */
    if (!freopen("/dev/null", "w", stderr))
        return CF_EXIT_OK;
    cf_buf out = CF_BUF_INIT;
    if (strcmp(kind, "history-ids") == 0) {
        history_ids(&out);
    } else if (strcmp(kind, "gpus") == 0) {
        gpus(&out);
    } else if (strcmp(kind, "commands") == 0) {
        for (size_t i = 0; i < cf_command_count; i++) /* not config: config show refuses it */
            if (cf_commands[i].bit != CMD_CONFIG)
                cf_buf_printf(&out, "%s:%s\n", cf_commands[i].name, cf_commands[i].summary);
    } else if (strcmp(kind, "options") == 0 && arg) {
        const cf_command *cmd = cf_command_find(arg);
        for (size_t i = 0; cmd && i < cf_cli_option_count; i++)
            if (cf_cli_option_table[i].commands & cmd->bit)
                cf_buf_printf(&out, "--%s:%s\n", cf_cli_option_table[i].long_name, cf_cli_option_table[i].help);
    } else {
        return CF_EXIT_USAGE;
    }
    int rc = cf_cli_write_buf(NULL, &out);
    cf_buf_free(&out);
    return rc;
}
