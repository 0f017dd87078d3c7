/* CI detection from the usual environment variables (docs/ci.md):
 * GitHub Actions, GitLab CI, Jenkins, Buildkite, CircleCI, then any CI
 * that sets CI=true. CLOUDFIT_CI_{COMMIT,BRANCH,BASE_BRANCH,PULL_REQUEST,
 * RUN_ID,RUN_URL} override what was detected (and mark a run as CI). */
#ifndef CLOUDFIT_COMMON_CI_ENV_H
#define CLOUDFIT_COMMON_CI_ENV_H

/* CI metadata of the run that made a recommendation (detected from the
 * environment, common/ci_env.c, docs/ci.md). "" = unknown / not in CI. */
typedef struct {
    char provider[32];         /* github-actions | gitlab-ci | jenkins | buildkite | circleci | ci | "" */
    char commit[72];           /* SHA-1 (40 hex) or SHA-256 (64 hex) object names */
    char branch[256];
    char base_branch[256];     /* target branch of a pull/merge request, else the default branch if known */
    char pull_request[32];
    char run_id[64];
    char run_url[512];
} cf_ci_info;

/* Looks a variable up; NULL when unset. getenv in production. */
typedef const char *(*cf_env_lookup)(const char *name);

/* Fills *out (all "" first); returns 1 when running in CI, else 0. */
int cf_ci_detect(cf_env_lookup lookup, cf_ci_info *out);

#endif
