/* Optimizer updates of the CPU engine against steps computed by hand:
 * w0 = (1, −2, 0.5), gradients g1 = (0.1, −0.2, 0.3) then g2 = (0.3, 0.1,
 * −0.2), lr = 0.1, PyTorch's defaults (momentum 0.9; β = 0.9, 0.999;
 * ε = 1e-8; decoupled decay 0.01). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "optim_cpu.h"

static void run_two_steps(cf_optimizer kind, const double after1[3], const double after2[3])
{
    float w[3] = {1.0f, -2.0f, 0.5f}, m[3] = {0}, v[3] = {0};
    const float g[2][3] = {{0.1f, -0.2f, 0.3f}, {0.3f, 0.1f, -0.2f}};
    cf_optim o;
    cf_optim_init(&o, kind, 0.1f);
    for (int t = 0; t < 2; t++) {
        o.t++;
        cf_optim_update(&o, w, g[t], m, v, 3);
        const double *want = t == 0 ? after1 : after2;
        for (int i = 0; i < 3; i++)
            if (fabs(w[i] - want[i]) > 2e-6)
                fail_msg("%s step %d, w[%d] = %.9f, expected %.9f", cf_optimizer_name(kind), t + 1, i, w[i],
                         want[i]);
    }
}

static void test_sgd(void **state)
{
    (void)state;
    /* w − 0.1·g1, then − 0.1·g2. */
    const double a1[3] = {0.99, -1.98, 0.47}, a2[3] = {0.96, -1.99, 0.49};
    run_two_steps(CF_OPT_SGD, a1, a2);
    assert_int_equal(cf_optim_state_per_param(CF_OPT_SGD), 0);
}

static void test_momentum(void **state)
{
    (void)state;
    /* Buffer g1 then 0.9·g1 + g2 = (0.39, −0.08, 0.07). */
    const double a1[3] = {0.99, -1.98, 0.47}, a2[3] = {0.951, -1.972, 0.463};
    run_two_steps(CF_OPT_MOMENTUM, a1, a2);
}

static void test_adam(void **state)
{
    (void)state;
    /* Step 1: m̂ = g, v̂ = g², so w −= 0.1·sign(g) (less ε). Step 2, first
     * coordinate: m = 0.039, m̂ = 0.039/0.19 = 0.205263; v = 9.999e-5,
     * v̂ = 9.999e-5/0.001999 = 0.050020; w = 0.9 − 0.1·0.205263/0.223652. */
    const double a1[3] = {0.900000010, -1.900000005, 0.400000003};
    const double a2[3] = {0.808221902, -1.873366303, 0.385547951};
    run_two_steps(CF_OPT_ADAM, a1, a2);
}

static void test_adamw(void **state)
{
    (void)state;
    /* Decay first: w·(1 − 0.1·0.01), then the Adam step above. */
    const double a1[3] = {0.899000010, -1.898000005, 0.399500003};
    const double a2[3] = {0.806322902, -1.869468303, 0.384648451};
    run_two_steps(CF_OPT_ADAMW, a1, a2);
}

static void test_lamb(void **state)
{
    (void)state;
    /* Step 1: r = sign(g) + 0.01·w = (1.01, −1.02, 1.005); trust =
     * |w|/|r| = 2.291288/1.752355 = 1.307547; w −= 0.1·trust·r. */
    const double a1[3] = {0.867932885, -1.866625283, 0.368586674};
    const double a2[3] = {0.670345250, -1.805842197, 0.336978469};
    run_two_steps(CF_OPT_LAMB, a1, a2);
}

static void test_lamb_zero_weights_trust_one(void **state)
{
    (void)state;
    float w[2] = {0, 0}, m[2] = {0}, v[2] = {0};
    const float g[2] = {0.5f, -0.25f};
    cf_optim o;
    cf_optim_init(&o, CF_OPT_LAMB, 0.1f);
    o.t = 1;
    cf_optim_update(&o, w, g, m, v, 2);
    /* |w| = 0: trust ratio 1, the step is lr·sign(g). */
    assert_true(fabs(w[0] + 0.1) < 1e-6 && fabs(w[1] - 0.1) < 1e-6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sgd),   cmocka_unit_test(test_momentum),
        cmocka_unit_test(test_adam),  cmocka_unit_test(test_adamw),
        cmocka_unit_test(test_lamb),  cmocka_unit_test(test_lamb_zero_weights_trust_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
