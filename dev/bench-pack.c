/* What OpenBLAS's packing costs a decoder step: the step's seven products
 * (config S: the output layer [5913,128], U [768,256], W'_c [768,512],
 * W'_e [768,128], W_a [256,256], C_o [256,512], U_o/V_o [256,128]) as
 * y = x Wᵀ, with W read transposed (what rs_matmul_forward asks sgemm for)
 * and from its transposed copy W_t (rs_matmul_forward_t), at batch sizes 64
 * down to 2 (a batch shrinks as its sentences finish). Rounds alternate the
 * two forms; the first round is a warm-up. Prints microseconds per step and
 * checks that both forms give the same bits.
 *   make build/bench-pack && OPENBLAS_NUM_THREADS=1 build/bench-pack */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static const int shapes[][2] = {{5913, 128}, {768, 256}, {768, 512}, {768, 128},
                                {256, 256},  {256, 512}, {256, 128}};
enum { SHAPES = sizeof shapes / sizeof shapes[0], ROUNDS = 6, STEPS = 30, MAX_IN = 512 };
static const int batches[] = {64, 32, 16, 8, 2};
enum { BATCHES = sizeof batches / sizeof batches[0] };

int main(void)
{
    float *x = malloc(sizeof(float) * 64 * MAX_IN), *W[SHAPES], *W_t[SHAPES];
    float *y = malloc(sizeof(float) * 64 * 5913), *y_t = malloc(sizeof(float) * 64 * 5913);
    unsigned state = 1;
    for (int i = 0; i < 64 * MAX_IN; i++)
        x[i] = (float)((state = state * 1664525u + 1013904223u) >> 9) / 8388608.0f - 1.0f;
    for (int s = 0; s < SHAPES; s++) {
        const int out = shapes[s][0], in = shapes[s][1];
        W[s] = malloc(sizeof(float) * out * in);
        W_t[s] = malloc(sizeof(float) * out * in);
        for (int i = 0; i < out * in; i++)
            W[s][i] = (float)((state = state * 1664525u + 1013904223u) >> 9) / 8388608.0f - 1.0f;
        for (int r = 0; r < out; r++)
            for (int c = 0; c < in; c++)
                W_t[s][c * out + r] = W[s][r * in + c];
    }
    double seconds[BATCHES][2] = {{0}};
    int same = 1;
    for (int round = 0; round < ROUNDS; round++)
        for (int b = 0; b < BATCHES; b++)
            for (int form = 0; form < 2; form++) {
                const int B = batches[b];
                const double t0 = now();
                for (int step = 0; step < STEPS; step++)
                    for (int s = 0; s < SHAPES; s++) {
                        const int out = shapes[s][0], in = shapes[s][1];
                        if (form == 0)
                            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, out, in, 1.0f,
                                        x, in, W[s], in, 0.0f, y, out);
                        else
                            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, out, in, 1.0f,
                                        x, in, W_t[s], out, 0.0f, y_t, out);
                    }
                if (round > 0)
                    seconds[b][form] += now() - t0;
                if (form == 1)
                    same &= !memcmp(y, y_t, sizeof(float) * B * shapes[SHAPES - 1][0]);
            }
    printf("rows  W transposed  W_t copy  ratio   (microseconds per step, %d rounds of %d steps)\n",
           ROUNDS - 1, STEPS);
    for (int b = 0; b < BATCHES; b++)
        printf("%4d  %12.0f  %8.0f  %5.2f\n", batches[b],
               1e6 * seconds[b][0] / ((ROUNDS - 1) * STEPS),
               1e6 * seconds[b][1] / ((ROUNDS - 1) * STEPS), seconds[b][0] / seconds[b][1]);
    printf("the last product's output: %s bits\n", same ? "the same" : "DIFFERENT");
    return !same;
}
