/* libFuzzer target: the safetensors import (rs_safetensors_parse) on any
 * bytes. Seeds: tests/fuzz/corpus/safetensors. Built and run by `make fuzz`. */
#include <stdint.h>

#include "model/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_model m;
    rs_error err;
    if (!rs_safetensors_parse("fuzz.safetensors", data, size, &m, &err))
        rs_model_free(&m);
    return 0;
}
