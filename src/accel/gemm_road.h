/* Which library computes rnnsearch's matrix products: the GEMM road.
 *
 *   openblas      OpenBLAS, with the kernels it picks for the processor (or
 *                 OPENBLAS_CORETYPE's): the reference road, nn/linalg.c's
 *                 own, the only one `make nn-check` needs;
 *   onednn        oneDNN's sgemm (its JIT kernels for the processor:
 *                 AVX-512, AVX2; DNNL_MAX_CPU_ISA limits them), in builds
 *                 that have it, with packed weights (packed.h) where its
 *                 kernels are AVX-512's;
 *   onednn-sgemm  the same without packed weights, for comparison.
 *
 * Each computes every product of docs/model.md to float32 rounding, in its
 * own order of sums: the bits of a result are a property of (code, road,
 * kernel), as docs/guarantees.md says, and one road run twice gives the
 * same bits. RNNSEARCH_GEMM=openblas|onednn|onednn-sgemm|auto chooses; auto
 * (the default) takes onednn where the build has it and the processor has
 * AVX2 or more, where it was measured faster on every shape of a training
 * step and a translation step (docs/performance.md), else OpenBLAS.
 * oneDNN's road computes every product, on as many OpenMP threads as
 * openblas_set_num_threads asks for (one for training's shards and serve's
 * workers; translate's --threads), products of fewer than 16 rows on one.
 *
 * Packed weights: a forward product y = x Wᵀ of at most 256 rows by a
 * weight its owner has opened (packed.h: a readied model's; training opens
 * none) reads the packed copy Wᵀ [K,N] untransposed instead of W
 * transposed, where oneDNN's kernels are AVX-512's. The rule rests on these
 * measurements (AMD EPYC, AVX-512; one thread; oneDNN 2.6's sgemm from the
 * copy against from W, interleaved rounds, best of 5; docs/performance.md):
 * 1.08-2.56x on the 64-row products of a training step of S, 1.14x at 128
 * rows (M's batch), 1.36-1.57x at one row (batch-1 decoding) but 0.96x on
 * one shape, within the noise; 1.01-1.06x at 320-1000 rows (a batch's
 * positions at once), where a copy made once per step costs 0.3-1 product,
 * so those read W. Limited to AVX2 (DNNL_MAX_CPU_ISA=AVX2) the same
 * comparison ranged 0.42-2.65x over two runs, not measured better, so AVX2's
 * kernels read W. oneDNN's matmul primitive with its weights reordered once
 * (brgemm, a blocked layout) was measured no faster than sgemm from the
 * copy (within 5 %, either way) and needs a primitive per row count; with a
 * runtime row count it is gemm:jit, sgemm from a dense Wᵀ: this copy. End
 * to end, training S with its parameters packed once per step was 1.00x
 * (the copies cost what they saved), so training packs nothing; greedy
 * decoding at batch 1 was 1.12x. The kernel's name says so:
 * "onednn-avx512_core-packed". */
#ifndef RS_GEMM_ROAD_H
#define RS_GEMM_ROAD_H

#include "common/error.h"

/* Installs the road `name` asks for (NULL: $RNNSEARCH_GEMM, or auto when it
 * is unset or empty) for every product that follows. Call before products
 * run. Fails, naming the choice, on an unknown name or a road this build or
 * processor cannot take; with NULL, also on an RNNSEARCH_KERNELS that names
 * no level of element-wise kernels (accel/kernels.h), read here because
 * every program chooses its road as it starts. */
int rs_gemm_road_choose(const char *name, rs_error *err);

/* "openblas", "onednn" or "onednn-sgemm": the road products take now. */
const char *rs_gemm_road_name(void);

/* The road and its kernel, as bits depend on them: OpenBLAS's core name
 * ("Haswell", "SkylakeX", ...) on its road, "onednn-" and the instruction set
 * oneDNN's kernels use ("onednn-avx2") on the other, and "-packed" when it
 * takes packed weights ("onednn-avx512_core-packed"). */
const char *rs_gemm_road_kernel(void);

/* For `rnnsearch bench`'s bound: with own set, oneDNN's road splits every
 * product asked of more than one thread over that many OpenMP threads, one
 * row or many (own 0, the default: fewer than 16 rows run on one). */
void rs_gemm_road_onednn_threads(int own);

/* Whether this build has the oneDNN road. */
int rs_gemm_road_has_onednn(void);

#endif
