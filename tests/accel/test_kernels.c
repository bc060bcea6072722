/* accel/kernels.c and kernels_avx512.c: every twin (AVX2, AVX-512) against
 * nn/'s portable loops, entry by entry of the tables, bit for bit (memcmp),
 * so that results do not depend on the machine: every length 0..70 and long
 * ones, starts off any alignment, and data tame, hostile (NaN, ±inf, ±0,
 * denormals, huge and tiny arguments) and at the approximations' edges; and
 * the choice of the kernels nn/ runs (rs_accel_kernels_select,
 * RNNSEARCH_KERNELS). A level the processor lacks is skipped, saying so. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accel/gemm_road.h"
#include "accel/kernels.h"
#include "nn/optimizer.h"
#include "nn/vecmath.h"

enum { LEVELS = 2, BIG = 4099, ROOM = BIG + 8, MODES = 3 };

/* The twins of level l (0 AVX2, 1 AVX-512), or NULL (and a note). */
static const rs_vec_kernels *twins(int l)
{
    const rs_vec_kernels *k = l ? rs_vec_avx512() : rs_vec_avx2();
    if (!k)
        fprintf(stderr, "no %s on this CPU: its twins are not compared\n", l ? "AVX-512" : "AVX2");
    return k;
}

/* For each level of twins the processor has (l its number, a its table). */
#define EACH_TWIN(l, a)                                                                            \
    for (int l = 0; l < LEVELS; l++)                                                               \
        for (const rs_vec_kernels *a = twins(l); a; a = NULL)

/* For each data mode and offset of the buffers' start (prepare). */
#define EACH_CASE(mode, off)                                                                       \
    for (int mode = 0; mode < MODES; mode++)                                                       \
        for (size_t off = 0; off < 4; off++)

/* The lengths tried: every one to 70, then long ones with odd tails. */
static const size_t lengths[] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,  12,   13,   14,
                                 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,  27,   28,   29,
                                 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41,  42,   43,   44,
                                 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56,  57,   58,   59,
                                 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 127, 1000, 4096, BIG};
enum { NLEN = sizeof lengths / sizeof *lengths };

static unsigned long long rng_state;

static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* Mode 0 tame (uniform in ±scale), 1 hostile (one value in 8 a NaN, ±inf,
 * ±0, a denormal, huge or tiny), 2 the edges (exp's range ends ±87..89,
 * tanh's ±19..21, denormals, zeros; all finite). */
static float value(int mode, float scale)
{
    const double u = uniform(), s = uniform() < 0.5 ? -1.0 : 1.0;
    const int pick = (int)(uniform() * (mode == 1 ? 64 : mode == 2 ? 8 : 1));
    switch (mode == 0 ? -1 : pick) {
    case 0: return mode == 1 ? NAN : (float)(s * (87.0 + 2.0 * u));
    case 1: return mode == 1 ? (float)(s * INFINITY) : (float)(s * (19.0 + 2.0 * u));
    case 2: return (float)(s * 0.0);
    case 3: return (float)(s * 1e-40 * u); /* denormal */
    case 4: return (float)(s * 1e30 * u);
    case 5: return (float)(s * 1e-20 * u);
    case 6: return (float)(s * (87.0 + 2.0 * u));
    case 7: return (float)(s * (19.0 + 2.0 * u));
    default: return (float)(s * u * scale);
    }
}

static void fill(float *x, size_t count, int mode, float scale, unsigned seed)
{
    rng_state = seed * 2654435761ULL + 1;
    for (size_t i = 0; i < count; i++)
        x[i] = value(mode, scale);
}

/* One case: the lanes' data of mode at offset off (off ∈ 0..3 floats from
 * a 64-byte boundary, so loads straddle lines). */
typedef struct {
    float *x, *q, *v, *ya, *yp;
} bufs;

static float store[5][ROOM + 16] __attribute__((aligned(64)));

static bufs prepare(int mode, size_t off, unsigned seed)
{
    bufs b = {store[0] + off, store[1] + off, store[2] + off, store[3] + off, store[4] + off};
    fill(b.x, BIG, mode, 30.0f, seed);
    fill(b.q, BIG, mode, 2.0f, seed + 1);
    fill(b.v, BIG, mode, 1.0f, seed + 2);
    return b;
}

/* The same bits, a NaN matching any NaN: which of two NaN operands an
 * operation returns (its payload and sign) follows the order in which the
 * compiler puts the operands of a commutative + or ×, which C leaves open,
 * so not even the portable loops fix it. */
static int same_f(const float *a, const float *b, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (memcmp(a + i, b + i, sizeof *a) && !(isnan(a[i]) && isnan(b[i])))
            return 0;
    return 1;
}

static int same_d(double a, double b)
{
    return !memcmp(&a, &b, sizeof a) || (isnan(a) && isnan(b));
}

#define SAME(ok, what, ...)                                                                        \
    ck_assert_msg(ok, what ": level %d mode %d count %zu off %zu", __VA_ARGS__)

START_TEST(maps_agree_bit_for_bit)
{
    const rs_vec_kernels *p = &rs_vec_portable;
    typedef void (*vfn)(float *, const float *, size_t);
    EACH_TWIN(l, a)
    {
        const vfn fa[] = {a->vexp, a->vtanh, a->vsigmoid}, fp[] = {p->vexp, p->vtanh, p->vsigmoid};
        EACH_CASE(mode, off)
        {
            bufs b = prepare(mode, off, 7 + 3 * (unsigned)mode);
            for (int f = 0; f < 3; f++)
                for (size_t c = 0; c < NLEN; c++) {
                    const size_t n = lengths[c];
                    memset(b.ya, 0x55, sizeof(float) * (n + 8));
                    memset(b.yp, 0x55, sizeof(float) * (n + 8));
                    fa[f](b.ya, b.x, n);
                    fp[f](b.yp, b.x, n);
                    ck_assert_msg(same_f(b.ya, b.yp, n + 8),
                                  "map %d: level %d mode %d count %zu off %zu", f, l, mode, n, off);
                }
            /* in place */
            memcpy(b.ya, b.x, sizeof(float) * 37);
            a->vtanh(b.ya, b.ya, 37);
            p->vtanh(b.x, b.x, 37);
            ck_assert(same_f(b.ya, b.x, 37));
        }
    }
}
END_TEST

/* The exp sums (stored and not), the score's tanh-dot, dot, sum of squares
 * and max: the returned value's bits and what they store. */
START_TEST(reductions_agree_bit_for_bit)
{
    const rs_vec_kernels *p = &rs_vec_portable;
    EACH_TWIN(l, a)
    {
        EACH_CASE(mode, off)
        {
            bufs b = prepare(mode, off, 31 + (unsigned)mode);
            for (size_t c = 0; c < NLEN; c++) {
                const size_t n = lengths[c];
                const float shift = n ? b.x[n / 2] : 3.0f;
                double s1 = a->vexp_shift_sum(b.ya, b.x, shift, n);
                double s0 = p->vexp_shift_sum(b.yp, b.x, shift, n);
                SAME(same_d(s1, s0), "exp sum", l, mode, n, off);
                ck_assert(same_f(b.ya, b.yp, n));
                s1 = a->vexp_shift_total(b.x, shift, n);
                SAME(same_d(s1, s0), "exp total", l, mode, n, off);
                float d1 = a->vtanh_add_dot(b.ya, b.q, b.x, b.v, n);
                float d0 = p->vtanh_add_dot(b.yp, b.q, b.x, b.v, n);
                SAME(same_f(&d1, &d0, 1), "tanh dot", l, mode, n, off);
                ck_assert(same_f(b.ya, b.yp, n));
                d1 = a->vdot(b.q, b.x, n);
                d0 = p->vdot(b.q, b.x, n);
                SAME(same_f(&d1, &d0, 1), "dot", l, mode, n, off);
                s1 = a->vsumsq(b.x, n);
                s0 = p->vsumsq(b.x, n);
                SAME(same_d(s1, s0), "sum of squares", l, mode, n, off);
                if (n) {
                    d1 = a->vmax(b.x, n);
                    d0 = p->vmax(b.x, n);
                    SAME(same_f(&d1, &d0, 1), "max", l, mode, n, off);
                }
            }
        }
    }
}
END_TEST

/* Signed zeros the max must order as the loop does (the first zero wins a
 * tie) and a NaN first, which the loop keeps. */
START_TEST(max_agrees_on_signed_zeros_and_nan)
{
    static float x[200];
    EACH_TWIN(l, a)
    {
        for (int first = 0; first < 2; first++) {
            for (int i = 0; i < 100; i++)
                x[i] = i % 3 ? -1.0f : (i + first) % 2 ? -0.0f : 0.0f;
            const float m1 = a->vmax(x, 100), m0 = rs_vec_portable.vmax(x, 100);
            ck_assert(!memcmp(&m1, &m0, sizeof m1) && !!signbit(m0) == first);
        }
        /* a later zero in an earlier lane: the first zero still wins */
        for (int first = 0; first < 2; first++) {
            for (int i = 0; i < 200; i++)
                x[i] = -1.0f;
            x[20] = first ? -0.0f : 0.0f;
            x[65] = first ? 0.0f : -0.0f;
            const float m1 = a->vmax(x, 200), m0 = rs_vec_portable.vmax(x, 200);
            ck_assert(!memcmp(&m1, &m0, sizeof m1) && !!signbit(m0) == first);
        }
        /* NaN in the first lane of the last whole blocks: never chosen */
        x[50] = 5.0f;
        x[128] = x[160] = NAN;
        ck_assert(a->vmax(x, 200) == 5.0f && a->vargmax(x, 200) == 50);
        x[0] = NAN;
        ck_assert(isnan(a->vmax(x, 100)));
        ck_assert_uint_eq(a->vargmax(x, 100), 0);
    }
}
END_TEST

/* The attention's backward kernel and the updates in place (axpy, scale):
 * what they add to, for every count and offset. */
START_TEST(updates_agree_bit_for_bit)
{
    const rs_vec_kernels *p = &rs_vec_portable;
    static float g[2][3][ROOM];
    EACH_TWIN(l, a)
    {
        EACH_CASE(mode, off)
        {
            bufs b = prepare(mode, off, 55 + (unsigned)mode);
            for (int k = 0; k < 3; k++) {
                fill(g[0][k], ROOM, mode, 1.0f, 60 + (unsigned)k);
                memcpy(g[1][k], g[0][k], sizeof g[0][k]);
            }
            const float de = b.v[3], alpha = b.q[5], scale = b.v[7], shift = b.q[9];
            for (size_t c = 0; c < NLEN; c++) {
                const size_t n = lengths[c];
                a->vtanh_add_dot_backward(g[0][0] + off, g[0][1] + off, g[0][2] + off, b.x, b.v, de,
                                          n);
                p->vtanh_add_dot_backward(g[1][0] + off, g[1][1] + off, g[1][2] + off, b.x, b.v, de,
                                          n);
                a->vaxpy(g[0][0] + 1, alpha, b.q, n);
                p->vaxpy(g[1][0] + 1, alpha, b.q, n);
                a->vscale_shift(g[0][2] + 2, scale, shift, n);
                p->vscale_shift(g[1][2] + 2, scale, shift, n);
                ck_assert_msg(same_f(g[0][0], g[1][0], 3 * ROOM),
                              "updates: level %d mode %d count %zu off %zu", l, mode, n, off);
            }
        }
    }
}
END_TEST

/* The searches' scans: the same index on every length and tail, with ties,
 * NaN (at x[0] too) and infinities. */
START_TEST(argmax_and_first_above_agree)
{
    const rs_vec_kernels *p = &rs_vec_portable;
    enum { N = 300 };
    static float x[N + 4];
    const float bounds[] = {0.5f, -1e30f, NAN, -INFINITY};
    EACH_TWIN(l, a)
    {
        for (int trial = 0; trial < 24; trial++) {
            float *xs = x + trial % 4;
            fill(xs, N, trial % 2, trial < 12 ? 4.0f : 1e3f, 100 + (unsigned)trial);
            for (int i = 0; trial % 3 == 0 && i < N; i++)
                xs[i] = roundf(xs[i]); /* many ties */
            if (trial % 5 == 2)
                xs[0] = NAN, xs[N - 1] = 1e30f;
            if (trial % 6 == 4)
                xs[N / 2 + trial] = INFINITY, xs[N / 3] = -INFINITY;
            for (size_t count = 1; count <= N; count += (count < 70 ? 1 : 13)) {
                ck_assert_msg(a->vargmax(xs, count) == p->vargmax(xs, count),
                              "level %d trial %d, count %zu", l, trial, count);
                for (size_t k = 0; k < sizeof bounds / sizeof *bounds; k++)
                    for (size_t from = 0; from <= count; from += 7)
                        ck_assert_msg(a->vfirst_above(xs, -0.5f, bounds[k], from, count) ==
                                          p->vfirst_above(xs, -0.5f, bounds[k], from, count),
                                      "level %d trial %d bound %g [%zu,%zu)", l, trial, bounds[k],
                                      from, count);
            }
        }
    }
}
END_TEST

/* Adam's update: parameters and both moments, every length and offset. */
START_TEST(adam_agrees_bit_for_bit)
{
    const rs_vec_kernels *p = &rs_vec_portable;
    static float w[2][ROOM], m[2][ROOM], v[2][ROOM];
    const rs_adam_coeffs k = {0.002f, 0.9f, 0.999f, 1e-8f, 0.271f, 0.003f};
    EACH_TWIN(l, a)
    {
        EACH_CASE(mode, off)
        {
            bufs b = prepare(mode, off, 71 + (unsigned)mode);
            fill(w[0], ROOM, mode, 1.0f, 11);
            fill(m[0], ROOM, mode, 0.1f, 13);
            fill(v[0], ROOM, 0, 0.1f, 14);
            for (int i = 0; i < ROOM; i++)
                v[0][i] *= v[0][i];
            memcpy(w[1], w[0], sizeof w[0]);
            memcpy(m[1], m[0], sizeof m[0]);
            memcpy(v[1], v[0], sizeof v[0]);
            for (size_t c = 0; c < NLEN; c++) {
                const size_t n = lengths[c];
                a->adam(w[0] + off, b.x, 0.37f, m[0] + off, v[0] + off, n, &k);
                p->adam(w[1] + off, b.x, 0.37f, m[1] + off, v[1] + off, n, &k);
                ck_assert_msg(same_f(w[0], w[1], ROOM) && same_f(m[0], m[1], ROOM) &&
                                  same_f(v[0], v[1], ROOM),
                              "adam: level %d mode %d count %zu off %zu", l, mode, n, off);
            }
        }
    }
}
END_TEST

/* The attention's context Σ_j α_j h_j and its backward, and a bias's row
 * sums: rows a stride apart (gaps the kernels must leave alone), 0 to 17 of
 * them. */
START_TEST(weighted_sums_agree_bit_for_bit)
{
    const rs_vec_kernels *p = &rs_vec_portable;
    enum { ROWS = 17 };
    static float rows[ROWS * (ROOM + 5)], d[2][ROWS * (ROOM + 5)], dw[2][ROWS + 1];
    const size_t nrows[] = {0, 1, 2, 3, 5, ROWS};
    EACH_TWIN(l, a)
    {
        EACH_CASE(mode, off)
        {
            bufs b = prepare(mode, off, 81 + (unsigned)mode);
            fill(rows, sizeof rows / sizeof *rows, mode, 3.0f, 90 + (unsigned)off);
            for (size_t c = 0; c < NLEN; c++)
                for (size_t r = 0; r < sizeof nrows / sizeof *nrows; r++) {
                    const size_t n = lengths[c], stride = n + 5, R = nrows[r];
                    if (n > 1000 && R > 3)
                        continue;
                    memset(b.ya, 0x55, sizeof(float) * (n + 8));
                    memset(b.yp, 0x55, sizeof(float) * (n + 8));
                    a->vweighted_sum(b.ya, b.v, rows + off, stride, R, n);
                    p->vweighted_sum(b.yp, b.v, rows + off, stride, R, n);
                    SAME(same_f(b.ya, b.yp, n + 8), "weighted sum", l, mode, n, off);
                    fill(d[0], R * stride + 8, mode, 1.0f, 95 + (unsigned)r);
                    memcpy(d[1], d[0], sizeof(float) * (R * stride + 8));
                    memset(dw, 0x55, sizeof dw);
                    a->vadd_rows(b.ya, rows + off, stride, R, n);
                    p->vadd_rows(b.yp, rows + off, stride, R, n);
                    SAME(same_f(b.ya, b.yp, n + 8), "row sums", l, mode, n, off);
                    a->vweighted_sum_backward(dw[0], d[0] + off, b.q, rows, b.v, stride, R, n);
                    p->vweighted_sum_backward(dw[1], d[1] + off, b.q, rows, b.v, stride, R, n);
                    SAME(same_f(dw[0], dw[1], ROWS + 1) && same_f(d[0], d[1], R * stride + 8),
                         "weighted sum backward", l, mode, n, off);
                }
        }
    }
}
END_TEST

/* The GRU's gates, new state and their backward, masked (0) and not. */
START_TEST(gru_kernels_agree_bit_for_bit)
{
    const rs_vec_kernels *p = &rs_vec_portable;
    static float io[2][6][2 * ROOM];
    const float masks[] = {1.0f, 0.0f, NAN};
    EACH_TWIN(l, a)
    {
        EACH_CASE(mode, off)
        {
            bufs b = prepare(mode, off, 111 + (unsigned)mode);
            for (int k = 0; k < 6; k++)
                fill(io[0][k], 2 * ROOM, mode, 4.0f, 120 + (unsigned)k);
            memcpy(io[1], io[0], sizeof io[0]);
            for (size_t c = 0; c < NLEN; c++) {
                const size_t n = lengths[c];
                for (int s = 0; s < 2; s++) {
                    const rs_vec_kernels *t = s ? p : a;
                    float(*x)[2 * ROOM] = io[s];
                    t->vgru_gates(x[0] + off, x[1], b.x, n);
                    t->vgru_state(x[2] + off, x[3], x[0], b.q, masks[c % 3], n);
                    t->vgru_state_backward(x[4] + off, x[5], x[2], x[0], x[3], b.q, b.v, n);
                    t->vgru_reset_backward(x[1] + off, x[4], x[5], b.x, b.v, n);
                }
                SAME(same_f(io[0][0], io[1][0], sizeof io[0] / sizeof(float)), "gru", l, mode, n,
                     off);
            }
        }
    }
}
END_TEST

/* RNNSEARCH_KERNELS as the test found it, put back at the end. */
static char saved_env[64];
static int had_env;

static void save_env(void)
{
    const char *e = getenv("RNNSEARCH_KERNELS");
    had_env = e != NULL;
    snprintf(saved_env, sizeof saved_env, "%s", e ? e : "");
}

static void restore_env(void)
{
    if (had_env)
        setenv("RNNSEARCH_KERNELS", saved_env, 1);
    else
        unsetenv("RNNSEARCH_KERNELS");
}

/* What nn/ runs: each level when asked and present (else the best below
 * it), the processor's best with -1, or the level RNNSEARCH_KERNELS names. */
START_TEST(select_installs_the_level_asked_for)
{
    const rs_vec_kernels *avx2 = rs_vec_avx2(), *avx512 = rs_vec_avx512();
    const int best = avx512 ? RS_KERNELS_AVX512 : avx2 ? RS_KERNELS_AVX2 : RS_KERNELS_PORTABLE;
    save_env();
    unsetenv("RNNSEARCH_KERNELS");
    ck_assert_int_eq(rs_accel_kernels_select(RS_KERNELS_PORTABLE), RS_KERNELS_PORTABLE);
    ck_assert(rs_vec_kernels_in_use() == &rs_vec_portable);
    ck_assert_int_eq(rs_accel_kernels_select(RS_KERNELS_AVX2), avx2 ? 1 : 0);
    ck_assert(rs_vec_kernels_in_use() == (avx2 ? avx2 : &rs_vec_portable));
    ck_assert_int_eq(rs_accel_kernels_select(RS_KERNELS_AVX512), best);
    ck_assert(rs_vec_kernels_in_use() == (avx512 ? avx512 : avx2 ? avx2 : &rs_vec_portable));
    rs_accel_kernels_select(RS_KERNELS_PORTABLE);
    ck_assert_int_eq(rs_accel_kernels_select(-1), best);
    const char *names[] = {"portable", "avx2", "avx512"};
    for (int level = 0; level <= RS_KERNELS_AVX512; level++) {
        setenv("RNNSEARCH_KERNELS", names[level], 1);
        ck_assert_int_eq(rs_accel_kernels_wanted(NULL), level);
        ck_assert_int_eq(rs_accel_kernels_select(-1), level < best ? level : best);
        ck_assert_str_eq(rs_accel_kernels_name(level), names[level]);
    }
    setenv("RNNSEARCH_KERNELS", "auto", 1);
    ck_assert_int_eq(rs_accel_kernels_select(-1), best);
    /* a name it does not know: refused where the program starts */
    rs_error err = {0};
    setenv("RNNSEARCH_KERNELS", "avx1024", 1);
    ck_assert_int_eq(rs_accel_kernels_wanted(&err), -2);
    ck_assert(strstr(err.msg, "RNNSEARCH_KERNELS=avx1024"));
    ck_assert_int_ne(rs_gemm_road_choose(NULL, &err), 0);
    ck_assert(strstr(err.msg, "no such level"));
    restore_env();
    rs_accel_kernels_select(-1);
}
END_TEST

Suite *kernels_suite(void)
{
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("twins");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, maps_agree_bit_for_bit);
    tcase_add_test(tc, reductions_agree_bit_for_bit);
    tcase_add_test(tc, max_agrees_on_signed_zeros_and_nan);
    tcase_add_test(tc, updates_agree_bit_for_bit);
    tcase_add_test(tc, argmax_and_first_above_agree);
    tcase_add_test(tc, adam_agrees_bit_for_bit);
    tcase_add_test(tc, weighted_sums_agree_bit_for_bit);
    tcase_add_test(tc, gru_kernels_agree_bit_for_bit);
    tcase_add_test(tc, select_installs_the_level_asked_for);
    suite_add_tcase(s, tc);
    return s;
}
