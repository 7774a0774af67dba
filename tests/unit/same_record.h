/* Two records read back from traces are the same but for their sequence
 * numbers: api, params (by type), operands (digests included), the notes,
 * and with SAME_SITE the count of call-site frames (a record made through
 * another function of the shim has another call site). For the tests
 * that make one record two ways. Include after <cmocka.h> and detshim.h.
 */
#ifndef DETSHIM_UNIT_SAME_RECORD_H
#define DETSHIM_UNIT_SAME_RECORD_H

#include <string.h>

enum { ANY_SITE, SAME_SITE };

static void assert_same_record(const detshim_record *a, const detshim_record *b, int site)
{
    assert_string_equal(a->api, b->api);
    assert_int_equal(a->nparams, b->nparams);
    for (int i = 0; i < a->nparams; i++) {
        const detshim_param *x = &a->params[i], *y = &b->params[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->type, y->type);
        if (x->type == TRACE_PARAM_STR)
            assert_string_equal(x->v.s, y->v.s);
        else if (x->type == TRACE_PARAM_INT)
            assert_true(x->v.i == y->v.i);
        else
            assert_memory_equal(&x->v, &y->v, sizeof x->v);
    }
    assert_int_equal(a->noperands, b->noperands);
    for (int i = 0; i < a->noperands; i++) {
        assert_string_equal(a->operands[i].name, b->operands[i].name);
        assert_int_equal(a->operands[i].role, b->operands[i].role);
        assert_int_equal(a->operands[i].elem_size, b->operands[i].elem_size);
        assert_true(a->operands[i].count == b->operands[i].count);
        assert_true(a->operands[i].digest.lo == b->operands[i].digest.lo &&
                    a->operands[i].digest.hi == b->operands[i].digest.hi);
    }
    if (site == SAME_SITE)
        assert_int_equal(a->nframes, b->nframes);
    assert_int_equal(a->nnotes, b->nnotes);
    for (int i = 0; i < a->nnotes; i++) {
        assert_string_equal(a->notes[i].key, b->notes[i].key);
        assert_string_equal(a->notes[i].value, b->notes[i].value);
    }
}

#endif
