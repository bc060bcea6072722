/* The machine's bound in `rnnsearch bench` (see bench_bound.h). */
#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "accel/gemm_road.h"
#include "common/clock.h"
#include "nn/linalg.h"
#include "train/bench_bound.h"

const char *const rs_bench_workload_names[RS_BENCH_WORKLOADS] = {
    "train", "greedy, batch 64", "beam 5, batch 64", "greedy, batch 1"};

enum {
    MOST_ROWS = 512, /* rows a product is measured on, at most */
    ROUNDS = 3,
    EXEC_FAILED = 127, /* a child that could not run its program, as the shell's */
};
static const double SLICE = 0.002; /* seconds of timed calls per product and round */

/* The index of product (form, M, N, K) in s, added when new; -1 when full. */
static int product_index(rs_bench_shapes *s, char form, int M, int N, int K)
{
    M = M < MOST_ROWS ? M : MOST_ROWS;
    if (form == 'w')
        K = K < MOST_ROWS ? K : MOST_ROWS;
    M = M > 1 ? M : 1, K = K > 1 ? K : 1;
    for (int i = 0; i < s->count; i++) {
        const rs_bench_product *p = &s->products[i];
        if (p->form == form && p->M == M && p->N == N && p->K == K)
            return i;
    }
    if (s->count >= RS_BENCH_MAX_PRODUCTS)
        return -1;
    s->products[s->count] = (rs_bench_product){form, M, N, K};
    return s->count++;
}

static void add_share(rs_bench_shapes *s, int w, double flops, int first, int second)
{
    if (first < 0 || s->nshares[w] >= RS_BENCH_MAX_SHARES)
        return;
    s->shares[w][s->nshares[w]++] = (rs_bench_share){flops, {first, second}};
}

/* A linear product of a training step: x [R,in] → y [R,out], `steps`
 * times per step and `copies` of it (the encoder's two directions); its
 * weight gradient sums the steps' rows in one product. */
typedef struct {
    int R, in, out, steps, copies;
} linear;

static void training_shares(rs_bench_shapes *s, const linear *p)
{
    const double flops = 2.0 * p->R * p->in * p->out * p->steps * p->copies;
    add_share(s, RS_BENCH_TRAIN, flops, product_index(s, 'f', p->R, p->out, p->in), -1);
    add_share(s, RS_BENCH_TRAIN, flops, product_index(s, 'n', p->R, p->in, p->out), -1);
    add_share(s, RS_BENCH_TRAIN, flops, product_index(s, 'w', p->out, p->in, p->R * p->steps), -1);
}

void rs_bench_shapes_make(rs_bench_shapes *s, const rs_bench_dims *train, int B, double ls,
                          double lt, const rs_bench_dims *decode)
{
    memset(s, 0, sizeof *s);
    const int m = train->m, n = train->n, a = train->a, l = train->l, V = train->V;
    const int Ls = (int)lround(ls) > 1 ? (int)lround(ls) : 1;
    const int Lt = (int)lround(lt) > 1 ? (int)lround(lt) : 1;
    const int Rs = B * Ls, Rt = B * Lt;
    const linear step[] = {
        {Rs, m, 3 * n, 1, 2},     /* encoder input projections W x */
        {B, n, 2 * n, Ls, 2},     /* encoder recurrences U_zr h */
        {B, n, n, Ls, 2},         /* U_g (r ⊙ h) */
        {Rs, 2 * n, a, 1, 1},     /* attention keys U_a h */
        {B, n, n, 1, 1},          /* initial state W_init */
        {B, n, a, Lt, 1},         /* attention queries W_a s */
        {Rt, m, 3 * n, 1, 1},     /* decoder input W'_e */
        {B, 2 * n, 3 * n, Lt, 1}, /* decoder context W'_c c */
        {B, n, 2 * n, Lt, 1},     /* decoder recurrence U'_zr s */
        {B, n, n, Lt, 1},         /* U'_g (r ⊙ s) */
        {Rt, n, 2 * l, 1, 1},     /* deep output U_o s */
        {Rt, m, 2 * l, 1, 1},     /* V_o E y */
        {Rt, 2 * n, 2 * l, 1, 1}, /* C_o c */
        {Rt, l, V, 1, 1},         /* output layer W_out t */
    };
    for (size_t i = 0; i < sizeof step / sizeof step[0]; i++)
        training_shares(s, &step[i]);
    const int dm = decode->m, dn = decode->n, da = decode->a, dl = decode->l;
    const int products[][2] = {{dn, da},     {dm, 3 * dn},     {2 * dn, 3 * dn},
                               {dn, 2 * dn}, {dn, dn},         {dn, 2 * dl},
                               {dm, 2 * dl}, {2 * dn, 2 * dl}, {dl, decode->V}};
    static const int rows[RS_BENCH_WORKLOADS] = {0, 64, 5 * 64, 1};
    for (int w = RS_BENCH_GREEDY64; w < RS_BENCH_WORKLOADS; w++)
        for (int i = 0; i < 9; i++) {
            const int in = products[i][0], out = products[i][1];
            add_share(s, w, 2.0 * rows[w] * in * out, product_index(s, 'f', rows[w], out, in),
                      product_index(s, 'n', rows[w], out, in));
        }
}

double rs_bench_workload_rate(const rs_bench_shapes *s, int w, const double *rates)
{
    double flops = 0.0, seconds = 0.0;
    for (int i = 0; i < s->nshares[w]; i++) {
        const rs_bench_share *sh = &s->shares[w][i];
        double r = rates[sh->alt[0]];
        if (sh->alt[1] >= 0 && rates[sh->alt[1]] > r)
            r = rates[sh->alt[1]];
        if (!(r > 0.0))
            return 0.0;
        flops += sh->flops;
        seconds += sh->flops / r;
    }
    return seconds > 0.0 ? flops / seconds : 0.0;
}

/* ---- one road's rates, in this process ---- */

static void call_product(const rs_bench_product *p, const float *A, const float *Bm, float *C)
{
    const int ta = p->form == 'w', tb = p->form == 'f';
    rs_gemm(&(rs_gemm_call){.ta = ta,
                            .tb = tb,
                            .M = p->M,
                            .N = p->N,
                            .K = p->K,
                            .alpha = 1.0f,
                            .beta = p->form == 'w' ? 1.0f : 0.0f,
                            .A = A,
                            .lda = ta ? p->M : p->K,
                            .B = Bm,
                            .ldb = tb ? p->K : p->N,
                            .C = C,
                            .ldc = p->N});
}

/* `copies` threads timing the same products side by side (one: the
 * calling thread alone), each on operands of its own. */
typedef struct {
    const rs_bench_product *p;
    int count, copies;
    size_t most; /* floats of the largest operand */
    pthread_barrier_t barrier;
    pthread_mutex_t gate; /* held while the threads are made */
    int unmade;           /* one could not be made: none times */
    double *start, *end;  /* [copies] each copy's last timed run */
    double *rates;
} side_by_side;

typedef struct {
    side_by_side *job;
    int index;
    float *buf; /* A [most], B [most], C [most] */
    pthread_t thread;
} side_copy;

/* Seconds from the copies' shared start (a barrier) to the end of the last
 * one's `calls` calls of p. */
static double timed_run(side_copy *me, const rs_bench_product *p, int calls)
{
    side_by_side *job = me->job;
    const float *A = me->buf, *Bm = me->buf + job->most;
    float *C = me->buf + 2 * job->most;
    pthread_barrier_wait(&job->barrier);
    const double t0 = rs_clock_seconds();
    for (int r = 0; r < calls; r++)
        call_product(p, A, Bm, C);
    job->start[me->index] = t0;
    job->end[me->index] = rs_clock_seconds();
    pthread_barrier_wait(&job->barrier);
    double first = job->start[0], last = job->end[0];
    for (int k = 1; k < job->copies; k++) {
        first = job->start[k] < first ? job->start[k] : first;
        last = job->end[k] > last ? job->end[k] : last;
    }
    return last - first;
}

/* One copy's part: every copy computes the same seconds, so the same
 * number of calls. */
static void *time_copy(void *arg)
{
    side_copy *me = arg;
    side_by_side *job = me->job;
    pthread_mutex_lock(&job->gate);
    const int unmade = job->unmade;
    pthread_mutex_unlock(&job->gate);
    for (int i = 0; i < job->count && !unmade; i++) {
        const rs_bench_product *p = &job->p[i];
        call_product(p, me->buf, me->buf + job->most, me->buf + 2 * job->most); /* untimed */
        double seconds = timed_run(me, p, 1); /* says how many calls fill the slice */
        int reps = 1;
        if (seconds < SLICE) {
            reps = (int)(SLICE / (seconds > 1e-7 ? seconds : 1e-7)) + 1;
            seconds = timed_run(me, p, reps);
        }
        if (me->index == 0)
            job->rates[i] = 2.0 * p->M * p->N * p->K * reps * job->copies /
                            (seconds > 0 ? seconds : 1e-9) / 1e9;
    }
    return NULL;
}

/* The copies made, timed and joined (the caller's thread is copy 0). */
static int run_copies(side_by_side *job, side_copy *copy, rs_error *err)
{
    int made = 1;
    pthread_mutex_lock(&job->gate);
    while (made < job->copies && !pthread_create(&copy[made].thread, NULL, time_copy, &copy[made]))
        made++;
    job->unmade = made < job->copies;
    pthread_mutex_unlock(&job->gate);
    time_copy(&copy[0]);
    for (int k = 1; k < made; k++)
        pthread_join(copy[k].thread, NULL);
    return job->unmade ? rs_fail(err, "bound: cannot start %d threads", job->copies) : 0;
}

int rs_bench_products_time(const rs_bench_product *p, int count, int copies, double *rates,
                           rs_error *err)
{
    side_by_side job = {.p = p, .count = count, .copies = copies > 1 ? copies : 1, .most = 1};
    for (int i = 0; i < count; i++) {
        const size_t M = p[i].M, N = p[i].N, K = p[i].K;
        job.most = M * K > job.most ? M * K : job.most;
        job.most = K * N > job.most ? K * N : job.most;
        job.most = M * N > job.most ? M * N : job.most;
    }
    side_copy *copy = rs_calloc((size_t)job.copies, sizeof *copy, err);
    job.start = rs_calloc(2 * (size_t)job.copies, sizeof(double), err);
    int status = copy && job.start ? 0 : -1;
    for (int k = 0; k < job.copies && !status; k++) {
        copy[k] = (side_copy){
            .job = &job, .index = k, .buf = rs_calloc(3 * job.most, sizeof(float), err)};
        status = copy[k].buf ? 0 : -1;
        for (size_t i = 0; !status && i < 2 * job.most; i++)
            copy[k].buf[i] = (float)(i % 7) * 0.01f;
    }
    if (!status && pthread_barrier_init(&job.barrier, NULL, (unsigned)job.copies))
        status = rs_fail(err, "bound: no barrier for %d threads", job.copies);
    else if (!status) {
        job.end = job.start + job.copies;
        job.rates = rates;
        const int threads = openblas_get_num_threads();
        if (job.copies > 1)
            openblas_set_num_threads(1);
        pthread_mutex_init(&job.gate, NULL);
        status = run_copies(&job, copy, err);
        pthread_mutex_destroy(&job.gate);
        pthread_barrier_destroy(&job.barrier);
        if (job.copies > 1)
            openblas_set_num_threads(threads);
    }
    for (int k = 0; copy && k < job.copies; k++)
        free(copy[k].buf);
    free(copy);
    free(job.start);
    return status;
}

/* ---- bench --bound-only: its argument and its output ---- */

int rs_bench_spec_format(char *out, size_t cap, const rs_bench_product *p, int count)
{
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < count; i++) {
        const int k = snprintf(out + used, cap - used, "%s%c:%d:%d:%d", i ? "," : "", p[i].form,
                               p[i].M, p[i].N, p[i].K);
        if (k < 0 || (size_t)k >= cap - used)
            return -1;
        used += (size_t)k;
    }
    return 0;
}

int rs_bench_spec_parse(const char *spec, rs_bench_product *p, int cap, rs_error *err)
{
    int count = 0;
    for (const char *at = spec; *at;) {
        rs_bench_product q;
        int used = 0;
        if (count >= cap)
            return rs_fail(err, "--bound-only: more than %d products", cap);
        if (sscanf(at, "%c:%d:%d:%d%n", &q.form, &q.M, &q.N, &q.K, &used) != 4 ||
            !strchr("fnw", q.form) || q.M < 1 || q.N < 1 || q.K < 1 || q.M > 100000 ||
            q.N > 100000 || q.K > 100000 || (at[used] && at[used] != ',') ||
            (at[used] == ',' && !at[used + 1]))
            return rs_fail(err, "--bound-only: '%.40s' is not a product like f:64:768:256", at);
        p[count++] = q;
        at += used + (at[used] == ',');
    }
    if (count == 0)
        return rs_fail(err, "--bound-only: no products given");
    return count;
}

void rs_bench_rates_print(FILE *out, const char *kernel, const rs_bench_product *p,
                          const double *rates, int count)
{
    fprintf(out, "kernel %s\n", kernel);
    for (int i = 0; i < count; i++)
        fprintf(out, "%c %d %d %d %.4f\n", p[i].form, p[i].M, p[i].N, p[i].K, rates[i]);
}

int rs_bench_rates_parse(const char *text, const rs_bench_product *p, int count, double *rates,
                         char *kernel, size_t cap, rs_error *err)
{
    int used = 0;
    char name[64];
    if (sscanf(text, "kernel %63s%n", name, &used) != 1)
        return rs_fail(err, "bound: the output does not start with \"kernel NAME\"");
    snprintf(kernel, cap, "%s", name);
    const char *at = text + used;
    for (int i = 0; i < count; i++) {
        rs_bench_product q;
        double rate;
        if (sscanf(at, " %c %d %d %d %lf%n", &q.form, &q.M, &q.N, &q.K, &rate, &used) != 5 ||
            q.form != p[i].form || q.M != p[i].M || q.N != p[i].N || q.K != p[i].K ||
            !(rate > 0.0) || !isfinite(rate))
            return rs_fail(err, "bound: line %d is not the rate of %c:%d:%d:%d", i + 2, p[i].form,
                           p[i].M, p[i].N, p[i].K);
        rates[i] = rate;
        at += used;
    }
    return 0;
}

/* ---- the processor's core types ---- */

rs_bench_cpu rs_bench_cpu_now(void)
{
    rs_bench_cpu cpu = {0};
#if defined(__GNUC__) && defined(__x86_64__)
    __builtin_cpu_init();
    cpu.sse3 = __builtin_cpu_supports("sse3") != 0;
    cpu.avx = __builtin_cpu_supports("avx") != 0;
    cpu.avx2 = __builtin_cpu_supports("avx2") != 0;
    cpu.fma = __builtin_cpu_supports("fma") != 0;
    cpu.avx512f = __builtin_cpu_supports("avx512f") != 0;
    cpu.avx512bf16 = __builtin_cpu_supports("avx512bf16") != 0;
#endif
    return cpu;
}

int rs_bench_core_types(const rs_bench_cpu *cpu, const char **names)
{
    const struct {
        const char *name;
        int runs;
    } types[RS_BENCH_CORE_TYPES] = {
        {"Cooperlake", cpu->avx512f && cpu->avx512bf16},
        {"SkylakeX", cpu->avx512f},
        {"Haswell", cpu->avx2 && cpu->fma},
        {"Zen", cpu->avx2 && cpu->fma},
        {"Sandybridge", cpu->avx},
        {"Prescott", cpu->sse3},
    };
    int count = 0;
    for (int i = 0; i < RS_BENCH_CORE_TYPES; i++)
        if (types[i].runs)
            names[count++] = types[i].name;
    return count;
}

/* ---- the roads and their rounds ---- */

/* road's name: base, with " xT" for its T copies side by side. */
static void road_named(rs_bench_road *r, const char *base)
{
    if (r->copies > 1)
        snprintf(r->name, sizeof r->name, "%.35s x%d", base, r->copies);
    else
        snprintf(r->name, sizeof r->name, "%.47s", base);
}

/* A road in its split form, and at more than one thread its side-by-side
 * one after it. */
static void add_road(rs_bench_bound *b, const char *name, const char *coretype, int onednn)
{
    for (int form = 0; form < (b->threads > 1 ? 2 : 1); form++) {
        rs_bench_road *r = &b->roads[b->count++];
        memset(r, 0, sizeof *r);
        snprintf(r->coretype, sizeof r->coretype, "%s", coretype);
        r->onednn = onednn;
        r->copies = form ? b->threads : 1;
        road_named(r, name);
    }
}

void rs_bench_bound_roads(rs_bench_bound *b, const rs_bench_cpu *cpu, const char *exe, int threads)
{
    memset(b, 0, sizeof *b);
    b->threads = threads > 1 ? threads : 1;
    const char *here = openblas_get_corename(), *types[RS_BENCH_CORE_TYPES];
    char name[48];
    snprintf(name, sizeof name, "openblas-%s", here);
    add_road(b, name, "", 0);
    const int ntypes = exe ? rs_bench_core_types(cpu, types) : 0;
    for (int i = 0; i < ntypes; i++)
        if (strcasecmp(types[i], here)) {
            snprintf(name, sizeof name, "openblas-%s", types[i]);
            add_road(b, name, types[i], 0);
        }
    if (rs_gemm_road_has_onednn())
        add_road(b, "onednn", "", 1);
}

/* The environment with OPENBLAS_CORETYPE=coretype and RNNSEARCH_GEMM=openblas
 * in place of theirs, in a new array (free the array only). */
extern char **environ;
static char **child_environment(char *coretype_var, int onednn)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 3, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "OPENBLAS_CORETYPE=", 18) &&
            strncmp(environ[i], "RNNSEARCH_GEMM=", 15))
            env[k++] = environ[i];
    if (coretype_var)
        env[k++] = coretype_var;
    env[k++] = onednn ? "RNNSEARCH_GEMM=onednn" : "RNNSEARCH_GEMM=openblas";
    return env;
}

/* What exe's `bench --bound-only spec --threads T` (with --side-by-side
 * for the road's side-by-side form) printed, run under the road's core
 * type (oneDNN's road: as loaded), into text[cap]; -1 with why in
 * road->failed. */
static int child_output(rs_bench_road *road, const char *exe, const char *spec, int threads,
                        char *text, size_t cap)
{
    char var[48], t[16];
    snprintf(var, sizeof var, "OPENBLAS_CORETYPE=%s", road->coretype);
    snprintf(t, sizeof t, "%d", threads);
    char *argv[] = {"rnnsearch", "bench", "--bound-only", (char *)spec, "--threads", t, NULL, NULL};
    if (road->copies > 1)
        argv[6] = "--side-by-side";
    char **env = child_environment(road->onednn ? NULL : var, road->onednn);
    int fd[2];
    if (!env || pipe(fd)) {
        free(env);
        snprintf(road->failed, sizeof road->failed, "no pipe or memory for its process");
        return -1;
    }
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execve(exe, argv, env);
        _exit(EXEC_FAILED);
    }
    free(env);
    close(fd[1]);
    size_t got = 0;
    ssize_t k = 0;
    while (pid > 0 && got + 1 < cap && (k = read(fd[0], text + got, cap - 1 - got)) != 0)
        if (k > 0)
            got += (size_t)k;
        else if (errno != EINTR)
            break;
    text[got] = 0;
    close(fd[0]);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
        snprintf(road->failed, sizeof road->failed, "%s bench --bound-only%s failed (status %d)",
                 exe, road->copies > 1 ? " --side-by-side" : "",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return -1;
    }
    return 0;
}

/* One round of road: the rates of s's products (those of its form) into
 * rates. 0; 1 when the road gave none (why in road->failed); -1 on this
 * process's own failure (err). */
static int road_rates(rs_bench_road *road, const rs_bench_shapes *s, const char *exe, int threads,
                      double *rates, rs_error *err)
{
    /* oneDNN on more than one thread starts OpenMP's pool, which a process
     * forked afterwards inherits broken (libgomp's threads are not in the
     * child, and its next parallel region waits for them for ever): bench
     * forks each measurement, so that pool lives in a process of its own.
     * Its side-by-side form, one OpenMP thread a copy, is not known to
     * start none: it runs apart too. */
    const int apart = road->coretype[0] || (road->onednn && threads > 1);
    if (!apart) {
        if (rs_gemm_road_choose(road->onednn ? "onednn" : "openblas", err) ||
            rs_bench_products_time(s->products, s->count, road->copies, rates, err))
            return -1;
        if (road->onednn)
            road_named(road, rs_gemm_road_kernel());
        return 0;
    }
    const size_t cap = 128 + 64 * (size_t)s->count, spec_cap = 32 * (size_t)s->count + 1;
    char *text = malloc(cap + spec_cap), *spec = text + cap, kernel[64];
    if (!text)
        return rs_fail(err, "out of memory");
    rs_bench_spec_format(spec, spec_cap, s->products, s->count);
    rs_error why;
    int status = child_output(road, exe, spec, threads, text, cap) ? 1 : 0;
    if (!status &&
        rs_bench_rates_parse(text, s->products, s->count, rates, kernel, sizeof kernel, &why)) {
        snprintf(road->failed, sizeof road->failed, "%.150s", why.msg);
        status = 1;
    } else if (!status && road->onednn) {
        road_named(road, kernel);
    } else if (!status && strcasecmp(kernel, road->coretype)) {
        snprintf(road->failed, sizeof road->failed,
                 "OpenBLAS ran its %s kernels (a library built for one processor)", kernel);
        status = 1;
    }
    free(text);
    return status;
}

/* Whether road k is under half the best road's rate on every workload. */
static int far_behind(const rs_bench_bound *b, int k)
{
    for (int w = 0; w < RS_BENCH_WORKLOADS; w++) {
        const int best = rs_bench_bound_best(b, w);
        if (best < 0 || b->roads[k].best[w] >= 0.5 * b->roads[best].best[w])
            return 0;
    }
    return 1;
}

int rs_bench_bound_best(const rs_bench_bound *b, int w)
{
    int best = -1;
    for (int k = 0; k < b->count; k++)
        if (b->roads[k].rounds > 0 && (best < 0 || b->roads[k].best[w] > b->roads[best].best[w]))
            best = k;
    return best;
}

int rs_bench_bound_measure(rs_bench_bound *b, const rs_bench_shapes *split,
                           const rs_bench_shapes *side, const char *exe, rs_error *err)
{
    double *rates = rs_calloc(RS_BENCH_MAX_PRODUCTS, sizeof(double), err);
    int status = rates ? 0 : -1;
    for (int k = 0; k < b->count; k++)
        for (int w = 0; w < RS_BENCH_WORKLOADS; w++)
            b->roads[k].best[w] = 0.0, b->roads[k].worst[w] = INFINITY;
    openblas_set_num_threads(b->threads);
    /* Rounds interleave the roads, so that other work on the machine falls
     * on each; a road far behind after the first cannot be the bound. */
    for (int round = 0; round < ROUNDS && !status; round++)
        for (int k = 0; k < b->count && !status; k++) {
            rs_bench_road *road = &b->roads[k];
            const rs_bench_shapes *s = road->copies > 1 && side ? side : split;
            if (road->rounds != round || road->failed[0] || (round > 0 && far_behind(b, k)))
                continue;
            const int got = road_rates(road, s, exe, b->threads, rates, err);
            if (got < 0)
                status = -1;
            if (got)
                continue;
            road->rounds++;
            for (int w = 0; w < RS_BENCH_WORKLOADS; w++) {
                const double r = rs_bench_workload_rate(s, w, rates);
                road->best[w] = r > road->best[w] ? r : road->best[w];
                road->worst[w] = r < road->worst[w] ? r : road->worst[w];
            }
        }
    free(rates);
    rs_error again;
    if (rs_gemm_road_choose(NULL, status ? &again : err))
        return -1;
    return status;
}
