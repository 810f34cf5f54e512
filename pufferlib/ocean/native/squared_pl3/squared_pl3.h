/* Squared, PufferLib 3.0's rules: walk from the centre of a size x size grid onto the one target.
 *
 * Its puffer_squared, written here so the two can be timed on the same game (ocean/squared is the
 * older game: targets on the border, king's moves). The agent starts at the centre of an 11x11 grid
 * (`size`, odd); one target stands on another cell, drawn from the env's own RNG. Actions: Discrete(5):
 * 0 stay, 1 down, 2 up, 3 left, 4 right (the glue refuses others). Reaching the target: reward 1, terminal.
 * Stepping off the grid or living past 3 * size steps: reward -1, terminal. Observation: the grid,
 * uint8 (0 empty, 1 agent, 2 target), shape (size, size).
 * Autoreset: the step that ends an episode sets the terminal, logs the episode and starts the next one,
 * whose first observation it writes. Log: episode_return, episode_length, score (1 for a hit), n.
 */
#include "../puffernative.h"

#define LOG_FIELDS(X) X(episode_return) X(episode_length) X(score) X(n)
PN_LOG_STRUCT(LOG_FIELDS);

typedef struct {
    PN_ENV_FIELDS(unsigned char);  // log, the buffers, num_agents, rng: read and set by the glue
    int size, r, c, tick, target;  // target: its cell index
} SquaredPL3;

enum { S3_EMPTY = 0, S3_AGENT = 1, S3_TARGET = 2 };

/* The whole grid, every step (the contract: every output element written, none left from before). */
static void s3_observe(SquaredPL3* env) {
    memset(env->observations, S3_EMPTY, (size_t)env->size * env->size);
    env->observations[env->target] = S3_TARGET;
    env->observations[env->r * env->size + env->c] = S3_AGENT;
}

static void s3_start(SquaredPL3* env) {
    int tiles = env->size * env->size, centre = tiles / 2;
    int target = pn_randint(&env->rng, tiles - 1);  // any cell but the centre
    env->target = target + (target >= centre);
    env->r = env->c = env->size / 2;
    env->tick = 0;
}

void c_reset(SquaredPL3* env) {
    s3_start(env);
    s3_observe(env);
    env->rewards[0] = 0;
    env->terminals[0] = env->truncations[0] = 0;
    env->masks[0] = 1;
}

static void s3_end(SquaredPL3* env, float reward) {
    env->rewards[0] = reward;
    env->terminals[0] = 1;
    env->log.episode_return += reward;
    env->log.episode_length += (float)env->tick;
    env->log.score += reward > 0 ? 1.0f : 0.0f;
    env->log.n += 1;
    s3_start(env);
    s3_observe(env);
}

void c_step(SquaredPL3* env) {
    int a = env->actions[0];
    env->tick += 1;
    env->truncations[0] = 0;
    env->masks[0] = 1;
    env->r += (a == 1) - (a == 2);
    env->c += (a == 4) - (a == 3);
    if (env->tick > 3 * env->size || env->r < 0 || env->c < 0 || env->r >= env->size || env->c >= env->size) {
        s3_end(env, -1.0f);
        return;
    }
    if (env->r * env->size + env->c == env->target) {
        s3_end(env, 1.0f);
        return;
    }
    env->rewards[0] = 0;
    env->terminals[0] = 0;
    s3_observe(env);
}

#define S3_RENDER 264

void c_render(SquaredPL3* env, unsigned char* rgb) {
    pn_clear(rgb, S3_RENDER, S3_RENDER, 6, 24, 24);
    int cell = S3_RENDER / env->size, pad = cell > 4 ? 1 : 0;
    int off = (S3_RENDER - cell * env->size) / 2;
    for (int i = 0; i < env->size * env->size; i++) {
        int v = i == env->r * env->size + env->c ? S3_AGENT : i == env->target ? S3_TARGET : S3_EMPTY;
        unsigned char R = v == S3_AGENT ? 187 : v == S3_TARGET ? 0 : 40;
        unsigned char G = v == S3_AGENT ? 0 : v == S3_TARGET ? 187 : 40;
        unsigned char B = v == S3_AGENT ? 0 : v == S3_TARGET ? 187 : 48;
        int x = off + (i % env->size) * cell + pad, y = off + (i / env->size) * cell + pad;
        pn_fill_rect(rgb, S3_RENDER, S3_RENDER, x, y, cell - 2 * pad, cell - 2 * pad, R, G, B);
    }
}

int c_ansi(SquaredPL3* env, char* out, int size) {
    int len = 0;
    out[0] = 0;
    for (int i = 0; i < env->size * env->size; i++) {
        int v = i == env->r * env->size + env->c ? S3_AGENT : i == env->target ? S3_TARGET : S3_EMPTY;
        len = pn_append(out, size, len, "\033[%sm██\033[0m", v == S3_AGENT ? "91" : v == S3_TARGET ? "94" : "90");
        if (i % env->size == env->size - 1 && i < env->size * env->size - 1) len = pn_append(out, size, len, "\n");
    }
    return len;
}

void c_close(SquaredPL3* env) { (void)env; }
