#include "search/ready.h"

#include <stdio.h>

#include "accel/accel.h"
#include "accel/kernels.h"
#include "model/checkpoint.h"
#include "model/locate.h"

/* The faster forms opt asks for: the transposed copies on every road. */
static rs_accel_options accel_options(const rs_ready_options *opt)
{
    return (rs_accel_options){.transposed = 1, .int8 = opt && opt->int8};
}

int rs_ready_model_load(const char *model_arg, const rs_ready_options *opt, rs_model *model,
                        rs_codec *codec, char *path, size_t path_size, rs_error *err)
{
    char found[4096];
    if (rs_model_locate(model_arg, found, sizeof found, err) ||
        rs_checkpoint_load(found, model, NULL, err))
        return -1;
    const rs_accel_options fast = accel_options(opt);
    rs_accel_kernels_select(-1); /* the processor's fastest kernels: the same bits */
    if (rs_accel_attach(model, &fast, err) || (codec && rs_codec_for_model(codec, model, err))) {
        rs_model_free(model);
        return -1;
    }
    if (path)
        snprintf(path, path_size, "%s", found);
    return 0;
}

int rs_ready_model_view(const rs_model *model, const rs_ready_options *opt, rs_model *view,
                        struct rs_accel **forms, rs_error *err)
{
    const rs_accel_options fast = accel_options(opt);
    rs_accel_kernels_select(-1);
    *forms = rs_accel_new(model, &fast, err);
    if (!*forms)
        return -1;
    *view = *model;
    view->fast = *forms;
    view->fast_free = NULL; /* the view frees nothing: it is never rs_model_free'd */
    return 0;
}

void rs_ready_forms_free(struct rs_accel *forms)
{
    rs_accel_free(forms);
}
