/* The instructions of one decoder-step product, counted by callgrind (which
 * counts whatever the machine's load, unlike a clock): y [B,rows] = x [B,in]
 * Wᵀ, W [rows,in], once by the int8 product (rs_q8_forward, the weights
 * quantized beforehand, the input quantized inside, as translate --int8
 * does) and once by the float one (rs_matmul_forward: OpenBLAS's sgemv at
 * B = 1, sgemm above, as translate does). Only the products are counted:
 * callgrind instruments from CALLGRIND_START_INSTRUMENTATION to _STOP, after
 * one product outside them (OpenBLAS sets up its buffers on the first).
 *   int8-count q8|float ROWS IN B REPS
 * dev/int8-count.sh runs it under valgrind for the en-de shapes.
 * Instruction counts are a proxy for time: they weigh a maddubs like an add
 * and miss memory stalls (at B = 1 the output layer's weights come from L2
 * or memory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

#include "accel/int8.h"
#include "nn/linalg.h"

int main(int argc, char **argv)
{
    if (argc != 6 || (strcmp(argv[1], "q8") != 0 && strcmp(argv[1], "float") != 0)) {
        fprintf(stderr, "usage: int8-count q8|float ROWS IN B REPS\n");
        return 2;
    }
    const int q8 = !strcmp(argv[1], "q8"), rows = atoi(argv[2]), in = atoi(argv[3]),
              B = atoi(argv[4]), reps = atoi(argv[5]);
    if (rows < 1 || in < 1 || B < 1 || reps < 1) {
        fprintf(stderr, "int8-count: ROWS, IN, B and REPS must be positive\n");
        return 2;
    }
    float *W = malloc(sizeof(float) * (size_t)rows * in), *x = malloc(sizeof(float) * B * in);
    float *y = malloc(sizeof(float) * (size_t)B * rows), *scale = malloc(sizeof(float) * B);
    int8_t *sx = malloc((size_t)B * in);
    if (!W || !x || !y || !scale || !sx) {
        fprintf(stderr, "int8-count: out of memory\n");
        return 1;
    }
    unsigned state = 1;
    for (size_t i = 0; i < (size_t)rows * in; i++)
        W[i] = (float)((state = state * 1664525u + 1013904223u) >> 8) / (1 << 24) - 0.5f;
    for (size_t i = 0; i < (size_t)B * in; i++)
        x[i] = (float)((state = state * 1664525u + 1013904223u) >> 8) / (1 << 24) - 0.5f;
    rs_q8_matrix q;
    rs_error err;
    if (rs_q8_matrix_init(&q, RS_CMAT(W, rows, in), &err)) {
        fprintf(stderr, "int8-count: %s\n", err.msg);
        return 1;
    }
    const rs_q8_scratch s = {sx, scale, (size_t)B * in, B};
    for (int r = 0; r <= reps; r++) {
        if (r == 1)
            CALLGRIND_START_INSTRUMENTATION;
        if (q8)
            rs_q8_forward(RS_MAT(y, B, rows), RS_CMAT(x, B, in), &q, NULL, NULL, &s, 0.0f);
        else
            rs_matmul_forward(RS_MAT(y, B, rows), RS_CMAT(x, B, in), RS_CMAT(W, rows, in), 0.0f);
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    printf("%g\n", (double)y[0] + y[(size_t)B * rows - 1]);
    rs_q8_matrix_free(&q);
    free(W);
    free(x);
    free(y);
    free(scale);
    free(sx);
    return 0;
}
