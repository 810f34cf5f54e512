/* Broken: a tiny env with one bug chosen at compile time, to show the fuzz harness and the Python ladder
 * go red. -DBUG_UNWRITTEN leaves the reward unwritten on odd ticks; -DBUG_OVERFLOW writes one observation
 * past its row; -DBUG_ACTION indexes a table with the raw action; -DBUG_LEAK never frees what my_init
 * allocated. No bug: a correct counter env. */
#include "puffernative.h"

typedef struct {
    float episode_return, episode_length, score, n;
} Log;

typedef struct {
    PN_ENV_FIELDS(float);  // log, the buffers, num_agents, rng: read and set by the glue
    int tick;
    float* scratch;  // allocated by my_init, freed by c_close
} Broken;

static const float BR_TABLE[3] = {0.0f, 0.5f, 1.0f};

void c_reset(Broken* env) {
    env->tick = 0;
    env->observations[0] = env->observations[1] = 0;
    env->rewards[0] = 0;
    env->terminals[0] = env->truncations[0] = 0;
    env->masks[0] = 1;
}

void c_step(Broken* env) {
    int a = env->actions[0];
    env->tick++;
#ifdef BUG_ACTION
    float r = BR_TABLE[a];
#else
    float r = (unsigned)a < 3 ? BR_TABLE[a] : 0.0f;
#endif
#ifdef BUG_UNWRITTEN
    if (env->tick % 2 == 0) env->rewards[0] = r;
#else
    env->rewards[0] = r;
#endif
    env->observations[0] = (float)env->tick;
    env->observations[1] = pn_uniform(&env->rng);
#ifdef BUG_OVERFLOW
    env->observations[2] = 1.0f;
#endif
    int done = env->tick >= 10;
    env->terminals[0] = (unsigned char)done;
    env->truncations[0] = 0;
    env->masks[0] = 1;
    if (done) {
        env->log.episode_return += 1;
        env->log.episode_length += (float)env->tick;
        env->log.score += 1;
        env->log.n += 1;
        env->tick = 0;
    }
}

void c_render(Broken* env, unsigned char* rgb) { pn_clear(rgb, 4, 4, (unsigned char)env->tick, 0, 0); }

int c_ansi(Broken* env, char* out, int size) { return pn_append(out, size, 0, "tick %d", env->tick); }

void c_close(Broken* env) {
#ifndef BUG_LEAK
    free(env->scratch);
#endif
    env->scratch = NULL;
}
