#include "search/ready.h"

#include <stdio.h>

#include "model/checkpoint.h"
#include "model/locate.h"
#include "nn/network.h"

int rs_ready_model_load(const char *model_arg, rs_model *model, rs_codec *codec, char *path,
                        size_t path_size, rs_error *err)
{
    char found[4096];
    if (rs_model_locate(model_arg, found, sizeof found, err) ||
        rs_checkpoint_load(found, model, NULL, err))
        return -1;
    if (rs_network_transpose(model, err) || (codec && rs_codec_for_model(codec, model, err))) {
        rs_model_free(model);
        return -1;
    }
    if (path)
        snprintf(path, path_size, "%s", found);
    return 0;
}
