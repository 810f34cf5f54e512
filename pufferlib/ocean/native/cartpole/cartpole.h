/* CartPole: gymnasium's CartPole-v1 dynamics (Barto, Sutton & Anderson), PufferLib's puffer_cartpole semantics.
 *
 * Observation (4 float32): cart position, cart velocity, pole angle (rad), pole angular velocity.
 * Action: Discrete(2), 0 pushes left, 1 pushes right (force 10 N, Euler step, tau 0.02 s).
 * Reward 1 every step, the last one included. Terminal when |x| > 2.4 or |theta| > 12 degrees;
 * truncated after max_steps steps (500). Autoreset: the step that ends an episode sets the terminal or
 * truncation, adds the episode to the log and resets in place, so the observation it writes is the new
 * episode's first. The start state is uniform in [-0.05, 0.05]^4 from the env's own RNG.
 * Log: episode_return, episode_length, score (= the return), x_terminations, angle_terminations, n.
 */
#include "../puffernative.h"

#define CP_GRAVITY 9.8f
#define CP_MASSCART 1.0f
#define CP_MASSPOLE 0.1f
#define CP_TOTAL_MASS (CP_MASSCART + CP_MASSPOLE)
#define CP_LENGTH 0.5f
#define CP_POLEMASS_LENGTH (CP_MASSPOLE * CP_LENGTH)
#define CP_FORCE 10.0f
#define CP_TAU 0.02f
#define CP_X_LIMIT 2.4f
#define CP_THETA_LIMIT (12.0f * 2.0f * 3.14159265358979f / 360.0f)

#define LOG_FIELDS(X) X(episode_return) X(episode_length) X(score) X(x_terminations) X(angle_terminations) X(n)
PN_LOG_STRUCT(LOG_FIELDS);

typedef struct {
    PN_ENV_FIELDS(float);  // log, the buffers, num_agents, rng: read and set by the glue
    float x, x_dot, theta, theta_dot;
    int tick, max_steps;
} CartPole;

static inline void cp_observe(CartPole* env) {
    env->observations[0] = env->x;
    env->observations[1] = env->x_dot;
    env->observations[2] = env->theta;
    env->observations[3] = env->theta_dot;
}

static inline void cp_start(CartPole* env) {
    env->x = pn_uniform_range(&env->rng, -0.05f, 0.05f);
    env->x_dot = pn_uniform_range(&env->rng, -0.05f, 0.05f);
    env->theta = pn_uniform_range(&env->rng, -0.05f, 0.05f);
    env->theta_dot = pn_uniform_range(&env->rng, -0.05f, 0.05f);
    env->tick = 0;
}

void c_reset(CartPole* env) {
    cp_start(env);
    cp_observe(env);
    env->rewards[0] = 0;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
    env->masks[0] = 1;
}

void c_step(CartPole* env) {
    float force = env->actions[0] == 1 ? CP_FORCE : -CP_FORCE;  // anything but 1 pushes left (never indexes)
    float c = cosf(env->theta), s = sinf(env->theta);
    float temp = (force + CP_POLEMASS_LENGTH * env->theta_dot * env->theta_dot * s) / CP_TOTAL_MASS;
    float theta_acc = (CP_GRAVITY * s - c * temp) /
                      (CP_LENGTH * (4.0f / 3.0f - CP_MASSPOLE * c * c / CP_TOTAL_MASS));
    float x_acc = temp - CP_POLEMASS_LENGTH * theta_acc * c / CP_TOTAL_MASS;
    env->x += CP_TAU * env->x_dot;
    env->x_dot += CP_TAU * x_acc;
    env->theta += CP_TAU * env->theta_dot;
    env->theta_dot += CP_TAU * theta_acc;
    env->tick += 1;

    int out_x = env->x < -CP_X_LIMIT || env->x > CP_X_LIMIT;
    int out_theta = env->theta < -CP_THETA_LIMIT || env->theta > CP_THETA_LIMIT;
    int terminal = out_x || out_theta;
    int truncated = !terminal && env->tick >= env->max_steps;
    env->rewards[0] = 1.0f;
    env->terminals[0] = (unsigned char)terminal;
    env->truncations[0] = (unsigned char)truncated;
    env->masks[0] = 1;
    if (terminal || truncated) {
        env->log.episode_return += (float)env->tick;
        env->log.episode_length += (float)env->tick;
        env->log.score += (float)env->tick;
        env->log.x_terminations += (float)out_x;
        env->log.angle_terminations += (float)(out_theta && !out_x);
        env->log.n += 1;
        cp_start(env);
    }
    cp_observe(env);
}

#define CP_RENDER_H 200
#define CP_RENDER_W 300

void c_render(CartPole* env, unsigned char* rgb) {
    const int H = CP_RENDER_H, W = CP_RENDER_W;
    pn_clear(rgb, H, W, 255, 255, 255);
    float scale = W / (2 * CP_X_LIMIT * 1.2f);
    int track_y = 150;
    pn_fill_rect(rgb, H, W, 0, track_y, W, 1, 0, 0, 0);
    float cx = W / 2.0f + env->x * scale;
    int cart_w = 40, cart_h = 24;
    pn_fill_rect(rgb, H, W, (int)cx - cart_w / 2, track_y - cart_h / 2, cart_w, cart_h, 0, 0, 0);
    float pole = 2 * CP_LENGTH * scale;
    float top_x = cx + pole * sinf(env->theta), top_y = (track_y - cart_h / 4) - pole * cosf(env->theta);
    pn_draw_line(rgb, H, W, cx, (float)(track_y - cart_h / 4), top_x, top_y, 8, 202, 152, 101);
    pn_fill_rect(rgb, H, W, (int)cx - 3, track_y - cart_h / 4 - 3, 6, 6, 129, 132, 203);
}

int c_ansi(CartPole* env, char* out, int size) {
    const int cells = 41;
    int pos = (int)((env->x / CP_X_LIMIT + 1) * 0.5f * (cells - 1) + 0.5f);
    if (pos < 0) pos = 0;
    if (pos > cells - 1) pos = cells - 1;
    const char* pole = env->theta < -0.07f ? "\\" : env->theta > 0.07f ? "/" : "|";
    int len = 0;
    for (int i = 0; i < cells; i++) len = pn_append(out, size, len, "%s", i == pos ? pole : " ");
    len = pn_append(out, size, len, "\n");
    for (int i = 0; i < cells; i++) len = pn_append(out, size, len, "%s", i == pos ? "\033[1m#\033[0m" : "-");
    len = pn_append(out, size, len, "\nx %+.3f  v %+.3f  theta %+.3f  omega %+.3f  step %d/%d", env->x, env->x_dot,
                    env->theta, env->theta_dot, env->tick, env->max_steps);
    return len;
}

void c_close(CartPole* env) { (void)env; }
