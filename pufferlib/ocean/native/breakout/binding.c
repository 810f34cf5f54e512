/* Python binding of ocean/breakout: the module pufferlib.ocean.native._breakout (see breakout.h). */
#include "breakout.h"

#define ENV_NAME _breakout
#define Env Breakout
#define OBS_T float
#define OBS_SIZE BK_OBS_SIZE
#define OBS_LOW -1.0f
#define OBS_HIGH 1.0f
#define NUM_ATNS 1
#define ACT_SIZES {3}
#define RENDER_H BK_H
#define RENDER_W BK_W

#include "../env_binding.h"

static int my_num_agents(PyObject* kwargs) {
    (void)kwargs;
    return 1;
}

static int my_init(Env* env, PyObject* kwargs) {
    breakout_defaults(env);
    if (pn_kw_int(kwargs, "max_ticks", BK_DEFAULT_MAX_TICKS, 1, 100000000, &env->max_ticks) < 0) return -1;
    if (pn_kw_int(kwargs, "lives", BK_DEFAULT_LIVES, 1, 99, &env->max_lives) < 0) return -1;
    return pn_kw_int(kwargs, "frameskip", BK_DEFAULT_FRAMESKIP, 1, 64, &env->frameskip);
}
