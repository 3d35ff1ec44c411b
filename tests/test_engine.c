/* test_engine.c - device choice, the program cache on disk, the reference
 * engine */
#include "check.h"
#include "relayout_cl.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

static char dir[64];

/* PoCL's LLVM puts an alternate signal stack of its own on the thread that
 * first starts it (concurrent_engines' threads); AddressSanitizer's, at
 * that thread's exit, then fails to unmap. Builds without the sanitizer
 * never call this. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "use_sigaltstack=0"; }

/* A CPU engine (or `device`) with the test's cache directory, and `o`'s
 * other fields where o is not NULL; its plans build their own kernels when
 * made, unless o asks for other kernels. */
static relayout_engine *engine(const char *device,
                               const relayout_engine_options *o) {
  relayout_engine_options all = {.size = sizeof all};
  if (o) all = *o;
  all.device = device;
  all.cache_dir = dir;
  if (all.kernels == RELAYOUT_KERNELS_AUTO)
    all.kernels = RELAYOUT_KERNELS_SPECIALISED;
  relayout_engine *e = NULL;
  CHECK_OK(relayout_engine_create(&e, &all, &e_));
  return e;
}

static relayout_layout *parse(const char *text) {
  relayout_layout *l = NULL;
  CHECK_OK(relayout_layout_parse(&l, text, &e_));
  return l;
}

/* NCHW `ext` -> `to`: its descriptors, an input, the reference's output
 * and a poisoned buffer for a plan's. */
typedef struct {
  relayout_desc s, d;
  int64_t sb, db;
  unsigned char *in;
  guarded want, got;
} fixture;

static fixture fixture_new(const char *to, relayout_dtype t,
                           const int64_t *ext) {
  fixture f;
  relayout_layout *a = parse("NCHW"), *b = parse(to);
  CHECK_OK(relayout_bind_extents(&f.s, &f.d, a, b, t, 4, ext, &e_));
  relayout_layout_free(a);
  relayout_layout_free(b);
  relayout_desc_size_bytes(&f.sb, &f.s, NULL);
  relayout_desc_size_bytes(&f.db, &f.d, NULL);
  f.in = malloc((size_t)f.sb);
  for (int64_t i = 0; i < f.sb; i++) f.in[i] = (unsigned char)(i * 7 + 1);
  f.want = guarded_alloc((size_t)f.db, 0xA5);
  f.got = guarded_alloc((size_t)f.db, 0x5A);
  CHECK_OK(relayout_convert_ref(&f.d, f.want.data, f.want.size, &f.s, f.in,
                                (size_t)f.sb, &e_));
  return f;
}

/* Runs p into the poisoned buffer; whether the output equals the
 * reference's. */
static int fixture_run(fixture *f, relayout_plan *p) {
  memset(f->got.data, 0x5A, f->got.size);
  CHECK_OK(relayout_plan_run(p, f->got.data, f->got.size, f->in, (size_t)f->sb,
                             &e_));
  return !memcmp(f->got.data, f->want.data, (size_t)f->db);
}

static void fixture_free(fixture *f) {
  free(f->in);
  guarded_free(&f->want);
  guarded_free(&f->got);
}

/* NCHW `ext` -> `to` on an engine; the result must equal the reference.
 * Returns the plan's family; the plan's note goes to note (may be NULL). */
static const char *convert_to(relayout_engine *e, const char *to,
                              relayout_dtype t, const int64_t *ext,
                              relayout_error *note) {
  static char family[16];
  fixture f = fixture_new(to, t, ext);
  relayout_plan *p;
  CHECK_OK(relayout_plan_create(&p, e, &f.d, &f.s, &e_));
  CHECK(fixture_run(&f, p), "NCHW -> %s: output equals the reference", to);
  if (note)
    snprintf(note->message, sizeof note->message, "%s", relayout_plan_note(p));
  snprintf(family, sizeof family, "%s", relayout_plan_family(p));
  relayout_plan_free(p);
  fixture_free(&f);
  return family;
}

static const char *convert_on(relayout_engine *e) {
  return convert_to(e, "NC1HWC0", RELAYOUT_F16, (const int64_t[]){2, 17, 5, 3},
                    NULL);
}

static void builds(relayout_engine *e, int src, int disk, const char *when) {
  int s, d;
  relayout_engine_builds(e, &s, &d);
  CHECK(s == src && d == disk, "%s: built %d (want %d), loaded %d (want %d)",
        when, s, src, d, disk);
}

/* The one cache entry's path. */
static int entry(char *path, size_t size) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "ls %s/*.bin 2>/dev/null", dir);
  FILE *f = popen(cmd, "r");
  int ok = f && fgets(path, (int)size, f) != NULL;
  if (f) pclose(f);
  if (ok) path[strcspn(path, "\n")] = 0;
  return ok;
}

/* The entry at `path` with its binary replaced by PoCL's binary less
 * program.bc (its path and contents gone, their lengths 0), under a valid
 * checksum: the binary PoCL returned once from a raced build. Entries are
 * the magic (8 bytes), key, length, FNV-1a checksum of the binary (8 bytes
 * each), the binary. Returns 0 where the binary is not PoCL's. */
static int strip_program_bc(const char *path) {
  FILE *f = fopen(path, "rb");
  struct stat st;
  if (!f || stat(path, &st)) return 0;
  size_t size = (size_t)st.st_size;
  unsigned char *e = malloc(size);
  int read = fread(e, size, 1, f) == 1;
  fclose(f);
  unsigned char *bin = e + 32, *bc = NULL;
  size_t len = size - 32;
  for (size_t i = 4; read && i + 15 <= len && !bc; i++)
    if (!memcmp(bin + i, "/program.bc", 11)) bc = bin + i;
  if (!bc || memcmp(bin, "poclbin", 8)) {
    free(e);
    return 0;
  }
  uint32_t bc_len;
  memcpy(&bc_len, bc + 11, 4);
  unsigned char *rest = bc + 15 + bc_len;
  if (rest > bin + len) {
    free(e);
    return 0;
  }
  memset(bc - 4, 0, 8);
  memmove(bc + 4, rest, (size_t)(bin + len - rest));
  uint64_t n = (uint64_t)(bc + 4 + (bin + len - rest) - bin),
           h = 0xcbf29ce484222325ULL;
  for (uint64_t i = 0; i < n; i++) h = (h ^ bin[i]) * 0x100000001b3ULL;
  memcpy(e + 16, &n, 8);
  memcpy(e + 24, &h, 8);
  f = fopen(path, "wb");
  int wrote = f && fwrite(e, 32 + n, 1, f) == 1;
  if (f) fclose(f);
  free(e);
  CHECK(wrote, "%s rewritten without program.bc", path);
  return wrote;
}

/* A new CPU engine converts once: built `src` programs from source and
 * loaded `disk` from the disk cache. */
static void fresh(int src, int disk, const char *when) {
  relayout_engine *e = engine("cpu", NULL);
  convert_on(e);
  builds(e, src, disk, when);
  relayout_engine_free(e);
}

static void disk_cache(void) {
  relayout_engine *e = engine("cpu", NULL);
  convert_on(e);
  builds(e, 1, 0, "cold");
  convert_on(e);
  builds(e, 1, 0, "same engine: from memory");
  relayout_engine_free(e);
  char path[256];
  CHECK(entry(path, sizeof path), "a cache entry was written in %s", dir);

  fresh(0, 1, "new engine: from disk");

  /* A flipped byte inside the binary: detected, rebuilt, rewritten. */
  FILE *f = fopen(path, "r+b");
  struct stat st;
  stat(path, &st);
  fseek(f, st.st_size / 2, SEEK_SET);
  int c = fgetc(f);
  fseek(f, st.st_size / 2, SEEK_SET);
  fputc(c ^ 0xFF, f);
  fclose(f);
  fresh(1, 0, "corrupt entry: rebuilt");
  fresh(0, 1, "rewritten entry: from disk");

  /* A truncated entry, and one that is not an entry at all. */
  CHECK(truncate(path, 20) == 0, "truncate");
  fresh(1, 0, "truncated entry: rebuilt");
  f = fopen(path, "wb");
  fputs("not a program", f);
  fclose(f);
  fresh(1, 0, "foreign file: rebuilt");

  /* PoCL aborts on loading a binary without program.bc: never loaded. */
  if (!strip_program_bc(path)) {
    printf("note: the CPU device's binaries are not PoCL's\n");
    return;
  }
  fresh(1, 0, "PoCL binary without program.bc: rebuilt");
  fresh(0, 1, "its rewritten entry: from disk");
}

/* The entries in the cache directory: how many and their bytes, the path
 * of the one modified last in `last` (may be NULL); with `clear`, each
 * removed. */
static int entries(long *bytes, char *last, int clear) {
  DIR *d = opendir(dir);
  int n = 0;
  *bytes = 0;
  char path[128];
  struct stat st;
  struct timespec latest = {0, 0};
  for (struct dirent *f; d && (f = readdir(d));)
    if (strstr(f->d_name, ".bin") &&
        snprintf(path, sizeof path, "%s/%.40s", dir, f->d_name) > 0 &&
        !stat(path, &st)) {
      n++;
      *bytes += (long)st.st_size;
      if (last && (st.st_mtim.tv_sec > latest.tv_sec ||
                   (st.st_mtim.tv_sec == latest.tv_sec &&
                    st.st_mtim.tv_nsec > latest.tv_nsec))) {
        latest = st.st_mtim;
        strcpy(last, path);
      }
      if (clear) unlink(path);
    }
  if (d) closedir(d);
  return n;
}

/* NCHW -> NHWC f32 on a new engine, 2x17x5xW: each W its own program,
 * all of about one size. `last` receives the path of the entry modified
 * last (the one stored or loaded). */
static void nhwc(int w, const relayout_engine_options *o, char *last) {
  relayout_engine *e = engine("cpu", o);
  long bytes;
  convert_to(e, "NHWC", RELAYOUT_F32, (const int64_t[]){2, 17, 5, w}, NULL);
  relayout_engine_free(e);
  entries(&bytes, last, 0);
}

/* Bounded by cache_bytes: a store past the bound removes the least
 * recently used entries (loading one uses it) until they fit in three
 * quarters of the bound, never the one it stored, and leaves other files
 * alone. Entry sizes vary with PoCL's own cache, so the bound is set from
 * the five entries stored first and the removals follow from their sizes. */
static void bounded(void) {
  char other[128], temp[2][128], e[6][128];
  long size[6], all;
  snprintf(other, sizeof other, "%s/notes.txt", dir);
  snprintf(temp[0], sizeof temp[0], "%s/.tmp-abcdef", dir);
  snprintf(temp[1], sizeof temp[1], "%s/.tmp-ghijkl", dir);
  for (int i = 0; i < 3; i++) {
    FILE *f = fopen(i < 2 ? temp[i] : other, "w");
    fputs("not an entry", f);
    fclose(f);
  }
  /* one temp file left by a process that died two days ago */
  struct timespec then[2] = {{time(NULL) - 2 * 86400, 0},
                             {time(NULL) - 2 * 86400, 0}};
  utimensat(AT_FDCWD, temp[0], then, 0);
  entries(&all, NULL, 1);
  for (int i = 0; i < 5; i++) { /* the default bound, 256 MiB */
    long before = all;
    nhwc(3 + i, NULL, e[i]);
    entries(&all, NULL, 0);
    size[i] = all - before;
  }
  CHECK(entries(&all, NULL, 0) == 5, "5 entries stored, none pruned");
  relayout_engine_options o = {.size = sizeof o, .cache_bytes = all + 1};
  long fit = (all + 1) / 4 * 3;
  nhwc(3, &o, e[0]); /* loaded: used after the other four */
  nhwc(8, &o, e[5]);
  struct stat st;
  CHECK(stat(e[5], &st) == 0, "the entry stored last stays");
  all += (long)st.st_size;
  int gone[6] = {0};
  for (int j = 0; j < 5 && all > fit; j++) { /* least recently used first */
    int i = j < 4 ? j + 1 : 0;
    gone[i] = 1;
    all -= size[i];
  }
  CHECK(gone[1] && !gone[0], "the bound prunes the oldest, not the one used");
  for (int i = 0; i < 6; i++)
    CHECK((access(e[i], F_OK) != 0) == gone[i], "entry %d %s", i,
          gone[i] ? "removed" : "kept");
  CHECK(access(other, F_OK) == 0 && access(temp[1], F_OK) == 0,
        "files other than entries stay, and so do new temp files");
  CHECK(access(temp[0], F_OK) != 0, "a temp file a day old goes");
}

static void choosing(void) {
  relayout_engine *e = engine("ref", NULL);
  CHECK(!strcmp(relayout_engine_device(e), "reference"),
        "ref is the reference");
  CHECK(!strcmp(convert_on(e), "reference"), "a reference engine's plans");
  relayout_engine_free(e);
  e = engine("0", NULL);
  CHECK(strcmp(relayout_engine_device(e), "reference"), "index 0 is a device");
  relayout_engine_free(e);
  e = engine(NULL, NULL);
  CHECK(strcmp(relayout_engine_device(e), "reference") &&
            !*relayout_engine_note(e),
        "auto (no device named) finds the device without a note");
  relayout_engine_free(e);
  relayout_engine_options o = {.size = sizeof o, .device = "99"};
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "device 99 does not exist",
              relayout_engine_create(&e, &o, &e_));
  CHECK(e == NULL, "no engine on failure");
  o.device = "quantum";
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "no OpenCL device matches 'quantum'",
              relayout_engine_create(&e, &o, &e_));
  /* options of a caller built against an older header: the fields past
   * its size are left at their defaults */
  o = (relayout_engine_options){
      .size = sizeof o, .device = "ref", .families = 7};
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "families 7",
              relayout_engine_create(&e, &o, &e_));
  o.size = offsetof(relayout_engine_options, families);
  CHECK_OK(relayout_engine_create(&e, &o, &e_));
  relayout_engine_free(e);
  o = (relayout_engine_options){
      .size = sizeof o, .device = "ref", .staging_bytes = -1};
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "staging_bytes -1",
              relayout_engine_create(&e, &o, &e_));
  int count, pick;
  relayout_device_info info[8];
  CHECK_OK(relayout_device_list(info, 8, &count, &pick, &e_));
  CHECK(count >= 1 && pick == 0 && info[0].max_alloc > 0 && *info[0].name,
        "the device list names the device auto picks");
  relayout_engine_free(NULL);
}

/* Buffers beyond the largest allocation (lowered to 8 KiB): split along N
 * where N is outermost in both layouts, else the reference with a note. */
static void slabs(void) {
  relayout_error note;
  relayout_engine_options o = {.size = sizeof o, .max_alloc = 8192};
  relayout_engine *e = engine("cpu", &o);
  const int64_t ext[4] = {9, 17, 9, 7}; /* 38556 bytes of f32 */
  static const char *const split[] = {"NHWC", "NC1HWC0", "nChw8c", "NCHW4"};
  for (int i = 0; i < 4; i++) {
    convert_to(e, split[i], RELAYOUT_F32, ext, &note);
    CHECK(!*note.message, "NCHW -> %s splits along N: %s", split[i],
          note.message);
  }
  convert_to(e, "NC1HWC0", RELAYOUT_I4, (const int64_t[]){9, 17, 9, 8}, &note);
  CHECK(!*note.message, "4-bit splits along N: %s", note.message);
  /* A slab of 17*9*7 nibbles is no whole number of bytes. */
  convert_to(e, "NC1HWC0", RELAYOUT_I4, ext, &note);
  CHECK(strstr(note.message, "no dim to split it along") != NULL,
        "odd 4-bit slabs do not split: '%s'", note.message);
  convert_to(e, "FRACTAL_Z", RELAYOUT_F32, ext, &note);
  CHECK(strstr(note.message, "no dim to split it along") != NULL,
        "FRACTAL_Z cannot split: the reference works, and says so: '%s'",
        note.message);
  relayout_engine_free(e);
  e = engine("cpu", NULL); /* the device's own limit: no slabs, no note */
  convert_to(e, "FRACTAL_Z", RELAYOUT_F32, ext, &note);
  CHECK(!*note.message, "FRACTAL_Z within the device's limit: '%s'",
        note.message);
  relayout_engine_free(e);
}

/* Whether NCHW -> NHWC f32 nx64x23x23 (135 KB each n) streams its stores
 * on a new CPU engine whose stream_bytes is `bytes`. */
static int streams_at(int64_t bytes, int64_t n) {
  relayout_plan *p;
  relayout_layout *a = parse("NCHW"), *b = parse("NHWC");
  relayout_desc s, d;
  relayout_engine_options o = {.size = sizeof o, .stream_bytes = bytes};
  relayout_engine *e = engine("cpu", &o);
  CHECK_OK(relayout_bind_extents(&s, &d, a, b, RELAYOUT_F32, 4,
                                 (const int64_t[]){n, 64, 23, 23}, &e_));
  CHECK_OK(relayout_plan_create(&p, e, &d, &s, &e_));
  int streamed = strstr(relayout_plan_source(p), "#define RL_STREAM ") != NULL;
  relayout_plan_free(p);
  relayout_engine_free(e);
  relayout_layout_free(a);
  relayout_layout_free(b);
  return streamed;
}

/* The CPU device's global memory cache in bytes (0: unknown). */
static int64_t cpu_cache(void) {
  relayout_engine *e = engine("cpu", NULL);
  cl_device_id dev;
  cl_ulong bytes = 0;
  if (clGetContextInfo(relayout_engine_context(e), CL_CONTEXT_DEVICES,
                       sizeof dev, &dev, NULL) ||
      clGetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof bytes,
                      &bytes, NULL))
    bytes = 0;
  relayout_engine_free(e);
  return (int64_t)bytes;
}

/* stream_bytes: 1 streams everything, 1e9 not this, -1 nothing; the
 * default (0) streams destinations of 0.3 of the cache and more: 0.4
 * streams, 0.2 does not. */
static void stream_bytes(void) {
  CHECK(streams_at(1, 2), "stream_bytes 1 streams a 270 KB tensor");
  CHECK(!streams_at(1000000000, 2), "stream_bytes 1e9 does not");
  int64_t cache = cpu_cache(), each = 64 * 23 * 23 * 4;
  CHECK(cache > 10 * each, "the CPU device reports a cache (%lld bytes)",
        (long long)cache);
  if (cache <= 10 * each) return;
  CHECK(streams_at(0, cache * 4 / 10 / each + 1),
        "a destination of 0.4 of the cache streams by default");
  CHECK(!streams_at(0, cache * 2 / 10 / each),
        "a destination of 0.2 of the cache does not");
  CHECK(!streams_at(-1, cache * 4 / 10 / each + 1),
        "stream_bytes -1 streams nothing");
}

/* NCHW -> NHWC f32 2x17x5xW planned on e, its runs equal to the
 * reference's (each of `runs`, with a wait for its own kernel before the
 * last where `wait`); returns the kernel the last run took. */
static const char *runs_on(relayout_engine *e, int64_t w, int wait) {
  static char kernel[16];
  fixture f = fixture_new("NHWC", RELAYOUT_F32, (const int64_t[]){2, 17, 5, w});
  relayout_plan *p;
  CHECK_OK(relayout_plan_create(&p, e, &f.d, &f.s, &e_));
  snprintf(kernel, sizeof kernel, "%s", relayout_plan_kernel(p));
  for (int run = 0; run < 1 + wait; run++) {
    if (run) CHECK_OK(relayout_plan_wait(p, &e_));
    CHECK(fixture_run(&f, p) && !*relayout_plan_note(p),
          "W=%lld, %s kernel: output equals the reference", (long long)w,
          relayout_plan_kernel(p));
  }
  if (wait) snprintf(kernel, sizeof kernel, "%s", relayout_plan_kernel(p));
  relayout_plan_free(p);
  fixture_free(&f);
  return kernel;
}

/* A plan of NCHW -> NHWC f32 2x17x5xW made on e and freed unrun, `idle`
 * milliseconds later. */
static void unrun(relayout_engine *e, int64_t w, int idle) {
  fixture f = fixture_new("NHWC", RELAYOUT_F32, (const int64_t[]){2, 17, 5, w});
  relayout_plan *p;
  CHECK_OK(relayout_plan_create(&p, e, &f.d, &f.s, &e_));
  usleep((useconds_t)idle * 1000);
  relayout_plan_free(p);
  fixture_free(&f);
}

/* Whether that plan, run once on the generic kernel and then again every
 * 0.1 s, unasked, runs its own kernel within a minute. */
static int switches(relayout_engine *e, int64_t w) {
  fixture f = fixture_new("NHWC", RELAYOUT_F32, (const int64_t[]){2, 17, 5, w});
  relayout_plan *p;
  CHECK_OK(relayout_plan_create(&p, e, &f.d, &f.s, &e_));
  int own = 0;
  for (int i = 0; i < 600 && !own; i++) {
    if (i) usleep(100000);
    CHECK(fixture_run(&f, p), "W=%lld: output equals the reference",
          (long long)w);
    own = !strcmp(relayout_plan_kernel(p), "specialised");
  }
  relayout_plan_free(p);
  fixture_free(&f);
  return own;
}

/* A build waits for the engine's first launch, whose compile on PoCL would
 * otherwise wait for the build: one whose plan never ran is dropped with
 * it; one whose plan ran is built, and later runs switch to it. A program
 * a plan built itself is stored in the disk cache by a builder, off the
 * plans' path: once a kernel has run, or when the engine is freed. */
static void held_builds(void) {
  relayout_engine_options o = {
      .size = sizeof o, .device = "cpu", .cache_dir = dir};
  relayout_engine *e = NULL;
  CHECK_OK(relayout_engine_create(&e, &o, &e_));
  unrun(e, 70, 500);
  relayout_engine_free(e);
  CHECK_OK(relayout_engine_create(&e, &o, &e_));
  CHECK(!strcmp(runs_on(e, 70, 0), "generic"),
        "a plan freed unrun: its build never started");
  CHECK(switches(e, 71), "a plan run once: its own kernel is built and runs");
  relayout_engine_free(e);
  e = engine("cpu", NULL);
  unrun(e, 72, 0);
  relayout_engine_free(e);
  e = engine("cpu", NULL);
  runs_on(e, 72, 0);
  builds(e, 0, 1, "a program built for a plan that never ran");
  long bytes;
  int before = entries(&bytes, NULL, 0), stored = 0;
  runs_on(e, 74, 0);
  for (int i = 0; i < 300 && !stored; i++) {
    usleep(100000);
    stored = entries(&bytes, NULL, 0) > before;
  }
  CHECK(stored, "a program built by its plan, which ran, is stored in the "
                "disk cache while the engine lives");
  relayout_engine_free(e);
}

/* The kernels option: AUTO starts a conversion new to the caches on the
 * generic kernel, its own building in the background, and switches once
 * it is built; the build lands in the disk cache for the next engine (with
 * finish_builds, one still queued when the engine is freed too). A plan, or
 * an engine, freed while builds run leaves nothing behind. CACHED runs what
 * the caches hold, else the generic kernel, and builds and stores nothing. */
static void kernels(void) {
  relayout_engine_options o = {
      .size = sizeof o, .device = "cpu", .cache_dir = dir};
  relayout_engine *e = NULL;
  CHECK_OK(relayout_engine_create(&e, &o, &e_));
  CHECK(!strcmp(runs_on(e, 31, 0), "generic"),
        "a new conversion starts on the generic kernel");
  CHECK(!strcmp(runs_on(e, 37, 1), "specialised"),
        "after a wait, its own kernel runs");
  relayout_engine_free(e);
  CHECK_OK(relayout_engine_create(&e, &o, &e_));
  CHECK(!strcmp(runs_on(e, 37, 0), "specialised"),
        "a new engine finds the build in the disk cache");
  for (int w = 40; w < 44; w++) runs_on(e, w, 0); /* left building */
  relayout_engine_free(e);
  o.finish_builds = 1;
  CHECK_OK(relayout_engine_create(&e, &o, &e_));
  for (int w = 60; w < 64; w++) runs_on(e, w, 0); /* left queued */
  relayout_engine_free(e);
  CHECK_OK(relayout_engine_create(&e, &o, &e_));
  CHECK(!strcmp(runs_on(e, 63, 0), "specialised"),
        "finish_builds: a build still queued when its plan and engine were "
        "freed landed in the disk cache: the next run starts on its own "
        "kernel");
  relayout_engine_free(e);
  o.finish_builds = 0;
  o.build_threads = -1;
  CHECK_OK(relayout_engine_create(&e, &o, &e_));
  CHECK(!strcmp(runs_on(e, 47, 0), "specialised"),
        "no build threads: the plan builds its own kernel when made");
  relayout_engine_free(e);
  o.build_threads = 0;
  o.kernels = RELAYOUT_KERNELS_GENERIC;
  CHECK_OK(relayout_engine_create(&e, &o, &e_));
  CHECK(!strcmp(runs_on(e, 53, 1), "generic"),
        "GENERIC: the generic kernel only, a wait changes nothing");
  relayout_engine_free(e);
  o.kernels = RELAYOUT_KERNELS_CACHED;
  CHECK_OK(relayout_engine_create(&e, &o, &e_));
  CHECK(!strcmp(runs_on(e, 37, 0), "specialised"),
        "CACHED: a kernel in the disk cache runs");
  relayout_engine_free(e);
  long bytes;
  entries(&bytes, NULL, 1);
  CHECK_OK(relayout_engine_create(&e, &o, &e_));
  CHECK(!strcmp(runs_on(e, 37, 1), "generic") &&
            !relayout_engine_pending_builds(e),
        "CACHED: a conversion new to the caches runs the generic kernel, and "
        "nothing builds, waited for or not");
  relayout_engine_free(e);
  CHECK(entries(&bytes, NULL, 0) == 0,
        "CACHED: not even the generic program is stored");
  o.kernels = (relayout_kernels)9;
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "kernels 9",
              relayout_engine_create(&e, &o, &e_));
}

static void *create_engine(void *status) {
  relayout_engine_options o = {
      .size = sizeof o, .device = "cpu", .cache_dir = dir};
  relayout_engine *e = NULL;
  relayout_error err;
  *(relayout_status *)status = relayout_engine_create(&e, &o, &err);
  relayout_engine_free(e);
  return NULL;
}

/* A run long enough for another thread to find its engine busy. */
typedef struct {
  relayout_plan *plan;
  fixture *f;
  relayout_status status;
  atomic_int started, done;
} long_run;

static void *run_long(void *arg) {
  long_run *r = arg;
  atomic_store(&r->started, 1);
  relayout_error err;
  do /* the other thread's plan_create may hold the engine a moment */
    r->status = relayout_plan_run(r->plan, r->f->got.data, r->f->got.size,
                                  r->f->in, (size_t)r->f->sb, &err);
  while (r->status == RELAYOUT_ERR_BUSY);
  atomic_store(&r->done, 1);
  return NULL;
}

/* Engines made by several threads at once, the process's first (PoCL
 * crashed in its first device queries without the library's lock). */
static void concurrent_engines(void) {
  pthread_t t[4];
  relayout_status made[4];
  for (int i = 0; i < 4; i++)
    pthread_create(&t[i], NULL, create_engine, &made[i]);
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    CHECK(made[i] == RELAYOUT_OK, "engine %d made beside three others: %s", i,
          relayout_status_name(made[i]));
  }
}

/* One engine used by two threads at once: the second call is refused, not
 * left to race. */
static void busy(void) {
  pthread_t t;
  relayout_engine *e = engine("ref", NULL);
  fixture f =
      fixture_new("NC1HWC0", RELAYOUT_F32, (const int64_t[]){8, 61, 128, 128});
  long_run r = {.f = &f};
  CHECK_OK(relayout_plan_create(&r.plan, e, &f.d, &f.s, &e_));
  pthread_create(&t, NULL, run_long, &r);
  while (!atomic_load(&r.started)) sched_yield();
  relayout_plan *other = NULL;
  relayout_status s = RELAYOUT_OK;
  relayout_error err;
  while (!atomic_load(&r.done) && s != RELAYOUT_ERR_BUSY) {
    s = relayout_plan_create(&other, e, &f.d, &f.s, &err);
    relayout_plan_free(other);
  }
  pthread_join(t, NULL);
  CHECK(s == RELAYOUT_ERR_BUSY && strstr(err.message, "another thread"),
        "a plan made while another thread runs one on the engine: %s",
        relayout_status_name(s));
  CHECK(r.status == RELAYOUT_OK && !memcmp(f.got.data, f.want.data, f.got.size),
        "the running thread's conversion is whole");
  CHECK_OK(relayout_plan_create(&other, e, &f.d, &f.s, &e_));
  relayout_plan_free(other);
  relayout_plan_free(r.plan);
  fixture_free(&f);
  relayout_engine_free(e);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/relayout-cache-XXXXXX");
  if (!mkdtemp(dir)) return 2;
  concurrent_engines();
  choosing();
  disk_cache();
  bounded();
  slabs();
  stream_bytes();
  kernels();
  held_builds();
  busy();
  char cmd[96];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) return 2;
  return check_summary();
}
