#include "search/ready.h"

#include <stdio.h>
#include <stdlib.h>

#include "accel/kernels.h"
#include "model/checkpoint.h"
#include "model/locate.h"

/* The copies opt asks for: the transposed ones on every road. */
static rs_accel_options accel_options(const rs_ready_options *opt)
{
    return (rs_accel_options){.transposed = 1, .int8 = opt && opt->int8};
}

/* The copies of model (sharing had's, NULL: none) in *accel. */
static int make_copies(const rs_model *model, const rs_accel *had, const rs_ready_options *opt,
                       const rs_accel **accel, rs_error *err)
{
    const rs_accel_options want = accel_options(opt);
    rs_accel_kernels_select(-1); /* the processor's fastest kernels: the same bits */
    *accel = rs_accel_new(model, had, &want, err);
    return *accel ? 0 : -1;
}

int rs_ready_load(rs_ready *ready, const char *model_arg, const rs_ready_options *opt,
                  rs_codec *codec, char *path, size_t path_size, rs_error *err)
{
    *ready = (rs_ready){0};
    char found[4096];
    rs_model *model = rs_calloc(1, sizeof *model, err);
    if (!model)
        return -1;
    ready->model = model;
    if (rs_model_locate(model_arg, found, sizeof found, err) ||
        rs_checkpoint_load(found, model, NULL, err) ||
        make_copies(model, NULL, opt, &ready->accel, err) ||
        (codec && rs_codec_for_model(codec, model, err))) {
        rs_ready_free(ready);
        return -1;
    }
    if (path)
        snprintf(path, path_size, "%s", found);
    return 0;
}

void rs_ready_free(rs_ready *ready)
{
    /* the model and copies rs_ready_load made for this object: its own */
    rs_model *model = (rs_model *)ready->model;
    rs_accel_free((rs_accel *)ready->accel);
    if (model)
        rs_model_free(model);
    free(model);
    *ready = (rs_ready){0};
}

rs_ready rs_ready_plain(const rs_model *model)
{
    return (rs_ready){.model = model, .accel = NULL};
}

int rs_ready_view(const rs_ready *ready, const rs_ready_options *opt, rs_ready *view, rs_error *err)
{
    *view = (rs_ready){.model = ready->model};
    if (make_copies(ready->model, ready->accel, opt, &view->accel, err)) {
        *view = (rs_ready){0};
        return -1;
    }
    return 0;
}

void rs_ready_view_free(rs_ready *view)
{
    rs_accel_free((rs_accel *)view->accel);
    *view = (rs_ready){0};
}
