/* POSIX shell words without a shell (common/shell_words.c): a command
 * line split into words the way sh splits it, with nothing expanded, and
 * one word quoted so sh reads it back unchanged. The launch-spec emitters
 * use both so that an entry point means the same words to sh, to torchrun
 * and in a Kubernetes command list. Nothing here has a size limit. */
#ifndef CLOUDFIT_COMMON_SHELL_WORDS_H
#define CLOUDFIT_COMMON_SHELL_WORDS_H
#include <stddef.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/status.h"

typedef struct {
    char **words;       /* each malloc'd */
    size_t n;
} cf_shell_words;

/* Splits `text` the way a POSIX shell splits a command line (blanks
 * separate words; '...' and "..." quote; a backslash escapes; a
 * backslash-newline continues the line) with no expansion. Text a shell
 * would expand or treat as an operator ($, `, unquoted * ? [ | & ; < > ( )
 * { }, a word starting with ~ or #, an unquoted newline) is refused:
 * CF_ERR_USAGE, the message saying what and where ("an unquoted shell
 * operator at character 7 of 'a | b'"); the caller prefixes the option or
 * key it came from. *out is empty on error. Text with no words (blanks,
 * line continuations) is CF_OK with out->n == 0: whether that is allowed
 * is the caller's to say. */
cf_status cf_shell_split_words(const char *text, cf_shell_words *out);
void cf_shell_words_free(cf_shell_words *w);

/* Appends `word` in single quotes for a POSIX shell (' becomes '\''). */
void cf_shell_quote(cf_buf *out, const char *word);
/* Appends `word` as it is where a shell would read nothing else in it
 * (letters, digits, . _ / + - =), else cf_shell_quote's form; a leading '-'
 * is quoted too, for the reader. A word holding what cf_has_controls finds
 * (a control character, one that reorders the text such as U+202E, a byte
 * that is not UTF-8) is written $'…' with those as escapes (\n, \x1b,
 * \u202e), so that every format shows the command a shell runs: for
 * commands printed to be copied, not scripts. */
void cf_shell_word(cf_buf *out, const char *word);

#endif
