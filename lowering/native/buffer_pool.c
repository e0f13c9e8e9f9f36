/* The allocation functions of JIT-compiled graphfuse code (finalize-memref-to-llvm{use-generic-functions}).
 *
 * An intermediate whose size is known only when the graph runs (a dim of an input: tokens) is allocated and freed
 * at every call.  glibc serves large blocks with mmap and returns them at free, so every call touched fresh
 * pages: a 16 MB intermediate cost 4096 page faults per call, as long as the 20 ms product it followed.  Here a
 * freed block of at least POOLED_BYTES is kept, up to POOL_BLOCKS blocks, and given again to a request it
 * covers without wasting more than half of it: a graph called again at the same or a smaller size reuses warm
 * memory, as a static graph's workspace does.  Smaller blocks go straight to malloc and free.  Every block
 * carries a header before the address returned (its start and capacity), so free needs no lookup.  Calls from
 * the tasks of a parallel loop (buffers per task) are serialised by a mutex.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { HEADER = 64, POOL_BLOCKS = 16 };
/* Blocks smaller than this are not kept (malloc serves them from its own free lists). */
static const size_t POOLED_BYTES = 256 * 1024;
/* At most this many bytes are kept in free blocks (a block that would exceed it is returned to the system). */
static const size_t POOL_LIMIT = (size_t)2 << 30;

struct header {
  void *start;     /* what malloc returned */
  size_t capacity; /* bytes usable from the address returned */
  size_t alignment;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct header *pool[POOL_BLOCKS];
static int pooled;
static size_t pooled_bytes;

static struct header *header_of(void *pointer) { return (struct header *)((char *)pointer - sizeof(struct header)); }

static void *fresh(size_t alignment, size_t size) {
  if (alignment < HEADER) alignment = HEADER;
  void *start = malloc(size + alignment + HEADER);
  if (start == NULL) return NULL;
  uintptr_t address = ((uintptr_t)start + HEADER + alignment - 1) / alignment * alignment;
  struct header *h = header_of((void *)address);
  h->start = start;
  h->capacity = size;
  h->alignment = alignment;
  return (void *)address;
}

/* A kept block of at least size bytes (and at most twice as many) with this alignment, taken out of the pool. */
static void *reuse(size_t alignment, size_t size) {
  int best = -1;
  pthread_mutex_lock(&lock);
  for (int k = 0; k < pooled; ++k) {
    struct header *h = pool[k];
    if (h->capacity >= size && h->capacity / 2 <= size && h->alignment >= alignment &&
        (best < 0 || h->capacity < pool[best]->capacity))
      best = k;
  }
  struct header *found = NULL;
  if (best >= 0) {
    found = pool[best];
    pool[best] = pool[--pooled];
    pooled_bytes -= found->capacity;
  }
  pthread_mutex_unlock(&lock);
  return found == NULL ? NULL : (char *)found + sizeof(struct header);
}

void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size) {
  if (size >= POOLED_BYTES) {
    void *kept = reuse(alignment, size);
    if (kept != NULL) return kept;
  }
  return fresh(alignment, size);
}

void *_mlir_memref_to_llvm_alloc(uint64_t size) { return _mlir_memref_to_llvm_aligned_alloc(HEADER, size); }

void _mlir_memref_to_llvm_free(void *pointer) {
  if (pointer == NULL) return;
  struct header *h = header_of(pointer);
  if (h->capacity >= POOLED_BYTES) {
    struct header *evicted = NULL;
    pthread_mutex_lock(&lock);
    if (pooled_bytes + h->capacity <= POOL_LIMIT) {
      if (pooled == POOL_BLOCKS) { /* full: the smallest kept block makes room */
        int smallest = 0;
        for (int k = 1; k < pooled; ++k)
          if (pool[k]->capacity < pool[smallest]->capacity) smallest = k;
        evicted = pool[smallest];
        pooled_bytes -= evicted->capacity;
        pool[smallest] = pool[--pooled];
      }
      pool[pooled++] = h;
      pooled_bytes += h->capacity;
      h = NULL;
    }
    pthread_mutex_unlock(&lock);
    if (evicted != NULL) free(evicted->start);
    if (h == NULL) return;
  }
  free(h->start);
}

/* How many blocks and bytes are kept (for tests). */
void graphfuse_buffer_pool_state(int64_t *blocks, int64_t *bytes) {
  pthread_mutex_lock(&lock);
  *blocks = pooled;
  *bytes = (int64_t)pooled_bytes;
  pthread_mutex_unlock(&lock);
}

/* Return every kept block to the system. */
void graphfuse_buffer_pool_release(void) {
  pthread_mutex_lock(&lock);
  for (int k = 0; k < pooled; ++k) free(pool[k]->start);
  pooled = 0;
  pooled_bytes = 0;
  pthread_mutex_unlock(&lock);
}
