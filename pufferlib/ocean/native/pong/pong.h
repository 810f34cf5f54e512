/* Pong: the agent's paddle against a scripted one; +1/-1 per point, first to 21, state observation. Pure C.
 *
 * World: PG_W x PG_H pixels, y down. The ball bounces off the top and bottom walls and off the
 * paddles; where it meets a paddle sets its outgoing angle (centre: flat; edges: up to
 * PG_MAX_ANGLE), and each paddle hit speeds it up by PG_SPEEDUP up to PG_MAX_SPEED. The opponent
 * moves towards the ball's height at PG_OPP_SPEED, slower than the agent's PG_PADDLE_SPEED and than a
 * steep ball, so it can be beaten by angled shots.
 *
 * A step (a tick) plays `frameskip` frames with the same action (default 4; PufferLib 3.0's Pong class
 * plays 1, its pong.ini 8), its reward the sum of theirs; speeds below are per frame.
 *
 * Actions (Discrete(3)): 0 noop, 1 up, 2 down. Any other value is a noop (never an unchecked index).
 * Reward: +1 when the ball passes the opponent (a point won), -1 when it passes the agent (lost).
 * After each point the ball is served from the centre, in a random direction and angle.
 * Score: points won minus points lost (Atari Pong's score, -max_score..max_score).
 *
 * Observation (float32, PG_OBS_SIZE, every element in [-1, 1]):
 *   [0] agent paddle centre y / PG_H    [1] opponent paddle centre y / PG_H
 *   [2] ball centre x / PG_W            [3] ball centre y / PG_H
 *   [4] ball vx / PG_MAX_SPEED          [5] ball vy / PG_MAX_SPEED
 *   [6] agent points / max_score        [7] opponent points / max_score
 *
 * Episode end and autoreset:
 *   terminal   = either side reaches `max_score` points;
 *   truncation = `max_ticks` steps were taken without a terminal (never both in one step).
 * In the step an episode ends, c_step writes that step's reward and terminal/truncation, adds the
 * episode to `log` (n += 1) and starts the next episode at once: the observation returned is the new
 * episode's first (the final one is not returned).
 *
 * Keywords (binding.c): max_score (default 21), max_ticks (steps, 5000), frameskip (4).
 */
#ifndef OCEAN_NATIVE_PONG_H
#define OCEAN_NATIVE_PONG_H

#include "../puffernative.h"

#define PG_W 208
#define PG_H 160
#define PG_PADDLE_W 4
#define PG_PADDLE_H 24
#define PG_AGENT_X (PG_W - 8) /* the agent's paddle's left edge */
#define PG_OPP_X 4            /* the opponent's paddle's left edge */
#define PG_PADDLE_SPEED 4.0f
#define PG_OPP_SPEED 2.5f
#define PG_BALL 4
#define PG_SERVE_SPEED 3.0f
#define PG_SPEEDUP 0.2f
#define PG_MAX_SPEED 6.0f
#define PG_MAX_ANGLE 1.0471976f   /* 60 degrees */
#define PG_SERVE_ANGLE 0.5235988f /* 30 degrees */
#define PG_OBS_SIZE 8
#define PG_DEFAULT_MAX_SCORE 21
#define PG_DEFAULT_MAX_TICKS 5000
#define PG_DEFAULT_FRAMESKIP 4

#define LOG_FIELDS(X) X(episode_return) X(episode_length) X(score) X(points_won) X(points_lost) X(wins) X(n)
PN_LOG_STRUCT(LOG_FIELDS);

typedef struct {
    PN_ENV_FIELDS(float);  // log, the buffers, num_agents, rng: read and set by the glue
    /* settings (my_init) */
    int max_score;
    int max_ticks; /* steps */
    int frameskip; /* frames per step, the action repeated */
    /* game state: paddles' top edges, ball's top-left corner, velocities in pixels per frame */
    float agent_y, opp_y;
    float ball_x, ball_y, ball_vx, ball_vy, ball_speed;
    int agent_points, opp_points, tick;
    float ep_return;
} Pong;

static inline void pong_defaults(Pong* env) {
    env->max_score = PG_DEFAULT_MAX_SCORE;
    env->max_ticks = PG_DEFAULT_MAX_TICKS;
    env->frameskip = PG_DEFAULT_FRAMESKIP;
}

static inline void pg_serve(Pong* env) {
    float angle = pn_uniform_range(&env->rng, -PG_SERVE_ANGLE, PG_SERVE_ANGLE);
    float dir = pn_randint(&env->rng, 2) ? 1.0f : -1.0f;
    env->ball_speed = PG_SERVE_SPEED;
    env->ball_x = 0.5f * (PG_W - PG_BALL);
    env->ball_y = pn_uniform_range(&env->rng, 0.25f * PG_H, 0.75f * PG_H - PG_BALL);
    env->ball_vx = dir * env->ball_speed * cosf(angle);
    env->ball_vy = env->ball_speed * sinf(angle);
}

static inline void pg_new_episode(Pong* env) {
    env->agent_y = env->opp_y = 0.5f * (PG_H - PG_PADDLE_H);
    env->agent_points = env->opp_points = 0;
    env->tick = 0;
    env->ep_return = 0.0f;
    pg_serve(env);
}

static inline void pg_observe(Pong* env) {
    float* o = env->observations;
    /* products with constant reciprocals where a division is not needed for exactness */
    const float inv_h = 1.0f / PG_H, inv_w = 1.0f / PG_W, inv_speed = 1.0f / PG_MAX_SPEED;
    o[0] = (env->agent_y + 0.5f * PG_PADDLE_H) * inv_h;
    o[1] = (env->opp_y + 0.5f * PG_PADDLE_H) * inv_h;
    o[2] = pn_clampf((env->ball_x + 0.5f * PG_BALL) * inv_w, 0.0f, 1.0f);
    o[3] = pn_clampf((env->ball_y + 0.5f * PG_BALL) * inv_h, 0.0f, 1.0f);
    o[4] = env->ball_vx * inv_speed;
    o[5] = env->ball_vy * inv_speed;
    o[6] = (float)env->agent_points / (float)env->max_score;
    o[7] = (float)env->opp_points / (float)env->max_score;
}

/* Send the ball back from a paddle whose top edge is `paddle_y`, towards `dir` (+1 right, -1 left). */
static inline void pg_return(Pong* env, float paddle_y, float dir) {
    float half = 0.5f * (PG_PADDLE_H + PG_BALL);
    float off = ((env->ball_y + 0.5f * PG_BALL) - (paddle_y + 0.5f * PG_PADDLE_H)) / half;
    float angle = pn_clampf(off, -1.0f, 1.0f) * PG_MAX_ANGLE;
    env->ball_speed = fminf(env->ball_speed + PG_SPEEDUP, PG_MAX_SPEED);
    env->ball_vx = dir * env->ball_speed * cosf(angle);
    env->ball_vy = env->ball_speed * sinf(angle);
}

static inline int pg_overlaps_y(const Pong* env, float paddle_y) {
    return env->ball_y + PG_BALL >= paddle_y && env->ball_y <= paddle_y + PG_PADDLE_H;
}

static inline void pg_write_flags(Pong* env, float reward, int terminal, int truncation) {
    env->rewards[0] = reward;
    env->terminals[0] = (unsigned char)terminal;
    env->truncations[0] = (unsigned char)truncation;
    env->masks[0] = 1;
}

void c_reset(Pong* env) {
    pg_new_episode(env);
    pg_write_flags(env, 0.0f, 0, 0);
    pg_observe(env);
}

/* The paddle's move per frame for `action`: 0 noop, 1 up, 2 down, any other value a noop. An index
 * picked by a conditional move, not a branch: random actions would mispredict one. */
static inline float pg_move(int action) {
    static const float moves[3] = {0.0f, -PG_PADDLE_SPEED, PG_PADDLE_SPEED};
    unsigned i = (unsigned)action;
    return moves[i < 3u ? i : 0u];
}

/* One frame of the game with the paddle moving `move`; a point adds +-1 to *reward. */
static inline void pg_frame(Pong* env, float move, float* reward) {
    env->agent_y = pn_clampf(env->agent_y + move, 0.0f, (float)(PG_H - PG_PADDLE_H));

    float target = env->ball_y + 0.5f * PG_BALL - 0.5f * PG_PADDLE_H;
    env->opp_y += pn_clampf(target - env->opp_y, -PG_OPP_SPEED, PG_OPP_SPEED);
    env->opp_y = pn_clampf(env->opp_y, 0.0f, (float)(PG_H - PG_PADDLE_H));

    float old_x = env->ball_x;
    env->ball_x += env->ball_vx;
    env->ball_y += env->ball_vy;
    if (env->ball_y < 0.0f) {
        env->ball_y = -env->ball_y;
        env->ball_vy = fabsf(env->ball_vy);
    } else if (env->ball_y > (float)(PG_H - PG_BALL)) {
        env->ball_y = 2.0f * (PG_H - PG_BALL) - env->ball_y;
        env->ball_vy = -fabsf(env->ball_vy);
    }
    /* a paddle is hit when the ball crosses its front face this frame with the heights overlapping */
    float agent_face = (float)(PG_AGENT_X - PG_BALL), opp_face = (float)(PG_OPP_X + PG_PADDLE_W);
    if (env->ball_vx > 0.0f && old_x <= agent_face && env->ball_x > agent_face &&
        pg_overlaps_y(env, env->agent_y)) {
        env->ball_x = agent_face;
        pg_return(env, env->agent_y, -1.0f);
    } else if (env->ball_vx < 0.0f && old_x >= opp_face && env->ball_x < opp_face &&
               pg_overlaps_y(env, env->opp_y)) {
        env->ball_x = opp_face;
        pg_return(env, env->opp_y, 1.0f);
    }
    if (env->ball_x > (float)PG_W) {
        env->opp_points += 1;
        *reward -= 1.0f;
        pg_serve(env);
    } else if (env->ball_x + PG_BALL < 0.0f) {
        env->agent_points += 1;
        *reward += 1.0f;
        pg_serve(env);
    }
}

void c_step(Pong* env) {
    float move = pg_move(env->actions[0]);
    float reward = 0.0f;
    env->tick += 1;
    for (int f = 0; f < env->frameskip && env->agent_points < env->max_score && env->opp_points < env->max_score; f++)
        pg_frame(env, move, &reward);
    env->ep_return += reward;
    int terminal = env->agent_points >= env->max_score || env->opp_points >= env->max_score;
    int truncation = !terminal && env->tick >= env->max_ticks;
    pg_write_flags(env, reward, terminal, truncation);
    if (terminal || truncation) {
        env->log.episode_return += env->ep_return;
        env->log.episode_length += (float)env->tick;
        env->log.score += (float)(env->agent_points - env->opp_points);
        env->log.points_won += (float)env->agent_points;
        env->log.points_lost += (float)env->opp_points;
        env->log.wins += env->agent_points >= env->max_score ? 1.0f : 0.0f;
        env->log.n += 1.0f;
        pg_new_episode(env);
    }
    pg_observe(env);
}

void c_render(Pong* env, unsigned char* rgb) {
    pn_clear(rgb, PG_H, PG_W, 24, 24, 40);
    for (int y = 0; y < PG_H; y += 8) pn_fill_rect(rgb, PG_H, PG_W, PG_W / 2 - 1, y, 2, 4, 90, 90, 110);
    /* points as pips: the opponent's top-left, the agent's top-right */
    for (int i = 0; i < env->opp_points; i++) pn_fill_rect(rgb, PG_H, PG_W, 12 + 4 * i, 2, 3, 3, 220, 120, 60);
    for (int i = 0; i < env->agent_points; i++)
        pn_fill_rect(rgb, PG_H, PG_W, PG_W - 15 - 4 * i, 2, 3, 3, 90, 200, 120);
    pn_fill_rect(rgb, PG_H, PG_W, PG_OPP_X, (int)env->opp_y, PG_PADDLE_W, PG_PADDLE_H, 220, 120, 60);
    pn_fill_rect(rgb, PG_H, PG_W, PG_AGENT_X, (int)env->agent_y, PG_PADDLE_W, PG_PADDLE_H, 90, 200, 120);
    pn_fill_rect(rgb, PG_H, PG_W, (int)env->ball_x, (int)env->ball_y, PG_BALL, PG_BALL, 240, 240, 240);
}

/* Text grid: a cell is 4 x 8 pixels. */
#define PG_TEXT_COLS (PG_W / 4)
#define PG_TEXT_ROWS (PG_H / 8)

int c_ansi(Pong* env, char* out, int size) {
    if (size <= 0) return 0;
    out[0] = '\0';
    int len = pn_append(out, size, 0, "pong  opponent %d : %d agent  tick %d\n", env->opp_points,
                        env->agent_points, env->tick);
    int bx = (int)((env->ball_x + 0.5f * PG_BALL) / 4), by = (int)((env->ball_y + 0.5f * PG_BALL) / 8);
    int ax = PG_AGENT_X / 4, ox = PG_OPP_X / 4;
    for (int y = 0; y < PG_TEXT_ROWS; y++) {
        len = pn_append(out, size, len, "|");
        for (int x = 0; x < PG_TEXT_COLS; x++) {
            float cy = y * 8.0f + 4.0f;
            const char* ch = x == PG_TEXT_COLS / 2 ? "\033[90m:\033[0m" : " ";
            if (x == bx && y == by) ch = "o";
            else if (x == ax && cy >= env->agent_y && cy <= env->agent_y + PG_PADDLE_H) ch = "\033[32m#\033[0m";
            else if (x == ox && cy >= env->opp_y && cy <= env->opp_y + PG_PADDLE_H) ch = "\033[33m#\033[0m";
            len = pn_append(out, size, len, "%s", ch);
        }
        len = pn_append(out, size, len, "|\n");
    }
    return len;
}

void c_close(Pong* env) { (void)env; /* the env allocates nothing of its own */ }

#endif
