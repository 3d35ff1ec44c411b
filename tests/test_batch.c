/* test_batch.c - relayout_plans_run: many plans on host arrays, one wait
 *
 * Runs on RELAYOUT_TEST_DEVICE (default "cpu"). Every destination is
 * poisoned and fenced by a no-access page, and every result must equal the
 * reference's byte for byte.
 */
#include "check.h"
#include "engine.h" /* staged(): the engine's chunks */

#include <stdlib.h>

static const char *device;

/* A batch's conversions: every family, element sizes 1 to 8 and 4-bit. */
typedef struct conv {
  const char *from, *to;
  relayout_dtype dtype;
  int n;
  int64_t ext[4];
} conv;

static const conv convs[] = {
    {"NCHW", "NC1HWC0", RELAYOUT_F16, 4, {2, 17, 5, 3}},
    {"NCHW", "FRACTAL_Z", RELAYOUT_F32, 4, {33, 20, 3, 3}},
    {"ND", "FRACTAL_NZ", RELAYOUT_F16, 2, {37, 45}},
    {"NHWC", "NCHW", RELAYOUT_I8, 4, {3, 9, 11, 70}},
    {"NCHW", "NCHW", RELAYOUT_F64, 4, {2, 3, 4, 5}}, /* a copy */
    {"NCHW", "NC1HWC0", RELAYOUT_U4, 4, {2, 33, 3, 4}},
    {"nChw8c", "nChw16c", RELAYOUT_F32, 4, {2, 24, 5, 5}},
    {"ND", "FRACTAL_ZN", RELAYOUT_I8, 2, {70, 33}},
};
enum { NCONV = sizeof convs / sizeof convs[0] };

/* One job's arrays: its source (bytes from `at` on in a shared arena), a
 * guarded destination and the reference's result. */
typedef struct tjob {
  relayout_desc s, d;
  int64_t sb, db;
  guarded got, want;
  size_t at;
} tjob;

static int bind(tjob *t, const conv *c) {
  relayout_layout *a = NULL, *b = NULL;
  relayout_error e;
  int ok =
      !relayout_layout_parse(&a, c->from, &e) &&
      !relayout_layout_parse(&b, c->to, &e) &&
      !relayout_bind_extents(&t->s, &t->d, a, b, c->dtype, c->n, c->ext, &e);
  CHECK(ok, "%s -> %s: %s", c->from, c->to, e.message);
  relayout_layout_free(a);
  relayout_layout_free(b);
  relayout_desc_size_bytes(&t->sb, &t->s, NULL);
  relayout_desc_size_bytes(&t->db, &t->d, NULL);
  return ok;
}

/* A batch of n jobs cycling through convs, each source `shift` bytes past
 * an 8-byte boundary of one arena (shift 2: an f32 or f64 source off its
 * element, which the device copies instead of using in place). */
typedef struct batch {
  int n;
  tjob t[32];
  relayout_plan *plan[NCONV];
  relayout_job jobs[32];
  unsigned char *arena;
} batch;

static void batch_open(batch *b, relayout_engine *e, int n, size_t shift) {
  memset(b, 0, sizeof *b);
  b->n = n;
  size_t total = 0;
  for (int i = 0; i < n; i++) {
    tjob *t = &b->t[i];
    bind(t, &convs[i % NCONV]);
    t->at = (total + 7) / 8 * 8 + shift;
    total = t->at + (size_t)t->sb;
  }
  if (!(b->arena = malloc(total))) {
    perror("malloc");
    exit(2);
  }
  for (size_t i = 0; i < total; i++) b->arena[i] = (unsigned char)(i * 13 + 5);
  for (int k = 0; k < NCONV && k < n; k++)
    CHECK_OK(relayout_plan_create(&b->plan[k], e, &b->t[k].d, &b->t[k].s, &e_));
  for (int i = 0; i < n; i++) {
    tjob *t = &b->t[i];
    t->got = guarded_alloc((size_t)t->db, 0x5A);
    t->want = guarded_alloc((size_t)t->db, 0xA5);
    CHECK_OK(relayout_convert_ref(&t->d, t->want.data, t->want.size, &t->s,
                                  b->arena + t->at, (size_t)t->sb, &e_));
    b->jobs[i] = (relayout_job){b->plan[i % NCONV], t->got.data, t->got.size,
                                b->arena + t->at, (size_t)t->sb};
  }
}

static void batch_close(batch *b) {
  for (int i = 0; i < b->n; i++) {
    guarded_free(&b->t[i].got);
    guarded_free(&b->t[i].want);
  }
  for (int k = 0; k < NCONV; k++) relayout_plan_free(b->plan[k]);
  free(b->arena);
}

/* How many jobs' destinations equal the reference's result (want 1), or
 * still hold their poison everywhere (want 0). */
static int count(const batch *b, int want) {
  int n = 0;
  for (int i = 0; i < b->n; i++) {
    const tjob *t = &b->t[i];
    int poisoned = 1;
    for (int64_t k = 0; k < t->db; k++) poisoned &= t->got.data[k] == 0x5A;
    n += want ? !memcmp(t->got.data, t->want.data, (size_t)t->db) : poisoned;
  }
  return n;
}

/* An engine on the test's device with the given options (NULL: none). */
static relayout_engine *engine(const char *on, relayout_engine_options *o) {
  relayout_engine_options all = {.size = sizeof all};
  if (o) all = *o;
  all.device = on;
  relayout_engine *e = NULL;
  CHECK_OK(relayout_engine_create(&e, &all, &e_));
  return e;
}

/* The first note of the batch's plans, or "". */
static const char *first_note(const batch *b) {
  for (int i = 0; i < b->n; i++)
    if (*relayout_plan_note(b->jobs[i].plan))
      return relayout_plan_note(b->jobs[i].plan);
  return "";
}

/* 20 jobs (8 conversions, each plan run up to three times) in one call,
 * the device using the arrays in place and, with copies, copying them as a
 * discrete GPU does; sources aligned and not. */
static void converts(void) {
  for (int copies = 0; copies < 2; copies++)
    for (size_t shift = 0; shift <= 2; shift += 2) {
      relayout_engine_options o = {.size = sizeof o, .copies = copies};
      relayout_engine *e = engine(device, &o);
      batch b;
      batch_open(&b, e, 20, shift);
      CHECK_OK(relayout_plans_run(b.jobs, b.n, &e_));
      CHECK(count(&b, 1) == b.n && !*first_note(&b),
            "copies %d, shift %zu: %d of %d equal the reference; note '%s'",
            copies, shift, count(&b, 1), b.n, first_note(&b));
      batch_close(&b);
      relayout_engine_free(e);
    }
}

/* The arrays copied as on a discrete GPU, through pinned chunks of 97 bytes
 * (chunks end inside elements, and the four go round the ring many times
 * in one array) and of 4 KiB: two batches in a row on one engine, sources
 * aligned and not; the engine then holds its chunks (the driver's copies
 * would give the same bytes, so that is checked inside the engine). */
static void staged(void) {
  for (int64_t chunk = 97; chunk <= 4096; chunk += 3999) {
    relayout_engine_options o = {
        .size = sizeof o, .copies = 1, .staging_bytes = chunk};
    relayout_engine *e = engine(device, &o);
    for (size_t shift = 0; shift <= 2; shift += 2) {
      batch b;
      batch_open(&b, e, 20, shift);
      for (int twice = 0; twice < 2; twice++) {
        for (int i = 0; i < b.n; i++)
          memset(b.t[i].got.data, 0x5A, (size_t)b.t[i].db);
        CHECK_OK(relayout_plans_run(b.jobs, b.n, &e_));
        CHECK(count(&b, 1) == b.n && !*first_note(&b),
              "chunks of %lld, shift %zu, run %d: %d of %d equal the "
              "reference; note '%s'",
              (long long)chunk, shift, twice, count(&b, 1), b.n,
              first_note(&b));
      }
      batch_close(&b);
    }
    CHECK(e->staging && !e->staging_refused,
          "chunks of %lld: the runs went through the engine's chunks",
          (long long)chunk);
    relayout_engine_free(e);
  }
}

/* With the largest allocation lowered to 8 KiB and the arrays copied, the
 * jobs form many groups; a job beyond it runs in slabs along N where N is
 * outermost in both layouts and a slab fits (job 2, 9x17x9x7 f32 NCHW ->
 * NHWC), and otherwise on the reference: where a slab of N does not fit
 * either (job 1, 2x17x9x16: 9792-byte slabs), which the note names, and
 * FRACTAL_Z (job 3). */
static void groups(void) {
  relayout_engine_options o = {
      .size = sizeof o, .max_alloc = 8192, .copies = 1};
  relayout_engine *e = engine(device, &o);
  batch b;
  batch_open(&b, e, 12, 0);
  static const conv big[3] = {
      {"NCHW", "NHWC", RELAYOUT_F32, 4, {2, 17, 9, 16}},
      {"NCHW", "NHWC", RELAYOUT_F32, 4, {9, 17, 9, 7}},
      {"NCHW", "FRACTAL_Z", RELAYOUT_F32, 4, {9, 17, 9, 7}}};
  relayout_plan *plans[3] = {NULL, NULL, NULL};
  for (int k = 0; k < 3; k++) { /* jobs 1 to 3 become the big ones */
    tjob *t = &b.t[k + 1];
    guarded_free(&t->got);
    guarded_free(&t->want);
    bind(t, &big[k]);
    t->got = guarded_alloc((size_t)t->db, 0x5A);
    t->want = guarded_alloc((size_t)t->db, 0xA5);
    unsigned char *in = malloc((size_t)t->sb);
    for (int64_t i = 0; i < t->sb; i++) in[i] = (unsigned char)(i * 3 + 1);
    CHECK_OK(relayout_convert_ref(&t->d, t->want.data, t->want.size, &t->s, in,
                                  (size_t)t->sb, &e_));
    CHECK_OK(relayout_plan_create(&plans[k], e, &t->d, &t->s, &e_));
    b.jobs[k + 1] =
        (relayout_job){plans[k], t->got.data, t->got.size, in, (size_t)t->sb};
  }
  CHECK_OK(relayout_plans_run(b.jobs, b.n, &e_));
  CHECK(count(&b, 1) == b.n, "%d of %d equal the reference", count(&b, 1), b.n);
  CHECK(strstr(relayout_plan_note(plans[0]), "no dim to split it along"),
        "job 1's plan says why it ran on the reference: '%s'",
        relayout_plan_note(plans[0]));
  CHECK(!*relayout_plan_note(plans[1]),
        "job 2, in slabs, did not fall back: '%s'",
        relayout_plan_note(plans[1]));
  for (int k = 0; k < 3; k++) {
    free((void *)b.jobs[k + 1].src);
    relayout_plan_free(plans[k]);
  }
  batch_close(&b);
  relayout_engine_free(e);
}

/* Bad batches are refused, naming the job, before anything is written. */
static void refusals(void) {
  relayout_engine *e = engine(device, NULL), *other = engine(device, NULL);
  batch b;
  batch_open(&b, e, 6, 0);
  relayout_job bad[6];
  relayout_plan *foreign;
  CHECK_OK(relayout_plan_create(&foreign, other, &b.t[4].d, &b.t[4].s, &e_));
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "-1 jobs",
              relayout_plans_run(b.jobs, -1, &e_));
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "NULL jobs",
              relayout_plans_run(NULL, 2, &e_));
  memcpy(bad, b.jobs, sizeof bad);
  bad[3].src = NULL;
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "job 3: NULL argument",
              relayout_plans_run(bad, 6, &e_));
  memcpy(bad, b.jobs, sizeof bad);
  bad[4].plan = foreign;
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "job 4's plan belongs to another engine",
              relayout_plans_run(bad, 6, &e_));
  memcpy(bad, b.jobs, sizeof bad);
  bad[5].dst_size = (size_t)b.t[5].db - 1;
  CHECK_FAILS(RELAYOUT_ERR_BUFFER, "job 5: the destination buffer holds",
              relayout_plans_run(bad, 6, &e_));
  memcpy(bad, b.jobs, sizeof bad);
  bad[1].src_size = (size_t)b.t[1].sb - 1;
  CHECK_FAILS(RELAYOUT_ERR_BUFFER, "job 1: the source buffer holds",
              relayout_plans_run(bad, 6, &e_));
  /* Job 5 reads the last byte of job 2's destination. */
  memcpy(bad, b.jobs, sizeof bad);
  bad[5].src = b.t[2].got.data + b.t[2].db - 1;
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT,
              "job 5's source overlaps job 2's destination",
              relayout_plans_run(bad, 6, &e_));
  /* Jobs 0 and 1 write one array: side by side, then by one byte over. */
  guarded both = guarded_alloc((size_t)(b.t[0].db + b.t[1].db), 0x5A);
  unsigned char *two = both.data;
  memcpy(bad, b.jobs, sizeof bad);
  bad[1].dst = two + b.t[0].db - 1;
  bad[0].dst = two;
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT,
              "job 1's destination overlaps job 0's destination",
              relayout_plans_run(bad, 6, &e_));
  int untouched = 1;
  for (size_t i = 0; i < both.size; i++) untouched &= two[i] == 0x5A;
  CHECK(count(&b, 0) == b.n && untouched,
        "refused batches wrote nothing: %d of %d destinations still "
        "poisoned, the shared one %s",
        count(&b, 0), b.n, untouched ? "too" : "written");
  bad[1].dst = two + b.t[0].db;
  CHECK_OK(relayout_plans_run(bad, 2, &e_));
  CHECK(!memcmp(two, b.t[0].want.data, (size_t)b.t[0].db) &&
            !memcmp(two + b.t[0].db, b.t[1].want.data, (size_t)b.t[1].db),
        "side by side in one array: both equal the reference");
  guarded_free(&both);
  /* One job's destination over its own source. */
  relayout_job self = b.jobs[3];
  self.dst = (void *)self.src;
  self.dst_size = self.src_size;
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "the destination overlaps the source",
              relayout_plans_run(&self, 1, &e_));
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "the destination overlaps the source",
              relayout_plan_run(self.plan, self.dst, self.dst_size, self.src,
                                self.src_size, &e_));
  /* Sources may be shared: jobs 0 and 8 of a batch of 9 read one array. */
  batch_close(&b);
  batch_open(&b, e, 9, 0);
  b.jobs[8].src = b.jobs[0].src; /* the same conversion as job 0 */
  memcpy(b.t[8].want.data, b.t[0].want.data, (size_t)b.t[0].db);
  CHECK_OK(relayout_plans_run(b.jobs, 9, &e_));
  CHECK(count(&b, 1) == 9, "a shared source: %d of 9 equal the reference",
        count(&b, 1));
  CHECK_OK(relayout_plans_run(b.jobs, 0, &e_));
  batch_close(&b);
  relayout_plan_free(foreign);
  relayout_engine_free(other);
  relayout_engine_free(e);
}

/* The reference engine runs a batch too. */
static void reference(void) {
  relayout_engine *e = engine("ref", NULL);
  batch b;
  batch_open(&b, e, NCONV, 0);
  CHECK_OK(relayout_plans_run(b.jobs, b.n, &e_));
  CHECK(count(&b, 1) == b.n, "reference engine: %d of %d", count(&b, 1), b.n);
  batch_close(&b);
  relayout_engine_free(e);
}

int main(void) {
  device = getenv("RELAYOUT_TEST_DEVICE");
  if (!device) device = "cpu";
  converts();
  staged();
  groups();
  refusals();
  reference();
  return check_summary();
}
