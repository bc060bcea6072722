/* The models a decoding command is given (models.h). */
#include "search/models.h"

int rs_models_load(rs_models *m, rs_codec *codec, rs_error *err)
{
    for (; m->loaded < m->count; m->loaded++) {
        const int k = m->loaded;
        if (rs_ready_model_load(m->args[k], &m->ready, &m->models[k], k ? NULL : codec, NULL, 0,
                                err))
            return -1;
        m->members[k] = &m->models[k];
    }
    return 0;
}

void rs_models_free(rs_models *m)
{
    for (int k = 0; k < m->loaded; k++)
        rs_model_free(&m->models[k]);
    m->loaded = 0;
}
