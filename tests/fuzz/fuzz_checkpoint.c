/* libFuzzer target: the checkpoint reader (rs_checkpoint_parse) on any bytes.
 *
 * A random change almost never keeps the CRC-32 right, so the fuzzer would
 * stay at the checksum. Each input is therefore tried twice: as it is, and
 * with its declared size and its CRC made right, which lets mutations reach
 * the section, vocabulary, configuration and tensor parsers. Seeds:
 * tests/fuzz/corpus/checkpoint. Built and run by `make fuzz`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/byteorder.h"
#include "model/checkpoint.h"
#include "common/crc32.h"

static void parse(const uint8_t *data, size_t size, int with_state)
{
    rs_model m;
    rs_train_state s;
    rs_error err;
    if (!rs_checkpoint_parse("fuzz.ckpt", data, size, &m, with_state ? &s : NULL, &err)) {
        if (with_state)
            rs_train_state_free(&s);
        rs_model_free(&m);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse(data, size, 1);
    /* Header 24 bytes (size at 16), CRC-32 of all before it in the last 4. */
    if (size < 28)
        return 0;
    uint8_t *fixed = malloc(size);
    if (!fixed)
        return 0;
    memcpy(fixed, data, size);
    rs_put_le64(fixed + 16, size);
    rs_put_le32(fixed + size - 4, rs_crc32_update(0, fixed, size - 4));
    parse(fixed, size, data[size - 1] & 1);
    free(fixed);
    return 0;
}
