/* Beacon: two agents each name the cue they see (a test env written to PufferLib 4.0's contract). */
#include <stdlib.h>
#include <string.h>

#define BEACON_CUES 4
#define BEACON_AGENTS 2

typedef struct {
    float episode_return;
    float episode_length;
    float score;
    float n;
} Log;

typedef struct {
    Log log;
    unsigned char* observations;  /* per agent: a one-hot cue of BEACON_CUES bytes */
    float* actions;
    float* rewards;
    float* terminals;
    int num_agents;
    unsigned int rng;
    int horizon;
    int tick;
    int cue[BEACON_AGENTS];
    float ret;
} Beacon;

static void beacon_observe(Beacon* env) {
    memset(env->observations, 0, BEACON_AGENTS * BEACON_CUES);
    for (int a = 0; a < BEACON_AGENTS; a++) {
        env->cue[a] = rand_r(&env->rng) % BEACON_CUES;
        env->observations[a * BEACON_CUES + env->cue[a]] = 1;
    }
}

void c_reset(Beacon* env) {
    env->tick = 0;
    env->ret = 0;
    beacon_observe(env);
}

void c_step(Beacon* env) {
    env->tick++;
    for (int a = 0; a < BEACON_AGENTS; a++) {
        env->rewards[a] = (int)env->actions[a] == env->cue[a] ? 1.0f : 0.0f;
        env->ret += env->rewards[a] / BEACON_AGENTS;
        env->terminals[a] = 0;
    }
    if (env->tick >= env->horizon) {
        for (int a = 0; a < BEACON_AGENTS; a++) env->terminals[a] = 1;
        env->log.episode_return += env->ret;
        env->log.episode_length += env->tick;
        env->log.score += env->ret / env->horizon;
        env->log.n += 1;
        c_reset(env);
        return;
    }
    beacon_observe(env);
}

void c_render(Beacon* env) { (void)env; }
void c_close(Beacon* env) { (void)env; }
