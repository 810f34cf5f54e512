#include "beacon.h"
#define OBS_SIZE 4
#define NUM_ATNS 1
#define ACT_SIZES {4}
#define OBS_TENSOR_T ByteTensor

#define Env Beacon
#include "vecenv.h"

void my_init(Env* env, Dict* kwargs) {
    env->num_agents = BEACON_AGENTS;
    env->horizon = dict_get(kwargs, "horizon")->value;
}

void my_log(Log* log, Dict* out) {
    dict_set(out, "episode_return", log->episode_return);
    dict_set(out, "episode_length", log->episode_length);
    dict_set(out, "score", log->score);
}
