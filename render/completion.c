/* Shell completion scripts (cloudfit completion bash|zsh) from a plain
 * description of the commands and their options: cli/ builds it from its
 * option table, so a script never lists an option the parser does not take
 * (or misses one it does). Words that come from data (history ids, GPU
 * models, config sections) are asked of cloudfit when TAB is pressed
 * (`cloudfit completion words KIND`). */
#include "cloudfit/render/completion.h"

#include <string.h>

static void command_names(const cf_completion_command *cmds, size_t n, cf_buf *out)
{
    for (size_t i = 0; i < n; i++)
        cf_buf_printf(out, "%s%s", i ? " " : "", cmds[i].name);
}

/* ---- bash ------------------------------------------------------------------------------- */

/* Whether the space-separated `words` hold `word` (`len` bytes). */
static int has_word(const char *words, const char *word, size_t len)
{
    for (const char *p = words; p && *p;) {
        size_t n = strcspn(p, " ");
        if (n == len && strncmp(p, word, n) == 0)
            return 1;
        p += n + (p[n] == ' ');
    }
    return 0;
}

/* Whether subcommand `sub` (`len` bytes; NULL = not named yet) takes option `o`. */
static int sub_takes(const cf_completion_option *o, const char *sub, size_t len)
{
    return !sub || !o->subcommands || has_word(o->subcommands, sub, len);
}

static int any_sub_option(const cf_completion_command *cmd)
{
    for (size_t i = 0; i < cmd->n_options; i++)
        if (cmd->options[i].subcommands)
            return 1;
    return 0;
}

/* The options of `cmd` that subcommand `sub` takes (all when NULL), value-taking ones only with `values_only`. */
static void bash_options(const cf_completion_command *cmd, const char *sub, size_t len, int values_only, cf_buf *out)
{
    int first = 1;
    for (size_t i = 0; i < cmd->n_options; i++) {
        const cf_completion_option *o = &cmd->options[i];
        if ((values_only && !o->takes_value) || !sub_takes(o, sub, len))
            continue;
        cf_buf_printf(out, "%s--%s", first ? "" : " ", o->long_name);
        if (o->short_name)
            cf_buf_printf(out, " -%c", o->short_name);
        first = 0;
    }
}

/* _cloudfit_command COMMAND [SUBCOMMAND]: COMMAND's options (those
 * SUBCOMMAND takes, where they differ) in opts, the value-taking ones in
 * argopts, its first argument's words, whether files follow, and what the
 * word after $prev takes (values, path, arg). `config show COMMAND` calls
 * it again for the rest of its line. */
static void bash_command_function(const cf_completion_command *cmds, size_t n_cmds, cf_buf *out)
{
    cf_buf_puts(out, "_cloudfit_command() {\n"
                     "    case \"$1\" in\n");
    for (size_t c = 0; c < n_cmds; c++) {
        const cf_completion_command *cmd = &cmds[c];
        cf_buf_printf(out, "    %s)\n", cmd->name);
        if (any_sub_option(cmd)) {
            /* no SUBCOMMAND argument (config show COMMAND): every option */
            cf_buf_puts(out, "        if [[ $# -lt 2 ]]; then opts=\"");
            bash_options(cmd, NULL, 0, 0, out);
            cf_buf_puts(out, "\"; else\n        case \"$2\" in\n");
            for (const char *p = cmd->words; p && *p;) {
                size_t n = strcspn(p, " ");
                cf_buf_printf(out, "        %.*s) opts=\"", (int)n, p);
                bash_options(cmd, p, n, 0, out);
                cf_buf_puts(out, "\" ;;\n");
                p += n + (p[n] == ' ');
            }
            /* no subcommand word (none yet, or prices' GPU): the listing's options, where it has one */
            cf_buf_puts(out, "        *) opts=\"");
            bash_options(cmd, cmd->listing, cmd->listing ? strlen(cmd->listing) : 0, 0, out);
            cf_buf_puts(out, "\" ;;\n        esac; fi\n");
        } else {
            cf_buf_puts(out, "        opts=\"");
            bash_options(cmd, NULL, 0, 0, out);
            cf_buf_puts(out, "\"\n");
        }
        cf_buf_puts(out, "        argopts=\"");
        bash_options(cmd, NULL, 0, 1, out);
        cf_buf_printf(out, "\"\n        words=\"%s\"; files=%d\n", cmd->words ? cmd->words : "", cmd->files);
        if (strcmp(cmd->name, "help") == 0) {
            cf_buf_puts(out, "        words=\"");
            command_names(cmds, n_cmds, out);
            cf_buf_puts(out, "\"\n");
        }
        cf_buf_puts(out, "        case \"$prev\" in\n");
        for (size_t i = 0; i < cmd->n_options; i++) {
            const cf_completion_option *o = &cmd->options[i];
            if (!o->takes_value) { /* --FLAG=true|false */
                cf_buf_printf(out, "        --%s) [[ $eq == 1 ]] && values=\"true false\" ;;\n", o->long_name);
                continue;
            }
            const char *v = o->values;
            cf_buf_printf(out, "        --%s", o->long_name);
            if (o->short_name)
                cf_buf_printf(out, "|-%c", o->short_name);
            if (v)
                cf_buf_printf(out, ") values=\"%s\" ;;\n", v);
            else if (o->gpus)
                cf_buf_puts(out, ") values=\"$(_cloudfit_words gpus)\" ;;\n");
            else if (o->path)
                cf_buf_puts(out, ") path=1 ;;\n");
            else
                cf_buf_puts(out, ") arg=1 ;;\n");
        }
        cf_buf_puts(out, "        esac\n        ;;\n");
    }
    cf_buf_puts(out, "    *) return 1 ;;\n"
                     "    esac\n"
                     "    return 0\n"
                     "}\n");
}

void cf_completion_bash(const cf_completion_command *cmds, size_t n_cmds, cf_buf *out)
{
    cf_buf_puts(out, "# bash completion for cloudfit, generated by 'cloudfit completion bash' from its option table.\n"
                     "# Load it with: source <(cloudfit completion bash)\n"
                     "# Words from data (ids, GPUs, sections): '<cloudfit> completion words KIND'; --db and\n"
                     "# CLOUDFIT_DB on the line being completed are honoured.\n"
                     "_cloudfit_words() {\n"
                     "    local bin=\"${COMP_WORDS[0]}\" db=\"\" i\n"
                     "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
                     "        if [[ ${COMP_WORDS[i]} == --db && ${COMP_WORDS[i+1]} == = ]]; then db=\"${COMP_WORDS[i+2]}\"\n"
                     "        elif [[ ${COMP_WORDS[i]} == --db ]]; then db=\"${COMP_WORDS[i+1]}\"; fi\n"
                     "    done\n"
                     "    if [[ -n $db ]]; then CLOUDFIT_DB=\"$db\" \"$bin\" completion words \"$@\" 2>/dev/null\n"
                     "    else \"$bin\" completion words \"$@\" 2>/dev/null; fi | cut -d: -f1\n"
                     "}\n");
    bash_command_function(cmds, n_cmds, out);
    cf_buf_puts(out, "_cloudfit() {\n"
                     "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
                     "    # --opt=VALUE: bash splits it at '=' into --opt, =, VALUE\n"
                     "    local eq=0\n"
                     "    if [[ $cur == = ]]; then cur=\"\"; eq=1\n"
                     "    elif [[ $prev == = && $COMP_CWORD -ge 3 ]]; then prev=\"${COMP_WORDS[COMP_CWORD-2]}\"; eq=1; fi\n"
                     "    COMPREPLY=()\n"
                     "    if [[ $COMP_CWORD -eq 1 ]]; then\n"
                     "        COMPREPLY=($(compgen -W \"");
    command_names(cmds, n_cmds, out);
    cf_buf_puts(out, " --help --version\" -- \"$cur\"))\n"
                     "        return 0\n"
                     "    fi\n"
                     "    local opts words files=1 values=\"\" path=0 arg=0 argopts=\"\" pos=() i\n"
                     "    _cloudfit_command \"${COMP_WORDS[1]}\" || return 0\n"
                     "    # the positional words before this one (options and their values skipped)\n"
                     "    for ((i = 2; i < COMP_CWORD; i++)); do\n"
                     "        if [[ ${COMP_WORDS[i]} == = ]]; then\n"
                     "            ((i++)) # the value of --opt=VALUE\n"
                     "        elif [[ ${COMP_WORDS[i]} == -* ]]; then\n"
                     "            [[ ${COMP_WORDS[i+1]} != = && \" $argopts \" == *\" ${COMP_WORDS[i]} \"* ]] && ((i++))\n"
                     "        else\n"
                     "            pos+=(\"${COMP_WORDS[i]}\")\n"
                     "        fi\n"
                     "    done\n"
                     "    # after a subcommand, only the options it takes (history prune: no list filter; prices update: no --gpu)\n"
                     "    _cloudfit_command \"${COMP_WORDS[1]}\" \"${pos[0]}\"\n"
                     "    case \"${COMP_WORDS[1]}\" in\n"
                     "    history)\n"
                     "        if [[ ${#pos[@]} -ge 1 ]]; then words=\"\"; fi\n"
                     "        if [[ ${pos[0]} == show && ${#pos[@]} -eq 1 ]] || [[ ${pos[0]} == diff && ${#pos[@]} -le 2 ]]; then\n"
                     "            words=\"$(_cloudfit_words history-ids)\"\n"
                     "        fi ;;\n"
                     "    record) [[ ${#pos[@]} -eq 0 ]] && words=\"$(_cloudfit_words history-ids)\" ;;\n"
                     "    prices)\n"
                     "        if [[ ${#pos[@]} -eq 0 ]]; then words=\"update $(_cloudfit_words gpus)\"; else words=\"\"; fi ;;\n"
                     "    config)\n"
                     "        if [[ ${#pos[@]} -eq 1 && ${pos[0]} == show ]]; then words=\"$(_cloudfit_words commands)\"\n"
                     "        elif [[ ${#pos[@]} -ge 2 && ${COMP_WORDS[2]} == show && ${COMP_WORDS[3]} != config ]]; then\n"
                     "            # config show COMMAND: the rest of the line is COMMAND's options and their values\n"
                     "            opts=\"\" values=\"\" path=0 arg=0\n"
                     "            _cloudfit_command \"${COMP_WORDS[3]}\"\n"
                     "            words=\"\"; files=0\n"
                     "        elif [[ ${#pos[@]} -ge 1 ]]; then words=\"\"; fi ;;\n"
                     "    help|completion) [[ ${#pos[@]} -ge 1 ]] && words=\"\" ;;\n"
                     "    esac\n"
                     "    if [[ -n $values ]]; then\n"
                     "        COMPREPLY=($(compgen -W \"$values\" -- \"$cur\"))\n"
                     "    elif [[ $path -eq 1 ]]; then\n"
                     "        mapfile -t COMPREPLY < <(compgen -f -- \"$cur\") # one name a line: spaces and * kept\n"
                     "    elif [[ $arg -eq 1 ]]; then\n"
                     "        COMPREPLY=()\n"
                     "    elif [[ $cur == -* ]]; then\n"
                     "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
                     "    else\n"
                     "        COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
                     "        if [[ $files -eq 1 ]]; then\n"
                     "            local -a found\n"
                     "            mapfile -t found < <(compgen -f -- \"$cur\")\n"
                     "            COMPREPLY+=(\"${found[@]}\")\n"
                     "        fi\n"
                     "    fi\n"
                     "    return 0\n"
                     "}\n"
                     "complete -o filenames -o bashdefault -F _cloudfit cloudfit\n");
}

/* ---- zsh -------------------------------------------------------------------------------- */

/* Text inside a single-quoted zsh word, and inside _arguments' [...] and
 * :message: parts: ' closes the quote, ] ends the description, : ends the
 * message, \ escapes. */
static void zsh_text(cf_buf *out, const char *text)
{
    for (const char *p = text; *p; p++) {
        if (*p == '\'')
            cf_buf_puts(out, "'\\''");
        else if (*p == ']' || *p == '[' || *p == ':' || *p == '\\')
            cf_buf_printf(out, "\\%c", *p);
        else
            cf_buf_append(out, p, 1);
    }
}

/* The value-taking options but --db of the commands whose options depend
 * on the subcommand, as a zsh case pattern on "COMMAND:WORD"
 * ("history:-f|history:--format|prices:--cloud"): the words after them are
 * values, not the subcommand. */
static void value_options_pattern(const cf_completion_command *cmds, size_t n_cmds, cf_buf *out)
{
    int any = 0;
    for (size_t c = 0; c < n_cmds; c++)
        for (size_t i = 0; any_sub_option(&cmds[c]) && i < cmds[c].n_options; i++) {
            const cf_completion_option *o = &cmds[c].options[i];
            if (!o->takes_value || strcmp(o->long_name, "db") == 0)
                continue;
            if (o->short_name)
                cf_buf_printf(out, "%s%s:-%c", any++ ? "|" : "", cmds[c].name, o->short_name);
            cf_buf_printf(out, "%s%s:--%s", any++ ? "|" : "", cmds[c].name, o->long_name);
        }
    if (!any)
        cf_buf_puts(out, "--");
}

/* One option's _arguments spec (one word, or two for a flag with a short form). */
static void zsh_option_spec(const cf_completion_option *o, cf_buf *out)
{
    const char *repeat = o->repeatable ? "*" : "";
    /* "--opt=": the value after '=' or as the next word ("--objective=<TAB>" completed nothing) */
    /* a flag's long form takes an optional "=true"/"=false" in the same word ("=-" and "::");
     * its short form takes none, so a flag with both is two specs that exclude each other */
    int flag_value = !o->takes_value;
    const char *eq = o->takes_value ? "=" : "=-";
    if (o->short_name && flag_value) {
        cf_buf_printf(out, "'(-%c --%s)%s-%c[", o->short_name, o->long_name, repeat, o->short_name);
        zsh_text(out, o->help);
        cf_buf_printf(out, "]' '(-%c --%s)%s--%s%s[", o->short_name, o->long_name, repeat, o->long_name, eq);
    } else if (o->short_name)
        cf_buf_printf(out, "'(-%c --%s)'%s{-%c,--%s%s}'[", o->short_name, o->long_name, repeat, o->short_name,
                      o->long_name, eq);
    else
        cf_buf_printf(out, "'%s--%s%s[", repeat, o->long_name, eq);
    zsh_text(out, o->help);
    cf_buf_puts(out, "]");
    if (flag_value)
        cf_buf_puts(out, "::value:(true false)");
    if (o->takes_value) {
        cf_buf_puts(out, ":");
        zsh_text(out, o->arg_name ? o->arg_name : "value");
        cf_buf_puts(out, ":");
        if (o->values)
            cf_buf_printf(out, "(%s)", o->values);
        else if (o->gpus)
            cf_buf_puts(out, "_cloudfit_gpus");
        else if (o->path)
            cf_buf_puts(out, "_files");
        else
            cf_buf_puts(out, " ");
    }
    cf_buf_puts(out, "'");
}

/* _cloudfit_specs_COMMAND: COMMAND's option specs in the array
 * _cloudfit_specs; an option only some subcommands take (history prune:
 * no list filter) only once the line names one of them, or none yet. */
static void zsh_specs_function(const cf_completion_command *cmd, cf_buf *out)
{
    cf_buf_printf(out, "_cloudfit_specs_%s() {\n", cmd->name);
    if (any_sub_option(cmd))
        cf_buf_puts(out, "  local _cloudfit_db _cloudfit_sub; _cloudfit_line\n");
    if (any_sub_option(cmd) && cmd->listing) /* no subcommand word (none, or prices' GPU): the listing */
        cf_buf_printf(out, "  [[ -z $_cloudfit_all && ( -z $_cloudfit_sub || ' %s ' != *\" $_cloudfit_sub \"* ) ]] && "
                           "_cloudfit_sub=%s\n",
                      cmd->words ? cmd->words : "", cmd->listing);
    cf_buf_puts(out, "  _cloudfit_specs=(");
    for (size_t i = 0; i < cmd->n_options; i++)
        if (!cmd->options[i].subcommands) {
            cf_buf_puts(out, "\n    ");
            zsh_option_spec(&cmd->options[i], out);
        }
    cf_buf_puts(out, "\n  )\n");
    for (size_t i = 0; i < cmd->n_options; i++) {
        const cf_completion_option *o = &cmd->options[i];
        if (!o->subcommands)
            continue;
        cf_buf_printf(out, "  [[ -z $_cloudfit_sub || ' %s ' == *\" $_cloudfit_sub \"* ]] && _cloudfit_specs+=(",
                      o->subcommands);
        zsh_option_spec(o, out);
        cf_buf_puts(out, ")\n");
    }
    cf_buf_puts(out, "}\n");
}

void cf_completion_zsh(const cf_completion_command *cmds, size_t n_cmds, cf_buf *out)
{
    cf_buf_puts(out, "#compdef cloudfit\n"
                     "# zsh completion for cloudfit, generated by 'cloudfit completion zsh' from its option table.\n"
                     "# Install: cloudfit completion zsh > \"${fpath[1]}/_cloudfit\", then run compinit.\n"
                     "# Words from data (ids, GPUs, sections): '<cloudfit> completion words KIND', from the\n"
                     "# database of the --db on the line (_cloudfit_line, which sets _cloudfit_db) when there is one.\n"
                     "_cloudfit_describe() {\n"
                     "  local tag=$1 what=$2; shift 2\n"
                     "  local -a found\n"
                     "  if [[ -n $_cloudfit_db ]]; then\n"
                     "    found=(${(f)\"$(CLOUDFIT_DB=$_cloudfit_db ${_cloudfit_bin:-cloudfit} completion words \"$@\" 2>/dev/null)\"})\n"
                     "  else\n"
                     "    found=(${(f)\"$(${_cloudfit_bin:-cloudfit} completion words \"$@\" 2>/dev/null)\"})\n"
                     "  fi\n"
                     "  _describe -t $tag $what found\n"
                     "}\n"
                     "_cloudfit_gpus() { _cloudfit_describe gpus 'GPU model' gpus }\n"
                     "# The words before the cursor (the command's name first): the --db given, and the first\n"
                     "# word that is no option nor an option's value (the subcommand) in _cloudfit_sub.\n"
                     "_cloudfit_line() {\n"
                     "  local i\n"
                     "  _cloudfit_db= _cloudfit_sub=\n"
                     "  for (( i = 2; i < CURRENT; i++ )); do\n"
                     "    case $words[i] in\n"
                     "      (--db=*) _cloudfit_db=${words[i]#--db=} ;;\n"
                     "      (--db) _cloudfit_db=$words[i+1]; (( i++ )) ;;\n"
                     "      (-*) case $words[1]:$words[i] in (");
    value_options_pattern(cmds, n_cmds, out);
    cf_buf_puts(out, ") (( i++ )) ;; esac ;;\n"
                     "      (*) [[ -z $_cloudfit_sub ]] && _cloudfit_sub=$words[i] ;;\n"
                     "    esac\n"
                     "  done\n"
                     "}\n"
                     "_cloudfit_ids() {\n"
                     "  local _cloudfit_db _cloudfit_sub; _cloudfit_line\n"
                     "  if [[ $_cloudfit_sub == show || $_cloudfit_sub == diff ]]; then\n"
                     "    _cloudfit_describe ids 'recommendation id' history-ids\n"
                     "  fi\n"
                     "}\n"
                     "_cloudfit_record_id() {\n"
                     "  local _cloudfit_db _cloudfit_sub; _cloudfit_line\n"
                     "  _cloudfit_describe ids 'recommendation id' history-ids\n"
                     "}\n"
                     "_cloudfit_prices_arg() { _alternative 'update:subcommand:(update)' 'gpus:GPU model:_cloudfit_gpus' }\n"
                     "_cloudfit_sections() { _cloudfit_describe commands 'command' commands }\n"
                     "_cloudfit() {\n"
                     "  local -a commands\n"
                     "  _cloudfit_bin=$words[1]\n"
                     "  commands=(\n");
    for (size_t c = 0; c < n_cmds; c++) {
        cf_buf_puts(out, "    '");
        zsh_text(out, cmds[c].name);
        cf_buf_puts(out, ":");
        zsh_text(out, cmds[c].summary);
        cf_buf_puts(out, "'\n");
    }
    cf_buf_puts(out, "  )\n"
                     "  if (( CURRENT == 2 )); then\n"
                     "    _describe -t commands 'cloudfit command' commands\n"
                     "    return\n"
                     "  fi\n"
                     "  shift words\n"
                     "  (( CURRENT-- ))\n"
                     "  _cloudfit_command\n"
                     "}\n");
    for (size_t c = 0; c < n_cmds; c++)
        zsh_specs_function(&cmds[c], out);
    cf_buf_puts(out, "# The line from the command's name on ($words[1]): its options, then its arguments.\n"
                     "_cloudfit_command() {\n"
                     "  local -a _cloudfit_specs\n"
                     "  case $words[1] in\n");
    for (size_t c = 0; c < n_cmds; c++) {
        const cf_completion_command *cmd = &cmds[c];
        cf_buf_printf(out, "  (%s)\n", cmd->name);
        if (strcmp(cmd->name, "config") == 0)
            cf_buf_puts(out, "    # config show COMMAND: the rest of the line is COMMAND's options and their values\n"
                             "    if [[ $words[2] == show && $words[3] != config ]] && (( CURRENT > 3 )) &&\n"
                             "       (( $+functions[_cloudfit_specs_$words[3]] )); then\n"
                             "      local target=$words[3] _cloudfit_all=1 # every option of COMMAND's section\n"
                             "      shift 2 words\n"
                             "      (( CURRENT -= 2 ))\n"
                             "      _cloudfit_specs_$target\n"
                             "      _arguments -s -S $_cloudfit_specs\n"
                             "      return\n"
                             "    fi\n");
        cf_buf_printf(out, "    _cloudfit_specs_%s\n    _arguments -s -S $_cloudfit_specs", cmd->name);
        if (strcmp(cmd->name, "help") == 0) {
            cf_buf_puts(out, " '1:command:(");
            command_names(cmds, n_cmds, out);
            cf_buf_puts(out, ")'");
        } else if (strcmp(cmd->name, "history") == 0) {
            cf_buf_printf(out, " '1:subcommand:(%s)' '*:id:_cloudfit_ids'", cmd->words ? cmd->words : "");
        } else if (strcmp(cmd->name, "record") == 0) {
            cf_buf_puts(out, " '1:recommendation id:_cloudfit_record_id'");
        } else if (strcmp(cmd->name, "prices") == 0) {
            cf_buf_puts(out, " '1:GPU or update:_cloudfit_prices_arg'");
        } else if (strcmp(cmd->name, "config") == 0) {
            cf_buf_puts(out, " '1:subcommand:(show)' '2:command:_cloudfit_sections'");
        } else if (cmd->words && cmd->words[0]) {
            cf_buf_printf(out, " '1:subcommand:(%s)'", cmd->words);
        } else if (cmd->files) {
            cf_buf_puts(out, " '*:file:_files'");
        }
        cf_buf_puts(out, "\n    ;;\n");
    }
    cf_buf_puts(out, "  esac\n"
                     "}\n"
                     "_cloudfit \"$@\"\n");
}

