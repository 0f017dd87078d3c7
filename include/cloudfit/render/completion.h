/* Shell completion scripts from a plain description of the commands and
 * their options (render/completion.c); cli/cmd_completion.c builds it from
 * the option table. */
#ifndef CLOUDFIT_RENDER_COMPLETION_H
#define CLOUDFIT_RENDER_COMPLETION_H
#include <stddef.h>

#include "cloudfit/common/buf.h"

typedef struct {
    const char *long_name;
    int short_name;            /* 0 = none */
    int takes_value;           /* 0 = a flag */
    int repeatable;
    const char *arg_name;      /* NULL for flags */
    const char *help;
    const char *values;        /* the fixed words its value takes, space-separated; NULL = not a fixed set */
    int gpus;                  /* its values are the catalog's GPU models */
    int path;                  /* its value names a file or folder */
    const char *subcommands;   /* the command's subcommands that take it (of `words`, or its `listing`),
                                * space-separated; NULL = all (history's --older-than: "prune") */
} cf_completion_option;

typedef struct {
    const char *name, *summary;
    const char *words;         /* fixed words of its first argument ("list show ..."); NULL or "" = none */
    int files;                 /* files follow it */
    const cf_completion_option *options;
    size_t n_options;
    const char *listing;       /* the name options' `subcommands` give the command run without one of
                                * `words` (prices, prices GPU: "listing"); NULL = none: until a subcommand
                                * is named, every option */
} cf_completion_command;

void cf_completion_bash(const cf_completion_command *cmds, size_t n_cmds, cf_buf *out);
void cf_completion_zsh(const cf_completion_command *cmds, size_t n_cmds, cf_buf *out);

#endif
