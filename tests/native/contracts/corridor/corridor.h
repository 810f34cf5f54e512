/* Corridor: walk right to the end of a corridor (a test env written to PufferLib 3.0's contract). */
#include <stdlib.h>
#include <string.h>

#define CORRIDOR_MAX 32

typedef struct {
    float episode_return;
    float episode_length;
    float score;
    float n;
} Log;

typedef struct {
    Log log;
    float* observations;  /* length floats: one-hot position */
    int* actions;         /* 0 left, 1 right */
    float* rewards;
    unsigned char* terminals;
    int length;
    int pos;
    int tick;
    float ret;
} Corridor;

static void c_reset(Corridor* env) {
    memset(env->observations, 0, env->length * sizeof(float));
    env->pos = rand() % (env->length / 2);
    env->tick = 0;
    env->ret = 0;
    env->observations[env->pos] = 1.0f;
}

static void c_step(Corridor* env) {
    env->rewards[0] = 0;
    env->terminals[0] = 0;
    env->tick++;
    int a = env->actions[0];
    env->observations[env->pos] = 0.0f;
    if (a == 1 && env->pos < env->length - 1) env->pos++;
    if (a == 0 && env->pos > 0) env->pos--;
    int done = 0;
    if (env->pos == env->length - 1) {
        env->rewards[0] = 1.0f;
        done = 1;
    } else if (env->tick >= 4 * env->length) {
        done = 1;
    }
    env->ret += env->rewards[0];
    if (done) {
        env->terminals[0] = 1;
        env->log.episode_return += env->ret;
        env->log.episode_length += env->tick;
        env->log.score += env->pos == env->length - 1;
        env->log.n += 1;
        c_reset(env);
        return;
    }
    env->observations[env->pos] = 1.0f;
}

static void c_render(Corridor* env) { (void)env; }
static void c_close(Corridor* env) { (void)env; }
