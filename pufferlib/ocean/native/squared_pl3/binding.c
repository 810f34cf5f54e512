#include "squared_pl3.h"
#define ENV_NAME _squared_pl3
#define Env SquaredPL3
#define OBS_T unsigned char
#define OBS_SIZE 121
#define OBS_LOW 0
#define OBS_HIGH 2
#define NUM_ATNS 1
#define ACT_SIZES {5}
#define RENDER_H S3_RENDER
#define RENDER_W S3_RENDER
#define OBS_SHAPE_FN my_obs_shape
#define ANSI_SIZE (1 << 16)
#include "../env_binding.h"

#define S3_MAX_SIZE 63  // odd, and the ANSI frame (14 bytes a cell) fits ANSI_SIZE

static int s3_size(PyObject* kwargs, int* size) {
    if (pn_kw_int(kwargs, "size", 11, 3, S3_MAX_SIZE, size) < 0) return -1;
    if (*size % 2 == 0)
        return pn_raise(PN_VALUE_ERROR, "_squared_pl3: size must be odd (the agent starts at the centre), got %d", *size);
    return 0;
}

static int my_obs_shape(PyObject* kwargs, int shape[3]) {
    int size;
    if (s3_size(kwargs, &size) < 0) return -1;
    shape[0] = shape[1] = size;
    return 2;
}

static int my_num_agents(PyObject* kwargs) {
    (void)kwargs;
    return 1;
}

static int my_init(SquaredPL3* env, PyObject* kwargs) { return s3_size(kwargs, &env->size); }
