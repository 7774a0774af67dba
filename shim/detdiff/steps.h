/* detdiff's first line for framework records (steps.c): the first
 * differing training step and parameter, and the first differing
 * framework op with its Python file:line, from the records the Python
 * start-up hook writes (framework.step, framework.op; docs/frameworks.md).
 */
#ifndef DETDIFF_STEPS_H
#define DETDIFF_STEPS_H

#include <stdio.h>

#include "diff.h"

struct steps_found {
    int found;
    const struct diff_item *item; /* the item whose thread pair holds it */
    const detshim_record *ra, *rb; /* NULL on the side that lacks it */
    size_t index;                  /* its place among the thread's such records */
    int operand;                   /* first differing operand, -1 if none */
};

/* The first pair of step (op) records that differ, in the thread pairs of
 * r's items in order. Returns 1 with *out set, 0 if none differ, or a
 * DETSHIM_ERR_* code when a file cannot be read again. Records are owned
 * by the runs. */
int steps_first_step(const struct diff_result *r, struct steps_found *out);
int steps_first_op(const struct diff_result *r, struct steps_found *out);

/* The parameter `name` of r, or NULL. */
const detshim_param *steps_param(const detshim_record *r, const char *name);
/* The name of the first differing operand (a parameter's name in a
 * step record), or NULL. */
const char *steps_operand_name(const struct steps_found *s);

/* "first differing step: N, parameter NAME" and "first differing op: OP
 * at FILE:LINE in FUNCTION (...)" lines, each only where found. */
void steps_text(FILE *f, const struct diff_result *r);
/* ,"first_step":{...} or null, and ,"first_op":{...} or null. */
void steps_json(FILE *f, const struct diff_result *r);

#endif
