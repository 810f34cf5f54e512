/* pt_rand.h: rand(), srand(), random() and srandom() for PufferLib 3.0's envs, one stream per vector.
 *
 * Several 3.0 envs draw from the C library's process-global rand(). With two vectors in one process (our
 * Serial backend, a test, a notebook) they would draw from one stream, in whatever order they are stepped, so
 * the same seed would not give the same episodes as in separate worker processes; and two threads would race
 * on it. build.py force-includes this header (-include) ahead of a 3.0 binding's own code: these four names
 * then read and write the stream of the vector being reset or stepped (env_binding.h points pt_rand_now at it
 * for the call), else one global stream. The generator is the C library's own algorithm (glibc's TYPE_3
 * additive feedback, x[i] = x[i-3] + x[i-31], seeded by the 16807 LCG and 310 discards; a test compares it
 * with libc's rand() for several seeds), so a single vector's trace is the one upstream's build gives.
 *
 * Some 3.0 envs seed from the wall clock (srand(time(NULL)) in checkers, rware and pacman; time() plus the
 * level number in tower_climb; clock_gettime() ^ getpid() in terraform): their episodes then follow the
 * second they ran in, not their seed, and two runs with one seed differ. In their code time(),
 * clock_gettime() and getpid() are draws from the same stream, so that entropy comes from the seed: a run
 * follows its seed as the contract says (upstream's does not), and no env here reads a clock for anything
 * else (the renderers' timing is raylib's).
 */
#ifndef PUFFERTANK_PL3_RAND_H
#define PUFFERTANK_PL3_RAND_H

#include <stdint.h>
#include <stdlib.h>  /* first: their declarations of rand, srand, time, clock_gettime and getpid must come */
#include <time.h>    /* before the macros below */
#include <unistd.h>

#define PT_RAND_DEG 31
#define PT_RAND_SEP 3

typedef struct {
    int32_t r[PT_RAND_DEG];
    int front, rear;  /* indices of glibc's fptr and rptr */
    int seeded;
} pt_rand_state;

static pt_rand_state pt_rand_global;
static __thread pt_rand_state* pt_rand_now = NULL;  /* the stream of the vector being reset or stepped */

static inline int pt_rand_next(pt_rand_state* s) {
    uint32_t value = (uint32_t)s->r[s->front] + (uint32_t)s->r[s->rear];
    s->r[s->front] = (int32_t)value;
    if (++s->front >= PT_RAND_DEG) {
        s->front = 0;
        ++s->rear;
    } else if (++s->rear >= PT_RAND_DEG) {
        s->rear = 0;
    }
    return (int)(value >> 1);
}

static inline void pt_rand_seed(pt_rand_state* s, unsigned seed) {
    int32_t word = (int32_t)(seed == 0 ? 1 : seed);
    s->r[0] = word;
    for (int i = 1; i < PT_RAND_DEG; i++) {
        int32_t hi = word / 127773, lo = word % 127773;
        word = 16807 * lo - 2836 * hi;
        if (word < 0) word += 2147483647;
        s->r[i] = word;
    }
    s->front = PT_RAND_SEP;
    s->rear = 0;
    s->seeded = 1;
    for (int k = 0; k < 10 * PT_RAND_DEG; k++) pt_rand_next(s);
}

static inline pt_rand_state* pt_rand_stream(void) {
    pt_rand_state* s = pt_rand_now ? pt_rand_now : &pt_rand_global;
    if (!s->seeded) pt_rand_seed(s, 1);  /* as the C library: an unseeded stream is seeded with 1 */
    return s;
}

static inline int pt_rand(void) { return pt_rand_next(pt_rand_stream()); }
static inline void pt_srand(unsigned seed) {
    pt_rand_seed(pt_rand_now ? pt_rand_now : &pt_rand_global, seed);
}

static inline time_t pt_time(time_t* out) {
    time_t now = (time_t)pt_rand();
    if (out) *out = now;
    return now;
}
static inline int pt_clock_gettime(clockid_t clock, struct timespec* now) {
    (void)clock;
    now->tv_sec = (time_t)pt_rand();
    now->tv_nsec = pt_rand() % 1000000000;
    return 0;
}

#define rand() pt_rand()
#define random() ((long)pt_rand())
#define srand(seed) pt_srand((unsigned)(seed))
#define srandom(seed) pt_srand((unsigned)(seed))
#define time(out) pt_time(out)
#define clock_gettime(clock, now) pt_clock_gettime(clock, now)
#define getpid() ((pid_t)1)

#endif
