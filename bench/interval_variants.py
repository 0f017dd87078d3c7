#!/usr/bin/python3
"""Issue 25: the interval families tried for rows beyond the probe (docs/model.md "Intervals").

For each family, the coverage of the 80 % interval on T4 protocols a, b, c and on protocol a's rows at
3-4 nodes, under the constants chosen on DGX (the lab rule, the revised prior) and under T4's own:
  previous      u_shape 0.55 (NCCL's five points and T4's 2->4 fall), u_shape_lo 0.30 (chosen on T4)
  nccl-only     the same family with T4 left out: u_shape 0.57, u_shape_lo 0 (NCCL's five points)
  conformal     the previous family's interval with its +-1.2816 replaced by the 10th/90th percentiles
                of the other cluster's sigma-normalised log residuals (split conformal; DGX protocol a)
  shipped       the growth exponent's range [a_min, a_max] = [0, 2] (the defaults), carried through the
                overlap hinge; u_shape for GPUs per VM only (the families above now score under that too)
  lo sweep      the previous family with u_shape_lo 0.5, 0.7, 1 for the lab rule: looked at, not used
                (choosing u_shape_lo there would be fitting to T4)
Reads ../shared/data (or CLOUDFIT_SHARED_DATA). Usage: bench/interval_variants.py [BUILD_DIR]; ~1 minute."""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, '..', 'build')
binary = os.path.join(build, 'cli', 'cloudfit')
data = os.environ.get('CLOUDFIT_SHARED_DATA', os.path.join(here, '..', '..', 'shared', 'data'))
T4 = os.path.join(data, 'groundtruth', 'pollux_aws_t4', 'throughput.csv')
DGX = os.path.join(data, 'groundtruth', 'sia_dgx_a100', 'throughput.csv')
Z80 = 1.2815515655446004
# bench/accuracy.sh's DGX-chosen sets without the interval's network constants
SETS = {
    'lab rule': 'a=1,c=0,L=0,psi=0.2,rho_def=0.5,kappa_pcie=0.01,kappa_nvlink=0.01,kT=1.25,s0=0.03,u0=0,u_ext=0,'
                'u_def=0.55,u_ing=0.1',
    'revised prior': 'a=0.5,c=0,L=0,psi=0.2,rho_def=0.25,kappa_pcie=0.01,kappa_nvlink=0.01,kT=1.25,s0=0.03,u0=0,'
                     'u_ext=0,u_def=0.55,u_ing=0.1',
    "T4's (shipped)": '',
}
A_OF = {'lab rule': 1.0, 'revised prior': 0.5, "T4's (shipped)": 0.5}
PROTOCOLS = {'a': ['--with-2node-probe'], 'b': ['--train-max-nodes', '2'], 'c': []}


def family(name, a, lo=None):
    no_range = 'a_min=%g,a_max=%g' % (a, a)  # a range of one point: no growth term
    return {'previous': 'u_shape=0.55,u_shape_lo=%g,%s' % (0.3 if lo is None else lo, no_range),
            'nccl-only': 'u_shape=0.57,u_shape_lo=0,' + no_range,
            'shipped': 'u_shape=0.57,u_shape_lo=0,a_min=0,a_max=2'}[name]


def rows(path, options, constants):
    with tempfile.NamedTemporaryFile(suffix='.csv', delete=False) as f:
        out = f.name
    args = [binary, 'validate', '-q', '-f', 'json', '--rows', out, *options]
    if constants:
        args += ['--model-constants', constants]
    subprocess.run(args + [path], check=True, capture_output=True)
    with open(out) as f:
        result = []
        for r in csv.DictReader(f):
            pred, lo, hi = float(r['predicted_s']), float(r['p10_s']), float(r['p90_s'])
            result.append((int(r['num_nodes']), math.log(float(r['step_time_s']) / pred),
                           math.log(pred / lo) / Z80, math.log(hi / pred) / Z80))
    os.unlink(out)
    return result


def normalised(r):
    _, lr, s_lo, s_up = r
    return lr / s_lo if lr < 0 else lr / s_up


def coverage(rs, q_lo=-Z80, q_hi=Z80, nodes=None):
    sel = [r for r in rs if nodes is None or r[0] in nodes]
    return 100.0 * sum(q_lo <= normalised(r) <= q_hi for r in sel) / len(sel)


def quantile(xs, q):
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    i = int(k)
    return xs[i] + (xs[min(i + 1, len(xs) - 1)] - xs[i]) * (k - i)


def line(label, cols):
    print('  %-44s %s' % (label, '   '.join(cols)))


def main():
    if not (os.path.exists(T4) and os.path.exists(DGX)):
        print('interval_variants: shared data not found at %s; nothing to score' % data)
        return
    print('T4 coverage of the 80 % interval, a / b / c / 3-4 nodes (protocol a), per constant set')
    line('family', ['%-25s' % s for s in SETS])
    dgx_cal = {}
    for fam in ('previous', 'nccl-only', 'conformal', 'shipped'):
        cols = []
        for name, consts in SETS.items():
            a = A_OF[name]
            interval = family('previous' if fam == 'conformal' else fam, a)
            constants = ','.join(x for x in (consts, interval) if x)
            q_lo, q_hi = -Z80, Z80
            if fam == 'conformal':  # the other cluster's residual quantiles
                if name == "T4's (shipped)":
                    cols.append('%-25s' % '(T4 -> DGX below)')
                    continue
                key = constants
                if key not in dgx_cal:
                    z = [normalised(r) for r in rows(DGX, ['--with-2node-probe', '--inter-node-gbps', '1600'], constants)]
                    dgx_cal[key] = (quantile(z, 0.1), quantile(z, 0.9))
                q_lo, q_hi = dgx_cal[key]
            per = {p: rows(T4, opts, constants) for p, opts in PROTOCOLS.items()}
            cols.append('%-25s' % ' / '.join('%.1f' % v for v in (
                coverage(per['a'], q_lo, q_hi), coverage(per['b'], q_lo, q_hi), coverage(per['c'], q_lo, q_hi),
                coverage(per['a'], q_lo, q_hi, nodes=(3, 4)))))
        line(fam, cols)
    for lo in (0.5, 0.7, 1.0):
        consts = SETS['lab rule'] + ',' + family('previous', 1.0, lo)
        per = {p: rows(T4, opts, consts) for p, opts in PROTOCOLS.items()}
        line('lab rule, previous, u_shape_lo %g (not used)' % lo,
             ['%.1f / %.1f / %.1f / %.1f' % (coverage(per['a']), coverage(per['b']), coverage(per['c']),
                                            coverage(per['a'], nodes=(3, 4)))])
    # split conformal the other way: T4's quantiles (shipped constants, previous family) on DGX
    prev = family('previous', 0.5)
    z = [normalised(r) for r in rows(T4, ['--with-2node-probe'], prev)]
    q_lo, q_hi = quantile(z, 0.1), quantile(z, 0.9)
    dgx = {p: rows(DGX, opts + ['--inter-node-gbps', '1600'], prev) for p, opts in (('a', PROTOCOLS['a']), ('c', []))}
    print('DGX with T4\'s constants, conformal (T4 a quantiles %.2f, %.2f): a %.1f, c %.1f; parametric a %.1f, c %.1f'
          % (q_lo, q_hi, coverage(dgx['a'], q_lo, q_hi), coverage(dgx['c'], q_lo, q_hi), coverage(dgx['a']),
             coverage(dgx['c'])))
    print('DGX quantiles used for T4 (DGX protocol a, each set\'s constants): %s' % json.dumps(
        {k[:12] + '…': [round(v, 3) for v in q] for k, q in dgx_cal.items()}, ensure_ascii=False))


if __name__ == '__main__':
    main()
