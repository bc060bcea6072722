/* numpy's PCG64 and SeedSequence (see pcg64.h), with 128-bit arithmetic on
 * pairs of 64-bit words so that plain C11 builds it. The constants are
 * numpy's (bit_generator.pyx, pcg64.h, distributions.c). */
#include "common/pcg64.h"

/* ---- SeedSequence ------------------------------------------------------ */

enum { POOL_SIZE = 4 };
#define INIT_A 0x43b0d7e5u
#define MULT_A 0x931e8875u
#define INIT_B 0x8b51f9ddu
#define MULT_B 0x58f38dedu
#define MIX_MULT_L 0xca01f9ddu
#define MIX_MULT_R 0x4973f715u

static uint32_t hashmix(uint32_t value, uint32_t *hash_const)
{
    value ^= *hash_const;
    *hash_const *= MULT_A;
    value *= *hash_const;
    return value ^ (value >> 16);
}

static uint32_t mix(uint32_t x, uint32_t y)
{
    uint32_t result = MIX_MULT_L * x - MIX_MULT_R * y;
    return result ^ (result >> 16);
}

/* SeedSequence(seed).generate_state(4, np.uint64), as 8 32-bit words. */
static void seed_sequence(uint64_t seed, uint32_t words[8])
{
    /* The entropy: the seed's 32-bit words, least significant first ([0] for 0). */
    uint32_t entropy[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    const int n_entropy = seed >> 32 ? 2 : 1;
    uint32_t pool[POOL_SIZE], hash_const = INIT_A;
    for (int i = 0; i < POOL_SIZE; i++)
        pool[i] = hashmix(i < n_entropy ? entropy[i] : 0, &hash_const);
    for (int src = 0; src < POOL_SIZE; src++)
        for (int dst = 0; dst < POOL_SIZE; dst++)
            if (src != dst)
                pool[dst] = mix(pool[dst], hashmix(pool[src], &hash_const));
    /* An entropy longer than the pool would be mixed in here; two words never is. */
    uint32_t h = INIT_B;
    for (int i = 0; i < 8; i++) {
        uint32_t v = pool[i % POOL_SIZE];
        v ^= h;
        h *= MULT_B;
        v *= h;
        words[i] = v ^ (v >> 16);
    }
}

/* ---- the 128-bit LCG --------------------------------------------------- */

#define MULT_HI 0x2360ED051FC65DA4ull
#define MULT_LO 0x4385DF649FCCF645ull

/* a * b as a 128-bit (hi, lo). */
static void mul_64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
    const uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (mid << 32) | (p00 & 0xffffffffu);
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* state = state * MULT + inc (mod 2^128) */
static void step(rs_pcg64 *g)
{
    uint64_t hi, lo;
    mul_64(g->state_lo, MULT_LO, &hi, &lo);
    hi += g->state_hi * MULT_LO + g->state_lo * MULT_HI;
    const uint64_t sum_lo = lo + g->inc_lo;
    g->state_hi = hi + g->inc_hi + (sum_lo < lo);
    g->state_lo = sum_lo;
}

void rs_pcg64_seed(rs_pcg64 *g, uint64_t seed)
{
    uint32_t w[8];
    seed_sequence(seed, w);
    /* generate_state(4, uint64) views the words little-endian; numpy's
     * pcg64_set_seed takes state (high, low) from the first two and the
     * sequence (high, low) from the last two. */
    uint64_t v[4];
    for (int i = 0; i < 4; i++)
        v[i] = (uint64_t)w[2 * i] | (uint64_t)w[2 * i + 1] << 32;
    /* pcg_setseq_128_srandom_r: inc = seq << 1 | 1; step; state += initstate; step. */
    g->state_hi = g->state_lo = 0;
    g->inc_hi = v[2] << 1 | v[3] >> 63;
    g->inc_lo = v[3] << 1 | 1u;
    step(g);
    const uint64_t lo = g->state_lo + v[1];
    g->state_hi += v[0] + (lo < g->state_lo);
    g->state_lo = lo;
    step(g);
    g->has_uint32 = 0;
    g->uinteger = 0;
}

uint64_t rs_pcg64_next64(rs_pcg64 *g)
{
    /* XSL-RR of the stepped state */
    step(g);
    const uint64_t x = g->state_hi ^ g->state_lo;
    const unsigned rot = (unsigned)(g->state_hi >> 58);
    return (x >> rot) | (x << ((64u - rot) & 63u));
}

uint32_t rs_pcg64_next32(rs_pcg64 *g)
{
    if (g->has_uint32) {
        g->has_uint32 = 0;
        return g->uinteger;
    }
    const uint64_t next = rs_pcg64_next64(g);
    g->has_uint32 = 1;
    g->uinteger = (uint32_t)(next >> 32);
    return (uint32_t)next;
}

uint32_t rs_pcg64_below(rs_pcg64 *g, uint64_t n)
{
    const uint64_t rng = n - 1; /* numpy's inclusive range */
    if (rng == 0)
        return 0;
    if (rng == 0xffffffffu)
        return rs_pcg64_next32(g);
    /* buffered_bounded_lemire_uint32 */
    const uint32_t rng_excl = (uint32_t)rng + 1u;
    uint64_t m = (uint64_t)rs_pcg64_next32(g) * rng_excl;
    uint32_t leftover = (uint32_t)m;
    if (leftover < rng_excl) {
        const uint32_t threshold = (uint32_t)(UINT32_MAX - (uint32_t)rng) % rng_excl;
        while (leftover < threshold) {
            m = (uint64_t)rs_pcg64_next32(g) * rng_excl;
            leftover = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

int rs_pcg64_bool(rs_pcg64 *g, int *bits, uint32_t *buf)
{
    /* buffered_bounded_bool */
    if (!*bits) {
        *buf = rs_pcg64_next32(g);
        *bits = 31;
    } else {
        *buf >>= 1;
        --*bits;
    }
    return (int)(*buf & 1u);
}
