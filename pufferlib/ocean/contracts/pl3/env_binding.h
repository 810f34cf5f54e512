/* env_binding.h: PufferLib 3.0's native binding contract, implemented by PufferTank (our code, written from
 * the contract's documentation: the names and the call signatures are the contract, nothing else is shared).
 *
 * A 3.0 env's binding.c defines `Env` (its struct, with `observations`, `actions`, `rewards`, `terminals`
 * and `Log log`: floats only, one of them `n`, the episodes it counts), includes "../env_binding.h", then
 * supplies
 *     static int my_init(Env* env, PyObject* args, PyObject* kwargs);   read kwargs with unpack(kwargs, "key")
 *     static int my_log(PyObject* dict, Log* log);                      write with assign_to_dict(dict, "key", v)
 * and optionally MY_SHARED (my_shared: the module's `shared()`), MY_GET / MY_PUT (env_get / env_put) and
 * MY_METHODS (extra PyMethodDef rows). The module is `binding`: env_init, env_reset, env_step, env_render,
 * env_close, env_get, env_put, vectorize, vec_init, vec_reset, vec_step, vec_log, vec_render, vec_close, shared.
 *
 * Where we go beyond the published contract, and why:
 * - Handles are checked: every env/vec handle this module hands out is remembered, and a handle that is not
 *   live (closed twice, made up, another module's) is a ValueError, not a wild pointer.
 * - Buffers are checked against each other: vec_init needs num_envs rows in every buffer, C-contiguous, and an
 *   action buffer of 4-byte items (int32 or float32); a mismatch is a ValueError naming the buffer.
 * - vec_render's env index is bounds-checked; vec_step releases the GIL (c_step touches no Python object).
 * - shared() runs after srand(its seed kwarg, else 0): shared levels and maps are the same in every run.
 * - Each env's rewards and terminals are zeroed before its c_step, as 4.0's vector does: 8 of the 23 available
 *   3.0.0 envs write terminals only on events (docs/environments.md, the pufferlib3 audit).
 * - Seeding follows the contract exactly (instance i of a vec seeded s: srand(i + s * num_envs) before my_init
 *   and before each reset; kwargs["seed"] holds that number), so a trace here matches upstream's for the same
 *   seed. But rand() is not the process-global one: build.py force-includes pt_rand.h, and each vec has its own
 *   stream of the same generator, made current for vec_init, vec_reset, vec_step and vec_render. Two vecs in
 *   one process then give what they give in two processes, and vecs on different threads do not race.
 */
#ifndef PUFFERTANK_PL3_ENV_BINDING_H
#define PUFFERTANK_PL3_ENV_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pt_rand.h" /* already force-included by build.py; here for a build by hand (a global stream) */

_Static_assert(sizeof(Log) % sizeof(float) == 0, "the 3.0 contract's Log holds floats only");

static int my_init(Env* env, PyObject* args, PyObject* kwargs);
static int my_log(PyObject* dict, Log* log);

#ifndef MY_SHARED
static PyObject* my_shared(PyObject* self, PyObject* args, PyObject* kwargs) {
    (void)self, (void)args, (void)kwargs;
    Py_RETURN_NONE;
}
#else
static PyObject* my_shared(PyObject* self, PyObject* args, PyObject* kwargs);
#endif
#ifndef MY_GET
static PyObject* my_get(PyObject* dict, Env* env) {
    (void)env;
    return dict;
}
#else
static PyObject* my_get(PyObject* dict, Env* env);
#endif
#ifndef MY_PUT
static int my_put(Env* env, PyObject* args, PyObject* kwargs) {
    (void)env, (void)args, (void)kwargs;
    return 0;
}
#else
static int my_put(Env* env, PyObject* args, PyObject* kwargs);
#endif

/* ---- live handles: an open-addressing set of pointers (envs and vecs apart) ---- */
typedef struct {
    uintptr_t* slots;
    size_t cap, len;
} PtHandles;
#define PT_TOMB ((uintptr_t)1)
static PtHandles pt_envs, pt_vecs;

static size_t pt_hash(uintptr_t p, size_t cap) { return (size_t)((p >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1); }

static int pt_add(PtHandles* s, void* ptr);
static int pt_grow(PtHandles* s) {
    PtHandles bigger = {calloc(s->cap ? s->cap * 2 : 64, sizeof(uintptr_t)), s->cap ? s->cap * 2 : 64, 0};
    if (!bigger.slots) return -1;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i] > PT_TOMB) pt_add(&bigger, (void*)s->slots[i]);
    free(s->slots);
    *s = bigger;
    return 0;
}
static int pt_add(PtHandles* s, void* ptr) {
    if ((s->len + 1) * 2 > s->cap && pt_grow(s) < 0) return -1;
    size_t i = pt_hash((uintptr_t)ptr, s->cap);
    while (s->slots[i] > PT_TOMB) i = (i + 1) & (s->cap - 1);
    s->slots[i] = (uintptr_t)ptr;
    s->len++;
    return 0;
}
static size_t pt_find(const PtHandles* s, const void* ptr) {  /* its slot, or SIZE_MAX */
    if (!s->cap || !ptr) return SIZE_MAX;
    size_t i = pt_hash((uintptr_t)ptr, s->cap);
    for (size_t n = 0; n < s->cap && s->slots[i]; n++, i = (i + 1) & (s->cap - 1))
        if (s->slots[i] == (uintptr_t)ptr) return i;
    return SIZE_MAX;
}
static void pt_remove(PtHandles* s, const void* ptr) {
    size_t i = pt_find(s, ptr);
    if (i != SIZE_MAX) s->slots[i] = PT_TOMB, s->len--;
}

/* ---- the contract's helpers for binding.c ---- */

/* kwargs[key] as a double (an int within int range, or a float); TypeError when missing or not a number. */
static double unpack(PyObject* kwargs, char* key) {
    PyObject* val = kwargs ? PyDict_GetItemString(kwargs, key) : NULL;
    if (val == NULL) {
        PyErr_Format(PyExc_TypeError, "missing keyword argument '%s' (set it in the env's .ini [env] section)", key);
        return 1;
    }
    if (PyLong_Check(val)) {
        long out = PyLong_AsLong(val);
        if ((out == -1 && PyErr_Occurred()) || out > INT_MAX || out < INT_MIN) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "keyword argument '%s' is out of the int range", key);
            return 1;
        }
        return (double)out;
    }
    if (PyFloat_Check(val)) return PyFloat_AsDouble(val);
    PyErr_Format(PyExc_TypeError, "keyword argument '%s' must be an int or a float, got %s", key,
                 Py_TYPE(val)->tp_name);
    return 1;
}

static int assign_to_dict(PyObject* dict, char* key, float value) {
    PyObject* v = PyFloat_FromDouble(value);
    if (!v) return 1;
    int rc = PyDict_SetItemString(dict, key, v);
    Py_DECREF(v);
    return rc < 0;
}

/* ---- buffers ---- */
static const char* pt_buffer_names[5] = {"observations", "actions", "rewards", "terminals", "truncations"};

/* args[0..4] as C-contiguous numpy arrays with `rows` rows (rows < 0: any); NULL with an exception. */
static int pt_buffers(PyObject* args, long rows, PyArrayObject* out[5]) {
    for (int b = 0; b < 5; b++) {
        PyObject* obj = PyTuple_GetItem(args, b);
        if (!obj || !PyArray_Check(obj)) {
            PyErr_Format(PyExc_TypeError, "%s must be a numpy array", pt_buffer_names[b]);
            return -1;
        }
        PyArrayObject* arr = (PyArrayObject*)obj;
        if (!PyArray_IS_C_CONTIGUOUS(arr) || !PyArray_ISWRITEABLE(arr) || PyArray_NDIM(arr) < 1) {
            PyErr_Format(PyExc_ValueError, "%s must be a writeable, C-contiguous array of rows",
                         pt_buffer_names[b]);
            return -1;
        }
        if (b >= 2 && (PyArray_NDIM(arr) != 1)) {
            PyErr_Format(PyExc_ValueError, "%s must be 1-D (one value per agent row)", pt_buffer_names[b]);
            return -1;
        }
        if (rows >= 0 && PyArray_DIM(arr, 0) < rows) {
            PyErr_Format(PyExc_ValueError, "%s has %ld rows, fewer than the %ld envs asked for",
                         pt_buffer_names[b], (long)PyArray_DIM(arr, 0), rows);
            return -1;
        }
        out[b] = arr;
    }
    if (PyArray_ITEMSIZE(out[1]) != 4) {
        PyErr_Format(PyExc_ValueError, "actions must be int32 or float32 (4-byte items), got %d-byte items",
                     (int)PyArray_ITEMSIZE(out[1]));
        return -1;
    }
    return 0;
}

/* An env and the extent of its reward and terminal rows, which we zero before each of its steps (as 4.0's
 * vector does): an env that writes them only when something happens cannot leave a stale signal. The Env is
 * the first member, so an Env* and its slot are the same pointer (free(env) frees the slot). */
typedef struct {
    Env env;
    void* rewards;
    void* terminals;
    size_t reward_bytes, terminal_bytes;
} PtSlot;

static Env* pt_new_env(void) { return (Env*)calloc(1, sizeof(PtSlot)); }

static void pt_clear_outputs(Env* env) {
#ifdef PT_NO_CLEAR /* the audit's build: what the env itself writes (audit.py) */
    (void)env;
    return;
#endif
    PtSlot* slot = (PtSlot*)env;
    memset(slot->rewards, 0, slot->reward_bytes);
    memset(slot->terminals, 0, slot->terminal_bytes);
}

/* Point env at `rows` rows from `row` of each buffer (rows are the first axis, as the contract lays them out). */
static void pt_attach(Env* env, PyArrayObject* buf[5], long row, long rows) {
    PtSlot* slot = (PtSlot*)env;
    env->observations = (void*)((char*)PyArray_DATA(buf[0]) + row * PyArray_STRIDE(buf[0], 0));
    env->actions = (void*)((char*)PyArray_DATA(buf[1]) + row * PyArray_STRIDE(buf[1], 0));
    env->rewards = (void*)((char*)PyArray_DATA(buf[2]) + row * PyArray_STRIDE(buf[2], 0));
    env->terminals = (void*)((char*)PyArray_DATA(buf[3]) + row * PyArray_STRIDE(buf[3], 0));
    slot->rewards = (void*)env->rewards, slot->terminals = (void*)env->terminals;
    slot->reward_bytes = (size_t)rows * PyArray_ITEMSIZE(buf[2]);
    slot->terminal_bytes = (size_t)rows * PyArray_ITEMSIZE(buf[3]);
}

static int pt_seed_arg(PyObject* obj, long* seed) {
    if (!obj || !PyLong_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "seed must be an int");
        return -1;
    }
    *seed = PyLong_AsLong(obj);
    return (*seed == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* my_init on a fresh env with kwargs + {"seed": seed}, after srand(seed); -1 with an exception. */
static int pt_init(Env* env, PyObject* kwargs, long seed) {
    PyObject* kw = kwargs ? PyDict_Copy(kwargs) : PyDict_New();
    PyObject* py_seed = PyLong_FromLong(seed);
    PyObject* empty = PyTuple_New(0);
    int rc = -1;
    if (kw && py_seed && empty && PyDict_SetItemString(kw, "seed", py_seed) == 0) {
        memset(&env->log, 0, sizeof(Log));
        srand((unsigned)seed);
        my_init(env, empty, kw);
        rc = PyErr_Occurred() ? -1 : 0;
    }
    Py_XDECREF(kw), Py_XDECREF(py_seed), Py_XDECREF(empty);
    return rc;
}

/* ---- single envs ---- */
static Env* pt_env(PyObject* handle) {
    void* ptr = handle && PyLong_Check(handle) ? PyLong_AsVoidPtr(handle) : NULL;
    if (PyErr_Occurred()) PyErr_Clear();
    if (pt_find(&pt_envs, ptr) == SIZE_MAX) {
        PyErr_SetString(PyExc_ValueError, "not a live env handle of this module (closed, or never made by env_init)");
        return NULL;
    }
    return (Env*)ptr;
}

static PyObject* env_init(PyObject* self, PyObject* args, PyObject* kwargs) {
    (void)self;
    PyArrayObject* buf[5];
    long seed;
    if (PyTuple_Size(args) != 6) {
        PyErr_SetString(PyExc_TypeError,
                        "env_init(observations, actions, rewards, terminals, truncations, seed, **kwargs)");
        return NULL;
    }
    if (pt_buffers(args, 1, buf) < 0 || pt_seed_arg(PyTuple_GetItem(args, 5), &seed) < 0) return NULL;
    if (PyArray_DIM(buf[3], 0) != PyArray_DIM(buf[2], 0)) {
        PyErr_SetString(PyExc_ValueError, "rewards and terminals must have the same number of rows");
        return NULL;
    }
    Env* env = pt_new_env();
    if (!env) return PyErr_NoMemory();
    pt_attach(env, buf, 0, (long)PyArray_DIM(buf[2], 0));
    if (pt_init(env, kwargs, seed) < 0 || pt_add(&pt_envs, env) < 0) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        free(env);
        return NULL;
    }
    return PyLong_FromVoidPtr(env);
}

static PyObject* env_reset(PyObject* self, PyObject* args) {
    (void)self;
    Env* env = pt_env(PyTuple_GetItem(args, 0));
    if (!env) return NULL;
    if (PyTuple_Size(args) > 1) {
        long seed;
        if (pt_seed_arg(PyTuple_GetItem(args, 1), &seed) < 0) return NULL;
        srand((unsigned)seed);
    }
    c_reset(env);
    Py_RETURN_NONE;
}

static PyObject* env_step(PyObject* self, PyObject* args) {
    (void)self;
    Env* env = pt_env(PyTuple_GetItem(args, 0));
    if (!env) return NULL;
    pt_clear_outputs(env);
    c_step(env);
    Py_RETURN_NONE;
}

static PyObject* env_render(PyObject* self, PyObject* args) {
    (void)self;
    Env* env = pt_env(PyTuple_GetItem(args, 0));
    if (!env) return NULL;
    c_render(env);
    Py_RETURN_NONE;
}

static PyObject* env_close(PyObject* self, PyObject* args) {
    (void)self;
    Env* env = pt_env(PyTuple_GetItem(args, 0));
    if (!env) return NULL;
    pt_remove(&pt_envs, env);
    c_close(env);
    free(env);
    Py_RETURN_NONE;
}

static PyObject* env_get(PyObject* self, PyObject* args) {
    (void)self;
    Env* env = pt_env(PyTuple_GetItem(args, 0));
    if (!env) return NULL;
    PyObject* dict = PyDict_New();
    if (!dict) return NULL;
    my_get(dict, env);
    if (PyErr_Occurred()) {
        Py_DECREF(dict);
        return NULL;
    }
    return dict;
}

static PyObject* env_put(PyObject* self, PyObject* args, PyObject* kwargs) {
    (void)self;
    Env* env = pt_env(PyTuple_GetItem(args, 0));
    if (!env) return NULL;
    PyObject* empty = PyTuple_New(0);
    if (!empty) return NULL;
    my_put(env, empty, kwargs);
    Py_DECREF(empty);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

/* ---- vectors of envs ---- */
typedef struct {
    Env** envs;
    int num_envs;
    /* vec_init's envs, in one block in order: allocated one by one they landed wherever the allocator had a
       free chunk (hundreds of KB apart), and a cheap env's step waited on memory (squared: 0.82x upstream's
       steps/s, 0.93x in one block); NULL for vectorize's envs (env_init's, each its own allocation) */
    PtSlot* slots;
    /* vec_init's whole reward and terminal buffers, cleared with one memset each per vec_step (per env that is
       two calls of a few bytes, a third of a cheap env's step); NULL for vectorize's envs, cleared one by one */
    void* rewards;
    size_t reward_bytes;
    void* terminals;
    size_t terminal_bytes;
    /* vec_init's action rows (int32, or float32 holding whole numbers, as some 3.0 envs declare them) and, once
       puffertank_action_bounds set them, each branch's bound: vec_step then checks every action in C before any
       env steps (see load.checked) */
    const void* actions;
    int actions_float;
    size_t action_count;
    uint32_t* high;
    size_t branches;
    pt_rand_state rng; /* its rand() stream (pt_rand.h) */
} VecEnv;

/* Make vec's rand() stream current for one call; pt_rand_leave puts the caller's back. */
static pt_rand_state* pt_rand_enter(VecEnv* vec) {
    pt_rand_state* before = pt_rand_now;
    pt_rand_now = &vec->rng;
    return before;
}
static void pt_rand_leave(pt_rand_state* before) { pt_rand_now = before; }

static VecEnv* pt_vec(PyObject* handle) {
    void* ptr = handle && PyLong_Check(handle) ? PyLong_AsVoidPtr(handle) : NULL;
    if (PyErr_Occurred()) PyErr_Clear();
    if (pt_find(&pt_vecs, ptr) == SIZE_MAX) {
        PyErr_SetString(PyExc_ValueError,
                        "not a live vec handle of this module (closed, or never made by vec_init/vectorize)");
        return NULL;
    }
    return (VecEnv*)ptr;
}

static void pt_vec_free(VecEnv* vec, int owned) {  /* owned: close and free its envs too */
    for (int i = 0; owned && i < vec->num_envs; i++) {
        if (!vec->envs[i]) continue;
        c_close(vec->envs[i]);
        if (!vec->slots) {  /* env_init's envs, joined by vectorize: handles until now */
            pt_remove(&pt_envs, vec->envs[i]);
            free(vec->envs[i]);
        }
    }
    free(vec->slots);
    free(vec->envs);
    free(vec->high);
    free(vec);
}

static PyObject* vec_init(PyObject* self, PyObject* args, PyObject* kwargs) {
    (void)self;
    PyArrayObject* buf[5];
    long seed;
    if (PyTuple_Size(args) != 7) {
        PyErr_SetString(PyExc_TypeError, "vec_init(observations, actions, rewards, terminals, truncations, "
                                         "num_envs, seed, **kwargs)");
        return NULL;
    }
    PyObject* n_obj = PyTuple_GetItem(args, 5);
    long num_envs = PyLong_Check(n_obj) ? PyLong_AsLong(n_obj) : -1;
    if (PyErr_Occurred()) PyErr_Clear();
    if (num_envs < 1 || num_envs > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "num_envs must be a positive int");
        return NULL;
    }
    if (pt_buffers(args, num_envs, buf) < 0 || pt_seed_arg(PyTuple_GetItem(args, 6), &seed) < 0) return NULL;
    if (PyArray_NDIM(buf[0]) < 2) {
        PyErr_SetString(PyExc_ValueError, "observations must be at least 2-D (one row per env)");
        return NULL;
    }
    VecEnv* vec = calloc(1, sizeof(VecEnv));
    if (!vec || !(vec->envs = calloc((size_t)num_envs, sizeof(Env*))) ||
        !(vec->slots = calloc((size_t)num_envs, sizeof(PtSlot)))) {
        if (vec) free(vec->envs);
        free(vec);
        return PyErr_NoMemory();
    }
    vec->num_envs = (int)num_envs;
    vec->rewards = PyArray_DATA(buf[2]);
    vec->reward_bytes = (size_t)num_envs * (size_t)PyArray_STRIDE(buf[2], 0); /* its rows only */
    vec->terminals = PyArray_DATA(buf[3]);
    vec->terminal_bytes = (size_t)num_envs * (size_t)PyArray_STRIDE(buf[3], 0);
    if (PyArray_TYPE(buf[1]) == NPY_INT32 || PyArray_TYPE(buf[1]) == NPY_FLOAT32) {
        vec->actions = PyArray_DATA(buf[1]);
        vec->actions_float = PyArray_TYPE(buf[1]) == NPY_FLOAT32;
        vec->action_count = (size_t)num_envs * (size_t)(PyArray_STRIDE(buf[1], 0) / 4);
    }
    pt_rand_state* before = pt_rand_enter(vec);
    for (long i = 0; i < num_envs; i++) {
        Env* env = &vec->slots[i].env;
        vec->envs[i] = env;
        pt_attach(env, buf, i, 1);
        if (pt_init(env, kwargs, i + seed * num_envs) < 0) {
            pt_rand_leave(before);
            pt_vec_free(vec, 1);
            return NULL;
        }
    }
    pt_rand_leave(before);
    if (pt_add(&pt_vecs, vec) < 0) {
        pt_vec_free(vec, 1);
        return PyErr_NoMemory();
    }
    return PyLong_FromVoidPtr(vec);
}

static PyObject* vectorize(PyObject* self, PyObject* args) {
    (void)self;
    Py_ssize_t n = PyTuple_Size(args);
    if (n < 1 || n > INT_MAX) {
        PyErr_SetString(PyExc_TypeError, "vectorize(*env_handles) needs at least one env handle");
        return NULL;
    }
    VecEnv* vec = calloc(1, sizeof(VecEnv));
    if (!vec || !(vec->envs = calloc((size_t)n, sizeof(Env*)))) {
        free(vec);
        return PyErr_NoMemory();
    }
    vec->num_envs = (int)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!(vec->envs[i] = pt_env(PyTuple_GetItem(args, i)))) {
            pt_vec_free(vec, 0);
            return NULL;
        }
    }
    if (pt_add(&pt_vecs, vec) < 0) {
        pt_vec_free(vec, 0);
        return PyErr_NoMemory();
    }
    return PyLong_FromVoidPtr(vec);
}

static PyObject* vec_reset(PyObject* self, PyObject* args) {
    (void)self;
    long seed = 0;
    VecEnv* vec = pt_vec(PyTuple_GetItem(args, 0));
    if (!vec) return NULL;
    if (PyTuple_Size(args) > 1 && pt_seed_arg(PyTuple_GetItem(args, 1), &seed) < 0) return NULL;
    pt_rand_state* before = pt_rand_enter(vec);
    for (int i = 0; i < vec->num_envs; i++) {
        srand((unsigned)(i + seed * vec->num_envs));
        c_reset(vec->envs[i]);
    }
    pt_rand_leave(before);
    Py_RETURN_NONE;
}

/* puffertank_action_bounds(vec, bounds): each branch's number of actions (a Discrete's n, a MultiDiscrete's
 * nvec), for a vec_init vec with int32 actions; from then on vec_step refuses an action outside them. */
static PyObject* pt_action_bounds(PyObject* self, PyObject* args) {
    (void)self;
    VecEnv* vec = pt_vec(PyTuple_GetItem(args, 0));
    if (!vec) return NULL;
    PyArrayObject* high = (PyArrayObject*)PyArray_FROMANY(PyTuple_GetItem(args, 1), NPY_UINT32, 1, 1,
                                                         NPY_ARRAY_CARRAY);
    if (!high) return NULL;
    size_t k = (size_t)PyArray_SIZE(high);
    if (!vec->actions || k == 0 || vec->action_count % k) {
        Py_DECREF(high);
        PyErr_SetString(PyExc_ValueError, "action bounds need a vec_init vec's action rows, a bound per branch");
        return NULL;
    }
    uint32_t* copy = malloc(k * sizeof(uint32_t));
    if (!copy) {
        Py_DECREF(high);
        return PyErr_NoMemory();
    }
    memcpy(copy, PyArray_DATA(high), k * sizeof(uint32_t));
    Py_DECREF(high);
    free(vec->high);
    vec->high = copy;
    vec->branches = k;
    Py_RETURN_NONE;
}

/* An action outside its branch's bound (an int32 read as unsigned, so a negative one is huge; a float32 that is
 * not a whole number in range, NaN included): a ValueError, nothing stepped. */
static int pt_check_actions(const VecEnv* vec) {
    size_t k = vec->branches;
    for (size_t j = 0; j < vec->action_count; j++) {
        uint32_t high = k == 1 ? vec->high[0] : vec->high[j % k];
        if (vec->actions_float) {
            float x = ((const float*)vec->actions)[j];
            if (!(x >= 0.0f && x < (float)high && x == (float)(int64_t)x)) {
                char text[32];
                snprintf(text, sizeof text, "%g", (double)x);
                PyErr_Format(PyExc_ValueError, "action %s of row %zu (branch %zu) is outside [0, %u) or not whole",
                             text, j / k, j % k, high);
                return -1;
            }
        } else if (((const uint32_t*)vec->actions)[j] >= high) {
            PyErr_Format(PyExc_ValueError, "action %d of row %zu (branch %zu) is outside [0, %u)",
                         ((const int32_t*)vec->actions)[j], j / k, j % k, high);
            return -1;
        }
    }
    return 0;
}

/* Whether any action is outside its bound: one pass without branches, which the compiler vectorizes (0.17 us
 * for 1024 int32 rows; the loop above, a branch per action, 0.36 us); pt_check_actions then finds the first bad
 * one to name it. */
static int pt_actions_bad(const VecEnv* vec) {
    size_t k = vec->branches, n = vec->action_count;
    const uint32_t* high = vec->high;
    int bad = 0;
    if (vec->actions_float) {
        const float* a = vec->actions;
        for (size_t j = 0; j < n; j += k)
            for (size_t b = 0; b < k; b++) {
                float x = a[j + b];
                int in = x >= 0.0f && x < (float)high[b]; /* false for NaN */
                float y = in ? x : 0.0f;                    /* converted only when in range */
                bad |= !in | (y != (float)(int64_t)y);
            }
        return bad;
    }
    const uint32_t* a = vec->actions;
    if (k == 1) {
        uint32_t h = high[0];
        for (size_t j = 0; j < n; j++) bad |= a[j] >= h;
        return bad;
    }
    for (size_t j = 0; j < n; j += k)
        for (size_t b = 0; b < k; b++) bad |= a[j + b] >= high[b];
    return bad;
}

static PyObject* vec_step(PyObject* self, PyObject* args) {
    (void)self;
    VecEnv* vec = pt_vec(PyTuple_GetItem(args, 0));
    if (!vec) return NULL;
    if (vec->high && pt_actions_bad(vec) && pt_check_actions(vec) < 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    pt_rand_state* before = pt_rand_enter(vec);
#ifndef PT_NO_CLEAR
    if (vec->rewards) {
        memset(vec->rewards, 0, vec->reward_bytes);
        memset(vec->terminals, 0, vec->terminal_bytes);
    }
#endif
    for (int i = 0; i < vec->num_envs; i++) {
        if (!vec->rewards) pt_clear_outputs(vec->envs[i]);
        c_step(vec->envs[i]);
    }
    pt_rand_leave(before);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject* vec_render(PyObject* self, PyObject* args) {
    (void)self;
    VecEnv* vec = pt_vec(PyTuple_GetItem(args, 0));
    if (!vec) return NULL;
    PyObject* idx = PyTuple_Size(args) > 1 ? PyTuple_GetItem(args, 1) : NULL;
    long i = idx && PyLong_Check(idx) ? PyLong_AsLong(idx) : -1;
    if (PyErr_Occurred()) PyErr_Clear();
    if (i < 0 || i >= vec->num_envs) {
        PyErr_Format(PyExc_IndexError, "env index must be in [0, %d)", vec->num_envs);
        return NULL;
    }
    pt_rand_state* before = pt_rand_enter(vec);
    c_render(vec->envs[i]);
    pt_rand_leave(before);
    Py_RETURN_NONE;
}

/* The mean of every Log field over the episodes finished since the last call (the contract: sum the logs,
 * divide by their summed n, zero them); {} when none finished. */
static PyObject* vec_log(PyObject* self, PyObject* args) {
    (void)self;
    VecEnv* vec = pt_vec(PyTuple_GetItem(args, 0));
    if (!vec) return NULL;
    enum { K = sizeof(Log) / sizeof(float) };
    Log total;
    memset(&total, 0, sizeof(Log));
    for (int i = 0; i < vec->num_envs; i++) {
        float* src = (float*)&vec->envs[i]->log;
        for (int k = 0; k < K; k++) ((float*)&total)[k] += src[k];
        memset(src, 0, sizeof(Log));
    }
    PyObject* dict = PyDict_New();
    if (!dict || total.n == 0.0f) return dict;
    float n = total.n;
    for (int k = 0; k < K; k++) ((float*)&total)[k] /= n;
    if (my_log(dict, &total) != 0 || PyErr_Occurred() || assign_to_dict(dict, "n", n)) {
        Py_DECREF(dict);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "my_log failed");
        return NULL;
    }
    return dict;
}

static PyObject* vec_close(PyObject* self, PyObject* args) {
    (void)self;
    VecEnv* vec = pt_vec(PyTuple_GetItem(args, 0));
    if (!vec) return NULL;
    pt_remove(&pt_vecs, vec);
    pt_vec_free(vec, 1);
    Py_RETURN_NONE;
}

/* shared(**kw): the env's state shared by its instances (levels, maps), made after srand(kw["seed"], else 0)
 * so that it does not depend on what called rand() before (upstream leaves the global state as it was). */
static PyObject* pt_shared(PyObject* self, PyObject* args, PyObject* kwargs) {
    PyObject* seed = kwargs ? PyDict_GetItemString(kwargs, "seed") : NULL;
    long s = seed && PyLong_Check(seed) ? PyLong_AsLong(seed) : 0;
    if (PyErr_Occurred()) return NULL;
    srand((unsigned)s);
    return my_shared(self, args, kwargs);
}

#ifndef MY_METHODS
#define MY_METHODS {NULL, NULL, 0, NULL}
#endif

static PyMethodDef pt_methods[] = {
    {"env_init", (PyCFunction)(void (*)(void))env_init, METH_VARARGS | METH_KEYWORDS, "env_init(obs, atn, rew, term, trunc, seed, **kw)"},
    {"env_reset", env_reset, METH_VARARGS, "env_reset(handle[, seed])"},
    {"env_step", env_step, METH_VARARGS, "env_step(handle)"},
    {"env_render", env_render, METH_VARARGS, "env_render(handle)"},
    {"env_close", env_close, METH_VARARGS, "env_close(handle)"},
    {"env_get", env_get, METH_VARARGS, "env_get(handle) -> dict"},
    {"env_put", (PyCFunction)(void (*)(void))env_put, METH_VARARGS | METH_KEYWORDS, "env_put(handle, **kw)"},
    {"vectorize", vectorize, METH_VARARGS, "vectorize(*env_handles) -> vec handle"},
    {"vec_init", (PyCFunction)(void (*)(void))vec_init, METH_VARARGS | METH_KEYWORDS, "vec_init(obs, atn, rew, term, trunc, num_envs, seed, **kw)"},
    {"vec_reset", vec_reset, METH_VARARGS, "vec_reset(vec, seed)"},
    {"vec_step", vec_step, METH_VARARGS, "vec_step(vec)"},
    {"vec_log", vec_log, METH_VARARGS, "vec_log(vec) -> dict"},
    {"vec_render", vec_render, METH_VARARGS, "vec_render(vec, index)"},
    {"vec_close", vec_close, METH_VARARGS, "vec_close(vec)"},
    {"puffertank_action_bounds", pt_action_bounds, METH_VARARGS, "puffertank_action_bounds(vec, bounds)"},
    {"shared", (PyCFunction)(void (*)(void))pt_shared, METH_VARARGS | METH_KEYWORDS, "shared(**kw): the env's shared state"},
    MY_METHODS,
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef pt_module = {PyModuleDef_HEAD_INIT, "binding", NULL, -1, pt_methods};

PyMODINIT_FUNC PyInit_binding(void) {
    import_array();
    PyObject* m = PyModule_Create(&pt_module);
    if (m) PyModule_AddStringConstant(m, "CONTRACT", "pufferlib-3.0");
    return m;
}

#endif /* PUFFERTANK_PL3_ENV_BINDING_H */
