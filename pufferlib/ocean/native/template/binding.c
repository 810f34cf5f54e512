/* The glue's view of the Template env: its types, sizes and kwargs (see env_binding.h for every define). */
#include "template.h"
#define ENV_NAME _template  // the module pufferlib.ocean.native._template (the folder name, underscored)
#define Env Template
#define OBS_T float
#define OBS_SIZE TP_BUTTONS
#define OBS_LOW 0.0f
#define OBS_HIGH 1.0f
#define NUM_ATNS 1
#define ACT_SIZES {TP_BUTTONS}  // one entry per action branch
#define RENDER_H TP_CELL
#define RENDER_W (TP_CELL * TP_BUTTONS)
#include "../env_binding.h"

/* Agents per env instance: 1 (a multi-agent env returns its count, from kwargs if it likes). */
static int my_num_agents(PyObject* kwargs) {
    (void)kwargs;
    return 1;
}

/* Read the game keywords (kwargs may be NULL: the defaults); 0, or -1 with the exception set. The keys read
 * here are the env's keywords: any other is refused (env_binding.h learns them at import). */
static int my_init(Template* env, PyObject* kwargs) { return pn_kw_int(kwargs, "length", 8, 1, 100000, &env->length); }
