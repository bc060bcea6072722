/* What `train` says to people (report.h). */
#include <math.h>
#include <signal.h>
#include <unistd.h>

#include "train/report.h"

static void report_progress(FILE *out, const rs_train_event *ev, int ranks)
{
    fprintf(
        out,
        "step %lld/%lld | epoch %d | loss %.4f | ppl %.2f | tok/s %.0f | gnorm %.3f | lr %.3g | "
        "eta %.0fs",
        (long long)ev->step, (long long)ev->total_steps, ev->epoch, ev->loss, ev->ppl,
        ev->tokens_per_s, ev->gnorm, ev->lr, ev->eta_s);
    /* Across ranks: the step's wall time and the all-reduce's share of it. */
    if (ranks > 1 && ev->step_s > 0)
        fprintf(out, " | step %.1f ms, all-reduce %.2f ms (%.0f%%)", 1e3 * ev->step_s,
                1e3 * ev->allreduce_s, 100.0 * ev->allreduce_s / ev->step_s);
    fputc('\n', out);
}

static void report_dev(FILE *out, const rs_train_event *ev)
{
    const long long step = (long long)ev->step;
    if (isnan(ev->dev_loss))
        fprintf(out, "epoch %d | step %lld | no dev set\n", ev->epoch, step);
    else if (ev->dev_bleu >= 0)
        fprintf(
            out,
            "epoch %d | step %lld | dev loss %.4f | dev ppl %.2f | dev BLEU %.2f | lr %.3g%s%s\n",
            ev->epoch, step, ev->dev_loss, ev->dev_ppl, ev->dev_bleu, ev->lr,
            ev->improved ? " | best" : "", ev->stop ? " | stopping (patience)" : "");
    else if (ev->dev_exact >= 0)
        fprintf(out, "epoch %d | step %lld | dev loss %.4f | dev ppl %.2f | dev exact %.2f%%%s\n",
                ev->epoch, step, ev->dev_loss, ev->dev_ppl, 100 * ev->dev_exact,
                ev->improved ? " | best" : "");
    else
        fprintf(out, "epoch %d | step %lld | dev loss %.4f | dev ppl %.2f%s\n", ev->epoch, step,
                ev->dev_loss, ev->dev_ppl, ev->improved ? " | best" : "");
    if (isfinite(ev->aer))
        fprintf(out, "epoch %d | step %lld | dev AER %.2f%% | precision %.2f%% | recall %.2f%%\n",
                ev->epoch, step, 100 * ev->aer, 100 * ev->align_precision, 100 * ev->align_recall);
}

void rs_train_report_event(FILE *out, const rs_train_event *ev, int quiet, int ranks)
{
    if (ev->kind == RS_EV_PROGRESS && !quiet)
        report_progress(out, ev, ranks);
    else if (ev->kind == RS_EV_DEV)
        report_dev(out, ev);
    else if (ev->kind == RS_EV_SAVED && !quiet)
        fprintf(out, "saved %s\n", ev->path);
}

/* The share of <unk> in each side of the training and dev data, and a
 * warning for each above 2 %. */
static void report_unknowns(FILE *out, const rs_train_run *run, const char *prog)
{
    const rs_dataset *sets[2] = {&run->train, &run->dev};
    const char *const set_names[2] = {"training", "dev"}, *const sides[2] = {"source", "target"};
    double share[2][2] = {{0}};
    fprintf(out, "<unk>:");
    for (int s = 0; s < 2; s++)
        for (int side = 0; side < 2; side++) {
            long unk, tokens;
            rs_dataset_unknowns(sets[s], side, &unk, &tokens);
            if (!tokens)
                continue;
            share[s][side] = 100.0 * (double)unk / (double)tokens;
            fprintf(out, " %s %s %.2f %%%s", set_names[s], sides[side], share[s][side],
                    s == 1 && side == 1 ? "" : ",");
        }
    fputc('\n', out);
    for (int s = 0; s < 2; s++)
        for (int side = 0; side < 2; side++)
            if (share[s][side] > 2.0)
                fprintf(out,
                        "%s: warning: %.1f %% of the %s %s tokens are <unk>: the vocabulary "
                        "(max_vocab, min_freq, %s_vocab) or the tokenizer (%s) leaves them out\n",
                        prog, share[s][side], set_names[s], sides[side], side ? "tgt" : "src",
                        rs_tokenizer_names[run->model.cfg.tokenizer]);
}

void rs_train_report_header(FILE *out, const rs_train_run *run, const char *dir, int resume,
                            int max_len, const char *prog)
{
    fprintf(out, "%s %s: %d training pair%s (%d longer than %d tokens left out), %d dev pair%s\n",
            resume ? "resuming" : "training", dir, run->train.count, RS_S(run->train.count),
            run->skipped, max_len, run->dev.count, RS_S(run->dev.count));
    fprintf(out, "vocabularies: %d source, %d target; %zu parameters\n", run->model.cfg.src_vocab,
            run->model.cfg.tgt_vocab, run->model.layout.total);
    report_unknowns(out, run, prog);
    fprintf(out, "configuration: ");
    const rs_config settings = rs_model_settings(&run->model);
    rs_config_print(&settings, out);
}

void rs_train_report_stop(FILE *out, rs_stop_reason reason, int sig, int epoch,
                          const rs_train_state *state, const rs_train_config *cfg, const char *dir)
{
    switch (reason) {
    case RS_STOP_EPOCHS:
        fprintf(out, "stopped: all %d epoch%s done", cfg->epochs, RS_S(cfg->epochs));
        break;
    case RS_STOP_MAX_STEPS: fprintf(out, "stopped: --max-steps %d reached", cfg->max_steps); break;
    case RS_STOP_TIME:
        fprintf(out, "stopped: --max-minutes %g reached", (double)cfg->max_minutes);
        break;
    case RS_STOP_PATIENCE:
        fprintf(out, "stopped: %d dev evaluation%s without improvement (--patience)", cfg->patience,
                RS_S(cfg->patience));
        break;
    case RS_STOP_SIGNAL:
        fprintf(out, "stopped: interrupted by %s",
                sig == SIGINT    ? "SIGINT (Ctrl-C)"
                : sig == SIGTERM ? "SIGTERM"
                : sig == SIGHUP  ? "SIGHUP"
                                 : "a signal");
        break;
    }
    fprintf(out, " at step %lld (epoch %d)\n", (long long)state->step, epoch);
    fprintf(out, "last model: %s/last.ckpt\n", dir);
    char best[4200];
    snprintf(best, sizeof best, "%s/best.ckpt", dir);
    if (access(best, F_OK) == 0) {
        fprintf(out, "best model: %s", best);
        if (cfg->dev_bleu && state->best_dev_bleu >= 0)
            fprintf(out, " (dev BLEU %.2f)", (double)state->best_dev_bleu);
        else if (isfinite(state->best_dev_loss))
            fprintf(out, " (dev loss %.4f)", (double)state->best_dev_loss);
        fputc('\n', out);
    }
}
