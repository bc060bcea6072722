#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "train/bench_table.h"

/* rs_bench_measure in a child process (its own peak RSS), the result
 * through a pipe. */
static int measure_apart(const rs_bench_data *d, const rs_bench_job *job, const rs_bench_plan *plan,
                         rs_bench_measured *out, rs_error *err)
{
    int fd[2];
    if (pipe(fd))
        return rs_fail(err, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return rs_fail(err, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(fd[0]);
        rs_bench_measured m;
        memset(&m, 0, sizeof m);
        rs_error child_err = {{0}};
        int rc = rs_bench_measure(d, job, &m, &child_err);
        if (rc)
            fprintf(plan->log, "%s: %s\n", plan->prog, child_err.msg);
        ssize_t w = write(fd[1], &m, sizeof m);
        _exit(rc || w != (ssize_t)sizeof m ? 1 : 0);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], out, sizeof *out);
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (got != (ssize_t)sizeof *out || !WIFEXITED(status) || WEXITSTATUS(status))
        return rs_fail(err, "the %s measurement with %d thread(s) failed", job->c->name,
                       job->threads);
    return 0;
}

static void add_row(rs_bench_table *t, const char *work, const char *config, int threads,
                    const char *unit, rs_bench_values v)
{
    if (t->count >= RS_BENCH_MAX_ROWS)
        return;
    rs_bench_row *r = &t->rows[t->count++];
    snprintf(r->work, sizeof r->work, "%s", work);
    snprintf(r->config, sizeof r->config, "%s", config);
    snprintf(r->unit, sizeof r->unit, "%s", unit);
    r->threads = threads;
    r->v = v;
}

/* Workload w's GFLOP/s as a share of the best road's rate on its products. */
static double share(const rs_bench_bound *b, int w, double gflops)
{
    const int best = rs_bench_bound_best(b, w);
    return best >= 0 && b->roads[best].best[w] > 0 ? gflops / b->roads[best].best[w] : -1;
}

/* A road's worst round on w as a share of its best (one round: none). */
static double spread(const rs_bench_road *r, int w)
{
    return r->rounds > 1 && r->best[w] > 0 ? r->worst[w] / r->best[w] : -1;
}

/* The bound's rows of workload w: the best road's, then with `roads` the
 * others' (of_bound: their share of the best). */
static void bound_rows(rs_bench_table *t, const char *config, int threads, int w,
                       const rs_bench_bound *b, int roads)
{
    const int best = rs_bench_bound_best(b, w);
    if (best < 0)
        return;
    const rs_bench_road *top = &b->roads[best];
    char work[64];
    snprintf(work, sizeof work, "  bound%s: %s", w == RS_BENCH_GREEDY1 ? " (GEMV)" : "", top->name);
    add_row(t, work, config, threads, "GFLOP/s",
            (rs_bench_values){top->best[w], top->best[w], -1, spread(top, w), -1, -1});
    for (int k = 0; roads && k < b->count; k++) {
        const rs_bench_road *r = &b->roads[k];
        if (k == best || r->rounds == 0)
            continue;
        snprintf(work, sizeof work, "    %s", r->name);
        add_row(t, work, config, threads, "GFLOP/s",
                (rs_bench_values){r->best[w], r->best[w], r->best[w] / top->best[w], spread(r, w),
                                  -1, -1});
    }
}

void rs_bench_rows_add(rs_bench_table *t, const rs_bench_size *c, int threads,
                       const rs_bench_measured *m, int decoded, const char *decoder,
                       const rs_bench_bound *b, int roads)
{
    add_row(t, "train", c->name, threads, "tgt tok/s",
            (rs_bench_values){m->tokens_per_s, m->gflops, share(b, RS_BENCH_TRAIN, m->gflops), -1,
                              m->peak_mb, m->bound_mb});
    bound_rows(t, c->name, threads, RS_BENCH_TRAIN, b, roads);
    if (threads == 1) {
        add_row(t, "  step", c->name, 1, "ms/step",
                (rs_bench_values){1e3 * m->step_s, -1, -1, -1, -1, -1});
        add_row(t, "  step: optimizer", c->name, 1, "ms/step",
                (rs_bench_values){1e3 * m->optimizer_s, -1,
                                  m->step_s > 0 ? m->optimizer_s / m->step_s : -1, -1, -1, -1});
    }
    for (int w = RS_BENCH_GREEDY64; decoded && w < RS_BENCH_WORKLOADS; w++) {
        add_row(t, rs_bench_workload_names[w], decoder, threads, "sent/s",
                (rs_bench_values){m->sent_s[w], m->dec_gflops[w], share(b, w, m->dec_gflops[w]), -1,
                                  -1, -1});
        bound_rows(t, decoder, threads, w, b, roads);
    }
}

/* The bound for measurement m: training's products of size c on the data's
 * lengths, decoding's of the model m decoded (c's when none). */
static int measure_bound(rs_bench_bound *b, const rs_bench_data *d, const rs_bench_plan *plan,
                         const rs_bench_size *c, int threads, const rs_bench_measured *m,
                         int decoded, rs_error *err)
{
    const rs_bench_dims train = rs_bench_size_dims(c, d->model.cfg.tgt_vocab);
    const rs_bench_dims *decode = decoded ? &m->dims : &train;
    /* The side-by-side form's training products are a shard's: B/T rows. */
    const int shard = c->batch / threads > 1 ? c->batch / threads : 1;
    rs_bench_shapes split, side;
    rs_bench_shapes_make(&split, &train, c->batch, d->mean_ls, d->mean_lt, decode);
    rs_bench_shapes_make(&side, &train, shard, d->mean_ls, d->mean_lt, decode);
    const rs_bench_cpu cpu = rs_bench_cpu_now();
    rs_bench_bound_roads(b, &cpu, plan->exe, threads);
    fprintf(plan->log, "%s, %d thread(s): the bound, %d roads on %d products", c->name, threads,
            b->count, split.count);
    if (threads > 1)
        fprintf(plan->log, " (side by side: %d, of %d sentences each)", side.count, shard);
    fprintf(plan->log, "...\n");
    if (rs_bench_bound_measure(b, &split, threads > 1 ? &side : NULL, plan->exe, err))
        return -1;
    for (int k = 0; k < b->count; k++)
        if (b->roads[k].failed[0])
            fprintf(plan->log, "%s: the bound's road %s gave no rates: %s\n", plan->prog,
                    b->roads[k].name, b->roads[k].failed);
    return 0;
}

int rs_bench_table_size(rs_bench_table *t, const rs_bench_data *d, const rs_bench_plan *plan,
                        int size, rs_error *err)
{
    const rs_bench_size *cfg = &rs_bench_sizes[size];
    const int n_steps = plan->steps;
    const int decode = !plan->model_path || !t->decoded;
    for (int i = 0; i < plan->nthreads; i++) {
        const int threads = plan->threads[i];
        rs_bench_measured m;
        memset(&m, 0, sizeof m);
        fprintf(plan->log, "%s, %d thread(s): %d steps%s...\n", cfg->name, threads, n_steps,
                decode ? ", then decoding" : "");
        const rs_bench_job job = {cfg, threads, n_steps, decode, plan->sentences, plan->model_path};
        rs_bench_bound b;
        if (measure_apart(d, &job, plan, &m, err) ||
            measure_bound(&b, d, plan, cfg, threads, &m, decode, err))
            return -1;
        rs_bench_rows_add(t, cfg, threads, &m, decode, plan->model_path ? "given" : cfg->name, &b,
                          plan->roads);
    }
    t->decoded |= plan->model_path && decode;
    return 0;
}

static void cell(char *buf, size_t cap, double v, const char *fmt)
{
    if (v < 0 || isnan(v))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, fmt, v);
}

void rs_bench_table_print(FILE *out, const rs_bench_table *t, int tsv)
{
    const char *head[] = {"work",    "config",   "threads", "rate",        "unit",
                          "GFLOP/s", "of_bound", "spread",  "peak_RSS_MB", "bound_MB"};
    int width = 36; /* the work column: as wide as its widest (a road's name) */
    for (int i = 0; i < t->count; i++)
        width = (int)strlen(t->rows[i].work) > width ? (int)strlen(t->rows[i].work) : width;
    if (tsv)
        fprintf(out, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", head[0], head[1], head[2], head[3],
                head[4], head[5], head[6], head[7], head[8], head[9]);
    else
        fprintf(out, "%-*s %-6s %7s %9s %-11s %8s %8s %6s %11s %8s\n", width, head[0], head[1],
                head[2], head[3], head[4], head[5], head[6], head[7], head[8], head[9]);
    for (int i = 0; i < t->count; i++) {
        const rs_bench_row *r = &t->rows[i];
        char rate[32], gf[32], of[32], sp[32], rss[32], bound[32];
        const rs_bench_values *v = &r->v;
        cell(rate, sizeof rate, v->rate, v->rate < 100 ? "%.2f" : "%.0f");
        cell(gf, sizeof gf, v->gflops, "%.1f");
        cell(of, sizeof of, v->of_bound < 0 ? -1 : 100 * v->of_bound, "%.0f%%");
        cell(sp, sizeof sp, v->spread < 0 ? -1 : 100 * v->spread, "%.0f%%");
        cell(rss, sizeof rss, v->rss_mb, "%.0f");
        cell(bound, sizeof bound, v->bound_mb, "%.0f");
        if (tsv)
            fprintf(out, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r->work, r->config, r->threads,
                    rate, r->unit, gf, of, sp, rss, bound);
        else
            fprintf(out, "%-*s %-6s %7d %9s %-11s %8s %8s %6s %11s %8s\n", width, r->work,
                    r->config, r->threads, rate, r->unit, gf, of, sp, rss, bound);
    }
}
