/* puffernative.h: the one header a native Ocean env includes (pure C, no Python).
 *
 * An env-owned RNG (splitmix64: tiny state, good enough for games, identical on every platform) and
 * clipped drawing helpers for RGB frames. See docs/native.md for the env contract.
 */
#ifndef PUFFERNATIVE_H
#define PUFFERNATIVE_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

typedef struct {
    uint64_t s;
} pn_rng;

/* The Log struct from its field list, one float each, `n` (the episodes summed) last:
 *     #define LOG_FIELDS(X) X(episode_return) X(episode_length) X(score) X(n)
 *     PN_LOG_STRUCT(LOG_FIELDS);
 * The glue names the stats from the same list, so the names, their order and the struct cannot disagree. */
#define PN_LOG_MEMBER(name) float name;
#define PN_LOG_STRUCT(FIELDS) \
    typedef struct {          \
        FIELDS(PN_LOG_MEMBER) \
    } Log

/* The fields every env struct starts with (after its own `Log` type): the glue sets the buffer
 * pointers to the instance's slice of the shared buffers and reads them by name; `log` sums the
 * finished episodes, `rng` is seeded per instance. */
#define PN_ENV_FIELDS(OBS_TYPE)            \
    Log log;                               \
    OBS_TYPE* observations;                \
    int* actions;                          \
    float* rewards;                        \
    unsigned char* terminals;              \
    unsigned char* truncations;            \
    unsigned char* masks;                  \
    int num_agents;                        \
    pn_rng rng

static inline uint64_t pn_next(pn_rng* rng) {
    uint64_t z = (rng->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The state is a hash of the seed, so seeds s and s + 1 give unrelated streams (not shifted copies). */
static inline void pn_seed(pn_rng* rng, uint64_t seed) {
    rng->s = seed;
    rng->s = pn_next(rng);
}

/* [0, 1): the top 24 bits, so every value is exactly representable as a float. */
static inline float pn_uniform(pn_rng* rng) { return (float)(pn_next(rng) >> 40) * (1.0f / 16777216.0f); }

/* [0, n) for n >= 1 (n < 1 returns 0). Lemire's multiply-shift: no modulo bias worth counting. */
static inline int pn_randint(pn_rng* rng, int n) {
    if (n <= 1) return 0;
    return (int)(((pn_next(rng) >> 32) * (uint64_t)(uint32_t)n) >> 32);
}

static inline float pn_uniform_range(pn_rng* rng, float lo, float hi) { return lo + (hi - lo) * pn_uniform(rng); }

/* v clamped to [lo, hi] (NaN gives lo) without a branch: in a game's inner loop a mispredicted compare
 * costs more than the arithmetic around it, and compilers keep the branches of a ternary once inlined. */
static inline float pn_clampf(float v, float lo, float hi) {
#if defined(__SSE__)
    return _mm_cvtss_f32(_mm_min_ss(_mm_max_ss(_mm_set_ss(v), _mm_set_ss(lo)), _mm_set_ss(hi)));
#else
    v = lo > v ? lo : v;
    return hi < v ? hi : v;
#endif
}

/* Fill the w x h rectangle at column x, row y of an H x W x 3 frame, clipped: never writes outside. */
static inline void pn_fill_rect(unsigned char* rgb, int H, int W, int x, int y, int w, int h, unsigned char r,
                                unsigned char g, unsigned char b) {
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    long x1 = (long)x + w, y1 = (long)y + h;
    if (x1 > W) x1 = W;
    if (y1 > H) y1 = H;
    for (long row = y0; row < y1; row++) {
        unsigned char* p = rgb + ((size_t)row * W + x0) * 3;
        for (long col = x0; col < x1; col++, p += 3) {
            p[0] = r;
            p[1] = g;
            p[2] = b;
        }
    }
}

/* The whole frame in one colour (call first: c_render must write every byte). */
static inline void pn_clear(unsigned char* rgb, int H, int W, unsigned char r, unsigned char g, unsigned char b) {
    pn_fill_rect(rgb, H, W, 0, 0, W, H, r, g, b);
}

/* A line of square dots `thick` pixels wide from (x0, y0) to (x1, y1), clipped. */
static inline void pn_draw_line(unsigned char* rgb, int H, int W, float x0, float y0, float x1, float y1, int thick,
                                unsigned char r, unsigned char g, unsigned char b) {
    float dx = x1 - x0, dy = y1 - y0;
    float len = fabsf(dx) > fabsf(dy) ? fabsf(dx) : fabsf(dy);
    int steps = len < 1 ? 1 : (int)(len > 1e5f ? 1e5f : len);
    for (int i = 0; i <= steps; i++) {
        float t = (float)i / steps;
        pn_fill_rect(rgb, H, W, (int)(x0 + t * dx) - thick / 2, (int)(y0 + t * dy) - thick / 2, thick, thick, r, g, b);
    }
}

/* Append printf-style text to out (size bytes, NUL-terminated); returns the new length, truncated at size-1. */
static inline int pn_append(char* out, int size, int len, const char* fmt, ...) __attribute__((format(printf, 4, 5)));
#include <stdarg.h>
static inline int pn_append(char* out, int size, int len, const char* fmt, ...) {
    if (size <= 0) return 0;
    if (len >= size - 1) {
        out[size - 1] = 0;
        return size - 1;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + len, (size_t)(size - len), fmt, ap);
    va_end(ap);
    if (n < 0) return len;
    return len + n < size - 1 ? len + n : size - 1;
}

#endif
