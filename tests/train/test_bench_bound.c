/* The machine's bound in `rnnsearch bench` (src/train/bench_bound.c): the
 * core types a processor runs, a workload's products and its rate from
 * theirs, and bench's own children's argument and output, read back. (No
 * rate is asserted: they are the machine's.) */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>
#include <sys/wait.h>
#include <unistd.h>

#include "accel/gemm_road.h"
#include "nn/linalg.h"
#include "testprog.h"
#include "testskip.h"
#include "train/bench_bound.h"

static int core_types(rs_bench_cpu cpu, const char **names)
{
    return rs_bench_core_types(&cpu, names);
}

/* Each core type needs its instruction sets, widest first. */
START_TEST(core_types_from_features)
{
    const char *names[RS_BENCH_CORE_TYPES];
    ck_assert_int_eq(core_types((rs_bench_cpu){1, 1, 1, 1, 1, 1}, names), 6);
    ck_assert_str_eq(names[0], "Cooperlake");
    ck_assert_str_eq(names[1], "SkylakeX");
    ck_assert_str_eq(names[5], "Prescott");
    ck_assert_int_eq(core_types((rs_bench_cpu){1, 1, 1, 1, 1, 0}, names), 5);
    ck_assert_str_eq(names[0], "SkylakeX");
    /* An AVX2 processor: Haswell and Zen, and the narrower ones. */
    ck_assert_int_eq(core_types((rs_bench_cpu){1, 1, 1, 1, 0, 0}, names), 4);
    ck_assert_str_eq(names[0], "Haswell");
    ck_assert_str_eq(names[1], "Zen");
    ck_assert_str_eq(names[2], "Sandybridge");
    /* AVX2 without FMA takes no Haswell kernel. */
    ck_assert_int_eq(core_types((rs_bench_cpu){1, 1, 1, 0, 0, 0}, names), 2);
    ck_assert_str_eq(names[0], "Sandybridge");
    ck_assert_int_eq(core_types((rs_bench_cpu){1, 0, 0, 0, 0, 0}, names), 1);
    ck_assert_str_eq(names[0], "Prescott");
    ck_assert_int_eq(core_types((rs_bench_cpu){0}, names), 0);
}
END_TEST

/* A workload's rate is its FLOPs over their time at each product's rate,
 * the faster form of a share counting; a product not measured gives 0. */
START_TEST(workload_rate)
{
    rs_bench_shapes s;
    memset(&s, 0, sizeof s);
    s.count = 3;
    s.nshares[RS_BENCH_TRAIN] = 2;
    s.shares[RS_BENCH_TRAIN][0] = (rs_bench_share){100, {0, -1}};
    s.shares[RS_BENCH_TRAIN][1] = (rs_bench_share){300, {1, 2}};
    double rates[3] = {50, 100, 300};
    /* 400 FLOPs in 100/50 + 300/300 = 3 s */
    ck_assert_double_eq_tol(rs_bench_workload_rate(&s, RS_BENCH_TRAIN, rates), 400.0 / 3, 1e-12);
    rates[2] = 10; /* the other form is faster now */
    ck_assert_double_eq_tol(rs_bench_workload_rate(&s, RS_BENCH_TRAIN, rates), 400.0 / 5, 1e-12);
    rates[0] = 0;
    ck_assert_double_eq(rs_bench_workload_rate(&s, RS_BENCH_TRAIN, rates), 0);
}
END_TEST

/* Training's step gives each forward product with its two backward ones
 * (42 shares); decoding's 9 products each in two forms, at 64, 320 and 1
 * rows; no product over 512 rows; every share's FLOPs positive. */
START_TEST(shapes_of_the_workloads)
{
    static rs_bench_shapes s;
    const rs_bench_dims S = {128, 256, 256, 128, 5913};
    rs_bench_shapes_make(&s, &S, 64, 14.2, 13.1, &S);
    ck_assert_int_eq(s.nshares[RS_BENCH_TRAIN], 42);
    for (int w = RS_BENCH_GREEDY64; w < RS_BENCH_WORKLOADS; w++) {
        ck_assert_int_eq(s.nshares[w], 9);
        for (int i = 0; i < 9; i++) {
            const rs_bench_share *sh = &s.shares[w][i];
            ck_assert_int_ge(sh->alt[1], 0);
            ck_assert_int_eq(s.products[sh->alt[0]].form, 'f');
            ck_assert_int_eq(s.products[sh->alt[1]].form, 'n');
            ck_assert_int_eq(s.products[sh->alt[0]].M, w == RS_BENCH_GREEDY64 ? 64
                                                       : w == RS_BENCH_BEAM64 ? 320
                                                                              : 1);
        }
    }
    /* The output layer at batch 1: [1, l] → [1, V], 2·l·V FLOPs. */
    const rs_bench_share *out = &s.shares[RS_BENCH_GREEDY1][8];
    ck_assert_double_eq(out->flops, 2.0 * 128 * 5913);
    ck_assert_int_eq(s.products[out->alt[0]].N, 5913);
    ck_assert_int_eq(s.products[out->alt[0]].K, 128);
    for (int w = 0; w < RS_BENCH_WORKLOADS; w++)
        for (int i = 0; i < s.nshares[w]; i++)
            ck_assert_double_gt(s.shares[w][i].flops, 0);
    for (int i = 0; i < s.count; i++) {
        ck_assert_int_le(s.products[i].M, 512);
        ck_assert_int_le(s.products[i].K, 5913);
        for (int j = 0; j < i; j++) { /* each product once */
            const rs_bench_product *a = &s.products[i], *b = &s.products[j];
            ck_assert(a->form != b->form || a->M != b->M || a->N != b->N || a->K != b->K);
        }
    }
}
END_TEST

/* --bound-only's argument, written and read back; wrong ones refused. */
START_TEST(spec_round_trip)
{
    const rs_bench_product p[3] = {{'f', 64, 768, 256}, {'n', 1, 5913, 128}, {'w', 768, 256, 512}};
    char spec[128];
    ck_assert_int_eq(rs_bench_spec_format(spec, sizeof spec, p, 3), 0);
    ck_assert_str_eq(spec, "f:64:768:256,n:1:5913:128,w:768:256:512");
    rs_bench_product q[4];
    rs_error err = {{0}};
    ck_assert_int_eq(rs_bench_spec_parse(spec, q, 4, &err), 3);
    for (int i = 0; i < 3; i++)
        ck_assert(q[i].form == p[i].form && q[i].M == p[i].M && q[i].N == p[i].N &&
                  q[i].K == p[i].K);
    char small[10];
    ck_assert_int_eq(rs_bench_spec_format(small, sizeof small, p, 3), -1);
    static const char *const bad[] = {"",        "x:1:2:3",         "f:1:2",
                                      "f:1:2:0", "f:1:2:3;n:1:2:3", "f:1:2:3,"};
    for (int i = 0; i < 6; i++)
        ck_assert_msg(rs_bench_spec_parse(bad[i], q, 4, &err) < 0, "%s", bad[i]);
    ck_assert_int_lt(rs_bench_spec_parse(spec, q, 2, &err), 0);
    ck_assert_msg(strstr(err.msg, "more than 2 products"), "%s", err.msg);
}
END_TEST

/* A child's output read back: its kernel and each product's rate in order;
 * a line for another product, a rate that is not positive, or a missing
 * line fail. */
START_TEST(rates_read_back)
{
    const rs_bench_product p[2] = {{'f', 64, 768, 256}, {'w', 768, 256, 512}};
    const double rates[2] = {163.9, 98.25};
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    rs_bench_rates_print(f, "SkylakeX", p, rates, 2);
    fclose(f);
    double got[2] = {0, 0};
    char kernel[16];
    rs_error err = {{0}};
    ck_assert_msg(!rs_bench_rates_parse(text, p, 2, got, kernel, sizeof kernel, &err), "%s",
                  err.msg);
    ck_assert_str_eq(kernel, "SkylakeX");
    ck_assert_double_eq_tol(got[0], 163.9, 1e-9);
    ck_assert_double_eq_tol(got[1], 98.25, 1e-9);
    const rs_bench_product other[2] = {{'f', 64, 768, 256}, {'w', 768, 256, 64}};
    ck_assert(rs_bench_rates_parse(text, other, 2, got, kernel, sizeof kernel, &err));
    ck_assert_msg(strstr(err.msg, "line 3 is not the rate of w:768:256:64"), "%s", err.msg);
    free(text);
    ck_assert(rs_bench_rates_parse("kernel Haswell\nf 64 768 256 0\n", p, 1, got, kernel,
                                   sizeof kernel, &err));
    ck_assert(rs_bench_rates_parse("kernel Haswell\nf 64 768 256 1.5\n", p, 2, got, kernel,
                                   sizeof kernel, &err));
    ck_assert(rs_bench_rates_parse("f 64 768 256 1.5\n", p, 1, got, kernel, sizeof kernel, &err));
}
END_TEST

/* The program's hidden option measures the products it is given (here
 * tiny ones) and prints what the parent reads back; a wrong one is a usage
 * error. */
START_TEST(bound_only_program)
{
    const rs_bench_product p[2] = {{'f', 4, 8, 3}, {'n', 1, 8, 3}};
    char out[512];
    ck_assert_int_eq(
        testprog_run("bench --bound-only f:4:8:3,n:1:8:3 --threads 1", out, sizeof out), 0);
    double rates[2];
    char kernel[64];
    rs_error err = {{0}};
    ck_assert_msg(!rs_bench_rates_parse(out, p, 2, rates, kernel, sizeof kernel, &err), "%s: %s",
                  err.msg, out);
    ck_assert(kernel[0]);
    ck_assert_int_eq(testprog_run_all("bench --bound-only f:4:8 --threads 1", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "'f:4:8' is not a product like f:64:768:256"), "%s", out);
}
END_TEST

/* oneDNN's bound on two threads is measured in a process of its own:
 * OpenMP's pool, started in this one, would leave every process forked
 * afterwards (bench forks each measurement) waiting for ever at its first
 * product split over two threads. Here the bound runs, then a forked
 * process splits a 64-row product: it must finish. */
START_TEST(two_thread_bound_leaves_forked_products_working)
{
    if (!rs_gemm_road_has_onednn()) {
        test_skip("a build without oneDNN");
        return;
    }
    const char *fork_mode = getenv("CK_FORK");
    if (fork_mode && !strcmp(fork_mode, "no")) {
        /* Earlier tests in this one process may have started the pool. */
        test_skip("bench_bound: the fork test needs each test in a process of its own (CK_FORK)");
        return;
    }
    static rs_bench_shapes s;
    const rs_bench_dims tiny = {16, 32, 32, 16, 64};
    rs_bench_shapes_make(&s, &tiny, 64, 5.0, 5.0, &tiny);
    rs_bench_bound b;
    const rs_bench_cpu none = {0};
    rs_bench_bound_roads(&b, &none, testprog_path());
    rs_error err = {{0}};
    ck_assert_msg(!rs_bench_bound_measure(&b, &s, 2, testprog_path(), &err), "%s", err.msg);
    const pid_t pid = fork();
    if (pid == 0) {
        static float A[64 * 64], B[64 * 64], C[64 * 64];
        for (int i = 0; i < 64 * 64; i++)
            A[i] = B[i] = (float)(i % 7) - 3.0f;
        openblas_set_num_threads(2);
        if (rs_gemm_road_choose("onednn", &err))
            _exit(3);
        rs_gemm(&(rs_gemm_call){.tb = 1,
                                .M = 64,
                                .N = 64,
                                .K = 64,
                                .alpha = 1.0f,
                                .A = A,
                                .B = B,
                                .C = C,
                                .lda = 64,
                                .ldb = 64,
                                .ldc = 64});
        _exit(C[0] != 0.0f ? 0 : 4);
    }
    /* The product runs with signals blocked (gemm_road.c): a hang is ended
     * from here. */
    int status = 0, waited = 0;
    pid_t got = 0;
    while ((got = waitpid(pid, &status, WNOHANG)) == 0 && waited++ < 300)
        nanosleep(&(struct timespec){0, 100000000}, NULL);
    if (got == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    ck_assert_msg(got == pid, "the forked product was still waiting after 30 s");
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the forked product did not finish (%s %d)",
                  WIFSIGNALED(status) ? "signal" : "status",
                  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}
END_TEST

Suite *bench_bound_suite(void)
{
    Suite *s = suite_create("bench_bound");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, core_types_from_features);
    tcase_add_test(tc, workload_rate);
    tcase_add_test(tc, shapes_of_the_workloads);
    tcase_add_test(tc, spec_round_trip);
    tcase_add_test(tc, rates_read_back);
    tcase_add_test(tc, bound_only_program);
    tcase_add_test(tc, two_thread_bound_leaves_forked_products_working);
    suite_add_tcase(s, tc);
    return s;
}
