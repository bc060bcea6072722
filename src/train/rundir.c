/* The model directory of a training run: its lock, what training writes
 * there (last.ckpt, best.ckpt, step-N.ckpt, train.log.tsv, train.loss.tsv,
 * train.log) and how a
 * resumed run tidies it (see rundir.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fault.h"
#include "common/fileio.h"
#include "train/rundir.h"
#include "train/watch.h"

/* Whether path is a lock as training leaves it: empty (made, PID not yet
 * written) or a PID on its first line; not another program's file. */
static int is_train_lock(const char *path)
{
    char text[32];
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    ssize_t n = fstat(fd, &st) || !S_ISREG(st.st_mode) ? -1 : read(fd, text, sizeof text);
    close(fd);
    if (n < 0)
        return 0;
    /* Training writes its PID and a line end (the first line is what counts:
     * a lock is only ever written whole by rs_train_lock). */
    size_t digits = 0;
    while ((ssize_t)digits < n && text[digits] >= '0' && text[digits] <= '9')
        digits++;
    return n == 0 || (digits > 0 && (ssize_t)digits < n && text[digits] == '\n');
}

int rs_train_lock(const char *dir, int *fd, rs_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/lock", dir);
    if (rs_make_parent_dirs(path, err))
        return -1;
    /* Not through a link, and not another program's file named lock: the
     * lock is truncated and rewritten below. */
    struct stat st;
    if (!lstat(path, &st) && (!S_ISREG(st.st_mode) || !is_train_lock(path)))
        return rs_fail(err,
                       "%s is not a training run's lock (%s): refusing to use %s (train into "
                       "another directory)",
                       path,
                       S_ISLNK(st.st_mode)    ? "a symbolic link"
                       : !S_ISREG(st.st_mode) ? "not a file"
                                              : "it holds other text",
                       dir);
    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (*fd < 0)
        return rs_fail(err, "%s: cannot open: %s", path, strerror(errno));
    if (flock(*fd, LOCK_EX | LOCK_NB)) {
        int e = errno;
        char pid[32] = "";
        ssize_t n = pread(*fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = 0;
        pid[strcspn(pid, "\n")] = 0;
        close(*fd);
        *fd = -1;
        if (e == EWOULDBLOCK)
            return rs_fail(err,
                           "%s is in use by another training (process %s); wait for it "
                           "to finish or train into another directory",
                           dir, pid[0] ? pid : "unknown");
        return rs_fail(err, "%s: cannot lock: %s", path, strerror(e));
    }
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(*fd, 0) || pwrite(*fd, pid, (size_t)len, 0) != len) {
        int e = errno;
        close(*fd);
        *fd = -1;
        return rs_fail(err, "%s: cannot write: %s", path, strerror(e));
    }
    return 0;
}

void rs_train_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* closing the last descriptor releases the flock */
}

/* A file DIR/lock as rs_train_lock leaves it: a PID and a newline (or
 * nothing yet), so that another program's file of that name is not taken
 * for a run's. */

int rs_rundir_is_run(const char *dir)
{
    static const char *const logs[] = {RS_TRAIN_LOG, RS_LOSS_TABLE, RS_WATCH_FILE};
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/lock", dir);
    if (is_train_lock(path))
        return 1;
    for (size_t i = 0; i < sizeof logs / sizeof *logs; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, logs[i]);
        if (!lstat(path, &st))
            return 1;
    }
    return 0;
}

/* What training writes into its directory, by name. Logs alone do not make
 * a model (a run stopped before its first save leaves some), but
 * --overwrite removes them with it. */
/* A run's vocabulary files (OUT_VOCAB) are neither: a new run writes its own
 * over them, and until then they may be its --src-vocab, so --overwrite
 * leaves them. */
enum { OUT_NONE, OUT_MODEL, OUT_STEP, OUT_TEMPORARY, OUT_LOG, OUT_VOCAB };

/* step-N.ckpt: *step = N. */
static int step_file(const char *name, long long *step)
{
    char *end;
    if (strncmp(name, "step-", 5) || !isdigit((unsigned char)name[5]))
        return 0;
    *step = strtoll(name + 5, &end, 10);
    return !strcmp(end, ".ckpt");
}

static int output_kind(const char *name)
{
    long long step;
    const char *tmp = strstr(name, ".tmp.");
    /* NAME.tmp.PID of a file training writes: another program's x.tmp.2
     * in the directory is not training's to remove. */
    if (tmp && tmp != name && tmp[5] && strspn(tmp + 5, "0123456789") == strlen(tmp + 5)) {
        char base[256];
        if ((size_t)(tmp - name) >= sizeof base)
            return OUT_NONE;
        snprintf(base, sizeof base, "%.*s", (int)(tmp - name), name);
        return output_kind(base) != OUT_NONE ? OUT_TEMPORARY : OUT_NONE;
    }
    if (step_file(name, &step))
        return OUT_STEP;
    if (!strcmp(name, "last.ckpt") || !strcmp(name, "best.ckpt") || !strcmp(name, RS_TRAIN_LOG) ||
        !strcmp(name, RS_WATCH_FILE))
        return OUT_MODEL;
    if (!strcmp(name, RS_LOSS_TABLE) || !strcmp(name, RS_TEXT_LOG) || !strcmp(name, RS_CONFIG_COPY))
        return OUT_LOG;
    if (!strcmp(name, RS_SRC_VOCAB_FILE) || !strcmp(name, RS_TGT_VOCAB_FILE))
        return OUT_VOCAB;
    return OUT_NONE;
}

int rs_rundir_is_training_name(const char *name)
{
    return output_kind(name) != OUT_NONE || !strcmp(name, "lock");
}

/* Removes the files of the kinds selected by mask (1 << kind) in dir. */
static int remove_outputs(const char *dir, int mask, rs_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : rs_fail(err, "%s: cannot list: %s", dir, strerror(errno));
    struct dirent *e;
    int status = 0;
    while ((e = readdir(d)) && status == 0) {
        if (!(mask & (1 << output_kind(e->d_name))))
            continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) && errno != ENOENT)
            status = rs_fail(err, "%s: cannot remove: %s", path, strerror(errno));
    }
    closedir(d);
    return status;
}

int rs_train_dir_has_model(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d)))
        found = output_kind(e->d_name) == OUT_MODEL || output_kind(e->d_name) == OUT_STEP;
    closedir(d);
    return found;
}

int rs_train_clear_dir(const char *dir, rs_error *err)
{
    return remove_outputs(dir, 1 << OUT_MODEL | 1 << OUT_STEP | 1 << OUT_TEMPORARY | 1 << OUT_LOG,
                          err);
}

static int compare_steps(const void *pa, const void *pb)
{
    long long a = *(const long long *)pa, b = *(const long long *)pb;
    return (a > b) - (a < b);
}

/* Removes step-N.ckpt files but the `keep` with the highest N. */
int rs_rundir_prune_steps(const char *dir, int keep, rs_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return rs_fail(err, "%s: cannot list: %s", dir, strerror(errno));
    long long *steps = NULL, step;
    size_t count = 0, cap = 0;
    struct dirent *e;
    int status = 0;
    while (status == 0 && (e = readdir(d))) {
        if (!step_file(e->d_name, &step))
            continue;
        if (count == cap) {
            long long *grown = realloc(steps, (cap = 2 * cap + 16) * sizeof *steps);
            if (!grown)
                status = rs_fail(err, "out of memory listing %s", dir);
            else
                steps = grown;
        }
        if (status == 0)
            steps[count++] = step;
    }
    closedir(d);
    if (status == 0 && count > (size_t)keep) {
        qsort(steps, count, sizeof *steps, compare_steps);
        for (size_t i = 0; i + (size_t)keep < count && status == 0; i++) {
            char path[4400];
            snprintf(path, sizeof path, "%s/step-%lld.ckpt", dir, steps[i]);
            if (unlink(path) && errno != ENOENT)
                status = rs_fail(err, "%s: cannot remove: %s", path, strerror(errno));
        }
    }
    free(steps);
    return status;
}

/* Removes NAME.tmp.PID files that saves killed before their rename left. */
int rs_rundir_remove_temporaries(const char *dir, rs_error *err)
{
    return remove_outputs(dir, 1 << OUT_TEMPORARY, err);
}

int rs_rundir_truncate_rows(const char *path, int header, const char *prefix, int64_t step,
                            rs_error *err)
{
    unsigned char *data;
    size_t size;
    if (access(path, F_OK))
        return 0;
    if (rs_read_file(path, &data, &size, err))
        return -1;
    const size_t plen = strlen(prefix);
    size_t keep = 0;
    for (int line = 0; keep < size; line++) {
        const unsigned char *eol = memchr(data + keep, '\n', size - keep);
        if (!eol)
            break; /* torn by a kill in the middle of its write */
        const char *row = (const char *)data + keep;
        if (line >= header && (strncmp(row, prefix, plen) || strtoll(row + plen, NULL, 10) > step))
            break;
        keep = (size_t)(eol - data) + 1;
    }
    int status = 0;
    if (keep < size) {
        rs_atomic_file af;
        if (rs_atomic_open(&af, path, err))
            status = -1;
        else if (fwrite(data, 1, keep, af.f) != keep) {
            rs_atomic_abort(&af);
            status = rs_fail(err, "%s: write failed", path);
        } else
            status = rs_atomic_commit(&af, err);
    }
    free(data);
    return status;
}

int rs_rundir_truncate_log(const char *dir, int64_t step, rs_error *err)
{
    char path[4200], loss[4200];
    snprintf(path, sizeof path, "%s/" RS_TRAIN_LOG, dir);
    snprintf(loss, sizeof loss, "%s/" RS_LOSS_TABLE, dir);
    return rs_rundir_truncate_rows(path, 1, "", step, err) ||
           rs_rundir_truncate_rows(loss, 1, "", step, err);
}

/* A table of the run directory opened for appending a row; its header line
 * first when the file is new or empty. NULL (err set) when it cannot be opened. */
static FILE *open_table(const char *path, const char *header, rs_error *err)
{
    FILE *f = fopen(path, "a");
    if (!f) {
        rs_fail(err, "%s: cannot open for appending: %s", path, strerror(errno));
        return NULL;
    }
    if (ftell(f) == 0)
        fputs(header, f);
    return f;
}

int rs_rundir_append_loss(const char *dir, const rs_loss_row *row, rs_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/" RS_LOSS_TABLE, dir);
    FILE *f = open_table(path, "step\tepoch\ttrain_loss\tsteps\ttokens\tlr\tgnorm\n", err);
    if (!f)
        return -1;
    fprintf(f, "%lld\t%d\t%.6f\t%d\t%ld\t%.6g\t%.6g\n", (long long)row->step, row->epoch, row->loss,
            row->steps, row->tokens, row->lr, row->gnorm);
    if (fclose(f))
        return rs_fail(err, "%s: write failed", path);
    return 0;
}

/* One row per evaluation. Empty cells where nothing was measured; the dev
 * metric is BLEU with --dev-bleu, else exact match in percent with
 * --dev-translate, named in the last column. */
int rs_rundir_append_log(const char *dir, const rs_train_event *ev, double train_loss,
                         rs_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/" RS_TRAIN_LOG, dir);
    FILE *f = open_table(path,
                         "step\tepoch\ttrain_loss\tdev_loss\tdev_metric\ttokens_per_s\tlr\twall_s\t"
                         "dev_metric_name\taer\talign_precision\talign_recall\n",
                         err);
    if (!f)
        return -1;
    char train[32] = "", dev[32] = "", metric[32] = "";
    const char *name = "";
    if (isfinite(train_loss))
        snprintf(train, sizeof train, "%.6f", train_loss);
    if (isfinite(ev->dev_loss))
        snprintf(dev, sizeof dev, "%.6f", ev->dev_loss);
    if (ev->dev_bleu >= 0)
        snprintf(metric, sizeof metric, "%.4f", ev->dev_bleu), name = "bleu";
    else if (ev->dev_exact >= 0)
        snprintf(metric, sizeof metric, "%.4f", 100 * ev->dev_exact), name = "exact_percent";
    /* Alignment error rate, precision and recall in percent (watch.h). */
    char align[3][32] = {"", "", ""};
    const double measured[3] = {ev->aer, ev->align_precision, ev->align_recall};
    for (int k = 0; k < 3; k++)
        if (isfinite(measured[k]))
            snprintf(align[k], sizeof align[k], "%.4f", 100 * measured[k]);
    fprintf(f, "%lld\t%d\t%s\t%s\t%s\t%.1f\t%.6g\t%.2f\t%s\t%s\t%s\t%s\n", (long long)ev->step,
            ev->epoch, train, dev, metric, ev->tokens_per_s, ev->lr, ev->elapsed_s, name, align[0],
            align[1], align[2]);
    /* Synced, as the header promises: the row of an evaluation outlives a
     * crash just after it, as the checkpoint saved for it does. */
    const int synced = fflush(f) == 0 && fsync(fileno(f)) == 0;
    if (fclose(f) || !synced)
        return rs_fail(err, "%s: write failed: %s", path, strerror(errno));
    rs_fault_point("log");
    return 0;
}

int rs_rundir_foreign(const char *dir, char *name, size_t size)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d))) {
        const char *n = e->d_name;
        found =
            strcmp(n, ".") && strcmp(n, "..") && strcmp(n, "lock") && output_kind(n) == OUT_NONE;
        if (found)
            snprintf(name, size, "%s", n);
    }
    closedir(d);
    return found;
}

/* DIR/name: the vocabulary, one token a line, replaced whole. */
static int write_vocab(const char *dir, const char *name, const rs_vocab *v, rs_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    rs_atomic_file af;
    if (rs_atomic_open(&af, path, err))
        return -1;
    rs_vocab_write(v, af.f, &af.errnum);
    return rs_atomic_commit(&af, err);
}

int rs_rundir_write_vocabs(const char *dir, const rs_model *model, rs_error *err)
{
    return write_vocab(dir, RS_SRC_VOCAB_FILE, &model->src_vocab, err) ||
                   write_vocab(dir, RS_TGT_VOCAB_FILE, &model->tgt_vocab, err)
               ? -1
               : 0;
}

void rs_rundir_forget(const char *dir, int lock, int text_log)
{
    char path[4200];
    rs_train_unlock(lock);
    snprintf(path, sizeof path, "%s/lock", dir);
    unlink(path);
    if (text_log) {
        snprintf(path, sizeof path, "%s/%s", dir, RS_TEXT_LOG);
        unlink(path);
    }
    rmdir(dir); /* only when nothing else is there */
}
