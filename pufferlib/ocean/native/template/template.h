/* Template: press the lit button; the smallest complete native env, to copy (docs/native.md).
 *
 * Observation: TP_BUTTONS (4) float32, one-hot (the lit button). Action: Discrete(4). Reward 1 for
 * pressing the lit one, else 0; a new button lights every step. Terminal after `length` steps (8): the
 * return is the number of correct presses (solved at 7.5; random play scores 2).
 * Autoreset: the step that ends an episode sets the terminal, adds the episode to the log and starts the
 * next one, whose first observation it writes. Log: episode_return, episode_length, score (= the fraction
 * pressed right), n.
 */
#include "../puffernative.h"

#define TP_BUTTONS 4

// the Log struct: every field a float, `n` (episodes summed) last
#define LOG_FIELDS(X) X(episode_return) X(episode_length) X(score) X(n)
PN_LOG_STRUCT(LOG_FIELDS);

typedef struct {
    PN_ENV_FIELDS(float);  // log, the buffers, num_agents, rng: read and set by the glue
    int length;  // the game's own state from here on
    int lit, tick;
    float episode_return;
} Template;

static void tp_observe(Template* env) {
    for (int i = 0; i < TP_BUTTONS; i++) env->observations[i] = i == env->lit ? 1.0f : 0.0f;
}

void c_reset(Template* env) {  // write EVERY output element
    env->lit = pn_randint(&env->rng, TP_BUTTONS);
    env->tick = 0;
    env->episode_return = 0;
    tp_observe(env);
    env->rewards[0] = 0;
    env->terminals[0] = env->truncations[0] = 0;
    env->masks[0] = 1;
}

void c_step(Template* env) {
    float reward = env->actions[0] == env->lit ? 1.0f : 0.0f;  // an out-of-range action just misses
    env->tick += 1;
    env->episode_return += reward;
    int done = env->tick >= env->length;
    env->rewards[0] = reward;
    env->terminals[0] = (unsigned char)done;
    env->truncations[0] = 0;
    env->masks[0] = 1;
    if (done) {
        env->log.episode_return += env->episode_return;
        env->log.episode_length += (float)env->tick;
        env->log.score += env->episode_return / env->length;
        env->log.n += 1;
        env->tick = 0;
        env->episode_return = 0;
    }
    env->lit = pn_randint(&env->rng, TP_BUTTONS);
    tp_observe(env);
}

#define TP_CELL 32

void c_render(Template* env, unsigned char* rgb) {  // every byte of the RENDER_H x RENDER_W x 3 frame
    pn_clear(rgb, TP_CELL, TP_CELL * TP_BUTTONS, 20, 20, 28);
    for (int i = 0; i < TP_BUTTONS; i++) {
        int lit = i == env->lit;
        pn_fill_rect(rgb, TP_CELL, TP_CELL * TP_BUTTONS, i * TP_CELL + 2, 2, TP_CELL - 4, TP_CELL - 4,
                     lit ? 255 : 70, lit ? 200 : 70, lit ? 0 : 90);
    }
}

int c_ansi(Template* env, char* out, int size) {
    int len = pn_append(out, size, 0, "step %d/%d  ", env->tick, env->length);
    for (int i = 0; i < TP_BUTTONS; i++) len = pn_append(out, size, len, "%s", i == env->lit ? "[*]" : "[ ]");
    return len;
}

void c_close(Template* env) { (void)env; }  // free only what my_init allocated (nothing here)
