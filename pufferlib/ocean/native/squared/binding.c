#include "squared.h"
#define ENV_NAME _squared
#define Env Squared
#define OBS_T float
#define OBS_SIZE 9
#define OBS_LOW -1.0f
#define OBS_HIGH 1.0f
#define NUM_ATNS 1
#define ACT_SIZES {8}
#define RENDER_H SQ_RENDER
#define RENDER_W SQ_RENDER
#define OBS_SHAPE_FN my_obs_shape
#define ANSI_SIZE (1 << 20)
#include "../env_binding.h"

#define SQ_MAX_DISTANCE 64

/* distance_to_target, num_targets and max_ticks, checked; 0 or -1 with an exception. */
static int sq_config(PyObject* kwargs, int* distance, int* targets, int* ticks) {
    if (pn_kw_int(kwargs, "distance_to_target", 1, 1, SQ_MAX_DISTANCE, distance) < 0) return -1;
    if (pn_kw_int(kwargs, "num_targets", 4, 1, 8 * *distance, targets) < 0) return -1;
    return pn_kw_int(kwargs, "max_ticks", 0, 0, 100000000, ticks);
}

static int my_obs_shape(PyObject* kwargs, int shape[3]) {
    int d, t, m;
    if (sq_config(kwargs, &d, &t, &m) < 0) return -1;
    shape[0] = shape[1] = 2 * d + 1;
    return 2;
}

static int my_num_agents(PyObject* kwargs) {
    (void)kwargs;
    return 1;
}

static int my_init(Squared* env, PyObject* kwargs) {
    int d, t, m;
    if (sq_config(kwargs, &d, &t, &m) < 0) return -1;
    if (sq_alloc(env, d, t, m) < 0) return pn_raise(PN_MEMORY_ERROR, "_squared: out of memory for %d targets", t);
    return 0;
}
