/* Packed copies of weights for the oneDNN road's forward products, made
 * once per owner's change of its weights and reused until the next.
 *
 * A forward product y = x Wᵀ reaches rs_gemm as B = W [N,K] read
 * transposed (tb = 1). oneDNN's sgemm, like OpenBLAS's, packs op(B) again
 * on every call, and gathers it across W's rows to do so; from Wᵀ [K,N],
 * dense, it copies along them. One thread of this machine's AVX-512 cores
 * computes a time step's products (64 rows) 1.1-2.6x faster from such a
 * copy, and one-row products 1.4-1.6x (gemm_road.h says which products
 * take it). The packed copy is that: P = Wᵀ [K,N], dense, the same floats
 * as W, so the product from P is the same y to float32 rounding, its sums
 * in the order of the kernel for the untransposed orientation; a product
 * by the same P gives the same bits every time.
 *
 * Copies are made only for weights their owners declare: an owner opens a
 * span of floats (its weights as they now are) and closes it before they
 * change, or frees it before the memory goes. While a span is open, a
 * product whose B lies in it takes the copy of that view of B (pointer,
 * rows, columns, stride), made on its first use after the opening; closed,
 * its products read W itself. So a copy is never older than the opening it
 * was made after, and never outlives its owner:
 *
 *   translation (accel/accel.c) opens a readied model's parameters for the
 *     life of its copies (rs_accel_new to rs_accel_free): once per loaded
 *     model.
 *
 * Training opens nothing: a step's parameters opened at its start and
 * closed at its end (each weight packed once per step, reused by every
 * time step and shard) measured 1.00x end to end on config S, the copies
 * costing what they saved (docs/performance.md), so its products read W.
 *
 * Thread-safe: the registry is behind one mutex; copies are made under it
 * and only read outside it. Open, close and free while no product by the
 * owner's weights runs (the owner's own contract: its weights do not change
 * while products read them). */
#ifndef RS_PACKED_H
#define RS_PACKED_H

#include <stddef.h>

#include "nn/linalg.h"

/* owner's weights are data[0..count) as they now are: products by a matrix
 * in them take packed copies, each made (again) on its first use after this
 * call. A second call by the same owner reopens (and may move) its span.
 * Without memory for the record, nothing is opened (products read W). */
void rs_packed_open(const void *owner, const float *data, size_t count);

/* owner's weights are about to change: products read them unpacked until
 * the next rs_packed_open; the copies' memory is kept for it. */
void rs_packed_close(const void *owner);

/* owner's weights are going: its span and copies are forgotten and freed. */
void rs_packed_free(const void *owner);

/* The packed copy P = Wᵀ [K,N] (dense, row stride N) of c's B = W [N,K]
 * (tb = 1, stride ldb) when B lies in an open span, made now if it has none
 * for this opening; else NULL. The copy stays valid while the span is open. */
const float *rs_packed_weight(const rs_gemm_call *c);

/* Copies made since the process started (for tests: a weight used twice
 * between openings is packed once). */
long rs_packed_made(void);

#endif
