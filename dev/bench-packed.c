/* Packed weights on and off (accel/packed.h) in one process: rounds of
 * rnnsearch bench's training measurement of config S on one thread,
 * alternating the oneDNN road with packed weights (RNNSEARCH_GEMM=onednn)
 * and without (onednn-sgemm), so that a loaded machine weighs on both
 * alike. Each measurement is timed by the process's CPU clock as well as
 * the wall clock: on a machine shared with other jobs the wall clock also
 * counts the time waited for a core (rounds of the same road differed by
 * up to 1.5x), the CPU clock mostly what the process computed. Prints each
 * round's rates and their ratios (packed / unpacked), then the medians.
 *   make build/bench-packed && build/bench-packed DATA_DIR [ROUNDS [STEPS]]
 * (DATA_DIR: Multi30k, as bench's --data). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "accel/gemm_road.h"
#include "train/bench.h"

enum { WORKS = 2, MAX_ROUNDS = 15 };
static const char *const works[WORKS] = {"train, wall clock", "train, CPU clock"};

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench-packed DATA_DIR [ROUNDS [STEPS]]\n");
        return 2;
    }
    const int rounds = argc > 2 ? atoi(argv[2]) : 3, steps = argc > 3 ? atoi(argv[3]) : 8;
    if (rounds < 1 || rounds > MAX_ROUNDS || steps < 1) {
        fprintf(stderr, "bench-packed: 1 to %d rounds, 1 step or more\n", MAX_ROUNDS);
        return 2;
    }
    rs_error err;
    rs_bench_data d;
    if (rs_bench_data_load(&d, argv[1], &err)) {
        fprintf(stderr, "bench-packed: %s\n", err.msg);
        return 1;
    }
    openblas_set_num_threads(1);
    const char *const roads[2] = {"onednn", "onednn-sgemm"};
    const rs_bench_job job = {
        .c = &rs_bench_sizes[0], .threads = 1, .steps = steps, .decode = 0, .sentences = 0};
    double ratio[WORKS][MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        double rate[2][WORKS];
        for (int k = 0; k < 2; k++) {
            rs_bench_measured m;
            if (rs_gemm_road_choose(roads[k], &err)) {
                fprintf(stderr, "bench-packed: %s\n", err.msg);
                return 1;
            }
            const double t0 = cpu_seconds();
            if (rs_bench_measure(&d, &job, &m, &err)) {
                fprintf(stderr, "bench-packed: %s\n", err.msg);
                return 1;
            }
            rate[k][0] = 1.0 / m.step_s;                   /* steps per wall second */
            rate[k][1] = steps / (cpu_seconds() - t0);     /* per CPU second, model made too */
            printf("round %d %-13s (%s):", r + 1, roads[k], rs_gemm_road_kernel());
            for (int w = 0; w < WORKS; w++)
                printf(" %s %.3f steps/s;", works[w], rate[k][w]);
            printf("\n");
            fflush(stdout);
        }
        for (int w = 0; w < WORKS; w++)
            ratio[w][r] = rate[0][w] / rate[1][w];
    }
    printf("packed / unpacked, median of %d rounds (each round's):\n", rounds);
    for (int w = 0; w < WORKS; w++) {
        printf("  %-16s", works[w]);
        for (int r = 0; r < rounds; r++)
            printf(" %.2f", ratio[w][r]);
        qsort(ratio[w], (size_t)rounds, sizeof(double), by_value);
        printf("  median %.2f\n", ratio[w][rounds / 2]);
    }
    rs_bench_data_free(&d);
    return 0;
}
