/* vecenv.h: PufferLib 4.0's Ocean binding contract, implemented by PufferTank as a CPython module (our code,
 * written from the contract's documentation: the names are the contract, nothing else is shared).
 *
 * A 4.0 binding.c defines OBS_SIZE, NUM_ATNS, ACT_SIZES ({n, ...}), OBS_TENSOR_T (FloatTensor, ByteTensor,
 * IntTensor or LongTensor) and `Env` (its struct: `observations`, float `actions`, float `rewards`, float
 * `terminals`, int `num_agents`, an integer `rng`, a float-only `Log log` with a float `n`), includes
 * "vecenv.h", and supplies
 *     void my_init(Env* env, Dict* kwargs);   read with dict_get(kwargs, "key")->value (a double)
 *     void my_log(Log* log, Dict* out);       write with dict_set(out, "key", value)
 * The game's header supplies c_reset, c_step, c_render and c_close.
 *
 * 4.0 links its envs into its own trainer; here the same binding.c becomes the module `binding`, which a
 * generic PufferEnv (pufferlib/ocean/contracts/pl4env.py) drives:
 *     vec_create(num_envs, seed, kwargs) -> (handle, total_agents)   my_init on each instance
 *     vec_attach(handle, observations, actions, rewards, terminals, truncations)
 *     vec_reset(handle, seed), vec_step(handle) -> bool (episodes ended), vec_log(handle) -> dict,
 *     vec_render(handle, index), vec_close(handle); constants OBS_SIZE, NUM_ATNS, ACT_SIZES, OBS_DTYPE.
 * Our buffers are PufferLib's (int32 actions for discrete branches, bool terminals); the 4.0 env sees float
 * copies, as its contract says. Actions are checked against ACT_SIZES before any env steps (an out-of-range
 * action is a ValueError naming the row), a kwarg my_init reads that was not given is a TypeError naming it
 * (4.0 asserts), num_agents is checked (>= 1), and instance i of a vec seeded s gets rng = srand seed =
 * i + s * num_envs (seed 0: exactly 4.0's numbering).
 */
#ifndef PUFFERTANK_PL4_VECENV_H
#define PUFFERTANK_PL4_VECENV_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__has_include)
#if __has_include("raylib.h")
#include "raylib.h"
#endif
#endif

#define PUF_MAX_DIMS 8
typedef struct { float* data; int64_t shape[PUF_MAX_DIMS]; } FloatTensor;
typedef struct { unsigned char* data; int64_t shape[PUF_MAX_DIMS]; } ByteTensor;
typedef struct { int* data; int64_t shape[PUF_MAX_DIMS]; } IntTensor;
typedef struct { long* data; int64_t shape[PUF_MAX_DIMS]; } LongTensor;

typedef struct {
    const char* key;
    double value;
    void* ptr;
} DictItem;

typedef struct {
    DictItem* items;
    int size;
    int capacity;
    const char* missing;  /* the first key dict_get did not find (ours: reported, not asserted) */
} Dict;

static DictItem pt4_absent;  /* what dict_get returns for a missing key: value 0, and the key is recorded */

static inline DictItem* dict_get_unsafe(Dict* dict, const char* key) {
    for (int i = 0; i < dict->size; i++)
        if (strcmp(dict->items[i].key, key) == 0) return &dict->items[i];
    return NULL;
}

static inline DictItem* dict_get(Dict* dict, const char* key) {
    DictItem* item = dict_get_unsafe(dict, key);
    if (item) return item;
    if (!dict->missing) dict->missing = key;
    pt4_absent.value = 0.0, pt4_absent.ptr = NULL;
    return &pt4_absent;
}

static inline void dict_set(Dict* dict, const char* key, double value) {
    DictItem* item = dict_get_unsafe(dict, key);
    if (item) {
        item->value = value;
    } else if (dict->size < dict->capacity) {
        dict->items[dict->size++] = (DictItem){key, value, NULL};
    }
}

#ifdef OBS_SIZE

_Static_assert(sizeof(Log) % sizeof(float) == 0, "the 4.0 contract's Log holds floats only");
_Static_assert(OBS_SIZE > 0 && NUM_ATNS > 0, "OBS_SIZE and NUM_ATNS must be positive");

void my_init(Env* env, Dict* kwargs);
void my_log(Log* log, Dict* out);

#define PT4_STR_(x) #x
#define PT4_STR(x) PT4_STR_(x)
static const int pt4_act_sizes[] = ACT_SIZES;
#define PT4_NUM_ACT_SIZES ((int)(sizeof(pt4_act_sizes) / sizeof(pt4_act_sizes[0])))
_Static_assert(sizeof(pt4_act_sizes) / sizeof(pt4_act_sizes[0]) == NUM_ATNS, "ACT_SIZES must list NUM_ATNS sizes");

static size_t pt4_obs_item(void) {
    OBS_TENSOR_T t;
    return sizeof(*t.data);
}

static const char* pt4_obs_dtype(void) {
    const char* name = PT4_STR(OBS_TENSOR_T);
    if (!strcmp(name, "FloatTensor")) return "float32";
    if (!strcmp(name, "ByteTensor")) return "uint8";
    if (!strcmp(name, "IntTensor")) return "int32";
    if (!strcmp(name, "LongTensor")) return "int64";
    return NULL;
}

typedef struct {
    Env* envs;
    int num_envs, total_agents;
    int* first_row;           /* env i's first agent row */
    float* actions;           /* total_agents * NUM_ATNS: the env's float view of the actions */
    float* terminals;         /* total_agents: the env's float terminals */
    PyArrayObject* bufs[5];   /* observations, actions, rewards, terminals, truncations (held) */
    int attached;
} Pt4Vec;

#define PT4_CAPSULE "puffertank.pl4.vec"

static Pt4Vec* pt4_vec(PyObject* handle) {
    Pt4Vec* vec = PyCapsule_GetPointer(handle, PT4_CAPSULE);
    if (!vec) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "not a vec handle of this module (made by vec_create)");
        return NULL;
    }
    if (!vec->envs) {
        PyErr_SetString(PyExc_ValueError, "this vec is closed");
        return NULL;
    }
    return vec;
}

static void pt4_free(Pt4Vec* vec) {
    if (vec->envs) {
        for (int i = 0; i < vec->num_envs; i++) c_close(&vec->envs[i]);
        free(vec->envs);
        vec->envs = NULL;
    }
    free(vec->first_row), vec->first_row = NULL;
    free(vec->actions), vec->actions = NULL;
    free(vec->terminals), vec->terminals = NULL;
    for (int b = 0; b < 5; b++) Py_CLEAR(vec->bufs[b]);
}

static void pt4_capsule_free(PyObject* capsule) {
    Pt4Vec* vec = PyCapsule_GetPointer(capsule, PT4_CAPSULE);
    if (vec) {
        pt4_free(vec);
        free(vec);
    }
}

/* A Dict of the Python kwargs (numbers and bools only); -1 with an exception. Keys point into `keys`. */
static int pt4_kwargs(PyObject* kwargs, Dict* dict, PyObject** keys) {
    Py_ssize_t n = kwargs ? PyDict_Size(kwargs) : 0, pos = 0;
    dict->items = calloc((size_t)n + 1, sizeof(DictItem));
    dict->size = 0, dict->capacity = (int)n + 1, dict->missing = NULL;
    *keys = PyList_New(0);
    if (!dict->items || !*keys) return -1;
    PyObject *k, *v;
    while (kwargs && PyDict_Next(kwargs, &pos, &k, &v)) {
        double value = PyFloat_AsDouble(v);
        if (!PyUnicode_Check(k) || (value == -1.0 && PyErr_Occurred())) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "env kwarg %R must be a number (4.0's Dict holds doubles), got %R", k, v);
            return -1;
        }
        PyObject* key = PyUnicode_AsUTF8String(k);
        if (!key || PyList_Append(*keys, key) < 0) return -1;
        Py_DECREF(key);
        dict->items[dict->size++] = (DictItem){PyBytes_AS_STRING(key), value, NULL};
    }
    return 0;
}

static PyObject* vec_create(PyObject* self, PyObject* args) {
    (void)self;
    long num_envs, seed;
    PyObject* kwargs;
    if (!PyArg_ParseTuple(args, "llO!", &num_envs, &seed, &PyDict_Type, &kwargs)) return NULL;
    if (num_envs < 1 || num_envs > (1 << 24)) {
        PyErr_SetString(PyExc_ValueError, "num_envs must be in [1, 16777216]");
        return NULL;
    }
    Dict dict;
    PyObject* keys = NULL;
    Pt4Vec* vec = calloc(1, sizeof(Pt4Vec));
    if (!vec) return PyErr_NoMemory();
    vec->num_envs = (int)num_envs;
    vec->envs = calloc((size_t)num_envs, sizeof(Env));
    vec->first_row = calloc((size_t)num_envs, sizeof(int));
    if (!vec->envs || !vec->first_row || pt4_kwargs(kwargs, &dict, &keys) < 0) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto fail;
    }
    long total = 0;
    for (long i = 0; i < num_envs; i++) {
        Env* env = &vec->envs[i];
        unsigned long s = (unsigned long)(i + seed * num_envs);
        srand((unsigned)s);
        env->rng = s;
        my_init(env, &dict);
        if (dict.missing) {
            PyErr_Format(PyExc_TypeError, "my_init reads kwarg '%s', which is not set (add it to the .ini's [env])",
                         dict.missing);
            vec->num_envs = (int)i + 1;
            goto fail;
        }
        if (env->num_agents < 1 || env->num_agents > 65536) {
            PyErr_Format(PyExc_ValueError, "my_init left num_agents = %d: it must set env->num_agents >= 1",
                         env->num_agents);
            vec->num_envs = (int)i + 1;
            goto fail;
        }
        vec->first_row[i] = (int)total;
        total += env->num_agents;
        if (total > (1L << 26)) {
            PyErr_SetString(PyExc_ValueError, "more than 2^26 agent rows: ask for fewer envs");
            vec->num_envs = (int)i + 1;
            goto fail;
        }
    }
    vec->total_agents = (int)total;
    vec->actions = calloc((size_t)total * NUM_ATNS, sizeof(float));
    vec->terminals = calloc((size_t)total, sizeof(float));
    if (!vec->actions || !vec->terminals) {
        PyErr_NoMemory();
        goto fail;
    }
    free(dict.items);
    Py_XDECREF(keys);
    PyObject* capsule = PyCapsule_New(vec, PT4_CAPSULE, pt4_capsule_free);
    if (!capsule) {
        pt4_free(vec);
        free(vec);
        return NULL;
    }
    return Py_BuildValue("(Nl)", capsule, total);
fail:
    free(dict.items);
    Py_XDECREF(keys);
    pt4_free(vec);
    free(vec);
    return NULL;
}

/* args: handle, then the five buffers; each C-contiguous with total_agents rows of the right item type. */
static PyObject* vec_attach(PyObject* self, PyObject* args) {
    (void)self;
    static const char* names[5] = {"observations", "actions", "rewards", "terminals", "truncations"};
    PyObject* objs[6];
    if (!PyArg_ParseTuple(args, "OOOOOO", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5])) return NULL;
    Pt4Vec* vec = pt4_vec(objs[0]);
    if (!vec) return NULL;
    const int want_items[5] = {(int)pt4_obs_item(), 4, 4, 1, 1};
    const npy_intp want_width[5] = {OBS_SIZE, NUM_ATNS, 1, 1, 1};
    for (int b = 0; b < 5; b++) {
        PyArrayObject* a = (PyArrayObject*)objs[b + 1];
        if (!PyArray_Check(objs[b + 1]) || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISWRITEABLE(a) ||
            PyArray_NDIM(a) < 1 || PyArray_DIM(a, 0) != vec->total_agents ||
            PyArray_ITEMSIZE(a) != want_items[b] || PyArray_SIZE(a) != vec->total_agents * want_width[b]) {
            PyErr_Format(PyExc_ValueError,
                         "%s must be a writeable C-contiguous array of %d rows x %ld items of %d bytes "
                         "(the binding's OBS_SIZE/NUM_ATNS/OBS_TENSOR_T)",
                         names[b], vec->total_agents, (long)want_width[b], want_items[b]);
            return NULL;
        }
    }
    for (int b = 0; b < 5; b++) {
        Py_INCREF(objs[b + 1]);
        Py_XSETREF(vec->bufs[b], (PyArrayObject*)objs[b + 1]);
    }
    char* obs = PyArray_DATA(vec->bufs[0]);
    float* rewards = PyArray_DATA(vec->bufs[2]);
    for (int i = 0; i < vec->num_envs; i++) {
        Env* env = &vec->envs[i];
        int row = vec->first_row[i];
        env->observations = (void*)(obs + (size_t)row * OBS_SIZE * pt4_obs_item());
        env->actions = vec->actions + (size_t)row * NUM_ATNS;
        env->rewards = rewards + row;
        env->terminals = vec->terminals + row;
    }
    vec->attached = 1;
    Py_RETURN_NONE;
}

static Pt4Vec* pt4_ready(PyObject* handle) {
    Pt4Vec* vec = pt4_vec(handle);
    if (vec && !vec->attached) {
        PyErr_SetString(PyExc_RuntimeError, "call vec_attach before reset/step");
        return NULL;
    }
    return vec;
}

/* terminals (bool) from the env's floats; truncations cleared (4.0 has none); whether any episode ended */
static int pt4_publish(Pt4Vec* vec) {
    unsigned char* term = PyArray_DATA(vec->bufs[3]);
    unsigned char* trunc = PyArray_DATA(vec->bufs[4]);
    int ended = 0;
    for (int r = 0; r < vec->total_agents; r++) {
        term[r] = vec->terminals[r] != 0.0f;
        trunc[r] = 0;
        ended |= term[r];
    }
    return ended;
}

static PyObject* vec_reset(PyObject* self, PyObject* args) {
    (void)self;
    PyObject* handle;
    PyObject* seed_obj = Py_None;
    if (!PyArg_ParseTuple(args, "O|O", &handle, &seed_obj)) return NULL;
    Pt4Vec* vec = pt4_ready(handle);
    if (!vec) return NULL;
    long seed = seed_obj == Py_None ? -1 : PyLong_AsLong(seed_obj);
    if (PyErr_Occurred()) return NULL;
    memset(PyArray_DATA(vec->bufs[2]), 0, (size_t)vec->total_agents * sizeof(float));
    memset(vec->terminals, 0, (size_t)vec->total_agents * sizeof(float));
    for (int i = 0; i < vec->num_envs; i++) {
        if (seed >= 0) {
            unsigned long s = (unsigned long)(i + seed * vec->num_envs);
            srand((unsigned)s);
            vec->envs[i].rng = s;
        }
        c_reset(&vec->envs[i]);
    }
    pt4_publish(vec);
    Py_RETURN_NONE;
}

static PyObject* vec_step(PyObject* self, PyObject* args) {
    (void)self;
    PyObject* handle;
    if (!PyArg_ParseTuple(args, "O", &handle)) return NULL;
    Pt4Vec* vec = pt4_ready(handle);
    if (!vec) return NULL;
    PyArrayObject* atn = vec->bufs[1];
    size_t n = (size_t)vec->total_agents * NUM_ATNS;
    if (PyArray_TYPE(atn) == NPY_FLOAT32) {  /* a continuous action space: copied as given */
        memcpy(vec->actions, PyArray_DATA(atn), n * sizeof(float));
    } else {  /* int32 branches: checked against ACT_SIZES before any env steps */
        const int32_t* a = PyArray_DATA(atn);
        for (size_t k = 0; k < n; k++) {
            int size = pt4_act_sizes[k % NUM_ATNS];
            if (a[k] < 0 || a[k] >= size) {
                PyErr_Format(PyExc_ValueError, "action %d of row %zu (branch %zu) is outside [0, %d)", a[k],
                             k / NUM_ATNS, k % NUM_ATNS, size);
                return NULL;
            }
            vec->actions[k] = (float)a[k];
        }
    }
    float* rewards = PyArray_DATA(vec->bufs[2]);
    int ended;
    Py_BEGIN_ALLOW_THREADS
    memset(rewards, 0, (size_t)vec->total_agents * sizeof(float));
    memset(vec->terminals, 0, (size_t)vec->total_agents * sizeof(float));
    for (int i = 0; i < vec->num_envs; i++) c_step(&vec->envs[i]);
    ended = pt4_publish(vec);
    Py_END_ALLOW_THREADS
    return PyBool_FromLong(ended);
}

/* The mean of every Log field over the envs that finished episodes since the last call; {} when none. */
static PyObject* vec_log(PyObject* self, PyObject* args) {
    (void)self;
    PyObject* handle;
    if (!PyArg_ParseTuple(args, "O", &handle)) return NULL;
    Pt4Vec* vec = pt4_vec(handle);
    if (!vec) return NULL;
    enum { K = sizeof(Log) / sizeof(float) };
    Log total;
    memset(&total, 0, sizeof(Log));
    for (int i = 0; i < vec->num_envs; i++) {
        Log* log = &vec->envs[i].log;
        if (log->n == 0.0f) continue;
        for (int k = 0; k < K; k++) ((float*)&total)[k] += ((float*)log)[k];
        memset(log, 0, sizeof(Log));
    }
    PyObject* out = PyDict_New();
    if (!out || total.n == 0.0f) return out;
    float count = total.n;
    for (int k = 0; k < K; k++) ((float*)&total)[k] /= count;
    DictItem items[64];
    Dict dict = {items, 0, 64, NULL};
    my_log(&total, &dict);
    dict_set(&dict, "n", count);
    for (int k = 0; k < dict.size; k++) {
        PyObject* v = PyFloat_FromDouble(dict.items[k].value);
        if (!v || PyDict_SetItemString(out, dict.items[k].key, v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(v);
    }
    return out;
}

static PyObject* vec_render(PyObject* self, PyObject* args) {
    (void)self;
    PyObject* handle;
    long i;
    if (!PyArg_ParseTuple(args, "Ol", &handle, &i)) return NULL;
    Pt4Vec* vec = pt4_ready(handle);
    if (!vec) return NULL;
    if (i < 0 || i >= vec->num_envs) {
        PyErr_Format(PyExc_IndexError, "env index must be in [0, %d)", vec->num_envs);
        return NULL;
    }
    c_render(&vec->envs[i]);
    Py_RETURN_NONE;
}

static PyObject* vec_close(PyObject* self, PyObject* args) {
    (void)self;
    PyObject* handle;
    if (!PyArg_ParseTuple(args, "O", &handle)) return NULL;
    Pt4Vec* vec = PyCapsule_GetPointer(handle, PT4_CAPSULE);
    if (!vec) return NULL;
    pt4_free(vec);  /* idempotent: a closed vec has no envs left */
    Py_RETURN_NONE;
}

static PyMethodDef pt4_methods[] = {
    {"vec_create", vec_create, METH_VARARGS, "vec_create(num_envs, seed, kwargs) -> (handle, total_agents)"},
    {"vec_attach", vec_attach, METH_VARARGS, "vec_attach(handle, obs, actions, rewards, terminals, truncations)"},
    {"vec_reset", vec_reset, METH_VARARGS, "vec_reset(handle[, seed])"},
    {"vec_step", vec_step, METH_VARARGS, "vec_step(handle) -> whether an episode ended"},
    {"vec_log", vec_log, METH_VARARGS, "vec_log(handle) -> dict"},
    {"vec_render", vec_render, METH_VARARGS, "vec_render(handle, index)"},
    {"vec_close", vec_close, METH_VARARGS, "vec_close(handle)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef pt4_module = {PyModuleDef_HEAD_INIT, "binding", NULL, -1, pt4_methods};

PyMODINIT_FUNC PyInit_binding(void) {
    import_array();
    if (!pt4_obs_dtype()) {
        PyErr_SetString(PyExc_ImportError, "OBS_TENSOR_T must be FloatTensor, ByteTensor, IntTensor or LongTensor");
        return NULL;
    }
    PyObject* m = PyModule_Create(&pt4_module);
    if (!m) return NULL;
    PyObject* sizes = PyTuple_New(NUM_ATNS);
    for (int k = 0; sizes && k < NUM_ATNS; k++) PyTuple_SET_ITEM(sizes, k, PyLong_FromLong(pt4_act_sizes[k]));
    if (!sizes || PyModule_AddObject(m, "ACT_SIZES", sizes) < 0 ||
        PyModule_AddIntConstant(m, "OBS_SIZE", OBS_SIZE) < 0 || PyModule_AddIntConstant(m, "NUM_ATNS", NUM_ATNS) < 0 ||
        PyModule_AddStringConstant(m, "OBS_DTYPE", pt4_obs_dtype()) < 0 ||
        PyModule_AddStringConstant(m, "CONTRACT", "pufferlib-4.0") < 0) {
        Py_XDECREF(sizes);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

#endif /* OBS_SIZE */
#endif /* PUFFERTANK_PL4_VECENV_H */
