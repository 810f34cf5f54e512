/* Squared: move to targets on the edge of a square (ocean/squared's rules, in C).
 *
 * The agent starts at the centre of a (2d+1) x (2d+1) grid (d = distance_to_target); num_targets targets
 * lie on distinct border cells. Moving onto a target gives 1/num_targets, removes it and teleports the
 * agent back to the centre. Terminal when every target is hit; truncated after max_ticks steps (default
 * 2 * num_targets * d). Observation: the grid, float32 (1 target, -1 agent, 0 empty), shape (2d+1, 2d+1).
 * Actions: Discrete(8), king's moves (clipped at the walls). Return = the fraction of targets hit.
 * Autoreset: the step that ends an episode sets the terminal or truncation, logs the episode and starts
 * the next one, whose first observation it writes. Log: episode_return, episode_length, score (= hits /
 * num_targets), n. (PufferLib 3.0's squared is another game: an 11x11 grid, one target, 5 moves.)
 */
#include "../puffernative.h"

#define LOG_FIELDS(X) X(episode_return) X(episode_length) X(score) X(n)
PN_LOG_STRUCT(LOG_FIELDS);

typedef struct {
    PN_ENV_FIELDS(float);  // log, the buffers, num_agents, rng: read and set by the glue
    int size, center, num_targets, max_ticks, num_border;
    int* border;            // border cell indices in a fixed order, then partly shuffled to pick targets
    unsigned char* target;  // size * size: 1 where a target stands
    int r, c, hits, tick;
    float episode_return;
} Squared;

static const int SQ_MOVES[8][2] = {{0, -1}, {0, 1}, {-1, 0}, {1, 0}, {1, -1}, {-1, -1}, {1, 1}, {-1, 1}};

/* Allocate the per-env tables for a (2d+1)^2 grid; 0 ok, -1 out of memory. */
static int sq_alloc(Squared* env, int distance, int num_targets, int max_ticks) {
    env->size = 2 * distance + 1;
    env->center = distance;
    env->num_targets = num_targets;
    env->max_ticks = max_ticks > 0 ? max_ticks : 2 * num_targets * distance;
    env->num_border = 4 * (env->size - 1);
    env->border = (int*)malloc(sizeof(int) * env->num_border);
    env->target = (unsigned char*)calloc((size_t)env->size * env->size, 1);
    return env->border && env->target ? 0 : -1;
}

/* The border cells in row-major order (so the targets depend on the RNG alone, not on past episodes). */
static void sq_border(Squared* env) {
    int k = 0, n = env->size - 1;
    for (int r = 0; r <= n; r++)
        for (int c = 0; c <= n; c += (r == 0 || r == n) ? 1 : n) env->border[k++] = r * env->size + c;
}

static void sq_observe(Squared* env) {
    int n = env->size * env->size;
    for (int i = 0; i < n; i++) env->observations[i] = (float)env->target[i];
    env->observations[env->r * env->size + env->c] = -1.0f;
}

static void sq_start(Squared* env) {
    memset(env->target, 0, (size_t)env->size * env->size);
    sq_border(env);
    for (int i = 0; i < env->num_targets; i++) {  // partial Fisher-Yates: distinct border cells
        int j = i + pn_randint(&env->rng, env->num_border - i);
        int t = env->border[i];
        env->border[i] = env->border[j];
        env->border[j] = t;
        env->target[env->border[i]] = 1;
    }
    env->r = env->c = env->center;
    env->hits = env->tick = 0;
    env->episode_return = 0;
}

void c_reset(Squared* env) {
    sq_start(env);
    sq_observe(env);
    env->rewards[0] = 0;
    env->terminals[0] = env->truncations[0] = 0;
    env->masks[0] = 1;
}

void c_step(Squared* env) {
    int a = env->actions[0];
    env->tick += 1;
    if ((unsigned)a < 8) {  // anything else stays put
        int r = env->r + SQ_MOVES[a][0], c = env->c + SQ_MOVES[a][1];
        env->r = r < 0 ? 0 : r >= env->size ? env->size - 1 : r;
        env->c = c < 0 ? 0 : c >= env->size ? env->size - 1 : c;
    }
    float reward = 0;
    int cell = env->r * env->size + env->c;
    if (env->target[cell]) {
        reward = 1.0f / env->num_targets;
        env->hits += 1;
        env->target[cell] = 0;
        env->r = env->c = env->center;
    }
    env->episode_return += reward;
    int terminal = env->hits == env->num_targets;
    int truncated = !terminal && env->tick >= env->max_ticks;
    env->rewards[0] = reward;
    env->terminals[0] = (unsigned char)terminal;
    env->truncations[0] = (unsigned char)truncated;
    env->masks[0] = 1;
    if (terminal || truncated) {
        env->log.episode_return += env->episode_return;
        env->log.episode_length += (float)env->tick;
        env->log.score += (float)env->hits / env->num_targets;
        env->log.n += 1;
        sq_start(env);
    }
    sq_observe(env);
}

#define SQ_RENDER 256

void c_render(Squared* env, unsigned char* rgb) {
    pn_clear(rgb, SQ_RENDER, SQ_RENDER, 6, 24, 24);
    int cell = SQ_RENDER / env->size, pad = cell > 4 ? 1 : 0;
    int off = (SQ_RENDER - cell * env->size) / 2;
    for (int r = 0; r < env->size; r++)
        for (int c = 0; c < env->size; c++) {
            int agent = r == env->r && c == env->c, target = env->target[r * env->size + c];
            unsigned char R = agent ? 187 : target ? 0 : 40, G = agent ? 0 : target ? 187 : 40, B = agent ? 0 : target ? 187 : 48;
            pn_fill_rect(rgb, SQ_RENDER, SQ_RENDER, off + c * cell + pad, off + r * cell + pad, cell - 2 * pad, cell - 2 * pad, R, G, B);
        }
}

int c_ansi(Squared* env, char* out, int size) {
    int len = 0;
    out[0] = 0;
    for (int r = 0; r < env->size; r++) {
        for (int c = 0; c < env->size; c++) {
            int agent = r == env->r && c == env->c, target = env->target[r * env->size + c];
            len = pn_append(out, size, len, "\033[%sm██\033[0m", agent ? "91" : target ? "94" : "90");
        }
        if (r < env->size - 1) len = pn_append(out, size, len, "\n");
    }
    return len;
}

void c_close(Squared* env) {
    free(env->border);
    free(env->target);
    env->border = NULL;
    env->target = NULL;
}
