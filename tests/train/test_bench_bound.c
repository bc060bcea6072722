/* The machine's bound in `rnnsearch bench` (src/train/bench_bound.c): the
 * core types a processor runs, a workload's products and its rate from
 * theirs, the roads in their split and side-by-side forms, the products
 * timed side by side, and bench's own children's argument and output, read
 * back. (No rate is asserted: they are the machine's.) */
#include <check.h>
#include <math.h>
#include <pthread.h>
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

/* A road that records which thread computed each product into which C,
 * with OpenBLAS on how many threads, and checks C's corners (the products
 * that replace C), before it hands the product on to OpenBLAS. */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
typedef struct {
    pthread_t thread;
    const float *A, *C;
    long calls;
} seen_copy;
static seen_copy seen[4];
static int nseen, wrong, most_blas_threads;

static void watching_road(const rs_gemm_call *c)
{
    rs_gemm_openblas(c);
    int bad = 0;
    for (int i = 0; c->beta == 0.0f && i<c->M; i += c->M> 1 ? c->M - 1 : 1)
        for (int j = 0; j<c->N; j += c->N> 1 ? c->N - 1 : 1) {
            double want = 0.0;
            for (int k = 0; k < c->K; k++)
                want +=
                    (double)(c->ta ? c->A[(size_t)k * c->lda + i] : c->A[(size_t)i * c->lda + k]) *
                    (c->tb ? c->B[(size_t)j * c->ldb + k] : c->B[(size_t)k * c->ldb + j]);
            bad |= fabs(c->C[(size_t)i * c->ldc + j] - want) > 1e-4 * (1.0 + fabs(want));
        }
    pthread_mutex_lock(&seen_lock);
    int k = 0;
    while (k < nseen && !pthread_equal(seen[k].thread, pthread_self()))
        k++;
    if (k == nseen && nseen < 4)
        seen[nseen++] = (seen_copy){pthread_self(), c->A, c->C, 0};
    if (k < nseen) {
        seen[k].calls++;
        bad |= seen[k].A != c->A || seen[k].C != c->C; /* each copy its own */
    }
    wrong += bad;
    most_blas_threads = openblas_get_num_threads() > most_blas_threads ? openblas_get_num_threads()
                                                                       : most_blas_threads;
    pthread_mutex_unlock(&seen_lock);
}

/* The products timed `copies` at a time under watching_road: each copy's
 * calls recorded, rates into rates. */
static void time_watched(const rs_bench_product *p, int count, int copies, double *rates)
{
    nseen = wrong = most_blas_threads = 0;
    rs_gemm_road before = rs_set_gemm_road(watching_road);
    rs_error err = {{0}};
    const int status = rs_bench_products_time(p, count, copies, rates, &err);
    rs_set_gemm_road(before);
    ck_assert_msg(!status, "%s", err.msg);
    for (int i = 0; i < count; i++)
        ck_assert_msg(rates[i] > 0 && isfinite(rates[i]), "product %d: %g", i, rates[i]);
    ck_assert_int_eq(wrong, 0);
}

/* Side by side, two threads each compute their own copy of every product,
 * right, as many times each, on one BLAS thread; OpenBLAS's count is
 * restored after. One copy: the calling thread alone, on the threads
 * OpenBLAS was given. */
START_TEST(products_side_by_side)
{
    const rs_bench_product p[3] = {{'f', 6, 10, 7}, {'n', 1, 9, 5}, {'w', 8, 6, 5}};
    double rates[3];
    openblas_set_num_threads(2);
    const int threads = openblas_get_num_threads();
    time_watched(p, 3, 2, rates);
    ck_assert_int_eq(nseen, 2);
    ck_assert(!pthread_equal(seen[0].thread, seen[1].thread));
    ck_assert_ptr_ne(seen[0].C, seen[1].C);
    ck_assert_ptr_ne(seen[0].A, seen[1].A);
    ck_assert_int_ge(seen[0].calls, 3 * 3); /* an untimed call, a timed one, then more */
    ck_assert_int_eq(seen[0].calls, seen[1].calls);
    ck_assert_int_eq(most_blas_threads, 1);
    ck_assert_int_eq(openblas_get_num_threads(), threads);
    time_watched(p, 3, 1, rates);
    ck_assert_int_eq(nseen, 1);
    ck_assert(pthread_equal(seen[0].thread, pthread_self()));
    ck_assert_int_eq(most_blas_threads, threads);
    openblas_set_num_threads(1);
}
END_TEST

/* At one thread each road once, split; at two each split road is followed
 * by its side-by-side form, named " x2", on the same kernels. */
START_TEST(roads_in_both_forms)
{
    static rs_bench_bound one, two;
    const rs_bench_cpu avx2 = {1, 1, 1, 1, 0, 0};
    rs_bench_bound_roads(&one, &avx2, "rnnsearch", 1);
    rs_bench_bound_roads(&two, &avx2, "rnnsearch", 2);
    ck_assert_int_ge(one.count, 4); /* OpenBLAS as loaded and 3 or 4 core types */
    ck_assert_int_eq(one.threads, 1);
    ck_assert_int_eq(two.threads, 2);
    ck_assert_int_eq(two.count, 2 * one.count);
    for (int k = 0; k < one.count; k++) {
        const rs_bench_road *r = &one.roads[k], *split = &two.roads[2 * k],
                            *side = &two.roads[2 * k + 1];
        char name[64];
        snprintf(name, sizeof name, "%s x2", r->name);
        ck_assert_int_eq(r->copies, 1);
        ck_assert_int_eq(split->copies, 1);
        ck_assert_int_eq(side->copies, 2);
        ck_assert_str_eq(split->name, r->name);
        ck_assert_str_eq(side->name, name);
        ck_assert_str_eq(side->coretype, r->coretype);
        ck_assert_int_eq(side->onednn, r->onednn);
        ck_assert_int_eq(split->onednn, r->onednn);
    }
}
END_TEST

/* The bound of each workload is the best road in either form: here the
 * side-by-side one on training and beam search, the split one on greedy at
 * batch 64; a road that gave nothing is never the bound. */
START_TEST(bound_is_the_best_form)
{
    static rs_bench_bound b;
    memset(&b, 0, sizeof b);
    b.count = 3, b.threads = 2;
    b.roads[0] = (rs_bench_road){
        .name = "openblas-Haswell", .copies = 1, .rounds = 3, .best = {200, 300, 300, 50}};
    b.roads[1] = (rs_bench_road){
        .name = "openblas-Haswell x2", .copies = 2, .rounds = 3, .best = {350, 250, 400, 90}};
    b.roads[2] = (rs_bench_road){
        .name = "onednn x2", .copies = 2, .best = {999, 999, 999, 999}, .failed = "no"};
    ck_assert_int_eq(rs_bench_bound_best(&b, RS_BENCH_TRAIN), 1);
    ck_assert_int_eq(rs_bench_bound_best(&b, RS_BENCH_GREEDY64), 0);
    ck_assert_int_eq(rs_bench_bound_best(&b, RS_BENCH_BEAM64), 1);
    ck_assert_int_eq(rs_bench_bound_best(&b, RS_BENCH_GREEDY1), 1);
}
END_TEST

/* The training side-by-side form's products: a shard's B/T sentences, so
 * the per-step products have B/T rows, as rs_bench_shapes_make with B/T. */
static void tiny_shapes(rs_bench_shapes *split, rs_bench_shapes *side)
{
    const rs_bench_dims tiny = {16, 32, 32, 16, 64};
    rs_bench_shapes_make(split, &tiny, 64, 5.0, 5.0, &tiny);
    rs_bench_shapes_make(side, &tiny, 32, 5.0, 5.0, &tiny);
}

/* At two threads every road, split and side by side (in this process or
 * in a child: bench --bound-only --side-by-side), gives a rate on every
 * workload. */
START_TEST(two_thread_bound_in_both_forms)
{
    static rs_bench_shapes split, side;
    tiny_shapes(&split, &side);
    ck_assert_int_eq(side.products[side.shares[RS_BENCH_TRAIN][0].alt[0]].M, 32 * 5);
    static rs_bench_bound b;
    const rs_bench_cpu none = {0};
    rs_bench_bound_roads(&b, &none, testprog_path(), 2);
    rs_error err = {{0}};
    ck_assert_msg(!rs_bench_bound_measure(&b, &split, &side, testprog_path(), &err), "%s", err.msg);
    for (int k = 0; k < b.count; k++) {
        const rs_bench_road *r = &b.roads[k];
        ck_assert_msg(!r->failed[0] && r->rounds >= 1, "%s: %s", r->name, r->failed);
        ck_assert_int_eq(r->copies, k % 2 ? 2 : 1);
        ck_assert_msg(!strcmp(r->name + strlen(r->name) - 3, " x2") == (r->copies == 2), "%s",
                      r->name);
        for (int w = 0; w < RS_BENCH_WORKLOADS; w++)
            ck_assert_msg(r->best[w] > 0 && isfinite(r->best[w]), "%s: %g", r->name, r->best[w]);
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

/* `bench --bound-only` on two tiny products with `rest` after it: its
 * rates read back; then the same with a product it must refuse. */
static void bound_only_runs(const char *rest)
{
    const rs_bench_product p[2] = {{'f', 4, 8, 3}, {'n', 1, 8, 3}};
    char args[128], out[512];
    snprintf(args, sizeof args, "bench --bound-only f:4:8:3,n:1:8:3 %s", rest);
    ck_assert_int_eq(testprog_run(args, out, sizeof out), 0);
    double rates[2];
    char kernel[64];
    rs_error err = {{0}};
    ck_assert_msg(!rs_bench_rates_parse(out, p, 2, rates, kernel, sizeof kernel, &err), "%s: %s",
                  err.msg, out);
    ck_assert(kernel[0]);
    snprintf(args, sizeof args, "bench --bound-only f:4:8 %s", rest);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "'f:4:8' is not a product like f:64:768:256"), "%s", out);
}

/* The program's hidden option measures the products it is given (here
 * tiny ones) and prints what the parent reads back; a wrong one is a usage
 * error. */
START_TEST(bound_only_program)
{
    bound_only_runs("--threads 1");
}
END_TEST

/* With --side-by-side the same products are timed two copies at a time,
 * printed alike; wrong products are refused as without it, and the flag
 * without --bound-only is a usage error. */
START_TEST(side_by_side_program)
{
    bound_only_runs("--threads 2 --side-by-side");
    char out[512];
    ck_assert_int_eq(testprog_run_all("bench --data x --side-by-side", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--side-by-side goes with --bound-only SPEC"), "%s", out);
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
    static rs_bench_shapes split, side;
    tiny_shapes(&split, &side);
    static rs_bench_bound b;
    const rs_bench_cpu none = {0};
    rs_bench_bound_roads(&b, &none, testprog_path(), 2);
    rs_error err = {{0}};
    ck_assert_msg(!rs_bench_bound_measure(&b, &split, &side, testprog_path(), &err), "%s", err.msg);
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
    tcase_add_test(tc, products_side_by_side);
    tcase_add_test(tc, roads_in_both_forms);
    tcase_add_test(tc, bound_is_the_best_form);
    tcase_add_test(tc, side_by_side_program);
    tcase_add_test(tc, two_thread_bound_in_both_forms);
    tcase_add_test(tc, two_thread_bound_leaves_forked_products_working);
    /* Each two-thread bound times four roads' rounds, some in children. */
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
