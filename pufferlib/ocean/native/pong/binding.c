/* Python binding of ocean/pong: the module pufferlib.ocean.native._pong (see pong.h). */
#include "pong.h"

#define ENV_NAME _pong
#define Env Pong
#define OBS_T float
#define OBS_SIZE PG_OBS_SIZE
#define OBS_LOW -1.0f
#define OBS_HIGH 1.0f
#define NUM_ATNS 1
#define ACT_SIZES {3}
#define RENDER_H PG_H
#define RENDER_W PG_W

#include "../env_binding.h"

static int my_num_agents(PyObject* kwargs) {
    (void)kwargs;
    return 1;
}

static int my_init(Env* env, PyObject* kwargs) {
    pong_defaults(env);
    if (pn_kw_int(kwargs, "max_score", PG_DEFAULT_MAX_SCORE, 1, 1000, &env->max_score) < 0) return -1;
    if (pn_kw_int(kwargs, "max_ticks", PG_DEFAULT_MAX_TICKS, 1, 100000000, &env->max_ticks) < 0) return -1;
    return pn_kw_int(kwargs, "frameskip", PG_DEFAULT_FRAMESKIP, 1, 64, &env->frameskip);
}
