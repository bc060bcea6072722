/* Where `align` writes alignments (align_output.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "train/align_output.h"

int rs_align_output_color(int when, int to_stdout)
{
    if (when == 1)
        return 1;
    if (when == 2 || !to_stdout || !isatty(STDOUT_FILENO))
        return 0;
    const char *no = getenv("NO_COLOR"), *term = getenv("TERM"), *ct = getenv("COLORTERM");
    if (no && *no)
        return 0;
    return (term && strstr(term, "256color")) ||
           (ct && (!strcmp(ct, "truecolor") || !strcmp(ct, "24bit")));
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* One picture per sentence: where they go, every name checked by the rule
 * before the first is written (a run's directory takes none); one .svg
 * file, now that it is known to be one. */
static int open_pictures(rs_align_output *o, int count, rs_error *err)
{
    if (!o->out_path && count != 1)
        return rs_fail(err, "%s of %d sentences needs --output DIR (one file per sentence)",
                       o->writer->name, count);
    if (o->out_path && !strcmp(o->out_path, "-") && count != 1)
        return rs_fail(err, "%s of %d sentences needs --output DIR, not standard output",
                       o->writer->name, count);
    if (o->out_path && !strcmp(o->out_path, "-"))
        o->out_path = NULL; /* one picture: standard output */
    o->svg_dir = o->out_path && (rs_is_directory(o->out_path) || !ends_with(o->out_path, ".svg"));
    if (o->out_path && !o->svg_dir && count != 1)
        return rs_fail(err, "%s: %d sentences need a directory, not one .svg file", o->out_path,
                       count);
    char path[4200];
    for (int i = 1; o->out_path && i <= (o->svg_dir ? count : 1); i++) {
        if (o->svg_dir)
            snprintf(path, sizeof path, "%s/%04d.svg", o->out_path, i);
        else
            snprintf(path, sizeof path, "%s", o->out_path);
        if (rs_output_check(&o->rule, path, err))
            return -1;
    }
    return 0;
}

int rs_align_output_open(rs_align_output *o, int count, rs_error *err)
{
    if (o->writer->file_per_sentence) {
        if (open_pictures(o, count, err))
            return RS_ALIGN_OUTPUT_REFUSED;
        if (o->svg_dir) {
            char path[4200];
            snprintf(path, sizeof path, "%s/0001.svg", o->out_path);
            return rs_make_parent_dirs(path, err);
        }
    }
    if (rs_output_open(&o->output, &o->rule, o->out_path, err))
        return -1;
    o->out = o->output.f;
    if (o->writer->begin && o->writer->begin(o->out, &o->style)) {
        if (!rs_output_flush(&o->output, err))
            rs_fail(err, "cannot write %s", o->output.name);
        return -1;
    }
    return 0;
}

int rs_align_output_write(void *ctx, const rs_alignment *a, int id, rs_error *err)
{
    rs_align_output *o = ctx;
    int rc = 0;
    char path[4200];
    if (o->svg_dir) {
        /* One picture, written whole under the same rule as any output. */
        rs_output picture;
        snprintf(path, sizeof path, "%s/%04d.svg", o->out_path, id);
        if ((rc = rs_output_open(&picture, &o->rule, path, err)) == 0) {
            if (o->writer->write(picture.f, a, id, &o->style))
                rc = rs_output_flush(&picture, err) ? -1 : rs_fail(err, "cannot write %s", path);
            if (rc == 0)
                rc = rs_output_commit(&picture, err);
            rs_output_abort(&picture);
        }
    } else if (o->writer->write(o->out, a, id, &o->style)) {
        rc =
            rs_output_flush(&o->output, err) ? -1 : rs_fail(err, "cannot write %s", o->output.name);
    }
    if (!rc)
        o->written++;
    return rc;
}

int rs_align_output_close(rs_align_output *o, rs_error *err)
{
    if (o->svg_dir)
        return 0;
    if (o->writer->end && o->writer->end(o->out, &o->style))
        return rs_output_flush(&o->output, err) ? -1
                                                : rs_fail(err, "cannot write %s", o->output.name);
    return rs_output_commit(&o->output, err);
}
