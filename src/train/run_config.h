/* A run's configuration as the YAML file `train --config` reads (what
 * `info -m MODEL --config` prints): data:, model:, training: and a
 * translation: section, values written exactly so that training from it
 * gives the same bits. */
#ifndef RS_RUN_CONFIG_H
#define RS_RUN_CONFIG_H

#include <stdio.h>

#include "common/settings.h"
#include "model/config.h"

/* Writes cfg, the configuration of the checkpoint at path, to out: flags as
 * true/false, floats in their shortest form that reads back the same. The
 * data paths and the translation: settings are those of copy (the --config
 * file the run was started with, read as train reads it; empty when there
 * is none), else lines to fill in and translate's defaults: the checkpoint
 * holds a fingerprint of the data, not its files' names. -1 when out of
 * memory. */
int rs_run_config_write(FILE *out, const char *path, const rs_config *cfg, const rs_settings *copy);

#endif
