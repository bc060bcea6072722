/* The packed copies' registry (packed.h): owners' spans and the copies of
 * the views products took from them, behind one mutex. A few spans (a
 * training run's parameters, each readied model's) and a few dozen views
 * each: a linear search beside a product of at least K·N multiply-adds. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "accel/packed.h"
#include "accel/transposed.h"

typedef struct {
    const void *owner;
    const float *data;
    size_t count;
    uint64_t opening; /* this opening's stamp: copies made before it are stale */
    int open;
} span;

typedef struct {
    const void *owner;
    const float *B; /* the view W [N,K], stride ldb, it copies */
    int N, K, ldb;
    uint64_t made_at; /* the opening it was made after (0: never made) */
    float *P;         /* [K,N] */
} packed;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static span *spans;
static packed *copies;
static int nspans, ncopies, copies_cap;
static uint64_t openings;
static long made;

static span *span_of(const void *owner)
{
    for (int i = 0; i < nspans; i++)
        if (spans[i].owner == owner)
            return &spans[i];
    return NULL;
}

/* Frees owner's copies (all, or those outside [data, data+count)). */
static void drop_copies(const void *owner, int all, const float *data, size_t count)
{
    int kept = 0;
    for (int i = 0; i < ncopies; i++) {
        const packed *p = &copies[i];
        const int inside = p->B >= data && p->B < data + count;
        if (p->owner == owner && (all || !inside))
            free(p->P);
        else
            copies[kept++] = *p;
    }
    ncopies = kept;
}

void rs_packed_open(const void *owner, const float *data, size_t count)
{
    pthread_mutex_lock(&lock);
    span *s = span_of(owner);
    if (!s) {
        span *grown = realloc(spans, sizeof *spans * (size_t)(nspans + 1));
        if (grown) {
            spans = grown;
            s = &spans[nspans++];
            *s = (span){.owner = owner};
        }
    }
    if (s) {
        if (s->data != data || s->count != count)
            drop_copies(owner, 0, data, count);
        s->data = data;
        s->count = count;
        s->opening = ++openings;
        s->open = 1;
    }
    pthread_mutex_unlock(&lock);
}

void rs_packed_close(const void *owner)
{
    pthread_mutex_lock(&lock);
    span *s = span_of(owner);
    if (s)
        s->open = 0;
    pthread_mutex_unlock(&lock);
}

void rs_packed_free(const void *owner)
{
    pthread_mutex_lock(&lock);
    span *s = span_of(owner);
    if (s) {
        drop_copies(owner, 1, NULL, 0);
        *s = spans[--nspans];
        if (!nspans) {
            free(spans);
            spans = NULL;
        }
    }
    if (!ncopies) {
        free(copies);
        copies = NULL;
        copies_cap = 0;
    }
    pthread_mutex_unlock(&lock);
}

/* The open span holding all of c's B [N,K] (stride ldb), or NULL. */
static const span *open_span_with(const rs_gemm_call *c)
{
    const size_t extent = (size_t)(c->N - 1) * (size_t)c->ldb + (size_t)c->K;
    for (int i = 0; i < nspans; i++) {
        const span *s = &spans[i];
        if (s->open && c->B >= s->data && c->B < s->data + s->count &&
            extent <= (size_t)(s->data + s->count - c->B))
            return s;
    }
    return NULL;
}

/* owner's copy of c's view of B, a new one (not yet made) when it has
 * none; NULL without memory. */
static packed *copy_of(const void *owner, const rs_gemm_call *c)
{
    for (int i = 0; i < ncopies; i++) {
        packed *p = &copies[i];
        if (p->owner == owner && p->B == c->B && p->N == c->N && p->K == c->K && p->ldb == c->ldb)
            return p;
    }
    if (ncopies == copies_cap) {
        const int cap = copies_cap ? 2 * copies_cap : 32;
        packed *grown = realloc(copies, sizeof *copies * (size_t)cap);
        if (!grown)
            return NULL;
        copies = grown;
        copies_cap = cap;
    }
    /* 64-byte lines: a cache line and an AVX-512 register per row start */
    const size_t bytes = ((sizeof(float) * (size_t)c->N * (size_t)c->K + 63) / 64) * 64;
    float *P = aligned_alloc(64, bytes);
    if (!P)
        return NULL;
    copies[ncopies] =
        (packed){.owner = owner, .B = c->B, .N = c->N, .K = c->K, .ldb = c->ldb, .P = P};
    return &copies[ncopies++];
}

const float *rs_packed_weight(const rs_gemm_call *c)
{
    if (!c->tb)
        return NULL;
    const float *P = NULL;
    pthread_mutex_lock(&lock);
    const span *s = open_span_with(c);
    packed *p = s ? copy_of(s->owner, c) : NULL;
    if (p) {
        if (p->made_at != s->opening) {
            rs_transpose(p->P, RS_CMAT_S(c->B, c->N, c->K, c->ldb));
            p->made_at = s->opening;
            made++;
        }
        P = p->P;
    }
    pthread_mutex_unlock(&lock);
    return P;
}

long rs_packed_made(void)
{
    pthread_mutex_lock(&lock);
    const long n = made;
    pthread_mutex_unlock(&lock);
    return n;
}
