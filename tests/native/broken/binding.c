#include "broken.h"
#define ENV_NAME _broken
#define Env Broken
#define OBS_T float
#define OBS_SIZE 2
#define OBS_LOW 0.0f
#define OBS_HIGH 100.0f
#define NUM_ATNS 1
#define ACT_SIZES {3}
#define RENDER_H 4
#define RENDER_W 4
#define LOG_FIELDS(X) X(episode_return) X(episode_length) X(score) X(n)  // checked against broken.h's Log
#include "env_binding.h"

static int my_num_agents(PyObject* kwargs) {
    (void)kwargs;
    return 1;
}

static int my_init(Broken* env, PyObject* kwargs) {
    (void)kwargs;
    env->scratch = calloc(4096, sizeof(float));
    return env->scratch ? 0 : -1;
}
