/* Snake: many snakes on one map (multi-agent, one agent row per snake), as PufferLib's Ocean snake.
 *
 * One env instance is a width x height map with `num_snakes` snakes (one agent row each) and
 * `num_food` food cells. Each row observes the (2*vision+1)^2 square of the map centred on its own
 * head, row-major, one uint8 per cell:
 *   0 empty, 1 food, 2 corpse, 3 wall (everything outside the map), 4 own body (head included),
 *   5 another snake.
 * Actions (Discrete(4)): 0 up, 1 down, 2 left, 3 right (absolute directions). An action that
 * would turn the snake back into its own neck moves it straight on instead; an out-of-range
 * action (the glue refuses those before c_step) also moves it straight on.
 *
 * Snakes move one after the other in row order, each seeing the map as the snakes before it left
 * it. A snake whose head enters a wall, a snake (itself included, tail too) dies: reward
 * `reward_death`. Eating food gives `reward_food` and grows the snake by one (up to
 * `max_snake_length`); new food appears at a random free cell (empty, or a corpse it replaces) at
 * the end of the step, so the map keeps `num_food` food cells while there is room. With
 * `leave_corpse` a dead snake leaves a corpse on every other cell of its body, eaten like food for
 * `reward_corpse` (corpses are not replaced).
 *
 * Episodes, terminals, truncation and autoreset. Every snake's episode ends on its own:
 *   - death: terminal = 1 on its row, with reward_death;
 *   - `max_steps` > 0 and the episode reached that many steps: truncation = 1 (reward of that step
 *     kept); the snake is removed (no corpse) and respawns like a dead one.
 * The ended episode is added to the log in that step. With `respawn_delay` 0 (default) the snake
 * respawns (length 1, at a random free cell) in the same step: the observation that comes with
 * the terminal/truncation is the new episode's first and the row's mask stays 1. With
 * `respawn_delay` k > 0 the row is absent for k steps, from the step of the death (which still
 * carries its terminal/truncation and reward) to the step before it respawns: mask 0, observation
 * all zeros, reward 0 after the death step; then mask 1 again with the new episode's first
 * observation (terminal 0). A snake that finds no free cell to respawn on stays absent
 * (mask 0) and retries every step; food that finds no room is retried every step as well.
 * c_reset respawns every snake and refills the food.
 *
 * Log (per finished episode, summed): episode_return, episode_length, score (the snake's length
 * when its episode ended, as PufferLib reports), died (1 for a death, 0 for a truncation), n.
 */
#ifndef OCEAN_SNAKE_H
#define OCEAN_SNAKE_H

#include "../puffernative.h"

enum { SNAKE_EMPTY = 0, SNAKE_FOOD = 1, SNAKE_CORPSE = 2, SNAKE_WALL = 3, SNAKE_SELF = 4, SNAKE_OTHER = 5 };
#define SNAKE_BODY 8 /* grid value of snake i's body: SNAKE_BODY + i */

#define LOG_FIELDS(X) X(episode_return) X(episode_length) X(score) X(died) X(n)
PN_LOG_STRUCT(LOG_FIELDS);

typedef struct {
    PN_ENV_FIELDS(unsigned char); /* num_agents = num_snakes */
    /* configuration (set before snake_init) */
    int width, height, num_snakes, num_food, vision, max_snake_length, max_steps, respawn_delay, leave_corpse;
    float reward_food, reward_corpse, reward_death;
    /* state (allocated by snake_init, freed by c_close) */
    int* grid;   /* width * height cells: SNAKE_EMPTY/FOOD/CORPSE or SNAKE_BODY + snake */
    int* body;   /* num_snakes rings of max_snake_length cell indices; head at body[i*max + head[i]] */
    int* head;   /* ring index of each snake's head */
    int* length; /* 0 = absent (dead, waiting to respawn) */
    int* wait;   /* steps until an absent snake tries to respawn */
    int* dir;    /* last direction moved (0..3) */
    float* ep_return;
    int* ep_length;
    int food; /* food cells on the map */
    int obs_size;
} Snake;

static const int SNAKE_DR[4] = {-1, 1, 0, 0};
static const int SNAKE_DC[4] = {0, 0, -1, 1};

/* Allocate the state for the configuration already set; 0 ok, -1 out of memory (nothing leaked). */
static int snake_init(Snake* env) {
    size_t cells = (size_t)env->width * env->height, n = (size_t)env->num_snakes;
    env->num_agents = env->num_snakes;
    env->obs_size = (2 * env->vision + 1) * (2 * env->vision + 1);
    env->grid = calloc(cells, sizeof(int));
    env->body = calloc(n * env->max_snake_length, sizeof(int));
    env->head = calloc(n, sizeof(int));
    env->length = calloc(n, sizeof(int));
    env->wait = calloc(n, sizeof(int));
    env->dir = calloc(n, sizeof(int));
    env->ep_return = calloc(n, sizeof(float));
    env->ep_length = calloc(n, sizeof(int));
    if (!env->grid || !env->body || !env->head || !env->length || !env->wait || !env->dir || !env->ep_return ||
        !env->ep_length) {
        free(env->grid), free(env->body), free(env->head), free(env->length);
        free(env->wait), free(env->dir), free(env->ep_return), free(env->ep_length);
        env->grid = NULL, env->body = NULL, env->head = NULL, env->length = NULL;
        env->wait = NULL, env->dir = NULL, env->ep_return = NULL, env->ep_length = NULL;
        return -1;
    }
    return 0;
}

/* A random free cell (empty or a corpse, which the newcomer replaces, as in PufferLib), or -1 when
 * the map has none: a few random draws, then a scan from a random cell (a crowded map never loops
 * forever). */
static int snake_free_cell(Snake* env) {
    int cells = env->width * env->height;
    for (int tries = 0; tries < 16; tries++) {
        int c = pn_randint(&env->rng, cells);
        if (env->grid[c] <= SNAKE_CORPSE && env->grid[c] != SNAKE_FOOD) return c;
    }
    int start = pn_randint(&env->rng, cells);
    for (int k = 0; k < cells; k++) {
        int c = (start + k) % cells;
        if (env->grid[c] <= SNAKE_CORPSE && env->grid[c] != SNAKE_FOOD) return c;
    }
    return -1;
}

/* Take snake i off the map; with `corpse`, every other cell of its body becomes a corpse. */
static void snake_remove(Snake* env, int i, int corpse) {
    int max = env->max_snake_length, *ring = env->body + (size_t)i * max;
    for (int k = 0; k < env->length[i]; k++) {
        int cell = ring[(env->head[i] - k + max) % max];
        env->grid[cell] = (corpse && k % 2 == 0) ? SNAKE_CORPSE : SNAKE_EMPTY;
    }
    env->length[i] = 0;
}

/* Put snake i (absent) on a random empty cell as a new episode; 0 when there is none. */
static int snake_spawn(Snake* env, int i) {
    int cell = snake_free_cell(env);
    if (cell < 0) return 0;
    env->body[(size_t)i * env->max_snake_length] = cell;
    env->head[i] = 0;
    env->length[i] = 1;
    env->wait[i] = 0;
    env->dir[i] = pn_randint(&env->rng, 4);
    env->ep_return[i] = 0;
    env->ep_length[i] = 0;
    env->grid[cell] = SNAKE_BODY + i;
    return 1;
}

static void snake_top_up_food(Snake* env) {
    while (env->food < env->num_food) {
        int cell = snake_free_cell(env);
        if (cell < 0) return;
        env->grid[cell] = SNAKE_FOOD;
        env->food++;
    }
}

/* The episode of snake i ends (died: 1 death, 0 truncation): logged, then it respawns now or later. */
static void snake_end(Snake* env, int i, int died) {
    env->log.episode_return += env->ep_return[i];
    env->log.episode_length += (float)env->ep_length[i];
    env->log.score += (float)env->length[i];
    env->log.died += (float)died;
    env->log.n += 1;
    if (died)
        env->terminals[i] = 1;
    else
        env->truncations[i] = 1;
    snake_remove(env, i, died && env->leave_corpse);
    env->wait[i] = env->respawn_delay;
    if (env->wait[i] == 0 && !snake_spawn(env, i)) env->wait[i] = 1;
}

static void snake_observe(Snake* env) {
    int v = env->vision, side = 2 * v + 1, W = env->width, H = env->height;
    for (int i = 0; i < env->num_snakes; i++) {
        unsigned char* o = env->observations + (size_t)i * env->obs_size;
        env->masks[i] = env->length[i] > 0;
        if (!env->length[i]) {
            memset(o, 0, (size_t)env->obs_size);
            continue;
        }
        int cell = env->body[(size_t)i * env->max_snake_length + env->head[i]];
        int hr = cell / W, hc = cell % W, me = SNAKE_BODY + i;
        if (hr >= v && hr + v < H && hc >= v && hc + v < W) { /* the crop lies inside the map */
            const int* g = env->grid + (size_t)(hr - v) * W + (hc - v);
            for (int r = 0; r < side; r++, g += W, o += side)
                for (int c = 0; c < side; c++)
                    o[c] = g[c] < SNAKE_BODY ? (unsigned char)g[c] : (g[c] == me ? SNAKE_SELF : SNAKE_OTHER);
            continue;
        }
        for (int r = 0; r < side; r++) {
            int mr = hr - v + r;
            for (int c = 0; c < side; c++) {
                int mc = hc - v + c;
                unsigned char t;
                if (mr < 0 || mr >= H || mc < 0 || mc >= W) {
                    t = SNAKE_WALL;
                } else {
                    int g = env->grid[mr * W + mc];
                    t = g < SNAKE_BODY ? (unsigned char)g : (g == SNAKE_BODY + i ? SNAKE_SELF : SNAKE_OTHER);
                }
                o[r * side + c] = t;
            }
        }
    }
}

void c_reset(Snake* env) {
    memset(env->grid, 0, (size_t)env->width * env->height * sizeof(int));
    env->food = 0;
    for (int i = 0; i < env->num_snakes; i++) {
        env->length[i] = 0;
        env->rewards[i] = 0;
        env->terminals[i] = 0;
        env->truncations[i] = 0;
        if (!snake_spawn(env, i)) env->wait[i] = 1;
    }
    snake_top_up_food(env);
    snake_observe(env);
}

static void snake_move(Snake* env, int i) {
    int max = env->max_snake_length, W = env->width, H = env->height;
    int* ring = env->body + (size_t)i * max;
    int cell = ring[env->head[i]], r = cell / W, c = cell % W;
    int a = env->actions[i];
    int d = (a >= 0 && a < 4) ? a : env->dir[i];
    if (env->length[i] > 1) { /* turning back into the neck goes straight on */
        int neck = ring[(env->head[i] - 1 + max) % max];
        if (neck / W == r + SNAKE_DR[d] && neck % W == c + SNAKE_DC[d]) d = env->dir[i];
    }
    int nr = r + SNAKE_DR[d], nc = c + SNAKE_DC[d];
    env->dir[i] = d;
    env->ep_length[i]++;
    if (nr < 0 || nr >= H || nc < 0 || nc >= W || env->grid[nr * W + nc] >= SNAKE_BODY) {
        env->rewards[i] = env->reward_death;
        env->ep_return[i] += env->reward_death;
        snake_end(env, i, 1);
        return;
    }
    int next = nr * W + nc, tile = env->grid[next];
    int grow = 0;
    if (tile == SNAKE_FOOD) {
        env->rewards[i] = env->reward_food;
        env->food--;
        grow = 1;
    } else if (tile == SNAKE_CORPSE) {
        env->rewards[i] = env->reward_corpse;
        grow = 1;
    }
    env->ep_return[i] += env->rewards[i];
    if (grow && env->length[i] < max) {
        env->length[i]++;
    } else { /* the tail leaves its cell */
        int tail = ring[(env->head[i] - env->length[i] + 1 + max) % max];
        env->grid[tail] = SNAKE_EMPTY;
    }
    env->head[i] = (env->head[i] + 1) % max;
    ring[env->head[i]] = next;
    env->grid[next] = SNAKE_BODY + i;
    if (env->max_steps > 0 && env->ep_length[i] >= env->max_steps) snake_end(env, i, 0);
}

void c_step(Snake* env) {
    for (int i = 0; i < env->num_snakes; i++) {
        env->rewards[i] = 0;
        env->terminals[i] = 0;
        env->truncations[i] = 0;
    }
    for (int i = 0; i < env->num_snakes; i++) {
        if (env->length[i] > 0) {
            snake_move(env, i);
        } else if (--env->wait[i] <= 0 && !snake_spawn(env, i)) {
            env->wait[i] = 1;
        }
    }
    snake_top_up_food(env);
    snake_observe(env);
}

/* Colours: background, food, corpse, then snakes cycle through a palette (heads drawn brighter). */
static const unsigned char SNAKE_PALETTE[6][3] = {{0, 200, 255}, {255, 220, 0}, {200, 80, 255},
                                                  {80, 255, 120}, {255, 120, 60}, {240, 240, 240}};

#define SNAKE_RENDER_H 360
#define SNAKE_RENDER_W 640

/* The whole map scaled into the SNAKE_RENDER_H x SNAKE_RENDER_W frame: square cells (nearest cell
 * when the map is larger than the frame), the rest of the frame in wall grey. */
void c_render(Snake* env, unsigned char* rgb) {
    const int H = SNAKE_RENDER_H, W = SNAKE_RENDER_W;
    float scale = fmaxf((float)env->width / W, (float)env->height / H); /* cells per pixel */
    for (int y = 0; y < H; y++) {
        int r = (int)(y * scale);
        for (int x = 0; x < W; x++) {
            int c = (int)(x * scale);
            unsigned char* p = rgb + ((size_t)y * W + x) * 3;
            unsigned char col[3] = {60, 60, 60};
            if (r < env->height && c < env->width) {
                int g = env->grid[r * env->width + c];
                if (g == SNAKE_EMPTY) {
                    col[0] = 6, col[1] = 24, col[2] = 24;
                } else if (g == SNAKE_FOOD) {
                    col[0] = 255, col[1] = 0, col[2] = 0;
                } else if (g == SNAKE_CORPSE) {
                    col[0] = 128, col[1] = 40, col[2] = 40;
                } else {
                    int i = g - SNAKE_BODY, head = env->body[(size_t)i * env->max_snake_length + env->head[i]];
                    const unsigned char* s = SNAKE_PALETTE[i % 6];
                    int dim = head == r * env->width + c ? 0 : 1; /* bodies at half brightness */
                    col[0] = s[0] >> dim, col[1] = s[1] >> dim, col[2] = s[2] >> dim;
                }
            }
            p[0] = col[0], p[1] = col[1], p[2] = col[2];
        }
    }
}

/* The map as text: '#' border, '.' empty, '*' food, '%' corpse, snakes as letters (head upper case). */
int c_ansi(Snake* env, char* out, int size) {
    int len = 0;
    if (size <= 0) return 0;
    out[0] = '\0';
    len = pn_append(out, size, len, "snake %dx%d, %d snakes, %d food\n", env->width, env->height, env->num_snakes,
                    env->food);
    for (int r = -1; r <= env->height; r++) {
        for (int c = -1; c <= env->width; c++) {
            char ch = '#';
            if (r >= 0 && r < env->height && c >= 0 && c < env->width) {
                int g = env->grid[r * env->width + c];
                if (g == SNAKE_EMPTY)
                    ch = '.';
                else if (g == SNAKE_FOOD)
                    ch = '*';
                else if (g == SNAKE_CORPSE)
                    ch = '%';
                else {
                    int i = g - SNAKE_BODY, head = env->body[(size_t)i * env->max_snake_length + env->head[i]];
                    ch = (char)((head == r * env->width + c ? 'A' : 'a') + i % 26);
                }
            }
            len = pn_append(out, size, len, "%c", ch);
        }
        len = pn_append(out, size, len, "\n");
    }
    return len;
}

void c_close(Snake* env) {
    free(env->grid), free(env->body), free(env->head), free(env->length);
    free(env->wait), free(env->dir), free(env->ep_return), free(env->ep_length);
    env->grid = NULL, env->body = NULL, env->head = NULL, env->length = NULL;
    env->wait = NULL, env->dir = NULL, env->ep_return = NULL, env->ep_length = NULL;
}

#endif
