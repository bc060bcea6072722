#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "model/locate.h"

const char *rs_models_dir(void)
{
    const char *dir = getenv(RS_MODELS_ENV);
    return dir && *dir ? dir : "models";
}

static int is_file(const char *path)
{
    struct stat st;
    return !stat(path, &st) && S_ISREG(st.st_mode);
}

static int pick_in_dir(const char *dir, char *path, size_t size, rs_error *err)
{
    static const char *const names[] = {"best.ckpt", "last.ckpt"};
    for (int i = 0; i < 2; i++) {
        int n = snprintf(path, size, "%s/%s", dir, names[i]);
        if (n < 0 || (size_t)n >= size)
            return rs_fail(err, "path too long: %s/%s", dir, names[i]);
        if (is_file(path))
            return 0;
    }
    return rs_fail(err, "%s holds no checkpoint (neither best.ckpt nor last.ckpt)", dir);
}

int rs_model_locate(const char *model_arg, char *path, size_t size, rs_error *err)
{
    if (!model_arg || !*model_arg)
        return rs_fail(err, "no model given");
    if (rs_is_directory(model_arg))
        return pick_in_dir(model_arg, path, size, err);
    if (is_file(model_arg)) {
        int n = snprintf(path, size, "%s", model_arg);
        if (n < 0 || (size_t)n >= size)
            return rs_fail(err, "path too long: %s", model_arg);
        return 0;
    }
    struct stat st;
    if (!stat(model_arg, &st))
        return rs_fail(err,
                       "%s is neither a checkpoint file nor a model directory (it exists, but is "
                       "not a regular file)",
                       model_arg);
    if (strchr(model_arg, '/'))
        return rs_fail(err, "%s: no such checkpoint file or model directory", model_arg);
    const char *env = getenv(RS_MODELS_ENV);
    const char *places[2] = {env && *env ? env : NULL, "models"};
    char looked[1024] = "";
    size_t used = 0;
    for (int i = 0; i < 2; i++) {
        if (!places[i])
            continue;
        char dir[4096];
        int n = snprintf(dir, sizeof dir, "%s/%s", places[i], model_arg);
        if (n > 0 && (size_t)n < sizeof dir && rs_is_directory(dir))
            return pick_in_dir(dir, path, size, err);
        if (used < sizeof looked)
            used += (size_t)snprintf(looked + used, sizeof looked - used, "%s%s", used ? ", " : "",
                                     n > 0 && (size_t)n < sizeof dir ? dir : places[i]);
    }
    return rs_fail(err,
                   "no model '%s': not a checkpoint file or model directory here, and not in %s "
                   "(%s sets the models directory; `rnnsearch help models`)",
                   model_arg, looked, RS_MODELS_ENV);
}

int rs_run_dir_locate(const char *arg, char *dir, size_t size, rs_error *err)
{
    if (!arg || !*arg)
        return rs_fail(err, "no run directory given");
    const char *env = getenv(RS_MODELS_ENV);
    /* DIR as given, then a bare NAME where -m looks for it. */
    const char *places[3] = {NULL, env && *env ? env : NULL, "models"};
    char looked[1024] = "";
    size_t used = 0;
    for (int i = 0; i < (strchr(arg, '/') ? 1 : 3); i++) {
        if (i > 0 && !places[i])
            continue;
        int n = i ? snprintf(dir, size, "%s/%s", places[i], arg) : snprintf(dir, size, "%s", arg);
        if (n < 0 || (size_t)n >= size)
            return rs_fail(err, "path too long: %s", arg);
        if (rs_is_directory(dir))
            return 0;
        if (i > 0 && used < sizeof looked)
            used += (size_t)snprintf(looked + used, sizeof looked - used, "%s%s", used ? ", " : "",
                                     dir);
    }
    if (!used)
        return rs_fail(err, "%s: no such directory", arg);
    return rs_fail(err,
                   "no run '%s': not a directory here, and not in %s (%s sets the models "
                   "directory; `rnnsearch help models`)",
                   arg, looked, RS_MODELS_ENV);
}

int rs_model_dir_for(const char *name, char *dir, size_t size, rs_error *err)
{
    if (!name || !*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
        return rs_fail(err, "--name '%s' is not a plain name (no '/'; use --out DIR for a path)",
                       name ? name : "");
    int n = snprintf(dir, size, "%s/%s", rs_models_dir(), name);
    if (n < 0 || (size_t)n >= size)
        return rs_fail(err, "path too long: %s/%s", rs_models_dir(), name);
    return 0;
}
