/* Filling a struct trace_rec (trace.h): the interceptors' calls that add
 * a record's parameters, operands and notes before trace_rec_commit
 * (writer.c) encodes it. Nothing here copies a string or allocates: the
 * record points at its caller's values until the commit.
 */
#include <assert.h>
#include <string.h>

#include "trace/trace.h"

void trace_rec_begin(struct trace_rec *r, const char *api)
{
    r->api = api;
    r->stream = TRACE_STREAM_CALLS;
    r->nparams = r->noperands = r->nnotes = 0;
}

static void add_param(struct trace_rec *r, const char *name, uint8_t type, uint64_t a, uint64_t b,
                      const char *s)
{
    assert(r->nparams < TRACE_MAX_PARAMS);
    r->params[r->nparams].name = name;
    r->params[r->nparams].type = type;
    r->params[r->nparams].a = a;
    r->params[r->nparams].b = b;
    r->params[r->nparams].s = s;
    r->nparams++;
}

void trace_rec_int(struct trace_rec *r, const char *name, int64_t v)
{
    add_param(r, name, TRACE_PARAM_INT, (uint64_t)v, 0, NULL);
}

void trace_rec_char(struct trace_rec *r, const char *name, char v)
{
    add_param(r, name, TRACE_PARAM_CHAR, (uint8_t)v, 0, NULL);
}

void trace_rec_f32(struct trace_rec *r, const char *name, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    add_param(r, name, TRACE_PARAM_F32, bits, 0, NULL);
}

void trace_rec_f64(struct trace_rec *r, const char *name, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    add_param(r, name, TRACE_PARAM_F64, bits, 0, NULL);
}

void trace_rec_c64(struct trace_rec *r, const char *name, const void *v)
{
    uint32_t bits[2];
    memcpy(bits, v, 8);
    add_param(r, name, TRACE_PARAM_C64, bits[0], bits[1], NULL);
}

void trace_rec_c128(struct trace_rec *r, const char *name, const void *v)
{
    uint64_t bits[2];
    memcpy(bits, v, 16);
    add_param(r, name, TRACE_PARAM_C128, bits[0], bits[1], NULL);
}

void trace_rec_str(struct trace_rec *r, const char *name, const char *v)
{
    add_param(r, name, TRACE_PARAM_STR, 0, 0, v);
}

void trace_rec_operand(struct trace_rec *r, const char *name, int role, detshim_digest d,
                       uint64_t count, int elem_size)
{
    assert(r->noperands < TRACE_MAX_OPERANDS);
    r->operands[r->noperands].name = name;
    r->operands[r->noperands].role = (uint8_t)role;
    r->operands[r->noperands].elem_size = (uint8_t)elem_size;
    r->operands[r->noperands].count = count;
    r->operands[r->noperands].digest = d;
    r->operands[r->noperands].later = (struct trace_deferred){ 0 };
    r->noperands++;
}

void trace_rec_stream(struct trace_rec *r, int stream)
{
    r->stream = stream;
}

void trace_rec_note(struct trace_rec *r, const char *key, const char *value)
{
    assert(r->nnotes < TRACE_MAX_NOTES);
    r->notes[r->nnotes].key = key;
    r->notes[r->nnotes].value = value;
    r->nnotes++;
}

void trace_rec_operand_deferred(struct trace_rec *r, const char *name, int role,
                                struct trace_deferred later, uint64_t count, int elem_size)
{
    /* The digest is set when it completes; what is here is never written. */
    trace_rec_operand(r, name, role, (detshim_digest){ 0, 0 }, count, elem_size);
    r->operands[r->noperands - 1].later = later;
}
