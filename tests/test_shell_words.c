/* Tests of common/shell_words.c (POSIX shell word splitting without
 * expansion, single-quote quoting) and cf_names_dns_label (common/names.c):
 * the pieces the launch-spec emitters build their commands and job names
 * from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/names.h"
#include "cloudfit/common/shell_words.h"

/* `text` splits into the `n` words given. */
static void splits(const char *text, size_t n, ...)
{
    cf_shell_words w;
    if (cf_shell_split_words(text, &w) != CF_OK)
        fail_msg("'%s' refused: %s", text, cf_error_message());
    assert_int_equal(w.n, n);
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(w.words[i], va_arg(ap, const char *));
    va_end(ap);
    cf_shell_words_free(&w);
    assert_null(w.words);
}

/* `text` is refused with a usage error whose message contains `why`. */
static void refused(const char *text, const char *why)
{
    cf_shell_words w;
    cf_status st = cf_shell_split_words(text, &w);
    if (st != CF_ERR_USAGE)
        fail_msg("'%s' accepted (status %d)", text, (int)st);
    if (!strstr(cf_error_message(), why))
        fail_msg("'%s': message '%s' does not say '%s'", text, cf_error_message(), why);
    assert_int_equal(w.n, 0);
    assert_null(w.words);
    cf_error_clear();
}

static void test_split_plain_and_quoted(void **state)
{
    (void)state;
    splits("train.py", 1, "train.py");
    splits("  python  train.py\t--epochs 90 ", 4, "python", "train.py", "--epochs", "90");
    splits("a 'b c' \"d e\" f\\ g", 4, "a", "b c", "d e", "f g");
    splits("'' x", 2, "", "x");
    splits("a'b'\"c\"d", 1, "abcd");
    splits("\"\\$HOME \\\"q\\\" \\\\\"", 1, "$HOME \"q\" \\");
    splits("'$HOME' '*' '~x' '#c'", 4, "$HOME", "*", "~x", "#c");
    splits("a\\\nb", 1, "ab");
    splits("a \\\n b", 2, "a", "b");
    splits("x~ y#", 2, "x~", "y#");
}

static void test_split_refuses_what_a_shell_would_do(void **state)
{
    (void)state;
    refused("a | b", "an unquoted shell operator at character 3 of 'a | b'");
    refused("a; b", "shell operator");
    refused("a > out", "shell operator");
    refused("echo $HOME", "an unquoted '$' or '`'");
    refused("echo `id`", "an unquoted '$' or '`'");
    refused("ls *.py", "glob character");
    refused("~/train.py", "starting with an unquoted '~'");
    refused("train.py #comment", "starting with an unquoted '#'");
    refused("a\nb", "a newline outside quotes");
    refused("'open", "an unterminated single quote at character 1");
    refused("\"open", "an unterminated double quote");
    refused("\"a $b\"", "in double quotes");
    refused("trail\\", "a backslash at the end");
    splits("", 0);
    splits("  \t ", 0);
    splits(" \\\n ", 0);
}

static void test_quote_round_trips(void **state)
{
    (void)state;
    const char *words[] = {"plain", "two words", "it's", "'", "$HOME", "", "a\"b"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        cf_buf b = CF_BUF_INIT;
        cf_shell_quote(&b, words[i]);
        assert_false(cf_buf_failed(&b));
        assert_int_equal(b.data[0], '\'');
        cf_shell_words w;
        assert_int_equal(cf_shell_split_words(b.data, &w), CF_OK);
        assert_int_equal(w.n, 1);
        assert_string_equal(w.words[0], words[i]);
        cf_shell_words_free(&w);
        cf_buf_free(&b);
    }
    cf_buf b = CF_BUF_INIT;
    cf_shell_quote(&b, "it's");
    assert_string_equal(b.data, "'it'\\''s'");
    cf_buf_free(&b);
}

/* A word with a control or an invisible format character is written
 * $'…' (what cf_has_controls finds): inside '…' a newline (markdown shows a space) or U+202E (shown as
 * the letters \u202e, or reordering the line) made the command a user
 * copies name another file. bash and zsh read these back to the word
 * (checked by hand: printf '%s' $'…' | cmp). */
static void test_word_with_controls_is_ansi_c_quoted(void **state)
{
    (void)state;
    static const struct {
        const char *word, *shown;
    } cases[] = {
        {"dir\nx/it's\xe2\x80\xae" "evil\tjob.json", "$'dir\\nx/it\\'s\\u202e" "evil\\tjob.json'"},
        {"a\\b\x1b[31m", "$'a\\\\b\\x1b[31m'"},
        {"\xe2\x81\xa6spec\xc2\x85.json", "$'\\u2066spec\\u0085.json'"}, /* an isolate, a C1 */
        {"bad\xff.json", "$'bad\\xff.json'"},                                 /* not UTF-8 */
        {"caf\xc3\xa9 job.json", "'caf\xc3\xa9 job.json'"}, /* other UTF-8: single quotes, as before */
        {"plain.json", "plain.json"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cf_buf b = CF_BUF_INIT;
        cf_shell_word(&b, cases[i].word);
        assert_false(cf_buf_failed(&b));
        assert_string_equal(b.data, cases[i].shown);
        cf_buf_free(&b);
    }
}

static int is_label(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max || !islower((unsigned char)s[0]) || s[n - 1] == '-')
        return 0;
    for (const char *p = s; *p; p++)
        if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-'))
            return 0;
    return 1;
}

static void label(const char *name, size_t max, char *out, size_t n)
{
    char *l = NULL;
    assert_int_equal(cf_names_dns_label(name, max, &l), CF_OK);
    if (!is_label(l, max))
        fail_msg("'%s' → '%s' is not a DNS-1035 label of at most %zu characters", name, l, max);
    snprintf(out, n, "%s", l);
    free(l);
}

static void test_dns_label(void **state)
{
    (void)state;
    char a[64], b[64];
    label("resnet50", 48, a, sizeof a);
    assert_string_equal(a, "resnet50"); /* already a label: unchanged, no hash */
    label("ResNet_50", 48, a, sizeof a);
    assert_int_equal(strncmp(a, "resnet-50-", 10), 0);
    assert_int_equal(strlen(a), 18);
    label("a.b", 48, a, sizeof a);
    label("a_b", 48, b, sizeof b);
    assert_string_not_equal(a, b); /* the hash keeps distinct names apart */
    label("50layers", 48, a, sizeof a);
    assert_int_equal(strncmp(a, "cf-50layers-", 12), 0);
    label("", 48, a, sizeof a);
    assert_int_equal(strncmp(a, "cf-", 3), 0);
    label("???", 48, a, sizeof a);
    assert_int_equal(strncmp(a, "cf-", 3), 0);
    label("a-very-long-model-name-that-goes-on-and-on-and-on-forever", 48, a, sizeof a);
    assert_int_equal(strlen(a), 48);
    label("abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij", 20, a, sizeof a);
    assert_true(strlen(a) <= 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_plain_and_quoted),
        cmocka_unit_test(test_split_refuses_what_a_shell_would_do),
        cmocka_unit_test(test_quote_round_trips),
        cmocka_unit_test(test_word_with_controls_is_ansi_c_quoted),
        cmocka_unit_test(test_dns_label),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
