#include "cartpole.h"
#define ENV_NAME _cartpole
#define Env CartPole
#define OBS_T float
#define OBS_SIZE 4
#define OBS_LOW -3.4e38f
#define OBS_HIGH 3.4e38f
#define NUM_ATNS 1
#define ACT_SIZES {2}
#define RENDER_H CP_RENDER_H
#define RENDER_W CP_RENDER_W
#include "../env_binding.h"

static int my_num_agents(PyObject* kwargs) {
    (void)kwargs;
    return 1;
}

static int my_init(CartPole* env, PyObject* kwargs) { return pn_kw_int(kwargs, "max_steps", 500, 1, 1000000, &env->max_steps); }
