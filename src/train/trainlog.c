/* Reading a training run's logs back (see trainlog.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "model/locate.h"
#include "text/corpus.h"
#include "train/rundir.h"
#include "train/trainlog.h"

/* The log's names of the curves' columns. */
static const char *const col_names[RS_CURVES] = {"step", "train_loss", "dev_loss", "dev_metric",
                                                 "aer"};

int rs_train_log_read(const char *path, rs_curves *s, rs_error *err)
{
    rs_lines lines;
    memset(s, 0, sizeof *s);
    if (rs_lines_read(path, &lines, err))
        return -1;
    int where[RS_CURVES];
    if (lines.count == 0) {
        rs_lines_free(&lines);
        return rs_fail(err, "%s: empty file", path);
    }
    /* Header: the index of each wanted column. */
    for (int k = 0; k < RS_CURVES; k++)
        where[k] = -1;
    {
        int idx = 0;
        const char *p = lines.lines[0];
        while (1) {
            size_t n = strcspn(p, "\t");
            for (int k = 0; k < RS_CURVES; k++)
                if (strlen(col_names[k]) == n && !strncmp(p, col_names[k], n))
                    where[k] = idx;
            idx++;
            if (!p[n])
                break;
            p += n + 1;
        }
    }
    if (where[RS_CURVE_STEP] < 0 || where[RS_CURVE_TRAIN] < 0) {
        rs_lines_free(&lines);
        return rs_fail(err, "%s:1: not a training log (no 'step' and 'train_loss' columns)", path);
    }
    s->capacity = lines.count;
    for (int k = 0; k < RS_CURVES; k++)
        if (!(s->v[k] = rs_calloc((size_t)lines.count, sizeof(double), err))) {
            rs_curves_free(s);
            rs_lines_free(&lines);
            return -1;
        }
    for (int r = 1; r < lines.count; r++) {
        if (!lines.lines[r][0])
            continue;
        double row[RS_CURVES];
        for (int k = 0; k < RS_CURVES; k++)
            row[k] = NAN;
        int idx = 0;
        const char *p = lines.lines[r];
        while (1) {
            size_t n = strcspn(p, "\t");
            for (int k = 0; k < RS_CURVES; k++)
                if (where[k] == idx) {
                    char *end;
                    double v = strtod(p, &end);
                    row[k] = end == p + n && n > 0 && isfinite(v) ? v : NAN;
                }
            idx++;
            if (!p[n])
                break;
            p += n + 1;
        }
        if (isnan(row[RS_CURVE_STEP])) {
            rs_curves_free(s);
            rs_lines_free(&lines);
            return rs_fail(err, "%s:%d: no step number", path, r + 1);
        }
        if (row[RS_CURVE_METRIC] < 0)
            row[RS_CURVE_METRIC] = NAN;
        for (int k = 0; k < RS_CURVES; k++)
            s->v[k][s->count] = row[k];
        s->count++;
    }
    rs_lines_free(&lines);
    if (s->count == 0) {
        rs_curves_free(s);
        return rs_fail(err, "%s: no rows yet (the log gets one per evaluation)", path);
    }
    return 0;
}

int rs_train_loss_read(const char *log, rs_curves *t, rs_error *err)
{
    const char *slash = strrchr(log, '/');
    char path[4200];
    snprintf(path, sizeof path, "%.*s" RS_LOSS_TABLE, slash ? (int)(slash - log + 1) : 0, log);
    memset(t, 0, sizeof *t);
    if (!strcmp(path, log) || access(path, F_OK))
        return 0;
    return rs_train_log_read(path, t, err);
}

void rs_train_log_path(const char *arg, char *log, size_t size)
{
    struct stat st;
    if (rs_is_directory(arg))
        snprintf(log, size, "%s/" RS_TRAIN_LOG, arg);
    else if (!strchr(arg, '/') && stat(arg, &st)) {
        /* A bare NAME: where -m looks, $RNNSEARCH_MODELS/NAME then ./models/NAME
         * (a missing log is reported at the first place). */
        snprintf(log, size, "%s/%s/" RS_TRAIN_LOG, rs_models_dir(), arg);
        if (stat(log, &st) && strcmp(rs_models_dir(), "models")) {
            char local[4200];
            snprintf(local, sizeof local, "models/%s/" RS_TRAIN_LOG, arg);
            if (!stat(local, &st))
                snprintf(log, size, "%s", local);
        }
    } else
        snprintf(log, size, "%s", arg);
}
