/* Files: mkdir -p, atomic replacement and whole-file reads. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fault.h"
#include "common/fileio.h"

/* ---- directories --------------------------------------------------------- */

int rs_is_directory(const char *path)
{
    struct stat st;
    return !stat(path, &st) && S_ISDIR(st.st_mode);
}

int rs_make_parent_dirs(const char *path, rs_error *err)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return 0; /* the current directory or "/" */
    size_t len = (size_t)(slash - path);
    char *dir = rs_calloc(len + 1, 1, err);
    if (!dir)
        return -1;
    memcpy(dir, path, len);
    /* Create each prefix in turn, as mkdir -p does. */
    for (size_t i = 1; i <= len; i++) {
        if (i < len && dir[i] != '/')
            continue;
        char saved = dir[i];
        dir[i] = 0;
        if (mkdir(dir, 0777) && errno != EEXIST) {
            int e = errno;
            rs_fail(err, "cannot create directory %s: %s", dir, strerror(e));
            free(dir);
            return -1;
        }
        dir[i] = saved;
    }
    if (!rs_is_directory(dir)) {
        rs_fail(err, "%s is not a directory", dir);
        free(dir);
        return -1;
    }
    free(dir);
    return 0;
}

/* fsync of the directory holding `path`, so that the rename itself is durable.
 * EINVAL means the file system cannot sync directories: nothing more to do. */
static int sync_parent_dir(const char *path, rs_error *err)
{
    const char *slash = strrchr(path, '/');
    char *dir;
    if (!slash)
        dir = strdup(".");
    else if (slash == path)
        dir = strdup("/");
    else {
        dir = malloc((size_t)(slash - path) + 1);
        if (dir) {
            memcpy(dir, path, (size_t)(slash - path));
            dir[slash - path] = 0;
        }
    }
    if (!dir)
        return rs_fail(err, "out of memory");
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        int e = errno;
        rs_fail(err, "%s: saved, but cannot open its directory %s to sync it: %s", path, dir,
                strerror(e));
        free(dir);
        return -1;
    }
    int rc = 0;
    if (fsync(fd) && errno != EINVAL) {
        int e = errno;
        rc = rs_fail(err, "%s: saved, but syncing directory %s failed: %s", path, dir, strerror(e));
    }
    close(fd);
    free(dir);
    return rc;
}

/* ---- atomic replacement ---------------------------------------------------- */

static const char *file_kind(mode_t mode)
{
    if (S_ISLNK(mode))
        return "a symbolic link";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

/* A rename may replace nothing or a regular file: renaming over a symbolic
 * link, a device or a FIFO would destroy it instead of writing through it.
 * *mode: the mode of the regular file found, 0 when there is none. */
static int check_replaceable(const char *path, mode_t *mode, rs_error *err)
{
    struct stat st;
    *mode = 0;
    if (lstat(path, &st)) {
        int e = errno;
        if (e == ENOENT)
            return 0;
        return rs_fail(err, "cannot examine %s: %s", path, strerror(e));
    }
    if (S_ISREG(st.st_mode)) {
        *mode = st.st_mode & 07777;
        return 0;
    }
    return rs_fail(err,
                   "%s is %s; refusing to replace it (only a regular file or a new name is "
                   "written)",
                   path, file_kind(st.st_mode));
}

int rs_check_replaceable(const char *path, rs_error *err)
{
    mode_t mode;
    return check_replaceable(path, &mode, err);
}

/* The names of the temporary files that exist now, in storage a signal handler
 * may read without locks or allocation: a slot is 0 (free), 2 (being filled)
 * or 1 (holds a name to remove). */
#define TEMPORARY_SLOTS 16
static struct {
    atomic_int state;
    char name[4200];
} temporaries[TEMPORARY_SLOTS];

/* 1 + the slot now holding tmp, or 0 when none was free (the file is then
 * not removed by a signal: a later run of the same PID, or a resumed
 * training, removes it). */
static int remember_temporary(const char *tmp)
{
    if (strlen(tmp) >= sizeof temporaries[0].name)
        return 0;
    for (int i = 0; i < TEMPORARY_SLOTS; i++) {
        int free_slot = 0;
        if (atomic_compare_exchange_strong(&temporaries[i].state, &free_slot, 2)) {
            strcpy(temporaries[i].name, tmp);
            atomic_store(&temporaries[i].state, 1);
            return i + 1;
        }
    }
    return 0;
}

static void forget_temporary(int slot)
{
    if (slot > 0)
        atomic_store(&temporaries[slot - 1].state, 0);
}

void rs_atomic_remove_temporaries(void)
{
    for (int i = 0; i < TEMPORARY_SLOTS; i++)
        if (atomic_load(&temporaries[i].state) == 1)
            unlink(temporaries[i].name);
}

/* A full disk, for the tests (RNNSEARCH_FAULT=enospc): fd's writes go to
 * /dev/full, where each fails with ENOSPC. */
static int write_to_full_device(int fd)
{
    int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
    int rc = full < 0 || dup2(full, fd) < 0 ? -1 : 0;
    if (full >= 0) {
        int e = errno;
        close(full);
        errno = e;
    }
    return rc;
}

int rs_atomic_open_with(rs_atomic_file *af, const char *path, int flags, rs_error *err)
{
    memset(af, 0, sizeof *af);
    mode_t mode;
    if (check_replaceable(path, &mode, err) ||
        ((flags & RS_ATOMIC_MAKE_DIRS) && rs_make_parent_dirs(path, err)))
        return -1;
    size_t tmp_size = strlen(path) + 32;
    af->tmp = rs_calloc(tmp_size, 1, err);
    af->path = strdup(path);
    if (!af->tmp || !af->path) {
        rs_fail(err, "out of memory");
        goto fail;
    }
    /* NAME.tmp.PID beside it (what a resumed training removes); a NAME near
     * the 255-byte limit of a file name is shortened there, or the output
     * could not be written under a name it may have. */
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char pid[24];
    snprintf(pid, sizeof pid, ".tmp.%ld", (long)getpid());
    size_t keep = strlen(base) + strlen(pid) > 255 ? 255 - strlen(pid) : strlen(base);
    snprintf(af->tmp, tmp_size, "%.*s%s", (int)(base - path + keep), path, pid);
    /* Recorded before it exists, so that no signal finds it unrecorded. */
    af->slot = remember_temporary(af->tmp);
    /* A new file, never one found under that name (a link left there would
     * be written through); a leftover of a killed process of the same PID goes. */
    int fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST && !unlink(af->tmp))
        fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT && !(flags & RS_ATOMIC_MAKE_DIRS))
            rs_fail(err, "cannot write %s: its directory does not exist", path);
        else
            rs_fail(err, "cannot write %s: cannot create %s: %s", path, af->tmp, strerror(e));
        goto fail;
    }
    int e = 0;
    /* The replaced file's mode carries over, as sed -i keeps it. */
    if (mode && fchmod(fd, mode))
        e = errno;
    else if (rs_fault_fails("enospc") && write_to_full_device(fd))
        e = errno;
    if (!e && !(af->f = fdopen(fd, "wb")))
        e = errno;
    if (e) {
        close(fd);
        unlink(af->tmp);
        rs_fail(err, "cannot write %s: %s: %s", path, af->tmp, strerror(e));
        goto fail;
    }
    return 0;
fail:
    forget_temporary(af->slot);
    free(af->tmp);
    free(af->path);
    memset(af, 0, sizeof *af);
    return -1;
}

int rs_atomic_open(rs_atomic_file *af, const char *path, rs_error *err)
{
    return rs_atomic_open_with(af, path, RS_ATOMIC_MAKE_DIRS, err);
}

void rs_atomic_abort(rs_atomic_file *af)
{
    if (af->f)
        fclose(af->f);
    if (af->tmp)
        unlink(af->tmp);
    forget_temporary(af->slot);
    free(af->tmp);
    free(af->path);
    memset(af, 0, sizeof *af);
}

int rs_atomic_commit(rs_atomic_file *af, rs_error *err)
{
    int e = af->errnum;
    /* The data must be on disk before the rename makes it the file. The
     * buffer is flushed first: a write that failed before fails again there,
     * with its errno. */
    errno = 0;
    if (!e && fflush(af->f))
        e = errno ? errno : -1;
    if (!e && ferror(af->f))
        e = -1;
    if (!e && fsync(fileno(af->f)))
        e = errno ? errno : -1;
    errno = 0;
    int closed = fclose(af->f);
    af->f = NULL;
    if (closed && !e)
        e = errno ? errno : -1;
    if (e) {
        rs_fail(err, "cannot write %s: %s (the file is left as it was)", af->path,
                e > 0 ? strerror(e) : "write error");
        rs_atomic_abort(af);
        return -1;
    }
    /* Again: the target may have changed while the file was written. */
    mode_t mode;
    if (check_replaceable(af->path, &mode, err)) {
        rs_atomic_abort(af);
        return -1;
    }
    rs_fault_point("rename");
    if (rename(af->tmp, af->path)) {
        e = errno;
        rs_fail(err, "cannot rename %s to %s: %s", af->tmp, af->path, strerror(e));
        rs_atomic_abort(af);
        return -1;
    }
    /* Renamed: the temporary name is gone, nothing for a signal to remove. */
    forget_temporary(af->slot);
    int rc = sync_parent_dir(af->path, err);
    free(af->tmp);
    free(af->path);
    memset(af, 0, sizeof *af);
    return rc;
}

/* ---- identity ------------------------------------------------------------ */

/* "-" is standard input (an output named "-" is standard output to the
 * commands, which never write a file of that name). */
static int stat_named(const char *path, int fd_for_dash, struct stat *st)
{
    if (!strcmp(path, "-"))
        return fstat(fd_for_dash, st);
    return stat(path, st);
}

int rs_same_file(const char *path_a, const char *path_b)
{
    struct stat a, b;
    if (!path_a || !path_b || stat_named(path_a, 0, &a) || stat_named(path_b, 0, &b))
        return 0;
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int rs_check_output_not_input(const char *output, const char *input, rs_error *err)
{
    if (!output || !strcmp(output, "-") || !rs_same_file(output, input))
        return 0;
    return rs_fail(err, "%s is the same file as %s: refusing to overwrite an input", output,
                   strcmp(input, "-") ? input : "standard input");
}

/* ---- reading ------------------------------------------------------------- */

int rs_open_regular(const char *path, FILE **f, size_t *size, rs_error *err)
{
    *f = NULL;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer before it is refused. */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        return rs_fail(err, "cannot open %s: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return rs_fail(err, "%s is not a regular file", path);
    }
    if ((uintmax_t)st.st_size > SIZE_MAX - 1) {
        close(fd);
        return rs_fail(err, "%s is too large to read", path);
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags == -1 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) || !(*f = fdopen(fd, "rb"))) {
        int e = errno;
        close(fd);
        return rs_fail(err, "cannot open %s: %s", path, strerror(e));
    }
    *size = (size_t)st.st_size;
    return 0;
}

int rs_read_exact(FILE *f, void *buf, size_t n, const char *path, rs_error *err)
{
    size_t got = fread(buf, 1, n, f);
    if (got == n)
        return 0;
    return rs_fail(err, "reading %s failed%s", path,
                   ferror(f) ? "" : " (the file changed while being read)");
}

int rs_read_file(const char *path, unsigned char **data, size_t *size, rs_error *err)
{
    *data = NULL;
    FILE *f;
    size_t n;
    if (rs_open_regular(path, &f, &n, err))
        return -1;
    unsigned char *buf = calloc(n + 1, 1);
    if (!buf) {
        fclose(f);
        return rs_fail(err, "%s: out of memory for its %zu bytes", path, n);
    }
    if (rs_read_exact(f, buf, n, path, err)) {
        fclose(f);
        free(buf);
        return -1;
    }
    fclose(f);
    *data = buf;
    *size = n;
    return 0;
}
