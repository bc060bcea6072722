/* The one rule for every file a command writes, and outputs replaced whole
 * (output.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train/output.h"
#include "model/checkpoint.h"
#include "model/locate.h"
#include "train/rundir.h"

void rs_output_rule_init(rs_output_rule *rule, rs_output_kind kind, const char *owns)
{
    memset(rule, 0, sizeof *rule);
    rule->kind = kind;
    rule->owns = owns;
}

void rs_output_rule_free(rs_output_rule *rule)
{
    for (int i = 0; i < rule->count; i++)
        free(rule->inputs[i]);
    free(rule->inputs);
    memset(rule, 0, sizeof *rule);
}

int rs_output_add_input(rs_output_rule *rule, const char *path, rs_error *err)
{
    if (!path)
        return 0;
    if (rule->count == rule->cap) {
        int cap = 2 * rule->cap + 8;
        char **grown = realloc(rule->inputs, (size_t)cap * sizeof *grown);
        if (!grown)
            return rs_fail(err, "out of memory");
        rule->inputs = grown;
        rule->cap = cap;
    }
    if (!(rule->inputs[rule->count] = rs_strdup(path, err)))
        return -1;
    rule->count++;
    return 0;
}

int rs_output_add_model(rs_output_rule *rule, const char *model_arg, rs_error *err)
{
    char path[4096];
    rs_error unresolved;
    if (!model_arg || rs_model_locate(model_arg, path, sizeof path, &unresolved))
        return 0;
    return rs_output_add_input(rule, path, err);
}

/* ---- signals --------------------------------------------------------------- */

/* Removes the temporary files and ends the program by the signal that came,
 * so that its exit status says so. The handler's signals are blocked while it
 * runs (sa_mask): a second one waits, and then finds nothing left to remove. */
static void remove_temporaries_and_end(int sig)
{
    rs_atomic_remove_temporaries();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig); /* delivered, by default, once the handler returns */
}

static void catch_signals(void)
{
    static int caught;
    if (caught)
        return;
    caught = 1;
    static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_temporaries_and_end;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof signals / sizeof *signals; i++)
        sigaddset(&sa.sa_mask, signals[i]);
    for (size_t i = 0; i < sizeof signals / sizeof *signals; i++) {
        struct sigaction old;
        /* A signal the caller ignores (nohup, a background job) stays ignored. */
        if (!sigaction(signals[i], NULL, &old) && old.sa_handler == SIG_DFL)
            sigaction(signals[i], &sa, NULL);
    }
    /* SIGXFSZ is ignored for every command from its start (cli/start.h). */
}

/* ---- the rule -------------------------------------------------------------- */

/* Whether path is a regular file that begins with a checkpoint's magic number. */
static int is_checkpoint(const char *path)
{
    char head[8];
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    int yes = !fstat(fd, &st) && S_ISREG(st.st_mode) && read(fd, head, 8) == 8 &&
              !memcmp(head, RS_CHECKPOINT_MAGIC, 8);
    close(fd);
    return yes;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* A training run's directory holds nothing from another command but the one
 * name it owns. */
static int check_run_dir(const rs_output_rule *rule, const char *path, rs_error *err)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    char dir[4200];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (!rs_rundir_is_run(dir) || (rule->owns && !strcmp(name, rule->owns)))
        return 0;
    if (rule->kind == RS_OUTPUT_CHECKPOINT && rule->beside_run) {
        /* Training's names stay training's: last.ckpt and best.ckpt are the
         * run's models, a step-N.ckpt would be pruned by --keep-last. */
        if (!rs_rundir_is_training_name(name))
            return 0;
        return rs_fail(err,
                       "%s: %s is a file training writes in its run directory %s; refusing to "
                       "write there (give another name, such as %s/average.ckpt)",
                       path, name, dir, dir);
    }
    return rs_fail(err,
                   "%s: %s is a training run's directory, where only training writes%s%s%s; "
                   "refusing to write there (give a name in another directory)",
                   path, dir, rule->owns ? " (and this command its " : "",
                   rule->owns ? rule->owns : "", rule->owns ? ")" : "");
}

/* An existing FIFO or character device (links followed) that a text output
 * is written to as a stream. */
static int is_stream(const rs_output_rule *rule, const char *path)
{
    struct stat st;
    return rule->kind == RS_OUTPUT_TEXT && !stat(path, &st) &&
           (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
}

/* Whether path is the pipe standard input reads from (/dev/stdin, or
 * /proc/self/fd/0, on a pipe): writing there would feed the command its own
 * output. */
static int is_stdin_pipe(const char *path)
{
    struct stat a, b;
    return !stat(path, &a) && S_ISFIFO(a.st_mode) && !fstat(STDIN_FILENO, &b) &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Whether path is a regular file that begins as a safetensors file does: an
 * 8-byte little-endian header length, then the header's '{'. */
static int is_safetensors(const char *path)
{
    unsigned char head[9];
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    int yes = !fstat(fd, &st) && S_ISREG(st.st_mode) && read(fd, head, 9) == 9 && head[8] == '{';
    close(fd);
    return yes;
}

/* Whether a text output names the file standard output already is
 * (/dev/stdout, /dev/fd/1, or FILE in "-o FILE > FILE"): written there as
 * "-o -" would be, not replaced under the shell's descriptor. */
static int is_stdout(const rs_output_rule *rule, const char *path)
{
    struct stat a, b;
    return rule->kind == RS_OUTPUT_TEXT && !stat(path, &a) && !fstat(STDOUT_FILENO, &b) &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int rs_output_check(const rs_output_rule *rule, const char *path, rs_error *err)
{
    if (!path || !strcmp(path, "-"))
        return 0;
    if (!*path)
        return rs_fail(err, "the output's name is empty");
    catch_signals();
    struct stat st;
    const int regular = !stat(path, &st) && S_ISREG(st.st_mode);
    for (int i = 0; regular && i < rule->count; i++)
        if (rs_check_output_not_input(path, rule->inputs[i], err))
            return -1;
    if (is_stdin_pipe(path))
        return rs_fail(err,
                       "%s is the pipe standard input reads: refusing to write there (the "
                       "command would read its own output)",
                       path);
    if (is_stream(rule, path) || is_stdout(rule, path))
        return 0;
    /* A link, directory or device would be destroyed by the rename. */
    if (rs_check_replaceable(path, err))
        return -1;
    if (rule->kind != RS_OUTPUT_CHECKPOINT) {
        if (regular && is_checkpoint(path))
            return rs_fail(err,
                           "%s is a checkpoint: refusing to replace it (give the output another "
                           "name)",
                           path);
        if (ends_with(path, ".ckpt"))
            return rs_fail(err,
                           "%s: a .ckpt name is a checkpoint's (-m would load it); refusing to "
                           "write anything else under it",
                           path);
    } else if (regular && st.st_size > 0 && !is_checkpoint(path)) {
        return rs_fail(err, "%s exists and is not a checkpoint: refusing to replace it with one",
                       path);
    }
    if (rule->kind == RS_OUTPUT_BINARY && regular && st.st_size > 0 && !is_safetensors(path))
        return rs_fail(
            err, "%s exists and is not a safetensors file: refusing to replace it with one", path);
    if (check_run_dir(rule, path, err))
        return -1;
    /* A rename ignores the file's own permissions: honour them as writing it would. */
    if (regular &&
        ((access(path, W_OK) && errno == EACCES) || !(st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH))))
        return rs_fail(err, "%s is read-only: refusing to replace it", path);
    return 0;
}

/* ---- writing --------------------------------------------------------------- */

int rs_output_open(rs_output *out, const rs_output_rule *rule, const char *path, rs_error *err)
{
    memset(out, 0, sizeof *out);
    out->f = stdout;
    out->name = "standard output";
    if (!path || !strcmp(path, "-"))
        return 0;
    if (rs_output_check(rule, path, err))
        return -1;
    if (is_stdout(rule, path))
        return 0;
    out->name = path;
    if (is_stream(rule, path)) {
        /* Nothing to keep or to replace: written to as the shell writes "> FILE". */
        FILE *f = fopen(path, "w");
        if (!f) {
            int e = errno;
            return rs_fail(err, "cannot open %s for writing: %s", path, strerror(e));
        }
        out->f = f;
        out->stream = 1;
        return 0;
    }
    if (rs_atomic_open_with(&out->af, path, rule->kind == RS_OUTPUT_TEXT ? 0 : RS_ATOMIC_MAKE_DIRS,
                            err))
        return -1;
    out->f = out->af.f;
    out->atomic = 1;
    return 0;
}

int rs_output_flush(rs_output *out, rs_error *err)
{
    errno = 0;
    if (!fflush(out->f) && !ferror(out->f))
        return 0;
    int e = errno;
    return rs_fail(err, "cannot write %s: %s%s", out->name, e ? strerror(e) : "write error",
                   out->atomic ? " (the file is left as it was)" : "");
}

int rs_output_commit(rs_output *out, rs_error *err)
{
    if (out->atomic) {
        out->atomic = 0;
        out->f = stdout;
        return rs_atomic_commit(&out->af, err);
    }
    errno = 0;
    int bad = fflush(out->f) != 0 || ferror(out->f);
    int e = errno;
    if (out->stream && fclose(out->f) && !bad) {
        bad = 1;
        e = errno;
    }
    out->stream = 0;
    out->f = stdout;
    if (bad)
        return rs_fail(err, "cannot write %s: %s", out->name, e ? strerror(e) : "write error");
    return 0;
}

void rs_output_abort(rs_output *out)
{
    if (out->atomic)
        rs_atomic_abort(&out->af);
    else if (out->stream)
        fclose(out->f);
    out->atomic = out->stream = 0;
    out->f = stdout;
}

int rs_output_copy(const char *text, size_t size, const char *from, const char *path,
                   const char *owns, rs_error *err)
{
    rs_output_rule rule;
    rs_output_rule_init(&rule, RS_OUTPUT_TEXT, owns);
    rs_output out = {0};
    int status = rs_output_add_input(&rule, from, err) || rs_output_open(&out, &rule, path, err);
    if (!status && size && fwrite(text, 1, size, out.f) != size)
        status = rs_fail(err, "%s: write failed", path);
    if (!status)
        status = rs_output_commit(&out, err);
    if (status)
        rs_output_abort(&out);
    rs_output_rule_free(&rule);
    return status ? -1 : 0;
}
