/* A standalone fuzz harness for one native Ocean env, no Python: build it with the sanitizers,
 *
 *   cc -fsanitize=address,undefined -fno-omit-frame-pointer -g -O1 -Ipufferlib/ocean/native \
 *      -DPN_BINDING='"pufferlib/ocean/native/cartpole/binding.c"' tests/native/fuzz.c -lm -o fuzz
 *   ./fuzz [ITERATIONS] [SEED]
 *
 * The binding.c is included with PN_NO_PYTHON (its defines and my_init, defaults for every kwarg). Random
 * sequences of reset/step/render/ansi/close on a few instances with exactly sized heap buffers (so ASan
 * sees any write past an env's rows), fed in-range, boundary and out-of-range actions. Every instance has
 * a twin with the same seed and actions whose buffers were poisoned differently (NaN / 0xFF vs 0x00):
 * after each call the twins must agree byte for byte, so every output element was written and the env is
 * deterministic. Exits 1 with a message on the first failure; prints "ok ..." otherwise.
 */
#define PN_NO_PYTHON
#include PN_BINDING

#include <stdio.h>

static int pn_fuzz_obs_size(void) {
#ifdef OBS_SHAPE_FN
    int shape[3] = {1, 1, 1};
    int ndim = OBS_SHAPE_FN(NULL, shape), size = 1;
    for (int i = 0; i < ndim; i++) size *= shape[i];
    return ndim < 1 ? -1 : size;
#else
    return OBS_SIZE;
#endif
}

typedef struct {
    Env env;
    OBS_T* obs;
    int* actions;
    float* rewards;
    unsigned char *terminals, *truncations, *masks;
    unsigned char* frame;
    int live;
} Twin;

static int agents, obs_size;
static long failures;

#define FAIL(...)                                  \
    do {                                           \
        fprintf(stderr, "FAIL: " __VA_ARGS__);     \
        fprintf(stderr, "\n");                     \
        exit(1);                                   \
    } while (0)

static void poison(Twin* t, int pattern) {
    size_t n = (size_t)agents;
    if (pattern) {
        for (size_t i = 0; i < n * obs_size; i++) {
            if (sizeof(OBS_T) == 4) {
                float nan = NAN;
                memcpy(&t->obs[i], &nan, 4);
            } else {
                memset(&t->obs[i], 0xFF, sizeof(OBS_T));
            }
        }
        for (size_t i = 0; i < n; i++) t->rewards[i] = NAN;
        memset(t->terminals, 0xFF, n);
        memset(t->truncations, 0xFF, n);
        memset(t->masks, 0xFF, n);
    } else {
        memset(t->obs, 0, n * obs_size * sizeof(OBS_T));
        memset(t->rewards, 0, n * sizeof(float));
        memset(t->terminals, 0, n);
        memset(t->truncations, 0, n);
        memset(t->masks, 0, n);
    }
}

static void create(Twin* t, uint64_t seed) {
    size_t n = (size_t)agents;
    memset(&t->env, 0, sizeof(Env));
    t->obs = malloc(n * obs_size * sizeof(OBS_T));
    t->actions = malloc(n * NUM_ATNS * sizeof(int));
    t->rewards = malloc(n * sizeof(float));
    t->terminals = malloc(n);
    t->truncations = malloc(n);
    t->masks = malloc(n);
    t->frame = malloc((size_t)RENDER_H * RENDER_W * 3);
    if (!t->obs || !t->actions || !t->rewards || !t->terminals || !t->truncations || !t->masks || !t->frame)
        FAIL("out of memory");
    t->env.observations = t->obs;
    t->env.actions = t->actions;
    t->env.rewards = t->rewards;
    t->env.terminals = t->terminals;
    t->env.truncations = t->truncations;
    t->env.masks = t->masks;
    t->env.num_agents = agents;
    pn_seed(&t->env.rng, seed);
    if (my_init(&t->env, NULL) != 0) FAIL("my_init(env, NULL) failed");
    t->live = 1;
}

static void destroy(Twin* t) {
    if (!t->live) return;
    c_close(&t->env);
    free(t->obs);
    free(t->actions);
    free(t->rewards);
    free(t->terminals);
    free(t->truncations);
    free(t->masks);
    free(t->frame);
    t->live = 0;
}

static void compare(Twin* a, Twin* b, const char* what, long it) {
    size_t n = (size_t)agents;
    if (memcmp(a->obs, b->obs, n * obs_size * sizeof(OBS_T)))
        FAIL("%s (iteration %ld): an observation element was not written (or the env is not deterministic)", what, it);
    if (memcmp(a->rewards, b->rewards, n * sizeof(float))) FAIL("%s (iteration %ld): a reward was not written", what, it);
    if (memcmp(a->terminals, b->terminals, n)) FAIL("%s (iteration %ld): a terminal was not written", what, it);
    if (memcmp(a->truncations, b->truncations, n)) FAIL("%s (iteration %ld): a truncation was not written", what, it);
    if (memcmp(a->masks, b->masks, n)) FAIL("%s (iteration %ld): a mask was not written", what, it);
    for (size_t i = 0; i < n; i++) {
        if (a->terminals[i] > 1 || a->truncations[i] > 1 || a->masks[i] > 1)
            FAIL("%s (iteration %ld): row %zu has a terminal/truncation/mask that is not 0 or 1", what, it, i);
        if (!isfinite(a->rewards[i])) FAIL("%s (iteration %ld): row %zu's reward is not finite", what, it, i);
    }
    if (memcmp(&a->env.log, &b->env.log, sizeof(Log))) FAIL("%s (iteration %ld): the twins' logs differ", what, it);
    const float* log = (const float*)&a->env.log;
    for (int k = 0; k < PN_NUM_LOG; k++)
        if (!isfinite(log[k])) FAIL("%s (iteration %ld): log field %s is not finite", what, it, pn_log_fields[k]);
}

static int action(pn_rng* rng, int size) {
    int r = pn_randint(rng, 100);
    if (r < 80) return pn_randint(rng, size);
    if (r < 88) return pn_randint(rng, 2) ? 0 : size - 1;  // boundaries
    static const int bad[] = {-1, -2, INT32_MIN, INT32_MAX, 0x7F, 256};
    if (r < 96) return size + pn_randint(rng, 3);             // just past the end
    return bad[pn_randint(rng, 6)];
}

int main(int argc, char** argv) {
    long iterations = argc > 1 ? atol(argv[1]) : 20000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    agents = my_num_agents(NULL);
    obs_size = pn_fuzz_obs_size();
    if (agents < 1 || obs_size < 1) FAIL("my_num_agents/obs size < 1");
    pn_rng rng;
    pn_seed(&rng, seed);
    enum { PAIRS = 3 };
    Twin a[PAIRS], b[PAIRS];
    memset(a, 0, sizeof(a));
    memset(b, 0, sizeof(b));
    long steps = 0, resets = 0, closes = 0;
    for (long it = 0; it < iterations; it++) {
        int k = pn_randint(&rng, PAIRS);
        Twin *x = &a[k], *y = &b[k];
        if (!x->live) {
            uint64_t s = pn_next(&rng);
            create(x, s);
            create(y, s);
            poison(x, 1);
            poison(y, 0);
            c_reset(&x->env);
            c_reset(&y->env);
            compare(x, y, "c_reset", it);
            resets++;
            continue;
        }
        int op = pn_randint(&rng, 1000);
        if (op < 930) {
            for (int i = 0; i < agents * NUM_ATNS; i++) x->actions[i] = y->actions[i] = action(&rng, pn_act_sizes[i % NUM_ATNS]);
            poison(x, 1);
            poison(y, 0);
            c_step(&x->env);
            c_step(&y->env);
            compare(x, y, "c_step", it);
            steps++;
        } else if (op < 960) {
            poison(x, 1);
            poison(y, 0);
            c_reset(&x->env);
            c_reset(&y->env);
            compare(x, y, "c_reset", it);
            resets++;
        } else if (op < 975) {
            memset(x->frame, 0xFF, (size_t)RENDER_H * RENDER_W * 3);
            memset(y->frame, 0x00, (size_t)RENDER_H * RENDER_W * 3);
            c_render(&x->env, x->frame);
            c_render(&y->env, y->frame);
            if (memcmp(x->frame, y->frame, (size_t)RENDER_H * RENDER_W * 3))
                FAIL("c_render (iteration %ld): a frame byte was not written", it);
        } else if (op < 990) {
            int size = 1 + pn_randint(&rng, pn_randint(&rng, 2) ? 64 : 16384);
            char* text = malloc((size_t)size);
            memset(text, 'x', (size_t)size);
            int len = c_ansi(&x->env, text, size);
            if (len < 0 || len >= size || text[len] != 0) FAIL("c_ansi (iteration %ld): length %d for size %d", it, len, size);
            free(text);
        } else {
            destroy(x);
            destroy(y);
            closes++;
        }
    }
    for (int k = 0; k < PAIRS; k++) {
        destroy(&a[k]);
        destroy(&b[k]);
    }
    (void)failures;
    printf("ok %ld steps, %ld resets, %ld closes\n", steps, resets, closes);
    return 0;
}
