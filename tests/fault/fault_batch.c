/* fault_batch.c - one relayout_plans_run batch on the CPU device, for the
 * fault sweep (test_faults.sh): prints "same" when every output equals the
 * reference's, "error: ..." when a call failed with a message; exits 1 only
 * for wrong bytes or a call that failed without saying why. */
#include "relayout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NJOBS = 3 };

int main(void) {
  static const struct {
    const char *from, *to;
    relayout_dtype t;
    int rank;
    int64_t shape[4];
  } cases[NJOBS] = {{"NCHW", "NC1HWC0", RELAYOUT_F16, 4, {2, 17, 5, 3}},
                    {"ND", "FRACTAL_NZ", RELAYOUT_F32, 2, {33, 20}},
                    {"NCHW", "NHWC", RELAYOUT_U8, 4, {3, 5, 7, 9}}};
  relayout_error err = {""};
  relayout_engine *e = NULL;
  relayout_plan *plans[NJOBS] = {0};
  relayout_job jobs[NJOBS];
  unsigned char *want[NJOBS] = {0}, *src[NJOBS] = {0}, *dst[NJOBS] = {0};
  relayout_engine_options o = {.size = sizeof o, .device = "cpu"};
  int rc = 0, ok = !relayout_engine_create(&e, &o, &err);
  for (int i = 0; ok && i < NJOBS; i++) {
    relayout_layout *a = NULL, *b = NULL;
    relayout_desc s, d;
    int64_t sb = 0, db = 0;
    ok = !relayout_layout_parse(&a, cases[i].from, &err) &&
         !relayout_layout_parse(&b, cases[i].to, &err) &&
         !relayout_bind(&s, &d, a, b, cases[i].t, cases[i].rank, cases[i].shape,
                        NULL, 0, &err) &&
         !relayout_desc_size_bytes(&sb, &s, &err) &&
         !relayout_desc_size_bytes(&db, &d, &err) &&
         (src[i] = malloc((size_t)sb)) && (want[i] = malloc((size_t)db)) &&
         (dst[i] = malloc((size_t)db));
    for (int64_t k = 0; ok && k < sb; k++)
      src[i][k] = (unsigned char)(k * 131 + 7);
    ok = ok &&
         !relayout_convert_ref(&d, want[i], (size_t)db, &s, src[i], (size_t)sb,
                               &err) &&
         !relayout_plan_create(&plans[i], e, &d, &s, &err);
    if (ok) {
      memset(dst[i], 0xA5, (size_t)db);
      jobs[i] =
          (relayout_job){plans[i], dst[i], (size_t)db, src[i], (size_t)sb};
    }
    relayout_layout_free(a);
    relayout_layout_free(b);
  }
  if (ok) ok = !relayout_plans_run(jobs, NJOBS, &err);
  if (!ok) {
    printf("error: %s\n", err.message);
    rc = !*err.message;
  } else {
    int same = 1;
    for (int i = 0; i < NJOBS; i++)
      same &= !memcmp(jobs[i].dst, want[i], jobs[i].dst_size);
    const char *note = relayout_plan_note(plans[0]);
    printf("%s%s%s\n", same ? "same" : "DIFFERENT", *note ? ": " : "", note);
    rc = !same;
  }
  for (int i = 0; i < NJOBS; i++) {
    relayout_plan_free(plans[i]);
    free(dst[i]);
    free(src[i]);
    free(want[i]);
  }
  relayout_engine_free(e);
  return rc;
}
