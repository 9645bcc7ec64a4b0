/*
 * chisq: Pearson's chi-square test of random draws against the uniform
 * distribution, for the tests of HRANDFIELD, SRANDMEMBER, RANDOMKEY,
 * eviction and the table primitives under them.
 *
 * - chisq_draws: counts[k] of n independent draws, each of k outcomes
 *   equally likely: the statistic, chi-square with k - 1 degrees of freedom.
 * - chisq_subsets: counts[k] of how often each of k members was in a round's
 *   sample, over `rounds` samples of m distinct members each (a uniform
 *   m-subset every round): each member is in a round with p = m/k, the
 *   indicators of one round are negatively correlated (they sum to m), and
 *   (k-1)/k * sum (O-E)^2 / (E(1-p)) is chi-square with k - 1 degrees of
 *   freedom (Pearson's statistic for the multivariate hypergeometric).
 * - chisq_fair: the p-value (the distribution's upper tail, the regularized
 *   incomplete gamma Q(df/2, x/2)) is at least CHISQ_ALPHA.  A fair draw
 *   fails one check with probability 1e-8, so a test program of fewer than
 *   100 checks fails falsely less than once in a million runs; a draw biased
 *   by a few percent over thousands of samples per outcome has a p-value far
 *   under it.
 *
 * The sample sizes keep every expected count at 50 or more, where the
 * chi-square approximation of the statistic is good to well within these
 * margins.  Header-only: the unit tests and the integration tests share it.
 */
#ifndef PERCORE_TEST_CHISQ_H
#define PERCORE_TEST_CHISQ_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#define CHISQ_ALPHA 1e-8

/* Q(a, x) = Gamma(a, x) / Gamma(a): a series below a + 1, a continued fraction above */
static inline double chisq_gamma_q(double a, double x)
{
    if (x <= 0)
        return 1.0;
    double lead = exp(-x + a * log(x) - lgamma(a));
    if (x < a + 1) {
        double term = 1.0 / a, sum = term;
        for (int n = 1; n < 100000 && fabs(term) > fabs(sum) * 1e-15; n++) {
            term *= x / (a + n);
            sum += term;
        }
        return 1.0 - sum * lead;
    }
    /* Lentz's method for the continued fraction of Gamma(a, x) */
    const double tiny = 1e-300;
    double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
    for (int i = 1; i < 100000; i++) {
        double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < tiny)
            d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1 / d;
        double delta = d * c;
        h *= delta;
        if (fabs(delta - 1) < 1e-15)
            break;
    }
    return lead * h;
}

/* the upper tail of the chi-square distribution with df degrees of freedom at x */
static inline double chisq_pvalue(double x, int df)
{
    return chisq_gamma_q(df / 2.0, x / 2.0);
}

/* the statistic of k outcome counts from independent uniform draws */
static inline double chisq_draws(const long *counts, int k)
{
    double n = 0, x = 0;
    for (int i = 0; i < k; i++)
        n += (double)counts[i];
    double e = n / k;
    for (int i = 0; i < k; i++)
        x += ((double)counts[i] - e) * ((double)counts[i] - e) / e;
    return x;
}

/* the statistic of k members' inclusion counts over `rounds` uniform m-subsets */
static inline double chisq_subsets(const long *counts, int k, long rounds, int m)
{
    double p = (double)m / k, e = (double)rounds * p, x = 0;
    for (int i = 0; i < k; i++)
        x += ((double)counts[i] - e) * ((double)counts[i] - e) / (e * (1 - p));
    return x * (k - 1) / k;
}

/* true when statistic x (k - 1 degrees of freedom) is what a fair draw gives; says so when not */
static inline bool chisq_fair(const char *what, double x, int k)
{
    double p = chisq_pvalue(x, k - 1);
    if (p >= CHISQ_ALPHA)
        return true;
    fprintf(stderr, "%s: chi-square %.1f with %d degrees of freedom, p = %.3g < %g: not uniform\n",
            what, x, k - 1, p, CHISQ_ALPHA);
    return false;
}

#endif
