/* test_plan.c - the planner, with no device: each case of plan_cases.h
 * plans (and generates) the kernel it asks for, as a plan on an engine of
 * its kind would, and every variant field the planner sets shows in the
 * generated source as the macro variant.h gives it; the generic cases take
 * the tile kernel on a CPU device and on a GPU */
#include "plan.h"
#include "plan_cases.h"

static int planned;

static void plan_case(const char *kind, int (*want)(const char *),
                      const char *src, const char *dst, relayout_dtype t,
                      const family *f, const int64_t *shape, size_t skew) {
  relayout_desc s, d;
  rl_desc sw, dw;
  (void)skew;
  if (!bind_pair(&s, &d, src, dst, t, f, shape)) return;
  /* as relayout_plan_create plans: widened where it can, then for the
   * kind's device; the cases are below any streaming threshold */
  if (!rl_widen(&dw, &sw, rl_cd(&d), rl_cd(&s)))
    dw = *rl_cd(&d), sw = *rl_cd(&s);
  if (!strcmp(kind, "generic")) { /* tiles on either kind of device */
    int64_t cpu_units, gpu_units;
    CHECK(!strcmp(rl_generic_kernel(&dw, &sw, 1, &cpu_units),
                  "rl_generic_tile") &&
              !strcmp(rl_generic_kernel(&dw, &sw, 0, &gpu_units),
                      "rl_generic_tile") &&
              cpu_units > 0 && gpu_units > 0,
          "%s -> %s %s: not the generic tiles", src, dst,
          relayout_dtype_name(t));
    planned++;
    return;
  }
  rl_layout_plan p;
  rl_plan_layouts(&p, &dw, &sw, strcmp(kind, "gpu") != 0,
                  !strcmp(kind, "streamed"));
  char *source = rl_codegen(&p, &dw, &sw);
  CHECK(source != NULL, "%s -> %s: no source", src, dst);
  if (!source) return;
  CHECK(!want || want(source), "%s -> %s %s (%s): not the plan the case is for",
        src, dst, relayout_dtype_name(t), kind);
  char *kernels = strstr(source, "/* common.cl");
  if (kernels) *kernels = 0; /* the generated header alone */
  if (p.family == RL_FAMILY_LINES) {
#define RL_SHOWN(field, macro, how, meaning)                                   \
  if (how != RL_AS_PLANES)                                                     \
    CHECK((p.field > (how == RL_AS_MANY)) ==                                   \
              (define_value(source, #macro) >= 0),                             \
          "%s -> %s %s: " #field " %d, " #macro " %lld", src, dst,             \
          relayout_dtype_name(t), p.field, define_value(source, #macro));
    RL_LINES_VARIANT(RL_SHOWN)
#undef RL_SHOWN
  }
  free(source);
  planned++;
}

int main(void) {
  plan_cases(plan_case);
  printf("%d plans\n", planned);
  CHECK(planned > 300, "the cases planned (%d)", planned);
  return check_summary();
}
