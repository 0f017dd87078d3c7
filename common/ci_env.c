#include "cloudfit/common/ci_env.h"

#include "cloudfit/common/buf.h"
#include "cloudfit/common/escape.h"

#include <stdio.h>
#include <string.h>

/* The first of `names` that is set and non-empty, else NULL. */
static const char *first(cf_env_lookup get, const char *const *names)
{
    for (; *names; names++) {
        const char *v = get(*names);
        if (v && *v)
            return v;
    }
    return NULL;
}

#define FIRST(...) first(get, (const char *const[]){__VA_ARGS__, NULL})

/* value into out[n] as text (cf_text_fit: escaped when not UTF-8, cut at
 * a character boundary: a branch cut at byte 255 inside 'é' made
 * PostgreSQL refuse the row). */
static void put(char *out, size_t n, const char *value)
{
    if (value)
        cf_text_fit(value, n - 1, out, n);
}

static int truthy(const char *v)
{
    return v && *v && strcmp(v, "false") != 0 && strcmp(v, "0") != 0;
}

/* "refs/pull/42/merge" → "42": digits, as written, up to the next '/'
 * (sscanf's %lu took "refs/pull/-1/" for 18446744073709551615, " 7" and
 * "7abc" for 7: a run stored as a pull request that does not exist, and
 * so never a branch's baseline); anything else is no pull request. */
static void github_pr(const char *ref, char *out, size_t n)
{
    static const char prefix[] = "refs/pull/";
    if (!ref || strncmp(ref, prefix, sizeof prefix - 1) != 0)
        return;
    const char *digits = ref + sizeof prefix - 1;
    size_t len = strspn(digits, "0123456789");
    if (len == 0 || len >= n || digits[len] != '/')
        return;
    memcpy(out, digits, len);
    out[len] = '\0';
}

static void github(cf_env_lookup get, cf_ci_info *ci)
{
    put(ci->provider, sizeof ci->provider, "github-actions");
    put(ci->commit, sizeof ci->commit, FIRST("GITHUB_SHA"));
    put(ci->branch, sizeof ci->branch, FIRST("GITHUB_HEAD_REF", "GITHUB_REF_NAME"));
    put(ci->base_branch, sizeof ci->base_branch, FIRST("GITHUB_BASE_REF"));
    github_pr(get("GITHUB_REF"), ci->pull_request, sizeof ci->pull_request);
    put(ci->run_id, sizeof ci->run_id, FIRST("GITHUB_RUN_ID"));
    /* the URL is made of CI variables too: escaped and cut like each of
     * them (put), so a line end in GITHUB_SERVER_URL cannot forge a line of
     * `history show`, nor a byte that is not UTF-8 make PostgreSQL refuse
     * the row */
    const char *server = FIRST("GITHUB_SERVER_URL"), *repo = FIRST("GITHUB_REPOSITORY"), *run = FIRST("GITHUB_RUN_ID");
    if (server && repo && run) {
        cf_buf url = CF_BUF_INIT;
        cf_buf_printf(&url, "%s/%s/actions/runs/%s", server, repo, run);
        if (!cf_buf_failed(&url))
            put(ci->run_url, sizeof ci->run_url, cf_buf_cstr(&url));
        cf_buf_free(&url);
    }
}

static void gitlab(cf_env_lookup get, cf_ci_info *ci)
{
    put(ci->provider, sizeof ci->provider, "gitlab-ci");
    put(ci->commit, sizeof ci->commit, FIRST("CI_COMMIT_SHA"));
    put(ci->branch, sizeof ci->branch,
        FIRST("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "CI_COMMIT_BRANCH", "CI_COMMIT_REF_NAME"));
    put(ci->base_branch, sizeof ci->base_branch, FIRST("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "CI_DEFAULT_BRANCH"));
    put(ci->pull_request, sizeof ci->pull_request, FIRST("CI_MERGE_REQUEST_IID"));
    put(ci->run_id, sizeof ci->run_id, FIRST("CI_PIPELINE_ID"));
    put(ci->run_url, sizeof ci->run_url, FIRST("CI_PIPELINE_URL"));
}

static void jenkins(cf_env_lookup get, cf_ci_info *ci)
{
    put(ci->provider, sizeof ci->provider, "jenkins");
    put(ci->commit, sizeof ci->commit, FIRST("GIT_COMMIT"));
    put(ci->branch, sizeof ci->branch, FIRST("CHANGE_BRANCH", "BRANCH_NAME", "GIT_BRANCH"));
    /* A freestyle job's GIT_BRANCH names the remote's ref, origin/main: the
     * branch is main (a baseline on --base-branch main was never found) */
    if (!FIRST("CHANGE_BRANCH", "BRANCH_NAME") && strncmp(ci->branch, "origin/", 7) == 0)
        memmove(ci->branch, ci->branch + 7, strlen(ci->branch + 7) + 1);
    put(ci->base_branch, sizeof ci->base_branch, FIRST("CHANGE_TARGET"));
    put(ci->pull_request, sizeof ci->pull_request, FIRST("CHANGE_ID"));
    put(ci->run_id, sizeof ci->run_id, FIRST("BUILD_NUMBER", "BUILD_ID"));
    put(ci->run_url, sizeof ci->run_url, FIRST("BUILD_URL"));
}

static void buildkite(cf_env_lookup get, cf_ci_info *ci)
{
    put(ci->provider, sizeof ci->provider, "buildkite");
    put(ci->commit, sizeof ci->commit, FIRST("BUILDKITE_COMMIT"));
    put(ci->branch, sizeof ci->branch, FIRST("BUILDKITE_BRANCH"));
    const char *pr = FIRST("BUILDKITE_PULL_REQUEST");
    if (truthy(pr)) {
        put(ci->pull_request, sizeof ci->pull_request, pr);
        put(ci->base_branch, sizeof ci->base_branch, FIRST("BUILDKITE_PULL_REQUEST_BASE_BRANCH"));
    }
    if (!ci->base_branch[0])
        put(ci->base_branch, sizeof ci->base_branch, FIRST("BUILDKITE_PIPELINE_DEFAULT_BRANCH"));
    put(ci->run_id, sizeof ci->run_id, FIRST("BUILDKITE_BUILD_NUMBER", "BUILDKITE_BUILD_ID"));
    put(ci->run_url, sizeof ci->run_url, FIRST("BUILDKITE_BUILD_URL"));
}

static void circleci(cf_env_lookup get, cf_ci_info *ci)
{
    put(ci->provider, sizeof ci->provider, "circleci");
    put(ci->commit, sizeof ci->commit, FIRST("CIRCLE_SHA1"));
    put(ci->branch, sizeof ci->branch, FIRST("CIRCLE_BRANCH"));
    /* CircleCI builds branches: CIRCLE_PULL_REQUEST names a pull request
     * open from the branch, set on the branch's own push builds too (a
     * base branch with one open was never its own baseline); only a fork's
     * build is a pull request's run, CIRCLE_PR_NUMBER */
    put(ci->pull_request, sizeof ci->pull_request, FIRST("CIRCLE_PR_NUMBER"));
    put(ci->run_id, sizeof ci->run_id, FIRST("CIRCLE_BUILD_NUM", "CIRCLE_WORKFLOW_ID"));
    put(ci->run_url, sizeof ci->run_url, FIRST("CIRCLE_BUILD_URL"));
}

int cf_ci_detect(cf_env_lookup get, cf_ci_info *ci)
{
    memset(ci, 0, sizeof *ci);
    if (truthy(get("GITHUB_ACTIONS")))
        github(get, ci);
    else if (truthy(get("GITLAB_CI")))
        gitlab(get, ci);
    else if (FIRST("JENKINS_URL", "JENKINS_HOME"))
        jenkins(get, ci);
    else if (truthy(get("BUILDKITE")))
        buildkite(get, ci);
    else if (truthy(get("CIRCLECI")))
        circleci(get, ci);
    else if (truthy(get("CI")))
        put(ci->provider, sizeof ci->provider, "ci");
    /* Explicit values win over detection, for any CI (or a local script). */
    struct {
        const char *name;
        char *field;
        size_t size;
    } overrides[] = {
        {"CLOUDFIT_CI_COMMIT", ci->commit, sizeof ci->commit},
        {"CLOUDFIT_CI_BRANCH", ci->branch, sizeof ci->branch},
        {"CLOUDFIT_CI_BASE_BRANCH", ci->base_branch, sizeof ci->base_branch},
        {"CLOUDFIT_CI_PULL_REQUEST", ci->pull_request, sizeof ci->pull_request},
        {"CLOUDFIT_CI_RUN_ID", ci->run_id, sizeof ci->run_id},
        {"CLOUDFIT_CI_RUN_URL", ci->run_url, sizeof ci->run_url},
    };
    for (size_t i = 0; i < sizeof overrides / sizeof *overrides; i++) {
        const char *v = get(overrides[i].name);
        if (v && *v) {
            put(overrides[i].field, overrides[i].size, v);
            if (!ci->provider[0])
                put(ci->provider, sizeof ci->provider, "ci");
        }
    }
    return ci->provider[0] != '\0';
}
