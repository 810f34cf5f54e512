#include "snake.h"
#define ENV_NAME _snake
#define Env Snake
#define OBS_T unsigned char
#define OBS_SIZE 121 /* the default vision 5; snake_obs_shape gives the shape for any vision */
#define OBS_SHAPE_FN snake_obs_shape
#define OBS_LOW 0
#define OBS_HIGH 5
#define NUM_ATNS 1
#define ACT_SIZES {4}
#define RENDER_H SNAKE_RENDER_H
#define RENDER_W SNAKE_RENDER_W
#define ANSI_SIZE (1 << 20)
#include "../env_binding.h"

/* Defaults as PufferLib's snake.ini (its 640 x 360 includes a wall border; here the map is all
 * playable). The C-only fuzz build overrides them with -DSNAKE_WIDTH=... to fuzz other maps. */
#ifndef SNAKE_WIDTH
#define SNAKE_WIDTH 640
#define SNAKE_HEIGHT 360
#define SNAKE_SNAKES 256
#define SNAKE_FOOD_CELLS 4096
#define SNAKE_VISION 5
#define SNAKE_MAX_LENGTH 1024
#define SNAKE_MAX_STEPS 0
#define SNAKE_RESPAWN_DELAY 0
#endif

static int snake_config(Snake* env, PyObject* kwargs) {
    if (pn_kw_int(kwargs, "width", SNAKE_WIDTH, 1, 4096, &env->width) < 0 ||
        pn_kw_int(kwargs, "height", SNAKE_HEIGHT, 1, 4096, &env->height) < 0 ||
        pn_kw_int(kwargs, "num_snakes", SNAKE_SNAKES, 1, 65536, &env->num_snakes) < 0 ||
        pn_kw_int(kwargs, "num_food", SNAKE_FOOD_CELLS, 0, 1 << 24, &env->num_food) < 0 ||
        pn_kw_int(kwargs, "vision", SNAKE_VISION, 0, 32, &env->vision) < 0 ||
        pn_kw_int(kwargs, "max_snake_length", SNAKE_MAX_LENGTH, 1, 1 << 16, &env->max_snake_length) < 0 ||
        pn_kw_int(kwargs, "max_steps", SNAKE_MAX_STEPS, 0, 1 << 30, &env->max_steps) < 0 ||
        pn_kw_int(kwargs, "respawn_delay", SNAKE_RESPAWN_DELAY, 0, 1 << 20, &env->respawn_delay) < 0 ||
        pn_kw_int(kwargs, "leave_corpse", 1, 0, 1, &env->leave_corpse) < 0 ||
        pn_kw_float(kwargs, "reward_food", 0.1, -1e6, 1e6, &env->reward_food) < 0 ||
        pn_kw_float(kwargs, "reward_corpse", 0.1, -1e6, 1e6, &env->reward_corpse) < 0 ||
        pn_kw_float(kwargs, "reward_death", -1.0, -1e6, 1e6, &env->reward_death) < 0)
        return -1;
    long long cells = (long long)env->width * env->height;
    if (env->num_snakes + (long long)env->num_food > cells)
        return pn_raise(PN_VALUE_ERROR,
                        "_snake: num_snakes (%d) + num_food (%d) must fit on the width x height map (%lld "
                        "cells); use a larger map or fewer snakes/food",
                        env->num_snakes, env->num_food, cells);
    return 0;
}

static int my_num_agents(PyObject* kwargs) {
    Snake probe = {0};
    return snake_config(&probe, kwargs) < 0 ? -1 : probe.num_snakes;
}

/* The crop as a (2 * vision + 1) x (2 * vision + 1) grid. */
static int snake_obs_shape(PyObject* kwargs, int shape[3]) {
    Snake probe = {0};
    if (snake_config(&probe, kwargs) < 0) return -1;
    shape[0] = shape[1] = 2 * probe.vision + 1;
    return 2;
}

static int my_init(Snake* env, PyObject* kwargs) {
    if (snake_config(env, kwargs) < 0) return -1;
    if (snake_init(env) < 0)
        return pn_raise(PN_MEMORY_ERROR, "_snake: out of memory for a %d x %d map", env->width, env->height);
    return 0;
}
