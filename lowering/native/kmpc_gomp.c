/* The __kmpc_* entry points MLIR's OpenMP lowering calls, run on the GNU OpenMP runtime (libgomp).
 *
 * PyTorch's CPU kernels run on libgomp's thread pool.  JIT-compiled graphfuse code called between them on the
 * Intel runtime (libiomp5) would bring a second pool, and each pool's threads spin for a while after their
 * parallel region ends (libiomp5's for 200 ms): on a machine with as many cores as threads the two pools take
 * turns and both slow down (a DeBERTa forward with twelve graphs: 28 ms against 14 ms on one pool).  graphfuse
 * loads this library instead of libiomp5 into its JIT when libgomp is already in the process (PyTorch imported);
 * lowering/parallel.py decides.  Only what the lowering emits is implemented: a fork of the outlined region on
 * the threads pushed before it, statically scheduled loops (kmp_sch_static: one contiguous, balanced block per
 * thread, as libiomp5 splits them), and barriers.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*microtask_t)(int32_t *, int32_t *, ...);

static void (*gomp_parallel)(void (*)(void *), void *, unsigned, unsigned);
static void (*gomp_barrier)(void);
static int (*thread_num)(void);
static int (*num_threads)(void);
/* The thread count __kmpc_push_num_threads asks of the next fork on this thread. */
static __thread int32_t pushed_threads;

static void fail(const char *what) {
  fprintf(stderr, "graphfuse: OpenMP on libgomp: %s\n", what);
  abort();
}

/* Bind to the libgomp already loaded (PyTorch's), by its soname. */
__attribute__((constructor)) static void bind_gomp(void) {
  void *gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (gomp == NULL) return; /* graphfuse_kmpc_gomp_ready() then says so */
  gomp_parallel = (void (*)(void (*)(void *), void *, unsigned, unsigned))dlsym(gomp, "GOMP_parallel");
  gomp_barrier = (void (*)(void))dlsym(gomp, "GOMP_barrier");
  thread_num = (int (*)(void))dlsym(gomp, "omp_get_thread_num");
  num_threads = (int (*)(void))dlsym(gomp, "omp_get_num_threads");
}

/* 1 when bound to a libgomp with every function used here (graphfuse checks before it loads JIT code). */
int graphfuse_kmpc_gomp_ready(void) {
  return gomp_parallel != NULL && gomp_barrier != NULL && thread_num != NULL && num_threads != NULL;
}

int32_t __kmpc_global_thread_num(void *location) {
  (void)location;
  return thread_num();
}

void __kmpc_push_num_threads(void *location, int32_t global_thread, int32_t threads) {
  (void)location;
  (void)global_thread;
  pushed_threads = threads;
}

enum { MAX_SHARED = 8 };

struct fork {
  microtask_t task;
  int32_t count;
  void *shared[MAX_SHARED];
};

static void run_microtask(void *data) {
  struct fork *fork = data;
  int32_t global_thread = thread_num(), bound_thread = global_thread;
  void **s = fork->shared;
  switch (fork->count) {
    case 0: fork->task(&global_thread, &bound_thread); break;
    case 1: fork->task(&global_thread, &bound_thread, s[0]); break;
    case 2: fork->task(&global_thread, &bound_thread, s[0], s[1]); break;
    case 3: fork->task(&global_thread, &bound_thread, s[0], s[1], s[2]); break;
    case 4: fork->task(&global_thread, &bound_thread, s[0], s[1], s[2], s[3]); break;
    case 5: fork->task(&global_thread, &bound_thread, s[0], s[1], s[2], s[3], s[4]); break;
    case 6: fork->task(&global_thread, &bound_thread, s[0], s[1], s[2], s[3], s[4], s[5]); break;
    case 7: fork->task(&global_thread, &bound_thread, s[0], s[1], s[2], s[3], s[4], s[5], s[6]); break;
    default: fork->task(&global_thread, &bound_thread, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]); break;
  }
}

void __kmpc_fork_call(void *location, int32_t count, microtask_t task, ...) {
  (void)location;
  if (count < 0 || count > MAX_SHARED) fail("a parallel region shares more than 8 values");
  struct fork fork = {task, count, {0}};
  va_list shared;
  va_start(shared, task);
  for (int32_t i = 0; i < count; ++i) fork.shared[i] = va_arg(shared, void *);
  va_end(shared);
  unsigned threads = pushed_threads > 0 ? (unsigned)pushed_threads : 0; /* 0: libgomp's default */
  pushed_threads = 0;
  gomp_parallel(run_microtask, &fork, threads, 0);
}

/* kmp_sch_static: iterations lower..upper (inclusive, step 1) in one balanced contiguous block per thread; a
 * thread without iterations gets lower = upper + 1. */
#define STATIC_INIT(SUFFIX, T, ST)                                                                        \
  void __kmpc_for_static_init_##SUFFIX(void *location, int32_t global_thread, int32_t schedule,            \
                                       int32_t *last, T *lower, T *upper, ST *stride, ST increment,        \
                                       ST chunk) {                                                          \
    (void)location;                                                                                         \
    (void)global_thread;                                                                                    \
    (void)chunk;                                                                                            \
    if (schedule != 34 || increment != 1) fail("only static schedules of step 1 are supported");           \
    uint64_t threads = (uint64_t)num_threads(), thread = (uint64_t)thread_num();                           \
    uint64_t trips = (uint64_t)(*upper - *lower) + 1, each = trips / threads, extra = trips % threads;       \
    uint64_t count = each + (thread < extra ? 1 : 0);                                                       \
    T first = (T)(*lower + (T)(thread * each + (thread < extra ? thread : extra)));                         \
    *stride = (ST)trips;                                                                                    \
    if (count == 0) {                                                                                       \
      *last = 0;                                                                                            \
      *lower = (T)(*upper + 1);                                                                             \
      return;                                                                                               \
    }                                                                                                       \
    T end = (T)(first + (T)(count - 1));                                                                    \
    *last = end == *upper;                                                                                  \
    *lower = first;                                                                                         \
    *upper = end;                                                                                           \
  }

STATIC_INIT(4, int32_t, int32_t)
STATIC_INIT(4u, uint32_t, int32_t)
STATIC_INIT(8, int64_t, int64_t)
STATIC_INIT(8u, uint64_t, int64_t)

void __kmpc_for_static_fini(void *location, int32_t global_thread) {
  (void)location;
  (void)global_thread;
}

void __kmpc_barrier(void *location, int32_t global_thread) {
  (void)location;
  (void)global_thread;
  gomp_barrier();
}
