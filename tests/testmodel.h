/* A tiny model for tests that need a checkpoint. */
#ifndef RS_TEST_TESTMODEL_H
#define RS_TEST_TESTMODEL_H

#include <stdint.h>

#include "model/model.h"

/* emb 3, the given hidden size, att 5, maxout 2, additive attention; source
 * vocabulary <4 reserved> "das" src_token, target <4 reserved> "the"; every
 * parameter uniform in [-1, 1) from seed. Fails the test on any error. */
void testmodel_make(rs_model *m, int hidden, const char *src_token, uint64_t seed);

#endif
