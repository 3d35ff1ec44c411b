/* test_device.c - the conversion matrix on an OpenCL device, byte for byte
 *
 * Every ordered pair of layouts within each family of logical dims, both
 * directions, on odd shapes, at every element width (4, 8, 16, 32, 64 bits):
 * the device's output, written into a device buffer poisoned beforehand and
 * with a poisoned tail, equals the scalar reference's. Pairs alternate
 * between the GPU kernel families and the CPU ones (RELAYOUT_FAMILIES), so a
 * CPU device tests both; on CPU devices, each CPU plan that would change
 * with streamed stores (used past the streaming threshold) runs that way
 * too. Each pair runs on its generic kernel as well, the GPU's and the CPU's
 * by turns, and plan_cases.h's generic cases on both and also with the
 * generic kernels' stores streamed. The device is
 * RELAYOUT_TEST_DEVICE, else "cpu" (PoCL); RELAYOUT_TEST_SHAPES shapes per
 * family (default 2), and 60 times that many pairs of random grammar layouts.
 * The shapes and layouts are the same each run unless RELAYOUT_TEST_SEED
 * gives another seed (a number; the run prints the one it used, so a
 * failure found that way can be run again).
 */
#include "plan_cases.h"
#include "random_layout.h"
#include "relayout_cl.h"

#include <stdlib.h>

static relayout_engine *engine, *gpu_engine, *cpu_engine, *streamed_engine,
    *generic_engine, *generic_streamed_engine, *generic_gpu_engine;
static int pairs_run, pairs_skipped, pairs_streamed;
static relayout_engine *force; /* the engine plans go to (NULL: GPU and CPU
                                  families by turns) */
static size_t dst_skew;        /* bytes added to the destination's offset */

static const char *const family_names[] = {"copy", "rows", "stage", "gather",
                                           "lines"};
static int families_seen[5];
static int plan_family_index(const char *name) {
  for (int i = 0; i < 5; i++)
    if (!strcmp(name, family_names[i])) return i;
  CHECK(0, "unexpected family %s", name);
  return 0;
}

/* Fills with bytes no layout's padding could mistake for zeros. */
static void fill(unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(rng_next() | 1);
}

/* Runs plan on in (sb bytes) into a device buffer poisoned beforehand:
 * the output equals want and nothing outside it changed. how names the
 * run in messages. */
static void check_run(relayout_engine *on, relayout_plan *plan, const char *how,
                      const char *src, const char *dst, relayout_dtype t,
                      const unsigned char *in, size_t sb, size_t skew,
                      const guarded *want) {
  CHECK(!*relayout_plan_note(plan), "%s -> %s%s: %s", src, dst, how,
        relayout_plan_note(plan));
  /* Buffers with 64 bytes before and after: offsets, and a poisoned tail;
   * the destination's tail as long again as the destination, so that a
   * plan that runs past a dim's extent (unpacking) and wrote there shows */
  cl_context ctx = relayout_engine_context(on);
  cl_command_queue q = relayout_engine_queue(on);
  cl_int rc;
  size_t db = want->size, pad = 64, total = 2 * db + 2 * pad;
  cl_mem bs = clCreateBuffer(ctx, CL_MEM_READ_ONLY, sb + 2 * pad, NULL, &rc);
  cl_mem bd = clCreateBuffer(ctx, CL_MEM_READ_WRITE, total, NULL, &rc);
  unsigned char poison = 0xA5;
  clEnqueueFillBuffer(q, bd, &poison, 1, 0, total, 0, NULL, NULL);
  clEnqueueWriteBuffer(q, bs, CL_FALSE, pad, sb, in, 0, NULL, NULL);
  cl_event done = NULL;
  size_t at = pad + skew; /* the destination's offset */
  CHECK_OK(relayout_plan_enqueue(plan, bd, at, bs, pad, 0, NULL, &done, &e_));
  unsigned char *got = malloc(total);
  clEnqueueReadBuffer(q, bd, CL_TRUE, 0, total, got, done ? 1 : 0,
                      done ? &done : NULL, NULL);
  if (done) clReleaseEvent(done);
  int same = !memcmp(got + at, want->data, db);
  size_t first = 0;
  while (!same && got[at + first] == want->data[first]) first++;
  CHECK(same, "%s -> %s %s (%s%s): first difference at byte %zu of %zu", src,
        dst, relayout_dtype_name(t), relayout_plan_family(plan), how, first,
        db);
  int fence = 1;
  for (size_t i = 0; i < at; i++) fence &= got[i] == 0xA5;
  for (size_t i = at + db; i < total; i++) fence &= got[i] == 0xA5;
  CHECK(fence, "%s -> %s %s%s: wrote outside its buffer", src, dst,
        relayout_dtype_name(t), how);
  clReleaseMemObject(bs);
  clReleaseMemObject(bd);
  free(got);
}

/* A pair under way: its plans made (their kernels building in the
 * background, several at once), its runs checked when it leaves the
 * window (finish_pair). */
typedef struct pending {
  const char *src, *dst; /* the callers' strings, alive till the window's
                          * flush (pair_flush before they go) */
  relayout_dtype t;
  unsigned char *in;
  size_t sb, skew;
  guarded want;
  relayout_engine *on, *generic_on;
  relayout_plan *plan, *streamed, *generic;
} pending;
#define WINDOW 8
static pending window[WINDOW];
static int nwindow;

/* The oldest pair under way, its kernels waited for, run and checked: its
 * own kernel (on both the plain and the streamed CPU engine where the
 * kernels differ) and the generic one. */
static void finish_pair(void) {
  pending *x = &window[0];
  CHECK_OK(relayout_plan_wait(x->plan, &e_));
  CHECK(strcmp(relayout_plan_kernel(x->plan), "generic"),
        "%s -> %s: its own kernel did not build", x->src, x->dst);
  check_run(x->on, x->plan, "", x->src, x->dst, x->t, x->in, x->sb, x->skew,
            &x->want);
  if (x->streamed) {
    CHECK_OK(relayout_plan_wait(x->streamed, &e_));
    check_run(streamed_engine, x->streamed, ", streamed", x->src, x->dst, x->t,
              x->in, x->sb, x->skew, &x->want);
    pairs_streamed++;
  }
  CHECK(!strcmp(relayout_plan_kernel(x->generic), "generic") ||
            !strcmp(relayout_plan_kernel(x->generic), "copy"),
        "%s -> %s: no generic kernel", x->src, x->dst);
  check_run(x->generic_on, x->generic, ", generic", x->src, x->dst, x->t, x->in,
            x->sb, x->skew, &x->want);
  relayout_plan_free(x->plan);
  relayout_plan_free(x->streamed);
  relayout_plan_free(x->generic);
  free(x->in);
  guarded_free(&x->want);
  memmove(window, window + 1, sizeof *window * (size_t)--nwindow);
}

/* Every pair under way finished. */
static void pair_flush(void) {
  while (nwindow) finish_pair();
}

/* src -> dst at ext, with the GPU and the CPU kernel families by turns
 * (force: that engine's), and on the generic kernels. Where the families
 * are the CPU ones and no test forces the choice, the plan is made again
 * with streamed stores (CPU devices; below the threshold, as at these
 * sizes, plans never stream) and, where that changes the kernel, run too. */
static void one_pair(const char *src, const char *dst, relayout_dtype t,
                     const family *f, const int64_t *ext) {
  relayout_desc s, d;
  if (!bind_pair(&s, &d, src, dst, t, f, ext)) {
    pairs_skipped++;
    return;
  }
  if (nwindow == WINDOW) finish_pair();
  pending *x = &window[nwindow++];
  memset(x, 0, sizeof *x);
  *x = (pending){.src = src, .dst = dst, .t = t, .skew = dst_skew};
  int64_t sb, db;
  relayout_desc_size_bytes(&sb, &s, NULL);
  relayout_desc_size_bytes(&db, &d, NULL);
  x->sb = (size_t)sb;
  x->in = malloc(x->sb);
  fill(x->in, x->sb);
  x->want = guarded_alloc((size_t)db, 0xA5);
  CHECK_OK(relayout_convert_ref(&d, x->want.data, x->want.size, &s, x->in,
                                x->sb, &e_));
  x->on = force ? force : pairs_run % 2 ? gpu_engine : cpu_engine;
  CHECK_OK(relayout_plan_create(&x->plan, x->on, &d, &s, &e_));
  x->generic_on = pairs_run % 2 ? generic_gpu_engine : generic_engine;
  CHECK_OK(relayout_plan_create(&x->generic, x->generic_on, &d, &s, &e_));
  families_seen[plan_family_index(relayout_plan_family(x->plan))]++;
  pairs_run++;
  if (x->on == cpu_engine && !force) {
    CHECK_OK(relayout_plan_create(&x->streamed, streamed_engine, &d, &s, &e_));
    if (x->streamed &&
        !strcmp(relayout_plan_source(x->streamed),
                relayout_plan_source(x->plan))) { /* the same kernel */
      relayout_plan_free(x->streamed);
      x->streamed = NULL;
    }
  }
}

/* n edge extents (1, 2, 3, 5, 7, 13, 16, 17, 31, 33) with 20 to 3000
 * elements in all. */
static void pick_extents(int64_t *ext, int n) {
  static const int64_t edge[] = {1, 2, 3, 5, 7, 13, 16, 17, 31, 33};
  int64_t count;
  do {
    count = 1;
    for (int k = 0; k < n; k++) count *= ext[k] = edge[rng_next() % 10];
  } while (count > 3000 || count < 20);
}

/* The format matrix; part 0: three pairs in four, part 1 the fourth, for
 * two processes that share it (-1: all). */
static void matrix(int nshapes, int part) {
  for (size_t fi = 0; fi < sizeof families / sizeof families[0]; fi++) {
    const family *f = &families[fi];
    int n = f->nbatch + (int)strlen(f->letters);
    for (int shape = 0; shape < nshapes; shape++) {
      int64_t ext[RELAYOUT_MAX_DIMS];
      pick_extents(ext, n);
      if (f->letters[0] == 'N' && ext[0] % 2) ext[0]++; /* groups=2 splits N */
      if (fi == 3) { /* the CuTe layout fixes its dims */
        ext[0] = 6, ext[1] = 5, ext[2] = 2, ext[3] = 2;
      }
      int pair = 0;
      for (int a = 0; f->layouts[a]; a++)
        for (int b = 0; f->layouts[b]; b++, pair++) {
          if (part >= 0 && (pair % 4 == 3) != part) continue;
          /* every pair at one width; a few at every width */
          for (size_t w = 0; w < 5; w++)
            if (w == (size_t)(pair + shape) % 5 || pair % 11 == 0)
              one_pair(f->layouts[a], f->layouts[b], widths[w], f, ext);
        }
    }
  }
  pair_flush();
  printf("%d pairs on %s (%d of them streamed too), %d skipped as not "
         "applicable; families:",
         pairs_run, relayout_engine_device(engine), pairs_streamed,
         pairs_skipped);
  for (int i = 0; i < 5; i++) {
    printf(" %s %d", family_names[i], families_seen[i]);
    CHECK(part == 1 || families_seen[i] > 0, "the matrix ran no %s plan",
          family_names[i]); /* its quarter need not have every one */
  }
  printf("\n");
  CHECK(pairs_run > (part < 0 ? 250
                     : part   ? 60
                              : 180) *
                        nshapes,
        "the matrix ran (%d pairs)", pairs_run);
}

/* Random grammar layouts (random_layout) at random extents and widths,
 * converted to each other and to and from the NCHW family's formats; pairs
 * whose padding makes a buffer over 1 MiB are passed over. */
static void random_layouts(int npairs) {
  const family *f = &families[0];
  int named = 0;
  while (f->layouts[named]) named++;
  int run = 0;
  for (int tries = 0; run < npairs && tries < 20 * npairs; tries++) {
    char a[96], b[96];
    random_layout(a, sizeof a);
    random_layout(b, sizeof b);
    const char *src = a, *dst = b;
    if (tries % 3 == 1) dst = f->layouts[rng_next() % (uint64_t)named];
    if (tries % 3 == 2) src = f->layouts[rng_next() % (uint64_t)named];
    int64_t ext[4];
    pick_extents(ext, 4);
    if (ext[0] % 2) ext[0]++; /* groups=2 splits N */
    relayout_dtype t = widths[rng_next() % 5];
    relayout_desc s, d;
    int64_t sb, db;
    if (!bind_pair(&s, &d, src, dst, t, f, ext)) continue;
    relayout_desc_size_bytes(&sb, &s, NULL);
    relayout_desc_size_bytes(&db, &d, NULL);
    if (sb > 1 << 20 || db > 1 << 20) continue;
    one_pair(src, dst, t, f, ext);
    run++;
  }
  pair_flush();
  printf("%d random layout pairs\n", run);
  CHECK(run == npairs, "ran %d of %d random layout pairs", run, npairs);
}

/* The device the engine runs on, and its type. */
static cl_device_id engine_device(void) {
  cl_device_id dev;
  clGetCommandQueueInfo(relayout_engine_queue(engine), CL_QUEUE_DEVICE,
                        sizeof dev, &dev, NULL);
  return dev;
}
static cl_device_type engine_type(void) {
  cl_device_type type = 0;
  clGetDeviceInfo(engine_device(), CL_DEVICE_TYPE, sizeof type, &type, NULL);
  return type;
}

/* A case of plan_cases.h on its kind's engine (test_plan checks its plan):
 * the streamed ones on CPU devices only, as GPUs never stream. */
/* src -> dst on the generic kernels: plain, with every store that can
 * stream, and the GPU families' (tiles through local memory). */
static void generic_case(const char *src, const char *dst, relayout_dtype t,
                         const family *f, const int64_t *shape) {
  relayout_desc s, d;
  if (!bind_pair(&s, &d, src, dst, t, f, shape)) return;
  int64_t sb, db;
  relayout_desc_size_bytes(&sb, &s, NULL);
  relayout_desc_size_bytes(&db, &d, NULL);
  unsigned char *in = malloc((size_t)sb);
  fill(in, (size_t)sb);
  guarded want = guarded_alloc((size_t)db, 0xA5);
  CHECK_OK(
      relayout_convert_ref(&d, want.data, want.size, &s, in, (size_t)sb, &e_));
  relayout_engine *on[3] = {generic_engine, generic_streamed_engine,
                            generic_gpu_engine};
  static const char *const how[3] = {", generic", ", generic, streamed",
                                     ", generic, GPU families"};
  for (int i = 0; i < 3; i++) {
    relayout_plan *plan;
    CHECK_OK(relayout_plan_create(&plan, on[i], &d, &s, &e_));
    CHECK(!strcmp(relayout_plan_kernel(plan), "generic"),
          "%s -> %s: no generic kernel", src, dst);
    check_run(on[i], plan, how[i], src, dst, t, in, (size_t)sb, 0, &want);
    relayout_plan_free(plan);
  }
  free(in);
  guarded_free(&want);
}

static void device_case(const char *kind, int (*want)(const char *),
                        const char *src, const char *dst, relayout_dtype t,
                        const family *f, const int64_t *shape, size_t skew) {
  (void)want;
  if (!strcmp(kind, "generic")) {
    generic_case(src, dst, t, f, shape);
    return;
  }
  if (!strcmp(kind, "streamed") && engine_type() & CL_DEVICE_TYPE_GPU) return;
  force = !strcmp(kind, "gpu")   ? gpu_engine
          : !strcmp(kind, "cpu") ? cpu_engine
                                 : streamed_engine;
  dst_skew = skew;
  one_pair(src, dst, t, f, shape);
  dst_skew = 0;
  force = NULL;
}

/* TPU local memory as seed 004 has it (test_examples checks the offsets):
 * tensors at an offset inside their NPU, with free strides, in the 4N, 2N
 * and 2IC storage modes; each to and from plain and blocked layouts. */
static void tpu_local(void) {
  static const struct {
    const char *layout;
    relayout_dtype t;
    int64_t ext[4];
  } c[] = {
      {"TPU_ALIGNED(npus=4,lmem=1024,start=1,offset=384)",
       RELAYOUT_F32,
       {2, 5, 3, 4}},
      {"TPU_COMPACT(npus=4,lmem=1024,start=2,offset=252)",
       RELAYOUT_F16,
       {2, 7, 3, 5}},
      {"TPU_STRIDED(npus=4,lmem=1024,wstride=2,hstride=16,cstride=56,"
       "nstride=120)",
       RELAYOUT_F32,
       {2, 5, 3, 4}},
      {"TPU_STRIDED(npus=4,lmem=1024,start=1,offset=8,wstride=2,nstride=120)",
       RELAYOUT_F32,
       {2, 3, 1, 10}},
      {"TPU_ALIGNED(npus=4,lmem=1024,offset=128,n0=4)",
       RELAYOUT_U8,
       {6, 5, 4, 5}},
      {"TPU_ALIGNED(npus=4,lmem=1024,n0=2)", RELAYOUT_I16, {3, 5, 4, 5}},
      {"TPU_COMPACT(npus=4,lmem=1024,start=1,offset=8,n0=2)",
       RELAYOUT_F32,
       {3, 5, 2, 2}},
  };
  static const char *const other[] = {"NCHW", "NHWC", "NC1HWC0"};
  int before = pairs_run;
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
    for (size_t j = 0; j < 3; j++) {
      one_pair(other[j], c[i].layout, c[i].t, &families[0], c[i].ext);
      one_pair(c[i].layout, other[j], c[i].t, &families[0], c[i].ext);
    }
  pair_flush();
  CHECK(pairs_run - before == 6 * (int)(sizeof c / sizeof c[0]),
        "every TPU pair ran (%d)", pairs_run - before);
}

/* FRACTAL_Z_C04 (H and W merged into its reduction axis) to and from the
 * NCHW family's weight layouts, at every width; the extents are in each
 * source's logical order, so all but the first are at most 4 (C). */
static void c04_weights(void) {
  static const struct {
    relayout_dtype t;
    int64_t ext[4];
  } c[] = {{RELAYOUT_F16, {18, 3, 3, 4}},
           {RELAYOUT_F32, {5, 4, 2, 2}},
           {RELAYOUT_U8, {33, 1, 3, 3}},
           {RELAYOUT_I4, {17, 3, 3, 3}},
           {RELAYOUT_F64, {2, 2, 1, 1}}};
  static const char *const other[] = {"NCHW", "NHWC", "HWCN", "NC1HWC0",
                                      "FRACTAL_Z"};
  int before = pairs_run;
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
    for (size_t j = 0; j < 5; j++) {
      one_pair(other[j], "FRACTAL_Z_C04", c[i].t, &families[0], c[i].ext);
      one_pair("FRACTAL_Z_C04", other[j], c[i].t, &families[0], c[i].ext);
    }
  pair_flush();
  CHECK(pairs_run - before == 10 * (int)(sizeof c / sizeof c[0]),
        "every FRACTAL_Z_C04 pair ran (%d)", pairs_run - before);
}

/* The RNN formats (gates padded apart; LSTM weights' input and hidden rows
 * apart) to and from plain and blocked layouts of their dims. */
static void rnn_formats(void) {
  static const family kn = {0, "KN", {NULL}}, bias = {1, "N", {NULL}};
  static const char *const weights[] = {"ND", "FRACTAL_ZN", "KN16k"};
  static const char *const biases[] = {"ND", "...N8n"};
  static const struct {
    const char *layout;
    int64_t ext[2];
  } w[] = {{"FRACTAL_ZN_RNN(input=20,hidden=5)", {25, 20}},
           {"FRACTAL_ZN_RNN(input=3,hidden=17)", {17, 51}},
           {"ND_RNN_BIAS(hidden=5)", {3, 20}},
           {"ND_RNN_BIAS(hidden=33)", {1, 66}}};
  int before = pairs_run;
  for (size_t i = 0; i < 4; i++) {
    int b = i >= 2;
    for (int j = 0; j < (b ? 2 : 3); j++)
      for (size_t t = 1; t < 5; t++) {
        const char *other = b ? biases[j] : weights[j];
        one_pair(other, w[i].layout, widths[t], b ? &bias : &kn, w[i].ext);
        one_pair(w[i].layout, other, widths[t], b ? &bias : &kn, w[i].ext);
      }
  }
  pair_flush();
  CHECK(pairs_run - before == (2 * 3 + 2 * 2) * 4 * 2,
        "every RNN pair ran (%d)", pairs_run - before);
}

/* Ascend's attention layouts (seed 000), H = N * D stored merged, to and
 * from the head-major and sequence-major ones. */
static void attention(void) {
  static const family f = {0, "BSND", {NULL}};
  static const char *const a[] = {"BSH(heads=3)", "SBH", "BNSD", "SBND",
                                  "BSND"};
  int before = pairs_run;
  for (int i = 0; i < 5; i++) {
    /* B, S, N, D = 2, 17, 3, 8 in the source's logical order */
    char names[RELAYOUT_MAX_DIMS + 1];
    int batch, positional;
    int64_t ext[4];
    relayout_layout *l = NULL;
    CHECK_OK(relayout_layout_parse(&l, a[i], &e_));
    CHECK_OK(relayout_layout_logical_names(names, &batch, &positional, l, &e_));
    relayout_layout_free(l);
    for (int k = 0; k < 4; k++)
      ext[k] = (int64_t[]){2, 17, 3, 8}[strchr("BSND", names[k]) - "BSND"];
    for (int j = 0; j < 5; j++)
      if (i != j) one_pair(a[i], a[j], widths[(i + j) % 4 + 1], &f, ext);
  }
  pair_flush();
  CHECK(pairs_run - before == 20, "every attention pair ran (%d)",
        pairs_run - before);
}

/* A widened plan still refuses offsets off the element, as every plan
 * does, and writes nothing: f16 NCHW4 -> CHWN4 (8-byte units) at a
 * destination offset of 1 byte, then of one element past the end. */
static void widened_refusals(void) {
  const int64_t ext[4] = {3, 8, 5, 7};
  relayout_desc s, d;
  CHECK(bind_pair(&s, &d, "NCHW4", "CHWN4", RELAYOUT_F16, &families[0], ext),
        "bind");
  int64_t sb, db;
  relayout_desc_size_bytes(&sb, &s, NULL);
  relayout_desc_size_bytes(&db, &d, NULL);
  relayout_plan *plan;
  CHECK_OK(relayout_plan_create(&plan, engine, &d, &s, &e_));
  CHECK(element_size(relayout_plan_source(plan)) == 8, "8-byte units");
  cl_context ctx = relayout_engine_context(engine);
  cl_command_queue q = relayout_engine_queue(engine);
  cl_int rc;
  size_t total = (size_t)db + 16;
  cl_mem bs = clCreateBuffer(ctx, CL_MEM_READ_ONLY, (size_t)sb, NULL, &rc);
  cl_mem bd = clCreateBuffer(ctx, CL_MEM_READ_WRITE, total, NULL, &rc);
  unsigned char poison = 0xA5, data = 0x5A, *got = malloc(total);
  clEnqueueFillBuffer(q, bs, &data, 1, 0, (size_t)sb, 0, NULL, NULL);
  clEnqueueFillBuffer(q, bd, &poison, 1, 0, total, 0, NULL, NULL);
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "multiples of the 2-byte element",
              relayout_plan_enqueue(plan, bd, 1, bs, 0, 0, NULL, NULL, &e_));
  CHECK_FAILS(RELAYOUT_ERR_BUFFER, "past their offsets",
              relayout_plan_enqueue(plan, bd, 18, bs, 0, 0, NULL, NULL, &e_));
  clEnqueueReadBuffer(q, bd, CL_TRUE, 0, total, got, 0, NULL, NULL);
  int untouched = got != NULL;
  for (size_t i = 0; got && i < total; i++) untouched &= got[i] == 0xA5;
  CHECK(untouched, "a refused enqueue wrote to the destination");
  free(got);
  clReleaseMemObject(bs);
  clReleaseMemObject(bd);
  relayout_plan_free(plan);
}

/* n bytes starting on a page (aligned_alloc takes whole pages). */
static unsigned char *page_alloc(size_t n) {
  return aligned_alloc(4096, (n + 4095) & ~(size_t)4095);
}

/* relayout_plan_run on host arrays. A device that works in host memory
 * runs the kernel on them in place where an array is aligned to the unit
 * the kernel moves and copies one that is not; with RELAYOUT_UNIFIED=0 it
 * copies both, as a discrete GPU does. Both ways, with the plan's stores
 * streamed (their alignment is checked on the array's real address), and
 * for a plan that moves 4-byte units of bytes (lib/plan/widen.c), each array at
 * offsets 0 to 8 bytes past a page: the output, poisoned and fenced, equals
 * the reference's. A destination one byte short is refused. */
static int moves_words(const char *s) { return element_size(s) == 4; }
static void host_path_of(const char *device, const char *from, const char *to,
                         relayout_dtype t, int (*planned)(const char *)) {
  const int64_t ext[4] = {2, 64, 9, 9};
  relayout_desc s, d;
  CHECK(bind_pair(&s, &d, from, to, t, &families[0], ext), "bind");
  int64_t sb, db;
  relayout_desc_size_bytes(&sb, &s, NULL);
  relayout_desc_size_bytes(&db, &d, NULL);
  const size_t pad = 64, room = 4096;
  unsigned char *in = page_alloc(room + (size_t)sb),
                *out = page_alloc(room + (size_t)db + pad),
                *src = malloc((size_t)sb);
  CHECK(in && out && src, "out of memory");
  if (!in || !out || !src) {
    free(in);
    free(out);
    free(src);
    return;
  }
  fill(src, (size_t)sb);
  guarded want = guarded_alloc((size_t)db, 0xA5);
  CHECK_OK(
      relayout_convert_ref(&d, want.data, want.size, &s, src, (size_t)sb, &e_));
  cl_bool unified = CL_FALSE;
  clGetDeviceInfo(engine_device(), CL_DEVICE_HOST_UNIFIED_MEMORY,
                  sizeof unified, &unified, NULL);
  for (int copies = 0; copies < 2; copies++) {
    relayout_engine *e;
    relayout_engine_options o = {.size = sizeof o,
                                 .device = device,
                                 .copies = copies,
                                 .families = RELAYOUT_FAMILIES_CPU,
                                 .stream_bytes = 1};
    CHECK_OK(relayout_engine_create(&e, &o, &e_));
    CHECK(relayout_engine_host_memory(e) == (!copies && unified),
          "host memory %d: the device says %d, copies %d",
          relayout_engine_host_memory(e), unified, copies);
    relayout_plan *plan;
    CHECK_OK(relayout_plan_create(&plan, e, &d, &s, &e_));
    CHECK_OK(relayout_plan_wait(plan, &e_)); /* its own kernel is the test */
    CHECK(!(engine_type() & CL_DEVICE_TYPE_CPU) ||
              planned(relayout_plan_source(plan)),
          "%s -> %s: not the plan the test is for", from, to);
    for (size_t so = 0; so <= 8; so++)
      for (size_t dof = 0; dof <= 8; dof++) {
        unsigned char *at_s = in + room - pad + so,
                      *at_d = out + room - pad + dof;
        memcpy(at_s, src, (size_t)sb);
        memset(out, 0xA5, room + (size_t)db + pad);
        CHECK_OK(
            relayout_plan_run(plan, at_d, (size_t)db, at_s, (size_t)sb, &e_));
        CHECK(!memcmp(at_d, want.data, (size_t)db),
              "%s -> %s, copies %d, source +%zu, destination +%zu: output "
              "differs",
              from, to, copies, so, dof);
        int fence = !*relayout_plan_note(plan);
        for (unsigned char *b = out; b < out + room + db + pad; b++)
          fence &= (b >= at_d && b < at_d + db) || *b == 0xA5;
        CHECK(fence, "copies %d, +%zu/+%zu: a note or a write outside: %s",
              copies, so, dof, relayout_plan_note(plan));
      }
    CHECK_FAILS(
        RELAYOUT_ERR_BUFFER, "destination buffer holds",
        relayout_plan_run(plan, out, (size_t)db - 1, in, (size_t)sb, &e_));
    relayout_plan_free(plan);
    relayout_engine_free(e);
  }
  free(in);
  free(out);
  free(src);
  guarded_free(&want);
}
static void host_path(const char *device) {
  host_path_of(device, "NCHW", "NC1HWC0", RELAYOUT_F32, box_streams);
  host_path_of(device, "NCHW4", "CHWN4", RELAYOUT_I8, moves_words);
}

/* Rows whose last data is read as the vector that ends with it (NHWC ->
 * NC1HWC0 with 5 channels, streamed) read nothing before the source: the
 * first rows, where that vector would start before it, go element by
 * element. Run in place (a device that works in host memory) on a source
 * whose first byte sits just after a no-access page, so a read before it
 * faults; on other devices the source is uploaded, and the run checks the
 * output only. */
static void reads_inside(void) {
  const int64_t ext[4] = {2, 5, 7, 5};
  for (size_t w = 1; w <= 2; w++) { /* int8, f16 */
    relayout_desc s, d;
    CHECK(bind_pair(&s, &d, "NHWC", "NC1HWC0", widths[w], &families[0], ext),
          "bind");
    int64_t sb, db;
    relayout_desc_size_bytes(&sb, &s, NULL);
    relayout_desc_size_bytes(&db, &d, NULL);
    guarded in = guarded_place((size_t)sb, 0, 1),
            want = guarded_alloc((size_t)db, 0xA5),
            got = guarded_alloc((size_t)db, 0x5A);
    fill(in.data, in.size);
    CHECK_OK(relayout_convert_ref(&d, want.data, want.size, &s, in.data,
                                  in.size, &e_));
    relayout_plan *plan;
    CHECK_OK(relayout_plan_create(&plan, streamed_engine, &d, &s, &e_));
    CHECK_OK(relayout_plan_wait(plan, &e_));
    CHECK(!relayout_engine_host_memory(streamed_engine) ||
              box_streams_pads(relayout_plan_source(plan)),
          "NHWC -> NC1HWC0 %s: the plan streams padded rows",
          relayout_dtype_name(widths[w]));
    CHECK_OK(
        relayout_plan_run(plan, got.data, got.size, in.data, in.size, &e_));
    CHECK(!memcmp(got.data, want.data, want.size),
          "NHWC -> NC1HWC0 %s, the source after a no-access page: output "
          "differs",
          relayout_dtype_name(widths[w]));
    relayout_plan_free(plan);
    guarded_free(&in);
    guarded_free(&want);
    guarded_free(&got);
  }
}

/* An engine on the test's device with these kernels and streaming. */
static relayout_engine *engine_for(const char *device, relayout_families f,
                                   int64_t stream_bytes, relayout_kernels k) {
  relayout_engine_options o = {.size = sizeof o,
                               .device = device,
                               .families = f,
                               .stream_bytes = stream_bytes,
                               .kernels = k};
  relayout_engine *e = NULL;
  CHECK_OK(relayout_engine_create(&e, &o, &e_));
  return e;
}

/* usage: test_device [cases|matrix]: a quarter of the format matrix, the
 * plan cases, host paths, refusals and random layouts (cases), or the rest
 * of the matrix (matrix); all by default. */
int main(int argc, char **argv) {
  const char *part = argc > 1 ? argv[1] : "";
  int cases = strcmp(part, "matrix") != 0, grid = strcmp(part, "cases") != 0;
  const char *dev = getenv("RELAYOUT_TEST_DEVICE");
  if (!dev) dev = "cpu";
  engine = engine_for(dev, RELAYOUT_FAMILIES_AUTO, 0, RELAYOUT_KERNELS_AUTO);
  gpu_engine = engine_for(dev, RELAYOUT_FAMILIES_GPU, 0, RELAYOUT_KERNELS_AUTO);
  cpu_engine = engine_for(dev, RELAYOUT_FAMILIES_CPU, 0, RELAYOUT_KERNELS_AUTO);
  streamed_engine =
      engine_for(dev, RELAYOUT_FAMILIES_CPU, 1, RELAYOUT_KERNELS_AUTO);
  generic_engine =
      engine_for(dev, RELAYOUT_FAMILIES_AUTO, 0, RELAYOUT_KERNELS_GENERIC);
  generic_streamed_engine =
      engine_for(dev, RELAYOUT_FAMILIES_AUTO, 1, RELAYOUT_KERNELS_GENERIC);
  generic_gpu_engine =
      engine_for(dev, RELAYOUT_FAMILIES_GPU, 0, RELAYOUT_KERNELS_GENERIC);
  if (!engine || !gpu_engine || !cpu_engine || !streamed_engine ||
      !generic_engine || !generic_streamed_engine || !generic_gpu_engine)
    return check_summary();
  const char *shapes = getenv("RELAYOUT_TEST_SHAPES"),
             *seed = getenv("RELAYOUT_TEST_SEED");
  if (seed) {
    char *end;
    rng_state = strtoull(seed, &end, 0);
    CHECK(*seed && !*end, "RELAYOUT_TEST_SEED=%s is not a number", seed);
  }
  printf("seed %llu (RELAYOUT_TEST_SEED)\n", (unsigned long long)rng_state);
  int nshapes = shapes ? atoi(shapes) : 2;
  /* split, the matrix's pairs alternate between the two processes */
  matrix(nshapes, cases && grid ? -1 : cases);
  if (cases) {
    host_path(dev);
    plan_cases(device_case);
    pair_flush();
    reads_inside();
    widened_refusals();
    tpu_local();
    c04_weights();
    rnn_formats();
    attention();
  }
  if (cases) random_layouts(60 * nshapes);
  relayout_engine_free(engine);
  relayout_engine_free(gpu_engine);
  relayout_engine_free(cpu_engine);
  relayout_engine_free(streamed_engine);
  relayout_engine_free(generic_engine);
  relayout_engine_free(generic_streamed_engine);
  relayout_engine_free(generic_gpu_engine);
  return check_summary();
}
