/* check.h - the test harness: checks, guarded buffers, a seeded generator */
#ifndef RELAYOUT_CHECK_H
#define RELAYOUT_CHECK_H

#include "relayout.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int checks_passed, checks_failed;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (cond) {                                                                \
      checks_passed++;                                                         \
    } else {                                                                   \
      checks_failed++;                                                         \
      fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond);        \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
    }                                                                          \
  } while (0)

/* A call that must succeed; prints the library's message if it does not. */
#define CHECK_OK(call)                                                         \
  do {                                                                         \
    relayout_error e_;                                                         \
    e_.message[0] = 0;                                                         \
    relayout_status s_ = (call);                                               \
    CHECK(s_ == RELAYOUT_OK, "%s: %s", relayout_status_name(s_), e_.message);  \
  } while (0)

/* A call that must fail with status `want` and a message containing `part`.
 * The call names its error argument `e_`. */
#define CHECK_FAILS(want, part, call)                                          \
  do {                                                                         \
    relayout_error e_;                                                         \
    e_.message[0] = 0;                                                         \
    relayout_status s_ = (call);                                               \
    CHECK(s_ == (want) && strstr(e_.message, part),                            \
          "got %s '%s', wanted %s with '%s'", relayout_status_name(s_),        \
          e_.message, relayout_status_name(want), part);                       \
  } while (0)

static inline int check_summary(void) {
  printf("%d passed, %d failed\n", checks_passed, checks_failed);
  return checks_failed ? 1 : 0;
}

/* A buffer whose last byte sits just before a no-access page, so a write
 * past the end faults at once, or with `front` whose first byte sits just
 * after one, so a read before the start does. Filled with `poison`. */
typedef struct guarded {
  unsigned char *data;
  size_t size;
  void *map;
  size_t map_size;
} guarded;

static inline guarded guarded_place(size_t size, unsigned char poison,
                                    int front) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t body = (size + page - 1) / page * page;
  guarded g = {0};
  g.map_size = body + page;
  g.map = mmap(NULL, g.map_size, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (g.map == MAP_FAILED) {
    perror("mmap");
    exit(2);
  }
  unsigned char *map = g.map;
  mprotect(front ? map : map + body, page, PROT_NONE);
  g.data = front ? map + page : map + body - size;
  g.size = size;
  memset(g.data, poison, size);
  return g;
}

static inline guarded guarded_alloc(size_t size, unsigned char poison) {
  return guarded_place(size, poison, 0);
}

static inline void guarded_free(guarded *g) {
  if (g->map) munmap(g->map, g->map_size);
  g->map = NULL;
}

/* splitmix64: a fixed seed makes every run test the same shapes. */
static uint64_t rng_state = 0x5eed1234abcdULL;
static inline uint64_t rng_next(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
/* Uniform in [lo, hi]. */
static inline int64_t rng_range(int64_t lo, int64_t hi) {
  return lo + (int64_t)(rng_next() % (uint64_t)(hi - lo + 1));
}

#endif /* RELAYOUT_CHECK_H */
