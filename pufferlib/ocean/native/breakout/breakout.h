/* Breakout: a paddle, a ball and 6 x 18 bricks; +1 per brick, 5 lives, state observation. Pure C.
 *
 * World: BK_W x BK_H pixels, y down. The paddle slides along the bottom; the ball bounces off the
 * left, right and top walls, the paddle and the bricks. Where the ball meets the paddle sets its
 * outgoing angle (centre: straight up; edges: up to BK_MAX_ANGLE off vertical), as in Atari.
 *
 * A step (a tick) plays `frameskip` frames with the same action (PufferLib's default, 4), its
 * reward the sum of theirs; speeds below are per frame.
 *
 * Actions (Discrete(3)): 0 noop, 1 left, 2 right. Any other value is a noop (never an index).
 * Reward: +1 per brick broken, 0 otherwise (a lost ball costs a life, not reward).
 * Score: Atari points per brick by row (top two rows 7, middle two 4, bottom two 1; 432 for all).
 * Lives: `lives` per episode; a ball that falls past the paddle costs one and the next ball is
 * served (from below the bricks, downwards, at a random angle) in the same step.
 *
 * Observation (float32, BK_OBS_SIZE, every element in [-1, 1]):
 *   [0] paddle centre x / BK_W        [1] ball centre x / BK_W      [2] ball centre y / BK_H
 *   [3] ball vx / BK_BALL_SPEED        [4] ball vy / BK_BALL_SPEED   [5] lives left / `lives`
 *   [6 + r * BK_COLS + c] 1 if the brick at row r (0 = top), column c is still standing, else 0.
 *
 * Episode end and autoreset:
 *   terminal   = the last life is lost, or every brick is broken;
 *   truncation = `max_ticks` steps were taken without a terminal (never both in one step).
 * In the step an episode ends, c_step writes that step's reward and terminal/truncation, adds the
 * episode to `log` (n += 1) and starts the next episode at once: the observation returned is the new
 * episode's first (the final one is not returned).
 *
 * Keywords (binding.c): max_ticks (steps, default 4000), lives (5), frameskip (4).
 */
#ifndef OCEAN_NATIVE_BREAKOUT_H
#define OCEAN_NATIVE_BREAKOUT_H

#include "../puffernative.h"

#define BK_W 288
#define BK_H 208
#define BK_ROWS 6
#define BK_COLS 18
#define BK_NUM_BRICKS (BK_ROWS * BK_COLS)
#define BK_BRICK_W 16
#define BK_BRICK_H 6
#define BK_BRICK_TOP 32
#define BK_PADDLE_W 32
#define BK_PADDLE_H 4
#define BK_PADDLE_Y 192
#define BK_PADDLE_SPEED 6.0f
#define BK_BALL 4
#define BK_BALL_SPEED 4.0f
#define BK_SUBSTEPS 2             /* 2 px per substep < BK_BRICK_H and BK_PADDLE_H: no tunnelling */
#define BK_MAX_ANGLE 1.0471976f   /* 60 degrees */
#define BK_SERVE_ANGLE 0.7853982f /* 45 degrees */
#define BK_OBS_SIZE (6 + BK_NUM_BRICKS)
#define BK_DEFAULT_MAX_TICKS 4000
#define BK_DEFAULT_LIVES 5
#define BK_DEFAULT_FRAMESKIP 4

#define LOG_FIELDS(X) X(episode_return) X(episode_length) X(score) X(bricks_broken) X(lives_lost) X(cleared) X(n)
PN_LOG_STRUCT(LOG_FIELDS);

typedef struct {
    PN_ENV_FIELDS(float);  // log, the buffers, num_agents, rng: read and set by the glue
    /* settings (my_init) */
    int max_ticks; /* steps */
    int max_lives;
    int frameskip; /* frames per step, the action repeated */
    /* game state */
    float paddle_x; /* left edge */
    float ball_x, ball_y, ball_vx, ball_vy; /* top-left corner, pixels per frame */
    int lives, tick, bricks_left;
    unsigned char bricks[BK_NUM_BRICKS];
    /* this episode so far */
    float ep_return;
    int ep_bricks, ep_score, ep_lives_lost;
} Breakout;

static inline void breakout_defaults(Breakout* env) {
    env->max_ticks = BK_DEFAULT_MAX_TICKS;
    env->max_lives = BK_DEFAULT_LIVES;
    env->frameskip = BK_DEFAULT_FRAMESKIP;
}

static inline int bk_row_points(int row) { return row < 2 ? 7 : (row < 4 ? 4 : 1); }

static inline void bk_serve(Breakout* env) {
    float angle = pn_uniform_range(&env->rng, -BK_SERVE_ANGLE, BK_SERVE_ANGLE);
    env->ball_x = pn_uniform_range(&env->rng, 0.25f * BK_W, 0.75f * BK_W - BK_BALL);
    env->ball_y = (float)(BK_BRICK_TOP + BK_ROWS * BK_BRICK_H + 24);
    env->ball_vx = BK_BALL_SPEED * sinf(angle);
    env->ball_vy = BK_BALL_SPEED * cosf(angle);
}

static inline void bk_new_episode(Breakout* env) {
    memset(env->bricks, 1, sizeof(env->bricks));
    env->bricks_left = BK_NUM_BRICKS;
    env->lives = env->max_lives;
    env->tick = 0;
    env->paddle_x = 0.5f * (BK_W - BK_PADDLE_W);
    env->ep_return = 0.0f;
    env->ep_bricks = env->ep_score = env->ep_lives_lost = 0;
    bk_serve(env);
}

static inline float bk_clamp(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

static inline void bk_observe(Breakout* env) {
    float* o = env->observations;
    o[0] = (env->paddle_x + 0.5f * BK_PADDLE_W) / BK_W;
    o[1] = bk_clamp((env->ball_x + 0.5f * BK_BALL) / BK_W, 0.0f, 1.0f);
    o[2] = bk_clamp((env->ball_y + 0.5f * BK_BALL) / BK_H, 0.0f, 1.0f);
    o[3] = env->ball_vx / BK_BALL_SPEED;
    o[4] = env->ball_vy / BK_BALL_SPEED;
    o[5] = (float)env->lives / (float)env->max_lives;
    for (int i = 0; i < BK_NUM_BRICKS; i++) o[6 + i] = (float)env->bricks[i];
}

/* Index of a standing brick the ball overlaps, or -1. */
static inline int bk_brick_at_ball(const Breakout* env) {
    float top = env->ball_y - BK_BRICK_TOP, bottom = top + BK_BALL;
    if (bottom <= 0.0f || top >= (float)(BK_ROWS * BK_BRICK_H)) return -1;
    /* truncation, not floorf: a negative `top` only ever clamps to row 0, and ball_x >= 0 */
    int r0 = (int)(top * (1.0f / BK_BRICK_H)), r1 = (int)((bottom - 1e-3f) * (1.0f / BK_BRICK_H));
    int c0 = (int)(env->ball_x * (1.0f / BK_BRICK_W));
    int c1 = (int)((env->ball_x + BK_BALL - 1e-3f) * (1.0f / BK_BRICK_W));
    if (r0 < 0) r0 = 0;
    if (r1 > BK_ROWS - 1) r1 = BK_ROWS - 1;
    if (c0 < 0) c0 = 0;
    if (c1 > BK_COLS - 1) c1 = BK_COLS - 1;
    for (int r = r0; r <= r1; r++)
        for (int c = c0; c <= c1; c++)
            if (env->bricks[r * BK_COLS + c]) return r * BK_COLS + c;
    return -1;
}

static inline void bk_break(Breakout* env, int idx, float* reward) {
    env->bricks[idx] = 0;
    env->bricks_left -= 1;
    env->ep_bricks += 1;
    env->ep_score += bk_row_points(idx / BK_COLS);
    *reward += 1.0f;
}

static inline void bk_finish_episode(Breakout* env) {
    env->log.episode_return += env->ep_return;
    env->log.episode_length += (float)env->tick;
    env->log.score += (float)env->ep_score;
    env->log.bricks_broken += (float)env->ep_bricks;
    env->log.lives_lost += (float)env->ep_lives_lost;
    env->log.cleared += env->bricks_left == 0 ? 1.0f : 0.0f;
    env->log.n += 1.0f;
}

static inline void bk_write_flags(Breakout* env, float reward, int terminal, int truncation) {
    env->rewards[0] = reward;
    env->terminals[0] = (unsigned char)terminal;
    env->truncations[0] = (unsigned char)truncation;
    env->masks[0] = 1;
}

void c_reset(Breakout* env) {
    bk_new_episode(env);
    bk_write_flags(env, 0.0f, 0, 0);
    bk_observe(env);
}

/* One frame of the game with `action`; breaks add to *reward. */
static inline void bk_frame(Breakout* env, int action, float* reward) {
    if (action == 1) env->paddle_x -= BK_PADDLE_SPEED;
    else if (action == 2) env->paddle_x += BK_PADDLE_SPEED;
    env->paddle_x = bk_clamp(env->paddle_x, 0.0f, (float)(BK_W - BK_PADDLE_W));

    for (int s = 0; s < BK_SUBSTEPS; s++) {
        float dx = env->ball_vx / BK_SUBSTEPS, dy = env->ball_vy / BK_SUBSTEPS;
        /* x then y, so that a brick hit knows which face it was: flip that axis, undo that move */
        env->ball_x += dx;
        if (env->ball_x < 0.0f) {
            env->ball_x = -env->ball_x;
            env->ball_vx = fabsf(env->ball_vx);
        } else if (env->ball_x > (float)(BK_W - BK_BALL)) {
            env->ball_x = 2.0f * (BK_W - BK_BALL) - env->ball_x;
            env->ball_vx = -fabsf(env->ball_vx);
        }
        int idx = bk_brick_at_ball(env);
        if (idx >= 0) {
            bk_break(env, idx, reward);
            env->ball_x = bk_clamp(env->ball_x - dx, 0.0f, (float)(BK_W - BK_BALL));
            env->ball_vx = -env->ball_vx;
        }
        env->ball_y += dy;
        if (env->ball_y < 0.0f) {
            env->ball_y = -env->ball_y;
            env->ball_vy = fabsf(env->ball_vy);
        }
        idx = bk_brick_at_ball(env);
        if (idx >= 0) {
            bk_break(env, idx, reward);
            env->ball_y -= dy;
            env->ball_vy = -env->ball_vy;
        }
        if (env->ball_vy > 0.0f && env->ball_y + BK_BALL >= BK_PADDLE_Y &&
            env->ball_y <= BK_PADDLE_Y + BK_PADDLE_H && env->ball_x + BK_BALL >= env->paddle_x &&
            env->ball_x <= env->paddle_x + BK_PADDLE_W) {
            float half = 0.5f * (BK_PADDLE_W + BK_BALL);
            float off = ((env->ball_x + 0.5f * BK_BALL) - (env->paddle_x + 0.5f * BK_PADDLE_W)) / half;
            float angle = bk_clamp(off, -1.0f, 1.0f) * BK_MAX_ANGLE;
            env->ball_vx = BK_BALL_SPEED * sinf(angle);
            env->ball_vy = -BK_BALL_SPEED * cosf(angle);
            env->ball_y = (float)(BK_PADDLE_Y - BK_BALL);
        }
        if (env->ball_y > (float)BK_H) {
            env->lives -= 1;
            env->ep_lives_lost += 1;
            if (env->lives > 0) bk_serve(env);
            break;
        }
        if (env->bricks_left == 0) break;
    }
}

void c_step(Breakout* env) {
    int action = env->actions[0];
    float reward = 0.0f;
    env->tick += 1;
    for (int f = 0; f < env->frameskip && env->lives > 0 && env->bricks_left > 0; f++)
        bk_frame(env, action, &reward);
    env->ep_return += reward;
    int terminal = env->lives <= 0 || env->bricks_left == 0;
    int truncation = !terminal && env->tick >= env->max_ticks;
    bk_write_flags(env, reward, terminal, truncation);
    if (terminal || truncation) {
        bk_finish_episode(env);
        bk_new_episode(env);
    }
    bk_observe(env);
}

static const unsigned char BK_ROW_RGB[BK_ROWS][3] = {
    {200, 72, 72}, {198, 108, 58}, {180, 122, 48}, {162, 162, 42}, {72, 160, 72}, {66, 72, 200}};

void c_render(Breakout* env, unsigned char* rgb) {
    pn_clear(rgb, BK_H, BK_W, 0, 0, 0);
    for (int r = 0; r < BK_ROWS; r++)
        for (int c = 0; c < BK_COLS; c++)
            if (env->bricks[r * BK_COLS + c])
                pn_fill_rect(rgb, BK_H, BK_W, c * BK_BRICK_W, BK_BRICK_TOP + r * BK_BRICK_H,
                             BK_BRICK_W - 1, BK_BRICK_H - 1, BK_ROW_RGB[r][0], BK_ROW_RGB[r][1],
                             BK_ROW_RGB[r][2]);
    for (int i = 0; i < env->lives; i++) pn_fill_rect(rgb, BK_H, BK_W, 4 + 8 * i, 4, 5, 5, 200, 200, 200);
    pn_fill_rect(rgb, BK_H, BK_W, (int)env->paddle_x, BK_PADDLE_Y, BK_PADDLE_W, BK_PADDLE_H, 200, 72, 72);
    pn_fill_rect(rgb, BK_H, BK_W, (int)env->ball_x, (int)env->ball_y, BK_BALL, BK_BALL, 236, 236, 236);
}

/* Text grid: a cell is 8 x 6 pixels (a brick is two cells wide, one high). */
#define BK_TEXT_COLS (BK_W / 8)
#define BK_TEXT_ROWS (BK_H / 6 + 1)

int c_ansi(Breakout* env, char* out, int size) {
    if (size <= 0) return 0;
    out[0] = '\0';
    int len = pn_append(out, size, 0, "breakout  score %d  bricks %d/%d  lives %d  tick %d\n", env->ep_score,
                        env->ep_bricks, BK_NUM_BRICKS, env->lives, env->tick);
    static const char* colors[BK_ROWS] = {"\033[31m", "\033[91m", "\033[33m", "\033[93m", "\033[32m", "\033[34m"};
    int bx = (int)((env->ball_x + 0.5f * BK_BALL) / 8), by = (int)((env->ball_y + 0.5f * BK_BALL) / 6);
    int px0 = (int)(env->paddle_x / 8), px1 = (int)((env->paddle_x + BK_PADDLE_W - 1) / 8);
    for (int y = 0; y < BK_TEXT_ROWS; y++) {
        len = pn_append(out, size, len, "|");
        int brick_row = (y * 6 - BK_BRICK_TOP) / BK_BRICK_H;
        int in_bricks = y * 6 >= BK_BRICK_TOP && brick_row < BK_ROWS;
        if (in_bricks) len = pn_append(out, size, len, "%s", colors[brick_row]);
        for (int x = 0; x < BK_TEXT_COLS; x++) {
            const char* ch = " ";
            if (x == bx && y == by) ch = "o";
            else if (in_bricks && env->bricks[brick_row * BK_COLS + x / 2]) ch = "#";
            else if (y == BK_PADDLE_Y / 6 && x >= px0 && x <= px1) ch = "=";
            len = pn_append(out, size, len, "%s", ch);
        }
        if (in_bricks) len = pn_append(out, size, len, "\033[0m");
        len = pn_append(out, size, len, "|\n");
    }
    return len;
}

void c_close(Breakout* env) { (void)env; /* the env allocates nothing of its own */ }

#endif
