/* Which library computes rnnsearch's matrix products: the GEMM road.
 *
 *   openblas  OpenBLAS, with the kernels it picks for the processor (or
 *             OPENBLAS_CORETYPE's): the reference road, nn/linalg.c's own,
 *             the only one `make nn-check` needs;
 *   onednn    oneDNN's sgemm (its JIT kernels for the processor: AVX-512,
 *             AVX2; DNNL_MAX_CPU_ISA limits them), in builds that have it.
 *
 * Both compute every product of docs/model.md to float32 rounding, each in
 * its own order of sums: the bits of a result are a property of (code,
 * road, kernel), as docs/guarantees.md says, and one road run twice gives
 * the same bits. RNNSEARCH_GEMM=openblas|onednn|auto chooses; auto (the
 * default) takes oneDNN where the build has it and the processor has AVX2
 * or more, where it was measured faster on every shape of a training step
 * and a translation step (docs/performance.md), else OpenBLAS. oneDNN's
 * road computes the products asked of one thread (openblas_set_num_threads:
 * training's shards, serve's workers, --threads 1) and hands those asked of
 * more to OpenBLAS. */
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

/* "openblas" or "onednn": the road products take now. */
const char *rs_gemm_road_name(void);

/* The road and its kernel, as bits depend on them: OpenBLAS's core name
 * ("Haswell", "SkylakeX", ...) on its road, "onednn-" and the instruction set
 * oneDNN's kernels use ("onednn-avx512_core") on the other. */
const char *rs_gemm_road_kernel(void);

/* Whether this build has the oneDNN road. */
int rs_gemm_road_has_onednn(void);

#endif
