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

/* Each GEMM road's rate per thread count; bound[t]: the best of them. */
static int gemm_rows(rs_bench_table *t, const rs_bench_data *d, const rs_bench_plan *plan,
                     const rs_bench_size *cfg, double *bound, rs_error *err)
{
    const int V = d->model.cfg.tgt_vocab;
    for (int i = 0; i < plan->nthreads; i++) {
        const int threads = plan->threads[i];
        rs_bench_gemm_rate rates[RS_BENCH_ROADS];
        const int nroads = rs_bench_gemm_rates(cfg, V, threads, d->mean_lt, rates, err);
        if (nroads < 0)
            return -1;
        bound[i] = 0.0;
        for (int k = 0; k < nroads; k++) {
            char work[64];
            snprintf(work, sizeof work, "GEMM %s, step's shapes", rates[k].road);
            add_row(t, work, cfg->name, threads, "GFLOP/s",
                    (rs_bench_values){rates[k].best, rates[k].best, rates[k].worst / rates[k].best,
                                      -1, -1});
            bound[i] = rates[k].best > bound[i] ? rates[k].best : bound[i];
        }
    }
    return 0;
}

/* The rows of one training measurement (and its translation speeds). */
static void measured_rows(rs_bench_table *t, const rs_bench_plan *plan, const rs_bench_size *cfg,
                          int threads, int decode, const rs_bench_measured *m, double bound)
{
    add_row(
        t, "train", cfg->name, threads, "tgt tok/s",
        (rs_bench_values){m->tokens_per_s, m->gflops, m->gflops / bound, m->peak_mb, m->bound_mb});
    if (threads == 1) {
        add_row(t, "  step", cfg->name, 1, "ms/step",
                (rs_bench_values){1e3 * m->step_s, -1, -1, -1, -1});
        add_row(t, "  step: optimizer", cfg->name, 1, "ms/step",
                (rs_bench_values){1e3 * m->optimizer_s, -1,
                                  m->step_s > 0 ? m->optimizer_s / m->step_s : -1, -1, -1});
    }
    if (!decode)
        return;
    const char *which = plan->model_path ? "given" : cfg->name;
    char work[48];
    for (int beam = 0; beam < 2; beam++)
        for (int s = 0; s < 2; s++) {
            snprintf(work, sizeof work, "%s, batch %d", beam ? "beam 5" : "greedy", s ? 64 : 1);
            add_row(t, work, which, 1, "sent/s",
                    (rs_bench_values){(beam ? m->beam : m->greedy)[s], -1, -1, -1, -1});
        }
}

int rs_bench_table_size(rs_bench_table *t, const rs_bench_data *d, const rs_bench_plan *plan,
                        int size, rs_error *err)
{
    const rs_bench_size *cfg = &rs_bench_sizes[size];
    double bound[8];
    if (gemm_rows(t, d, plan, cfg, bound, err))
        return -1;
    const int n_steps = size == 0 ? plan->steps : (plan->steps / 3 > 3 ? plan->steps / 3 : 3);
    for (int i = 0; i < plan->nthreads; i++) {
        const int threads = plan->threads[i];
        rs_bench_measured m;
        memset(&m, 0, sizeof m);
        const int decode = !t->decoded && threads == 1;
        fprintf(plan->log, "%s, %d thread(s): %d steps%s...\n", cfg->name, threads, n_steps,
                decode ? ", then translation" : "");
        const rs_bench_job job = {cfg, threads, n_steps, decode, plan->sentences, plan->model_path};
        if (measure_apart(d, &job, plan, &m, err))
            return -1;
        t->decoded |= decode;
        measured_rows(t, plan, cfg, threads, decode, &m, bound[i]);
    }
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
    const char *head[] = {"work",    "config",   "threads",     "rate",    "unit",
                          "GFLOP/s", "of_bound", "peak_RSS_MB", "bound_MB"};
    if (tsv)
        fprintf(out, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", head[0], head[1], head[2], head[3],
                head[4], head[5], head[6], head[7], head[8]);
    else
        fprintf(out, "%-30s %-6s %7s %9s %-11s %8s %8s %11s %8s\n", head[0], head[1], head[2],
                head[3], head[4], head[5], head[6], head[7], head[8]);
    for (int i = 0; i < t->count; i++) {
        const rs_bench_row *r = &t->rows[i];
        char rate[32], gf[32], of[32], rss[32], bound[32];
        const rs_bench_values *v = &r->v;
        cell(rate, sizeof rate, v->rate, v->rate < 100 ? "%.2f" : "%.0f");
        cell(gf, sizeof gf, v->gflops, "%.1f");
        cell(of, sizeof of, v->of_bound < 0 ? -1 : 100 * v->of_bound, "%.0f%%");
        cell(rss, sizeof rss, v->rss_mb, "%.0f");
        cell(bound, sizeof bound, v->bound_mb, "%.0f");
        if (tsv)
            fprintf(out, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r->work, r->config, r->threads,
                    rate, r->unit, gf, of, rss, bound);
        else
            fprintf(out, "%-30s %-6s %7d %9s %-11s %8s %8s %11s %8s\n", r->work, r->config,
                    r->threads, rate, r->unit, gf, of, rss, bound);
    }
}
