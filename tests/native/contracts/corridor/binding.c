#include "corridor.h"
#define Env Corridor
#include "../env_binding.h"

static int my_init(Env* env, PyObject* args, PyObject* kwargs) {
    (void)args;
    env->length = unpack(kwargs, "length");
    if (env->length < 2 || env->length > CORRIDOR_MAX) {
        PyErr_SetString(PyExc_ValueError, "length must be in [2, 32]");
        return -1;
    }
    return 0;
}

static int my_log(PyObject* dict, Log* log) {
    assign_to_dict(dict, "episode_return", log->episode_return);
    assign_to_dict(dict, "episode_length", log->episode_length);
    assign_to_dict(dict, "score", log->score);
    return 0;
}
