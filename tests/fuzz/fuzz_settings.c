/* libFuzzer target: the configuration file reader (rs_settings_parse, YAML
 * through libyaml or key = value lines) on any bytes, as --config reads a
 * file a user wrote. Seeds: tests/fuzz/corpus/settings. Built and run by
 * `make fuzz`. */
#include <stdint.h>
#include <stddef.h>

#include "common/settings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_settings s;
    rs_error err;
    if (!rs_settings_parse("fuzz.yaml", data, size, &s, &err))
        rs_settings_free(&s);
    return 0;
}
