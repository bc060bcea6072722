/* Two roads to the same numbers: the suite's one rule about bits
 * (docs/guarantees.md, "Bits and rounding").
 *
 * Bits are compared only for one road run twice: the same calls on the same
 * inputs (determinism, an exact resume, fixed seeds, MPI with the same
 * shapes, the per-kernel same-bits fixtures). Two roads that are equal in
 * exact arithmetic (W against its transposed copy, a batch against its
 * sentences one at a time, sgemv against sgemm) add their terms in orders
 * that the BLAS kernel chooses, so they agree only to float32 rounding, and
 * which of them happen to agree bit for bit changes from kernel to kernel.
 * They are compared here, within bounds that rounding explains:
 *
 * - one product y = x·Wᵀ + β·y of inner length K: each road is within
 *   γ_K Σ_k |x_k w_k| of the exact value (γ_K = K u / (1 − K u), u = 2⁻²⁴,
 *   the standard bound of a float32 dot product in any order), so the two
 *   differ by at most 2 γ_K Σ_k |x_k w_k| plus the ulps of β·y;
 * - anything computed through several products (a decoder step's state,
 *   logits and alignment, a loss): ROADS_REL of the larger magnitude in the
 *   compared vector. The roads' differences measured on every kernel family
 *   and five blas-variant seeds stay below 1e-6 of it (6.4e-7 at most); a real fault (a
 *   wrong index, a lost term, a weight off by 1e-4) is 1e-4 or more.
 *
 * Each helper fails the current Check test, naming `what` and the worst entry;
 * with RNNSEARCH_ROADS_REPORT set, it prints how close each comparison came. */
#ifndef RS_TEST_ROADS_H
#define RS_TEST_ROADS_H

#include <stddef.h>

#define ROADS_REL 2e-5

/* y0 and y1 [rows, out] are x [rows, K] times Wᵀ (W [out, K] with row stride
 * w_stride) by two roads, beta 0 or 1 over the same y_before (NULL when
 * beta is 0): each entry within the product bound above. */
void roads_expect_product(const char *what, const float *y0, const float *y1, const float *x,
                          const float *W, int w_stride, const float *y_before, int rows, int out,
                          int K);

/* a and b [count]: |a_i − b_i| ≤ ROADS_REL · max_j max(|a_j|, |b_j|) for every i. */
void roads_expect_close(const char *what, const float *a, const float *b, size_t count);

/* Two values (a loss, a log-probability) within ROADS_REL of the larger. */
void roads_expect_close_value(const char *what, double a, double b);

#endif
