/* Credentials out of shown text (common/redact.c). A database URL with a
 * password can land anywhere on a command line — swallowed as the value of
 * another option (`--branch $EMPTY --db URL`), mistyped as a positional, a
 * spec or an output file — and a message quoting that word printed the
 * password into the CI log. So every message is scrubbed on its way out,
 * whatever made it: the last-error setters (cf_error_set, cf_error_hint,
 * cf_error_prefix) and the CLI's printer (cli/log.c) both pass their text
 * through cf_redact_secrets. The rule is cf_db_redact's, applied to every
 * URL and key=value pair found inside free text:
 *  - SCHEME://USER:PASSWORD@HOST (any scheme, also SCHEME:/…): the
 *    password becomes "***" (the user is kept, as cf_db_redact keeps it);
 *  - a key ending in "password" (any case; percent-encoded letters
 *    decoded, as libpq decodes a URL parameter's name) followed by '=':
 *    its value — up to white space or '&', or libpq's 'quoted value' — becomes
 *    "***"; a closing quote of the message itself is kept.
 * Text without either is left as it is, byte for byte. */
#ifndef CLOUDFIT_COMMON_REDACT_H
#define CLOUDFIT_COMMON_REDACT_H
#include <stddef.h>


/* 1 when cf_redact_secrets would change `text`. */
int cf_has_secrets(const char *text);
/* `text` with every password replaced by "***" into out[n] (cut to fit,
 * NUL-terminated when n > 0; out must not overlap text), snprintf-like:
 * returns the length of the whole redacted text, so that (NULL, 0) sizes
 * it. Redact before cutting: a URL cut before its '@' is no longer
 * recognised. Self-contained (no cf_buf): linked into the CUDA module with
 * the last-error setters. */
size_t cf_redact_secrets(const char *text, char *out, size_t n);

#endif
