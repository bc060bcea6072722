#include <stdio.h>
#include <string.h>

#include "serve/models.h"

void rs_serve_model_name(const char *model_arg, char *name, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", model_arg);
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = '\0';
    char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if ((!strcmp(base, "best.ckpt") || !strcmp(base, "last.ckpt")) && base > path) {
        base[-1] = '\0';
        char *dir = strrchr(path, '/');
        base = dir ? dir + 1 : path;
    } else if (n > 5 && !strcmp(path + n - 5, ".ckpt") && base < path + n - 5) {
        path[n - 5] = '\0';
    }
    snprintf(name, size, "%s", base);
}

int rs_serve_models_load(rs_serve_models *m, const char *const *args, int count,
                         const rs_ready_options *ready, rs_error *err)
{
    if (count > RS_SERVE_MAX_MODELS)
        return rs_fail(err, "at most %d models", RS_SERVE_MAX_MODELS);
    for (; m->loaded < count; m->loaded++) {
        const int k = m->loaded;
        if (rs_ready_load(&m->models[k], args[k], ready, &m->codecs[k], NULL, 0, err))
            return -1;
        rs_serve_model_name(args[k], m->names[k], sizeof m->names[k]);
        m->served[k] = (rs_serve_model){m->names[k], &m->models[k], &m->codecs[k]};
    }
    return 0;
}

void rs_serve_models_free(rs_serve_models *m)
{
    for (int k = 0; k < m->loaded; k++) {
        rs_codec_free(&m->codecs[k]);
        rs_ready_free(&m->models[k]);
    }
    m->loaded = 0;
}
