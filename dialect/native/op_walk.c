/* The ops of a region tree whose names match: the walk graphfuse's Python passes do most (every memref.alloc,
 * every linalg op, any graph op left), by MLIR's C API instead of a Python callback per op (about 1 us each; a
 * lowered 5,000-op graph holds a million ops).
 *
 * A plain shared library, loaded with ctypes once the MLIR C API library is global (dialect/op_walk.py). It
 * declares the few C API types and functions it uses itself, so it builds without MLIR's headers: each is a
 * struct of one pointer passed by value, as mlir-c/IR.h defines them. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct { void *ptr; } MlirOperation;
typedef struct { const void *ptr; } MlirIdentifier;
typedef struct { const char *data; size_t length; } MlirStringRef;
typedef enum { MlirWalkResultAdvance, MlirWalkResultInterrupt, MlirWalkResultSkip } MlirWalkResult;
typedef enum { MlirWalkPreOrder, MlirWalkPostOrder } MlirWalkOrder;
typedef MlirWalkResult (*MlirOperationWalkCallback)(MlirOperation, void *);

extern MlirIdentifier mlirOperationGetName(MlirOperation op);
extern MlirStringRef mlirIdentifierStr(MlirIdentifier ident);
extern void mlirOperationWalk(MlirOperation op, MlirOperationWalkCallback callback, void *user_data,
                              MlirWalkOrder order);

typedef struct {
  void *root;
  const char *const *patterns; /* a name, or a prefix when it ends with '.' */
  const size_t *lengths;
  size_t count;
  void **found;
  size_t size, capacity;
  int failed; /* out of memory */
} Search;

static int matches(const Search *search, MlirStringRef name) {
  for (size_t i = 0; i < search->count; ++i) {
    size_t length = search->lengths[i];
    int prefix = length > 0 && search->patterns[i][length - 1] == '.';
    if ((prefix ? name.length >= length : name.length == length) &&
        memcmp(name.data, search->patterns[i], length) == 0)
      return 1;
  }
  return 0;
}

static MlirWalkResult visit(MlirOperation op, void *data) {
  Search *search = data;
  if (op.ptr == search->root || !matches(search, mlirIdentifierStr(mlirOperationGetName(op))))
    return MlirWalkResultAdvance;
  if (search->size == search->capacity) {
    size_t capacity = search->capacity ? 2 * search->capacity : 256;
    void **grown = realloc(search->found, capacity * sizeof(void *));
    if (!grown) {
      search->failed = 1;
      return MlirWalkResultInterrupt;
    }
    search->found = grown;
    search->capacity = capacity;
  }
  search->found[search->size++] = op.ptr;
  return MlirWalkResultAdvance;
}

/* The ops nested in `root` (not `root` itself) in pre-order whose name is one of the `count` patterns; their
 * number, the array in `*found` (free it with graphfuse_free_ops). (size_t)-1 when out of memory. */
size_t graphfuse_ops_named(void *root, const char *const *patterns, const size_t *lengths, size_t count,
                           void ***found) {
  Search search = {root, patterns, lengths, count, NULL, 0, 0, 0};
  MlirOperation op = {root};
  mlirOperationWalk(op, visit, &search, MlirWalkPreOrder);
  if (search.failed) {
    free(search.found);
    *found = NULL;
    return (size_t)-1;
  }
  *found = search.found;
  return search.size;
}

void graphfuse_free_ops(void **found) { free(found); }
