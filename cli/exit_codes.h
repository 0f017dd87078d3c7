/* Exit codes of the cloudfit command. Documented in docs/exit-codes.md;
 * scripts and CI gates depend on them, so never renumber. */
#ifndef CLOUDFIT_CLI_EXIT_CODES_H
#define CLOUDFIT_CLI_EXIT_CODES_H

enum cf_exit_code {
    CF_EXIT_OK = 0,           /* success */
    CF_EXIT_FAILURE = 1,      /* an unexpected failure (I/O, database, network) */
    CF_EXIT_USAGE = 2,        /* bad command line: unknown option, missing argument */
    CF_EXIT_DATA = 3,         /* bad input: missing or malformed spec, CSV or JSON */
    CF_EXIT_INFEASIBLE = 4,   /* valid input, but no configuration meets the constraints */
    CF_EXIT_GATE = 5,         /* a CI gate (--max-cost, --max-hours, ...) failed; output was printed */
    CF_EXIT_UNAVAILABLE = 6,  /* a requested backend or device is not available on this build/machine */
    CF_EXIT_INTERNAL = 70     /* a bug in cloudfit (EX_SOFTWARE) */
};

#endif
