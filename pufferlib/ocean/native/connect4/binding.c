#include "connect4.h"
#define ENV_NAME _connect4
#define Env Connect4
#define OBS_T unsigned char
#define OBS_SIZE CONNECT4_OBS
#define OBS_LOW 0
#define OBS_HIGH 1
#define OBS_FIELDS "action_mask:7 board:2x6x7 to_move:1" /* connect4.h's layout: the trainer reads the mask */
#define NUM_ATNS 1
#define ACT_SIZES {CONNECT4_COLS}
#define RENDER_H CONNECT4_RENDER_H
#define RENDER_W CONNECT4_RENDER_W
#include "../env_binding.h"

static int my_num_agents(PyObject* kwargs) {
    (void)kwargs;
    return 2;
}

static int my_init(Connect4* env, PyObject* kwargs) {
    (void)kwargs;
    (void)env;
    return 0;
}
