/* env_binding.h: the generic CPython/NumPy glue of a native Ocean env, included at the END of its binding.c.
 *
 * binding.c defines ENV_NAME, Env, OBS_T (float, unsigned char, signed char or int: the module's OBS_DTYPE),
 * OBS_SIZE, OBS_LOW, OBS_HIGH, NUM_ATNS, ACT_SIZES, RENDER_H and RENDER_W (the env's header defines Log with
 * PN_LOG_STRUCT(LOG_FIELDS): the fields are named once), includes this file, then defines
 *     static int my_num_agents(PyObject* kwargs);     agents per env instance (>= 1, or -1 with an exception)
 *     static int my_init(Env* env, PyObject* kwargs); read game kwargs (a dict or NULL); 0, or -1 with an exception
 * my_init reads its keywords with pn_kw_int / pn_kw_float (the module learns from them which it takes and
 * refuses every other). Optional: OBS_SHAPE_FN (a function
 * `static int f(PyObject* kwargs, int shape[3])` that writes the per-agent observation shape and returns its
 * number of dimensions, when the shape is not (OBS_SIZE,) or depends on kwargs), ANSI_SIZE (bytes of text),
 * OBS_FIELDS ("name:shape ..." naming the parts of a row, e.g. "action_mask:7 board:2x6x7": see fields.py).
 * PN_NO_PYTHON (tests/native/fuzz.c) compiles the binding without CPython: the same kwargs helpers read
 * PN_KW_<key> environment variables, and pn_raise reports on stderr (so a binding needs no #ifdef).
 *
 * The module (pufferlib.ocean.native.<ENV_NAME>) holds N env instances over slices of one set of numpy
 * buffers and steps them all per call with the GIL released, on `num_threads` threads (created per
 * call and joined before it returns: nothing survives a call, so fork() after it is safe).
 */
#ifdef PN_NO_PYTHON
typedef struct _object PyObject;
#else
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <pthread.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* What both builds read from the binding's defines, each fact from one place. The observation dtype is
 * OBS_T's (no second name for it), and the log's field names are the LOG_FIELDS list that declared the
 * Log struct (PN_LOG_STRUCT in puffernative.h): checked here name by name, so a Log written by hand that
 * disagrees with the list in any name or place does not compile. */
#ifdef OBS_DTYPE
#error "OBS_DTYPE is read from OBS_T now: delete the #define OBS_DTYPE line (docs/native.md)"
#endif
#ifdef ENV_KWARGS
#error "ENV_KWARGS is learnt from the keys my_init reads now: delete the #define ENV_KWARGS line (docs/native.md)"
#endif
#define PN_OBS_DTYPE _Generic((OBS_T)0, float: "float32", unsigned char: "uint8", signed char: "int8", int: "int32")

static int my_num_agents(PyObject* kwargs);
static int my_init(Env* env, PyObject* kwargs);
#ifdef OBS_SHAPE_FN
static int OBS_SHAPE_FN(PyObject* kwargs, int shape[3]);
#endif
static const int pn_act_sizes[NUM_ATNS] = ACT_SIZES;

#define PN_LOG_NAME(name) #name,
#define PN_LOG_INDEX(name) PN_LOG_AT_##name,
#define PN_LOG_CHECK(name)                                                                                     \
    _Static_assert(offsetof(Log, name) == PN_LOG_AT_##name * sizeof(float),                                    \
                   "Log." #name " is not where LOG_FIELDS lists it: declare Log with PN_LOG_STRUCT(LOG_FIELDS)");
static const char* pn_log_fields[] = {LOG_FIELDS(PN_LOG_NAME)}; /* LOG_FIELDS(X) X(score) ... X(n), not strings */
enum { LOG_FIELDS(PN_LOG_INDEX) PN_NUM_LOG };
LOG_FIELDS(PN_LOG_CHECK)
_Static_assert(sizeof(Log) == PN_NUM_LOG * sizeof(float), "Log must hold exactly one float per LOG_FIELDS name");
_Static_assert(PN_LOG_AT_n == PN_NUM_LOG - 1, "LOG_FIELDS must end with n (the episodes summed)");

#define PN_STR_(x) #x
#define PN_STR(x) PN_STR_(x)
#define PN_CAT_(a, b) a##b
#define PN_CAT(a, b) PN_CAT_(a, b)
#define PN_MODULE_NAME PN_STR(ENV_NAME)

/* ------------------------------------------------------------------ errors and game keywords, both builds */

/* pn_raise(kind, printf format, ...): an error, for the binding and the glue alike. In the module it is the
 * exception `kind` (PN_TYPE_ERROR, PN_VALUE_ERROR, PN_MEMORY_ERROR); in the C-only build (tests/native/fuzz.c,
 * PN_NO_PYTHON) a line on stderr. It returns -1, so `return pn_raise(...)` fails the caller either way. */
#ifdef PN_NO_PYTHON
typedef const char* pn_error_kind;
#define PN_TYPE_ERROR "TypeError"
#define PN_VALUE_ERROR "ValueError"
#define PN_MEMORY_ERROR "MemoryError"
#else
typedef PyObject* pn_error_kind;
#define PN_TYPE_ERROR PyExc_TypeError
#define PN_VALUE_ERROR PyExc_ValueError
#define PN_MEMORY_ERROR PyExc_MemoryError
#endif
__attribute__((format(printf, 2, 3), unused)) static int pn_raise(pn_error_kind kind, const char* format, ...) {
    char message[512];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof(message), format, args);
    va_end(args);
#ifdef PN_NO_PYTHON
    fprintf(stderr, "%s: %s\n", kind, message);
#else
    PyErr_SetString(kind, message);
#endif
    return -1;
}

/* The game keywords are the keys my_num_agents, OBS_SHAPE_FN and my_init read with pn_kw_* (string
 * literals, every one read on every call, the default when absent): the module learns them at import from a
 * default init (pn_learn_kwargs), so no list repeats them. Any other keyword is refused, naming these. */
#define PN_MAX_KWARGS 64
static const char* pn_kwarg_names[PN_MAX_KWARGS];
static int pn_num_kwargs = 0;
static int pn_learning_kwargs = 0;
static int pn_kwargs_overflow = 0; /* keys past PN_MAX_KWARGS: the import fails saying so */

static void pn_kw_asked(const char* key) {
    if (!pn_learning_kwargs) return;
    for (int i = 0; i < pn_num_kwargs; i++)
        if (!strcmp(pn_kwarg_names[i], key)) return;
    if (pn_num_kwargs < PN_MAX_KWARGS)
        pn_kwarg_names[pn_num_kwargs++] = key;
    else
        pn_kwargs_overflow = 1;
}

/* A game keyword as given: 1 with the value's text in the C-only build (the environment variable PN_KW_<key>,
 * so a harness can run other configs) or the value itself in the module, 0 when absent (the default applies). */
#ifdef PN_NO_PYTHON
static int pn_kw_given(PyObject* kwargs, const char* key, const char** text) {
    (void)kwargs;
    char name[128];
    snprintf(name, sizeof(name), "PN_KW_%s", key);
    *text = getenv(name);
    return *text != NULL;
}
#else
static int pn_kw_given(PyObject* kwargs, const char* key, PyObject** value) {
    *value = (kwargs && PyDict_Check(kwargs)) ? PyDict_GetItemString(kwargs, key) : NULL;
    return *value != NULL;
}
#endif

/* The kwarg `key` as an int in [lo, hi] (default `dflt` when absent): 0, or -1 with a TypeError/ValueError. */
__attribute__((unused)) static int pn_kw_int(PyObject* kwargs, const char* key, long dflt, long lo, long hi, int* out) {
    pn_kw_asked(key);
    long x = dflt;
#ifdef PN_NO_PYTHON
    const char* v;
    if (pn_kw_given(kwargs, key, &v)) {
        char* end;
        x = strtol(v, &end, 10);
        if (*v == '\0' || *end != '\0')
            return pn_raise(PN_TYPE_ERROR, "%s: %s must be an int in %ld..%ld, got %s", PN_MODULE_NAME, key, lo, hi, v);
    }
#else
    PyObject* v;
    if (pn_kw_given(kwargs, key, &v)) {
        if (PyBool_Check(v) || !PyLong_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s: %s must be an int in %ld..%ld, got %R", PN_MODULE_NAME, key, lo, hi, v);
            return -1;
        }
        int overflow = 0;
        x = PyLong_AsLongAndOverflow(v, &overflow);
        if (overflow) x = overflow > 0 ? LONG_MAX : LONG_MIN;
    }
#endif
    if (x < lo || x > hi) return pn_raise(PN_VALUE_ERROR, "%s: %s must be in %ld..%ld, got %ld", PN_MODULE_NAME, key, lo, hi, x);
    *out = (int)x;
    return 0;
}

/* The kwarg `key` as a float in [lo, hi] (ints accepted; NaN refused). */
__attribute__((unused)) static int pn_kw_float(PyObject* kwargs, const char* key, double dflt, double lo, double hi,
                                               float* out) {
    pn_kw_asked(key);
    double x = dflt;
#ifdef PN_NO_PYTHON
    const char* v;
    if (pn_kw_given(kwargs, key, &v)) {
        char* end;
        x = strtod(v, &end);
        if (*v == '\0' || *end != '\0')
            return pn_raise(PN_TYPE_ERROR, "%s: %s must be a number in [%g, %g], got %s", PN_MODULE_NAME, key, lo, hi, v);
    }
#else
    PyObject* v;
    if (pn_kw_given(kwargs, key, &v)) {
        if (PyBool_Check(v) || !(PyFloat_Check(v) || PyLong_Check(v))) {
            char range[96];
            snprintf(range, sizeof(range), "[%g, %g]", lo, hi);
            PyErr_Format(PyExc_TypeError, "%s: %s must be a number in %s, got %R", PN_MODULE_NAME, key, range, v);
            return -1;
        }
        x = PyFloat_AsDouble(v);
        if (x == -1.0 && PyErr_Occurred()) return -1;
    }
#endif
    if (!(x >= lo && x <= hi)) return pn_raise(PN_VALUE_ERROR, "%s: %s must be in [%g, %g], got %g", PN_MODULE_NAME, key, lo, hi, x);
    *out = (float)x;
    return 0;
}

#ifndef PN_NO_PYTHON
#define PN_CAPSULE "pufferlib.ocean.native." PN_MODULE_NAME  /* per module: no handle of another env */
#ifndef ANSI_SIZE
#define ANSI_SIZE 16384
#endif
#define PN_MAX_THREADS 256

typedef struct {
    Env* envs;
    int num_envs;
    int agents;      /* per env */
    int rows;        /* num_envs * agents */
    int obs_size;    /* per agent */
    int num_threads;
    int* actions;
    PyObject* arrays[6];  /* references held while open */
    int closed;
    double log_sums[PN_NUM_LOG]; /* the episodes taken from the envs' logs since the last vec_log */
} VecEnv;

/* Refuse kwargs the env does not read (pn_kwarg_names). */
static int pn_check_kwargs(PyObject* kwargs) {
    if (kwargs == NULL || kwargs == Py_None) return 0;
    if (!PyDict_Check(kwargs)) {
        PyErr_Format(PyExc_TypeError, "%s: kwargs must be a dict, got %R", PN_MODULE_NAME, kwargs);
        return -1;
    }
    if (pn_num_kwargs == 0 && PyDict_Size(kwargs) > 0) {
        PyErr_Format(PyExc_TypeError, "%s takes no game keywords, got %R", PN_MODULE_NAME, kwargs);
        return -1;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
        const char* k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        int known = 0;
        for (int i = 0; k && i < pn_num_kwargs; i++) known |= strcmp(k, pn_kwarg_names[i]) == 0;
        if (!known) {
            PyObject* names = PyUnicode_FromString("");
            for (int i = 0; names && i < pn_num_kwargs; i++) {
                PyObject* joined = PyUnicode_FromFormat("%U%s%s", names, i ? ", " : "", pn_kwarg_names[i]);
                Py_SETREF(names, joined);
            }
            PyErr_Format(PyExc_TypeError, "%s: unknown keyword %R; the env takes %U", PN_MODULE_NAME, key, names);
            Py_XDECREF(names);
            return -1;
        }
    }
    return 0;
}

static PyObject* pn_kwargs_arg(PyObject* kwargs) { return (kwargs == Py_None) ? NULL : kwargs; }

static int pn_agents(PyObject* kwargs) {
    if (pn_check_kwargs(kwargs) < 0) return -1;
    int n = my_num_agents(pn_kwargs_arg(kwargs));
    if (n < 1) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s: agents per env must be >= 1, got %d", PN_MODULE_NAME, n);
        return -1;
    }
    return n;
}

/* The per-agent observation shape (ndim in 1..3 returned, -1 with an exception). */
static int pn_obs_shape(PyObject* kwargs, int shape[3]) {
#ifdef OBS_SHAPE_FN
    shape[0] = shape[1] = shape[2] = 1;
    int ndim = OBS_SHAPE_FN(pn_kwargs_arg(kwargs), shape);
    if (ndim < 0) return -1;
    long long size = 1;
    for (int i = 0; i < ndim; i++) size *= shape[i] > 0 ? shape[i] : 0;
    if (ndim < 1 || ndim > 3 || size < 1 || size > INT_MAX) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s: bad observation shape (ndim %d)", PN_MODULE_NAME, ndim);
        return -1;
    }
    return ndim;
#else
    (void)kwargs;
    shape[0] = OBS_SIZE;
    return 1;
#endif
}

static int pn_obs_size(PyObject* kwargs) {
    int shape[3];
    int ndim = pn_obs_shape(kwargs, shape);
    if (ndim < 0) return -1;
    int size = 1;
    for (int i = 0; i < ndim; i++) size *= shape[i];
    return size;
}

/* ---------------------------------------------------------------------------------- buffer checks */

static int pn_obs_typenum(void) {
    return _Generic((OBS_T)0, float: NPY_FLOAT32, unsigned char: NPY_UINT8, signed char: NPY_INT8, int: NPY_INT32);
}
_Static_assert(sizeof(OBS_T) == 1 || sizeof(OBS_T) == 4, "OBS_T must be a 1- or 4-byte type");

/* `arr` must be a C-contiguous, aligned, writeable numpy array of `typenum` (or `alt`) with `count`
 * elements, `rows` of them along its first axis. */
static int pn_check_array(PyObject* arr, const char* name, int typenum, int alt, Py_ssize_t rows, Py_ssize_t count) {
    if (!PyArray_Check(arr)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a numpy array, got %s", PN_MODULE_NAME, name, Py_TYPE(arr)->tp_name);
        return -1;
    }
    PyArrayObject* a = (PyArrayObject*)arr;
    int t = PyArray_TYPE(a);
    if (t != typenum && t != alt) {
        PyArray_Descr* want = PyArray_DescrFromType(typenum);
        PyErr_Format(PyExc_TypeError, "%s: %s must have dtype %S, got %S", PN_MODULE_NAME, name, (PyObject*)want,
                     (PyObject*)PyArray_DESCR(a));
        Py_XDECREF(want);
        return -1;
    }
    if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a) || !PyArray_ISWRITEABLE(a)) {
        PyErr_Format(PyExc_ValueError, "%s: %s must be C-contiguous, aligned and writeable (np.ascontiguousarray)",
                     PN_MODULE_NAME, name);
        return -1;
    }
    Py_ssize_t first = PyArray_NDIM(a) ? PyArray_DIM(a, 0) : 1;
    if (PyArray_SIZE(a) != count || first != rows) {
        PyErr_Format(PyExc_ValueError, "%s: %s must have %zd rows and %zd elements, got shape with %zd rows and %zd elements",
                     PN_MODULE_NAME, name, rows, count, first, (Py_ssize_t)PyArray_SIZE(a));
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------- the handle */

static void pn_close(VecEnv* v) {
    if (v == NULL || v->closed) return;
    v->closed = 1;
    if (v->envs) {
        for (int i = 0; i < v->num_envs; i++) c_close(&v->envs[i]);
        free(v->envs);
        v->envs = NULL;
    }
    for (int i = 0; i < 6; i++) Py_CLEAR(v->arrays[i]);
}

static void pn_capsule_free(PyObject* capsule) {
    VecEnv* v = (VecEnv*)PyCapsule_GetPointer(capsule, PN_CAPSULE);
    if (v == NULL) {
        PyErr_Clear();
        return;
    }
    pn_close(v);
    free(v);
}

static VecEnv* pn_handle(PyObject* capsule) {
    VecEnv* v = (VecEnv*)PyCapsule_GetPointer(capsule, PN_CAPSULE);
    if (v == NULL) return NULL;
    if (v->closed) {
        PyErr_Format(PyExc_RuntimeError, "%s: this env is closed", PN_MODULE_NAME);
        return NULL;
    }
    return v;
}

static PyObject* vec_init(PyObject* self, PyObject* args) {
    (void)self;
    PyObject *obs, *atn, *rew, *term, *trunc, *mask, *kwargs = Py_None;
    long num_envs_l, num_threads_l = 1;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "OOOOOOlK|lO:vec_init", &obs, &atn, &rew, &term, &trunc, &mask, &num_envs_l, &seed,
                          &num_threads_l, &kwargs))
        return NULL;
    if (num_envs_l < 1 || num_envs_l > INT_MAX) {
        PyErr_Format(PyExc_ValueError, "%s: num_envs must be in 1..%d, got %ld", PN_MODULE_NAME, INT_MAX, num_envs_l);
        return NULL;
    }
    if (num_threads_l < 1 || num_threads_l > PN_MAX_THREADS) {
        PyErr_Format(PyExc_ValueError, "%s: num_threads must be in 1..%d, got %ld", PN_MODULE_NAME, PN_MAX_THREADS,
                     num_threads_l);
        return NULL;
    }
    int agents = pn_agents(kwargs);
    if (agents < 0) return NULL;
    int obs_size = pn_obs_size(kwargs);
    if (obs_size < 0) return NULL;
    int num_envs = (int)num_envs_l;
    if ((long long)num_envs * agents > INT_MAX || (long long)num_envs * agents * obs_size > PY_SSIZE_T_MAX / 4 ||
        (long long)num_envs * agents * NUM_ATNS > PY_SSIZE_T_MAX / 4) {
        PyErr_Format(PyExc_ValueError, "%s: num_envs %d x %d agents is too many rows", PN_MODULE_NAME, num_envs, agents);
        return NULL;
    }
    Py_ssize_t rows = (Py_ssize_t)num_envs * agents;
    if (pn_check_array(obs, "observations", pn_obs_typenum(), pn_obs_typenum(), rows, rows * obs_size) < 0 ||
        pn_check_array(atn, "actions", NPY_INT32, NPY_INT32, rows, rows * NUM_ATNS) < 0 ||
        pn_check_array(rew, "rewards", NPY_FLOAT32, NPY_FLOAT32, rows, rows) < 0 ||
        pn_check_array(term, "terminals", NPY_BOOL, NPY_UINT8, rows, rows) < 0 ||
        pn_check_array(trunc, "truncations", NPY_BOOL, NPY_UINT8, rows, rows) < 0 ||
        pn_check_array(mask, "masks", NPY_BOOL, NPY_UINT8, rows, rows) < 0)
        return NULL;

    VecEnv* v = (VecEnv*)calloc(1, sizeof(VecEnv));
    Env* envs = (Env*)calloc((size_t)num_envs, sizeof(Env));
    if (!v || !envs) {
        free(v);
        free(envs);
        return PyErr_NoMemory();
    }
    OBS_T* o = (OBS_T*)PyArray_DATA((PyArrayObject*)obs);
    int* a = (int*)PyArray_DATA((PyArrayObject*)atn);
    float* r = (float*)PyArray_DATA((PyArrayObject*)rew);
    unsigned char* te = (unsigned char*)PyArray_DATA((PyArrayObject*)term);
    unsigned char* tr = (unsigned char*)PyArray_DATA((PyArrayObject*)trunc);
    unsigned char* m = (unsigned char*)PyArray_DATA((PyArrayObject*)mask);
    for (int i = 0; i < num_envs; i++) {
        Env* env = &envs[i];
        size_t row = (size_t)i * agents;
        env->observations = o + row * obs_size;
        env->actions = a + row * NUM_ATNS;
        env->rewards = r + row;
        env->terminals = te + row;
        env->truncations = tr + row;
        env->masks = m + row;
        env->num_agents = agents;
        pn_seed(&env->rng, seed + (unsigned long long)i);
        if (my_init(env, pn_kwargs_arg(kwargs)) < 0) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s: env %d failed to initialise", PN_MODULE_NAME, i);
            for (int j = 0; j <= i; j++) c_close(&envs[j]);
            free(envs);
            free(v);
            return NULL;
        }
    }
    v->envs = envs;
    v->num_envs = num_envs;
    v->agents = agents;
    v->rows = (int)rows;
    v->obs_size = obs_size;
    v->num_threads = (int)num_threads_l < num_envs ? (int)num_threads_l : num_envs;
    v->actions = a;
    PyObject* arrays[6] = {obs, atn, rew, term, trunc, mask};
    for (int i = 0; i < 6; i++) {
        Py_INCREF(arrays[i]);
        v->arrays[i] = arrays[i];
    }
    PyObject* capsule = PyCapsule_New(v, PN_CAPSULE, pn_capsule_free);
    if (capsule == NULL) {
        pn_close(v);
        free(v);
    }
    return capsule;
}

/* ---------------------------------------------------------------------------------- stepping */

typedef struct {
    VecEnv* v;
    int lo, hi, reset;
    double sums[PN_NUM_LOG]; /* the logs this slice's envs finished this call */
} pn_slice;

/* Move an env's finished episodes into `sums` and clear its log, right after the call that logged them
 * (its cache line is still hot): vec_step's count and vec_log then never walk every env. */
static inline void pn_take_log(Env* env, double* sums) {
    if (env->log.n == 0.0f) return;
    const float* f = (const float*)&env->log;
    for (int k = 0; k < PN_NUM_LOG; k++) sums[k] += f[k];
    memset(&env->log, 0, sizeof(Log));
}

static void* pn_run_slice(void* arg) {
    pn_slice* s = (pn_slice*)arg;
    Env* envs = s->v->envs;
    memset(s->sums, 0, sizeof(s->sums));
    for (int i = s->lo; i < s->hi; i++) {
        if (s->reset) c_reset(&envs[i]);
        else c_step(&envs[i]);
        pn_take_log(&envs[i], s->sums);
    }
    return NULL;
}

static void pn_add_sums(VecEnv* v, const pn_slice* s) {
    for (int k = 0; k < PN_NUM_LOG; k++) v->log_sums[k] += s->sums[k];
}

/* Reset or step every env; GIL released by the caller. Threads that fail to start run inline. */
static void pn_run_all(VecEnv* v, int reset) {
    int t = v->num_threads;
    if (t <= 1) {
        pn_slice s = {v, 0, v->num_envs, reset, {0}};
        pn_run_slice(&s);
        pn_add_sums(v, &s);
        return;
    }
    pn_slice slices[PN_MAX_THREADS];
    pthread_t threads[PN_MAX_THREADS];
    int started[PN_MAX_THREADS];
    for (int k = 0; k < t; k++) {
        slices[k] = (pn_slice){v, (int)((long long)v->num_envs * k / t), (int)((long long)v->num_envs * (k + 1) / t),
                               reset, {0}};
        started[k] = k > 0 && pthread_create(&threads[k], NULL, pn_run_slice, &slices[k]) == 0;
        if (k > 0 && !started[k]) pn_run_slice(&slices[k]);
    }
    pn_run_slice(&slices[0]);
    for (int k = 1; k < t; k++)
        if (started[k]) pthread_join(threads[k], NULL);
    for (int k = 0; k < t; k++) pn_add_sums(v, &slices[k]);
}

static PyObject* vec_reset(PyObject* self, PyObject* args) {
    (void)self;
    PyObject *capsule, *seed = Py_None;
    if (!PyArg_ParseTuple(args, "O|O:vec_reset", &capsule, &seed)) return NULL;
    VecEnv* v = pn_handle(capsule);
    if (v == NULL) return NULL;
    if (seed != Py_None) {
        if (PyBool_Check(seed) || !PyLong_Check(seed)) {
            PyErr_Format(PyExc_TypeError, "%s: seed must be an int or None, got %R", PN_MODULE_NAME, seed);
            return NULL;
        }
        unsigned long long s = PyLong_AsUnsignedLongLongMask(seed);
        if (PyErr_Occurred()) return NULL;
        for (int i = 0; i < v->num_envs; i++) pn_seed(&v->envs[i].rng, s + (unsigned long long)i);
    }
    Py_BEGIN_ALLOW_THREADS
    pn_run_all(v, 1);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* Every action in range, else a ValueError naming the row, the value and the range. */
static int pn_check_actions(VecEnv* v) {
    const int* a = v->actions;
    size_t count = (size_t)v->rows * NUM_ATNS;
    for (size_t i = 0; i < count; i++) {
        int j = (int)(i % NUM_ATNS);
        if ((unsigned)a[i] >= (unsigned)pn_act_sizes[j]) {
            if (NUM_ATNS == 1)
                PyErr_Format(PyExc_ValueError, "%s: action %d of agent row %zu is out of range 0..%d", PN_MODULE_NAME,
                             a[i], i, pn_act_sizes[j] - 1);
            else
                PyErr_Format(PyExc_ValueError, "%s: action %d of agent row %zu, branch %d, is out of range 0..%d",
                             PN_MODULE_NAME, a[i], i / NUM_ATNS, j, pn_act_sizes[j] - 1);
            return -1;
        }
    }
    return 0;
}

/* Step every env with the actions in the buffer; returns the episodes logged since the last vec_log. */
static PyObject* vec_step(PyObject* self, PyObject* capsule) {
    (void)self;
    VecEnv* v = pn_handle(capsule);
    if (v == NULL || pn_check_actions(v) < 0) return NULL;
    long pending;
    Py_BEGIN_ALLOW_THREADS
    pn_run_all(v, 0);
    pending = (long)v->log_sums[PN_NUM_LOG - 1];
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(pending);
}

/* Means of every log field over the episodes finished since the last call, plus n; {} when none. */
static PyObject* vec_log(PyObject* self, PyObject* capsule) {
    (void)self;
    VecEnv* v = pn_handle(capsule);
    if (v == NULL) return NULL;
    const double* sums = v->log_sums; /* the envs' logs, taken after each reset and step */
    double n = sums[PN_NUM_LOG - 1];
    PyObject* out = PyDict_New();
    if (out == NULL || n <= 0) return out;
    for (int k = 0; k < PN_NUM_LOG; k++) {
        PyObject* value = k == PN_NUM_LOG - 1 ? PyLong_FromLong((long)n) : PyFloat_FromDouble(sums[k] / n);
        if (value == NULL || PyDict_SetItemString(out, pn_log_fields[k], value) < 0) {
            Py_XDECREF(value);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(value);
    }
    memset(v->log_sums, 0, sizeof(v->log_sums));
    return out;
}

static VecEnv* pn_env_at(PyObject* args, const char* fn, int* index) {
    PyObject* capsule;
    if (!PyArg_ParseTuple(args, "Oi", &capsule, index)) return NULL;
    VecEnv* v = pn_handle(capsule);
    if (v == NULL) return NULL;
    if (*index < 0 || *index >= v->num_envs) {
        PyErr_Format(PyExc_IndexError, "%s.%s: env index must be in 0..%d, got %d", PN_MODULE_NAME, fn, v->num_envs - 1,
                     *index);
        return NULL;
    }
    return v;
}

static PyObject* vec_render(PyObject* self, PyObject* args) {
    (void)self;
    int index;
    VecEnv* v = pn_env_at(args, "vec_render", &index);
    if (v == NULL) return NULL;
    npy_intp dims[3] = {RENDER_H, RENDER_W, 3};
    PyObject* frame = PyArray_SimpleNew(3, dims, NPY_UINT8);
    if (frame == NULL) return NULL;
    c_render(&v->envs[index], (unsigned char*)PyArray_DATA((PyArrayObject*)frame));
    return frame;
}

static PyObject* vec_ansi(PyObject* self, PyObject* args) {
    (void)self;
    int index;
    VecEnv* v = pn_env_at(args, "vec_ansi", &index);
    if (v == NULL) return NULL;
    char* text = (char*)malloc(ANSI_SIZE);
    if (text == NULL) return PyErr_NoMemory();
    text[0] = 0;
    int len = c_ansi(&v->envs[index], text, ANSI_SIZE);
    text[ANSI_SIZE - 1] = 0;
    if (len < 0 || len >= ANSI_SIZE) len = (int)strlen(text);
    PyObject* out = PyUnicode_DecodeUTF8(text, len, "replace");
    free(text);
    return out;
}

static PyObject* vec_close(PyObject* self, PyObject* capsule) {
    (void)self;
    VecEnv* v = (VecEnv*)PyCapsule_GetPointer(capsule, PN_CAPSULE);
    if (v == NULL) return NULL;
    pn_close(v);
    Py_RETURN_NONE;
}

static PyObject* num_agents(PyObject* self, PyObject* args) {
    (void)self;
    PyObject* kwargs = Py_None;
    if (!PyArg_ParseTuple(args, "|O:num_agents", &kwargs)) return NULL;
    int n = pn_agents(kwargs);
    return n < 0 ? NULL : PyLong_FromLong(n);
}

static PyObject* obs_shape(PyObject* self, PyObject* args) {
    (void)self;
    PyObject* kwargs = Py_None;
    if (!PyArg_ParseTuple(args, "|O:obs_shape", &kwargs)) return NULL;
    if (pn_check_kwargs(kwargs) < 0) return NULL;
    int shape[3];
    int ndim = pn_obs_shape(kwargs, shape);
    if (ndim < 0) return NULL;
    PyObject* out = PyTuple_New(ndim);
    for (int i = 0; out && i < ndim; i++) PyTuple_SET_ITEM(out, i, PyLong_FromLong(shape[i]));
    return out;
}

static PyMethodDef pn_methods[] = {
    {"vec_init", vec_init, METH_VARARGS,
     "vec_init(observations, actions, rewards, terminals, truncations, masks, num_envs, seed, num_threads=1, "
     "kwargs=None) -> handle"},
    {"vec_reset", vec_reset, METH_VARARGS, "vec_reset(handle, seed=None): reset every env (reseeded: env i gets seed + i)"},
    {"vec_step", vec_step, METH_O, "vec_step(handle) -> episodes logged since the last vec_log"},
    {"vec_log", vec_log, METH_O, "vec_log(handle) -> {field: mean, ..., 'n': episodes}, then clears; {} when none"},
    {"vec_render", vec_render, METH_VARARGS, "vec_render(handle, index) -> ndarray (RENDER_H, RENDER_W, 3) uint8"},
    {"vec_ansi", vec_ansi, METH_VARARGS, "vec_ansi(handle, index) -> str"},
    {"vec_close", vec_close, METH_O, "vec_close(handle): free the envs (idempotent)"},
    {"num_agents", num_agents, METH_VARARGS, "num_agents(kwargs=None) -> agents per env instance"},
    {"obs_shape", obs_shape, METH_VARARGS, "obs_shape(kwargs=None) -> the observation shape of one agent"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef pn_module = {PyModuleDef_HEAD_INIT, PN_MODULE_NAME, "A native Ocean env (env_binding.h)", -1,
                                       pn_methods, NULL, NULL, NULL, NULL};

static int pn_add(PyObject* m, const char* name, PyObject* value) {
    int rc = value ? PyModule_AddObjectRef(m, name, value) : -1;
    Py_XDECREF(value);
    return rc;
}

/* The named parts of a row, exported as the module's OBS_FIELDS ("" when the binding names none). */
#ifdef OBS_FIELDS
#define PN_OBS_FIELDS OBS_FIELDS
#else
#define PN_OBS_FIELDS ""
#endif

/* Learn the game keywords (see pn_kw_asked): a default my_num_agents, OBS_SHAPE_FN and my_init on a scratch
 * env, closed as a failed vec_init closes it. 0, or -1 with an exception (defaults that fail are a bug). */
static int pn_learn_kwargs(void) {
    Env* probe = calloc(1, sizeof(Env));
    if (probe == NULL) return PyErr_NoMemory(), -1;
    pn_learning_kwargs = 1;
    int shape[3];
    int ok = my_num_agents(NULL) >= 1 && pn_obs_shape(NULL, shape) >= 1 && my_init(probe, NULL) == 0;
    c_close(probe);
    free(probe);
    pn_learning_kwargs = 0;
    if (!ok && !PyErr_Occurred())
        PyErr_Format(PyExc_ImportError, "%s: my_num_agents, OBS_SHAPE_FN or my_init failed on the defaults", PN_MODULE_NAME);
    if (ok && pn_kwargs_overflow) {
        PyErr_Format(PyExc_ImportError, "%s reads more than %d game keywords; raise PN_MAX_KWARGS in env_binding.h",
                     PN_MODULE_NAME, PN_MAX_KWARGS);
        ok = 0;
    }
    return ok ? 0 : -1;
}

PyMODINIT_FUNC PN_CAT(PyInit_, ENV_NAME)(void) {
    import_array();
    if (pn_learn_kwargs() < 0) return NULL;
    PyObject* m = PyModule_Create(&pn_module);
    if (m == NULL) return NULL;
    PyObject* sizes = PyTuple_New(NUM_ATNS);
    PyObject* fields = PyTuple_New(PN_NUM_LOG);
    PyObject* kw = PyTuple_New(pn_num_kwargs);
    for (int i = 0; sizes && i < NUM_ATNS; i++) PyTuple_SET_ITEM(sizes, i, PyLong_FromLong(pn_act_sizes[i]));
    for (int i = 0; fields && i < PN_NUM_LOG; i++) PyTuple_SET_ITEM(fields, i, PyUnicode_FromString(pn_log_fields[i]));
    for (int i = 0; kw && i < pn_num_kwargs; i++) PyTuple_SET_ITEM(kw, i, PyUnicode_FromString(pn_kwarg_names[i]));
    if (PyModule_AddIntConstant(m, "OBS_SIZE", OBS_SIZE) < 0 || PyModule_AddStringConstant(m, "OBS_DTYPE", PN_OBS_DTYPE) < 0 ||
        pn_add(m, "OBS_LOW", PyFloat_FromDouble((double)(OBS_LOW))) < 0 ||
        pn_add(m, "OBS_HIGH", PyFloat_FromDouble((double)(OBS_HIGH))) < 0 || pn_add(m, "ACT_SIZES", sizes) < 0 ||
        pn_add(m, "LOG_FIELDS", fields) < 0 || pn_add(m, "KWARGS", kw) < 0 ||
        pn_add(m, "RENDER_SHAPE", Py_BuildValue("(iii)", RENDER_H, RENDER_W, 3)) < 0 ||
        PyModule_AddStringConstant(m, "OBS_FIELDS", PN_OBS_FIELDS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

#endif /* PN_NO_PYTHON */
