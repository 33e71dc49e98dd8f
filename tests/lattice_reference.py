"""Independent mpmath references for the lattice sampler's cdfs (not used by the package).

The tails ``T(a) = P(Z > a)``, ``a >= 0``, of the five standard noise families,
written from the densities' closed forms (Hladik-Tetek Definition 6 and the
proof of Lemma 7; Claims 16-18) with mpmath's own special functions, and the
Laplace-log-normal cdf by quadrature of its mixture.  tests/core/test_lattice.py
checks these against quadrature of the densities; the sampler uses Arb
(python-flint), so agreement is a check between two independent codes.
"""

import mpmath


def tail_laplace(ctx, a, shape=None):
    return ctx.exp(-a) / 2


def tail_polyplace(ctx, a, alpha):
    al = ctx.mpf(alpha)
    K = 2 * ctx.exp(al * ctx.log1p(-1 / al)) + al - 1
    if a * al < 1:
        return ctx.mpf(0.5) + (al - 1) * ctx.expm1(al * ctx.log1p(-a)) / (2 * K)
    return (al + 1) * ctx.exp(al * ctx.log1p(-1 / al**2) - al * ctx.log1p(a)) / (2 * K)


def tail_student_t(ctx, a, d):
    dm = ctx.mpf(d)
    w = dm / (dm + a * a)
    return ctx.betainc(dm / 2, ctx.mpf(0.5), 0, w, regularized=True) / 2


def tail_cauchy(ctx, a, c):
    c = ctx.mpf(c)
    if a == 0:
        return ctx.mpf(0.5)
    if a >= 1:
        return ctx.betainc(1 - 1 / c, 1 / c, 0, 1 / (1 + ctx.power(a, c)), regularized=True) / 2
    ac = ctx.power(a, c)  # below 1: the complement, so that w = 1 - tiny is not rounded to 1
    return (1 - ctx.betainc(1 / c, 1 - 1 / c, 0, ac / (1 + ac), regularized=True)) / 2


TAILS = {
    "laplace": tail_laplace,
    "polyplace": tail_polyplace,
    "student_t": tail_student_t,
    "cauchy": tail_cauchy,
    "laplace_log_normal": tail_laplace,
}


def cdf(ctx, family, shape):
    """F(a) = P(Z <= a) in the context's precision; Laplace-log-normal by quadrature over Y
    on |Y| <= 12 (the rest has mass below 4e-33)."""
    tail = TAILS[family]
    if family == "laplace_log_normal":
        s = ctx.mpf(shape)

        def lap(b):
            return tail(ctx, -b) if b < 0 else 1 - tail(ctx, b)

        return lambda a: ctx.quad(lambda y: ctx.npdf(y) * lap(a * ctx.exp(-s * y)), ctx.linspace(-12, 12, 13))
    return lambda a: tail(ctx, -a, shape) if a < 0 else 1 - tail(ctx, a, shape)


def context(prec):
    ctx = mpmath.MPContext()
    ctx.prec = prec
    return ctx
