/* The trace round trip: what the writer records, the reader gives back,
 * with the same chain and root; a cut or damaged file reads up to its last
 * whole frame; hostile bytes never crash the reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <openssl/evp.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "detshim.h"
#include "detshim/trace_format.h"
#include "trace/chain.h"
#include "core/core.h"
#include "trace/digest.h"
#include "core/lineage.h"
#include "trace/trace.h"
#include "trace/trace_internal.h"
#include "trace/sha256.h"
#include "unit_trace.h"

static char dir[] = "/tmp/detshim-test-trace-XXXXXX";
static char path[600];
static unsigned char *file;
static size_t file_len;

static void record_call(int i)
{
    struct trace_rec r;
    double x[4] = { 1, 2, 3, (double)i };
    float cf[2] = { 1.5f, -2.5f };
    double cd[2] = { 0.25, -0.125 };
    trace_rec_begin(&r, i % 2 ? "cblas_dgemm" : "ddot_");
    trace_rec_int(&r, "m", 100 + i);
    trace_rec_char(&r, "transa", 'T');
    trace_rec_f32(&r, "alpha", 0.1f);
    trace_rec_f64(&r, "beta", -3.75);
    trace_rec_c64(&r, "calpha", cf);
    trace_rec_c128(&r, "zbeta", cd);
    trace_rec_str(&r, "layout", "row");
    trace_rec_operand(&r, "x", TRACE_ROLE_IN, digest_vector(x, 4, 1, 8), 4, 8);
    trace_rec_operand(&r, "y", TRACE_ROLE_OUT, digest_vector(x, 2, 2, 8), 2, 8);
    trace_rec_note(&r, "blas.mode", "passthrough");
    trace_rec_commit(&r);
}

/* The whole program runs a second time (main) with TEST_TRACE_EVP set to
 * the root the first run's trace has: that run writes and reads its trace
 * on the OpenSSL path (a CPU without SHA-NI), and its root must be the
 * same. */
static const char *evp_root;
static char first_root[65];

/* Writes a three-record trace with the real writer, once per test run. */
static int setup(void **state)
{
    (void)state;
    evp_root = getenv("TEST_TRACE_EVP");
    if (evp_root)
        chain_set_fast(0);
    if (unit_trace_start(dir, 4) != 0)
        return -1;
    for (int i = 0; i < 3; i++)
        record_call(i);
    trace_process_flush_all();
    snprintf(path, sizeof path, "%s/main.dtrace", dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    file_len = (size_t)ftell(f);
    rewind(f);
    file = malloc(file_len);
    int ok = fread(file, 1, file_len, f) == file_len;
    fclose(f);
    return ok ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(file);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *write_variant(const char *name, const unsigned char *data, size_t len)
{
    static char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
    return p;
}

static void test_reader_returns_what_the_writer_recorded(void **state)
{
    (void)state;
    detshim_run *run;
    char err[512] = "";
    assert_int_equal(detshim_run_load(path, &run, err, sizeof err), 0);
    assert_int_equal(run->nprocesses, 1);
    detshim_process *p = &run->processes[0];
    detshim_hex32(p->root, first_root);
    if (evp_root) /* written on the OpenSSL path: the SHA-NI run's root */
        assert_string_equal(first_root, evp_root);
    assert_string_equal(p->name, "main");
    assert_false(p->truncated);
    assert_string_equal(detshim_field_get(p, TRACE_FIELD_POLICY_NAME), "unit");
    assert_int_equal(p->nthreads, 1);
    detshim_thread *t = &p->threads[0];
    assert_int_equal(t->nrecords, 3);
    assert_true(t->end_seen && t->end_matches);
    detshim_record *r = &t->records[1];
    assert_int_equal(r->seq, 1);
    assert_string_equal(r->api, "cblas_dgemm");
    assert_int_equal(r->nparams, 7);
    assert_int_equal(r->params[0].v.i, 101);
    assert_int_equal(r->params[1].v.c, 'T');
    assert_true(r->params[2].v.f == (double)0.1f);
    assert_true(r->params[3].v.f == -3.75);
    assert_true(r->params[4].v.z[0] == 1.5 && r->params[4].v.z[1] == -2.5);
    assert_true(r->params[5].v.z[0] == 0.25 && r->params[5].v.z[1] == -0.125);
    assert_string_equal(r->params[6].v.s, "row");
    assert_int_equal(r->noperands, 2);
    double x[4] = { 1, 2, 3, 1 };
    detshim_digest d = digest_vector(x, 4, 1, 8);
    assert_true(r->operands[0].digest.lo == d.lo && r->operands[0].digest.hi == d.hi);
    assert_int_equal(r->operands[0].role, TRACE_ROLE_IN);
    assert_int_equal(r->operands[1].count, 2);
    assert_int_equal(r->nnotes, 1);
    assert_string_equal(r->notes[0].value, "passthrough");
    /* Linked into this program, the shim counts the test's own frames as
     * its own and skips them: the first frame left is cmocka's. */
    assert_true(r->nframes >= 1);
    const char *module, *symbol;
    assert_int_equal(detshim_site_lookup(p, &r->frames[0], &module, &symbol), 0);
    assert_string_equal(module, "libcmocka.so.0");
    detshim_run_free(run);
}

static void test_chain_head_is_sha256_over_the_record_hashes(void **state)
{
    (void)state;
    detshim_run *run;
    char err[512];
    assert_int_equal(detshim_run_load(path, &run, err, sizeof err), 0);
    detshim_process *p = &run->processes[0];
    detshim_thread *t = &p->threads[0];
    /* Recompute independently: each record's hash is XXH3-128 of its
     * payload; per window of p->window records, d = SHA256(seed || the
     * hashes); the head is s0, then s = SHA256(s || d). */
    uint8_t d[32], s[32];
    chain_stream_start(s);
    size_t nwin = 0;
    assert_true(p->window >= 1);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    assert_non_null(md);
    for (size_t i = 0; i < t->nrecords; i++) {
        if (i % p->window == 0) {
            assert_true(EVP_DigestInit_ex(md, EVP_sha256(), NULL));
            EVP_DigestUpdate(md, TRACE_CHAIN_SEED, strlen(TRACE_CHAIN_SEED));
        }
        size_t off = t->records[i].file_offset;
        uint32_t len = (uint32_t)file[off] | (uint32_t)file[off + 1] << 8 |
                       (uint32_t)file[off + 2] << 16 | (uint32_t)file[off + 3] << 24;
        XXH128_hash_t h = XXH3_128bits(file + off + TRACE_FRAME_HEADER_LEN, len);
        uint8_t hash[16];
        memcpy(hash, &h.low64, 8);
        memcpy(hash + 8, &h.high64, 8);
        assert_memory_equal(t->records[i].digest, hash, 16); /* the record's identity */
        EVP_DigestUpdate(md, hash, 16);
        if ((i + 1) % p->window == 0 || i + 1 == t->nrecords) {
            unsigned n = 0;
            assert_true(EVP_DigestFinal_ex(md, d, &n));
            chain_stream_fold(s, d);
            nwin++;
        }
    }
    EVP_MD_CTX_free(md);
    assert_memory_equal(s, t->head, 32);
    assert_int_equal(t->nwindows, nwin);
    assert_int_equal(t->nsummary, 0);
    assert_int_equal(t->count, t->nrecords);
    detshim_run_free(run);
}

/* The trace was written on SHA-NI where the CPU has it; read on the
 * OpenSSL path (chain_set_fast(0): a CPU without SHA-NI), its heads and
 * root must come out the same and match what the writer committed. */
static void test_openssl_path_reads_the_same_heads_and_root(void **state)
{
    (void)state;
    detshim_run *fast_run, *evp_run;
    char err[512];
    assert_int_equal(detshim_run_load(path, &fast_run, err, sizeof err), 0);
    int had = chain_set_fast(0);
    int rc = detshim_run_load(path, &evp_run, err, sizeof err);
    chain_set_fast(had);
    assert_int_equal(rc, 0);
    detshim_thread *a = &fast_run->processes[0].threads[0], *b = &evp_run->processes[0].threads[0];
    assert_true(b->end_seen && b->end_matches);
    assert_memory_equal(a->head, b->head, 32);
    assert_memory_equal(fast_run->processes[0].root, evp_run->processes[0].root, 32);
    detshim_run_free(fast_run);
    detshim_run_free(evp_run);
}

static void test_cut_file_reads_to_last_whole_record_and_says_truncated(void **state)
{
    (void)state;
    detshim_run *run;
    char err[512];
    assert_int_equal(detshim_run_load(path, &run, err, sizeof err), 0);
    size_t third = run->processes[0].threads[0].records[2].file_offset;
    detshim_run_free(run);
    /* Cut in the middle of the third record. */
    const char *cut = write_variant("cut.trace", file, third + 20);
    assert_int_equal(detshim_run_load(cut, &run, err, sizeof err), 0);
    detshim_process *p = &run->processes[0];
    assert_true(p->truncated);
    assert_non_null(strstr(p->trouble, "cut short"));
    assert_int_equal(p->threads[0].nrecords, 2);
    detshim_run_free(run);
}

static void test_a_whole_trace_is_complete_and_its_file_is_0600(void **state)
{
    (void)state;
    detshim_run *run;
    char err[512];
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(detshim_run_load(path, &run, err, sizeof err), 0);
    assert_false(run->processes[0].truncated);
    detshim_run_free(run);
}

/* Runs last: it marks the shared trace. */
static void test_incomplete_mark_is_read_back_with_its_reason_records_kept(void **state)
{
    (void)state;
    trace_incomplete("a reason the reader must show");
    detshim_run *run;
    char err[512];
    assert_int_equal(detshim_run_load(path, &run, err, sizeof err), 0);
    detshim_process *p = &run->processes[0];
    assert_true(p->truncated);
    assert_non_null(strstr(p->trouble, "marked it incomplete: a reason the reader must show"));
    assert_int_equal(p->threads[0].nrecords, 3);
    detshim_run_free(run);
}

static void test_flipped_byte_stops_reading_at_the_damaged_frame(void **state)
{
    (void)state;
    detshim_run *run;
    char err[512];
    assert_int_equal(detshim_run_load(path, &run, err, sizeof err), 0);
    size_t second = run->processes[0].threads[0].records[1].file_offset;
    detshim_run_free(run);
    unsigned char *copy = malloc(file_len);
    memcpy(copy, file, file_len);
    copy[second + TRACE_FRAME_HEADER_LEN + 12] ^= 1;
    const char *bad = write_variant("flip.trace", copy, file_len);
    free(copy);
    assert_int_equal(detshim_run_load(bad, &run, err, sizeof err), 0);
    assert_true(run->processes[0].truncated);
    assert_non_null(strstr(run->processes[0].trouble, "damaged frame"));
    assert_int_equal(run->processes[0].threads[0].nrecords, 1);
    detshim_run_free(run);
}

static void test_not_a_trace_and_other_versions_are_refused(void **state)
{
    (void)state;
    detshim_run *run;
    char err[512];
    const char *junk = write_variant("junk.trace", (const unsigned char *)"hello world\n", 12);
    assert_int_equal(detshim_run_load(junk, &run, err, sizeof err), DETSHIM_ERR_FORMAT);
    assert_non_null(strstr(err, "not a detshim trace"));
    unsigned char *copy = malloc(file_len);
    memcpy(copy, file, file_len);
    copy[8] = 9; /* format version 9 */
    const char *v9 = write_variant("v9.trace", copy, file_len);
    free(copy);
    assert_int_equal(detshim_run_load(v9, &run, err, sizeof err), DETSHIM_ERR_VERSION);
    assert_non_null(strstr(err, "version 9"));
}

/* A fixed LCG: libc's srand is intercepted by the shim objects linked in. */
static unsigned damage_state = 12345;

static int damage_rand(void)
{
    damage_state = damage_state * 1103515245u + 12345u;
    return (int)(damage_state >> 1);
}

/* The trace with 1 to 8 random bytes changed, and every third round cut
 * at a random length, written through `copy` (file_len bytes). */
static const char *write_damaged(unsigned char *copy, int round)
{
    memcpy(copy, file, file_len);
    int flips = 1 + damage_rand() % 8;
    for (int i = 0; i < flips; i++)
        copy[(size_t)damage_rand() % file_len] = (unsigned char)damage_rand();
    size_t len = round % 3 ? file_len : (size_t)damage_rand() % file_len;
    return write_variant("fuzz.trace", copy, len);
}

static void test_random_damage_never_crashes_the_reader(void **state)
{
    (void)state;
    unsigned char *copy = malloc(file_len);
    for (int round = 0; round < 3000; round++) {
        const char *p = write_damaged(copy, round);
        detshim_run *run;
        char err[512];
        if (detshim_run_load(p, &run, err, sizeof err) == 0)
            detshim_run_free(run);
    }
    free(copy);
}

/* Every record a cursor over `opened` gives equals the loaded one at the
 * same place; the processes agree on counts, heads, roots and trouble. */
static void assert_open_reads_as_load(const detshim_run *loaded, const detshim_run *opened)
{
    assert_int_equal(opened->nprocesses, loaded->nprocesses);
    assert_memory_equal(opened->root, loaded->root, 32);
    for (int i = 0; i < loaded->nprocesses; i++) {
        const detshim_process *pl = &loaded->processes[i], *po = &opened->processes[i];
        assert_int_equal(po->truncated, pl->truncated);
        assert_int_equal(po->valid_bytes, pl->valid_bytes);
        assert_string_equal(po->trouble, pl->trouble);
        assert_int_equal(po->nthreads, pl->nthreads);
        for (int t = 0; t < pl->nthreads; t++) {
            const detshim_thread *tl = &pl->threads[t], *to = &po->threads[t];
            assert_null(to->records);
            assert_int_equal(to->nrecords, tl->nrecords);
            assert_memory_equal(to->head, tl->head, 32);
            detshim_cursor *c;
            const detshim_record *r;
            assert_int_equal(detshim_cursor_open(po, to, &c), 0);
            for (size_t k = 0; k < tl->nrecords; k++) {
                assert_int_equal(detshim_cursor_next(c, &r), 1);
                assert_memory_equal(r->digest, tl->records[k].digest, sizeof r->digest);
                assert_int_equal(r->file_offset, tl->records[k].file_offset);
                assert_string_equal(r->api, tl->records[k].api);
            }
            assert_int_equal(detshim_cursor_next(c, &r), 0);
            detshim_cursor_close(c);
        }
    }
}

static void test_opened_run_reads_through_cursors_what_loading_reads(void **state)
{
    (void)state;
    detshim_run *loaded, *opened;
    char err[512] = "";
    assert_int_equal(detshim_run_load(path, &loaded, err, sizeof err), 0);
    assert_int_equal(detshim_run_open(path, &opened, err, sizeof err), 0);
    assert_open_reads_as_load(loaded, opened);
    /* A marked record and the current one are kept past the cursor, and
     * the call site is named from the file on demand. */
    const detshim_process *p = &opened->processes[0];
    detshim_cursor *c;
    const detshim_record *r, *kept, *marked;
    assert_int_equal(detshim_cursor_open(p, &p->threads[0], &c), 0);
    assert_int_equal(detshim_cursor_next(c, &r), 1);
    assert_int_equal(detshim_cursor_keep(c, 1, &marked), 0);
    assert_null(marked);
    detshim_cursor_mark(c);
    assert_int_equal(detshim_cursor_next(c, &r), 1);
    assert_int_equal(detshim_cursor_keep(c, 0, &kept), 0);
    assert_int_equal(detshim_cursor_keep(c, 1, &marked), 0);
    detshim_cursor_close(c);
    assert_int_equal(kept->seq, 1);
    assert_string_equal(kept->api, "cblas_dgemm");
    assert_int_equal(kept->params[0].v.i, 101);
    assert_memory_equal(kept->digest, loaded->processes[0].threads[0].records[1].digest,
                        sizeof kept->digest);
    assert_int_equal(marked->seq, 0);
    const char *module, *symbol;
    assert_true(kept->nframes >= 1);
    assert_int_equal(detshim_site_lookup(p, &kept->frames[0], &module, &symbol), 0);
    assert_string_equal(module, "libcmocka.so.0");
    detshim_run_free(opened);
    detshim_run_free(loaded);
}

static void test_random_damage_reads_alike_opened_or_loaded(void **state)
{
    (void)state;
    unsigned char *copy = malloc(file_len);
    for (int round = 0; round < 1000; round++) {
        const char *p = write_damaged(copy, round);
        detshim_run *loaded, *opened;
        char err[512];
        int rl = detshim_run_load(p, &loaded, err, sizeof err);
        assert_int_equal(detshim_run_open(p, &opened, err, sizeof err), rl);
        if (rl != 0)
            continue;
        assert_open_reads_as_load(loaded, opened);
        detshim_run_free(opened);
        detshim_run_free(loaded);
    }
    free(copy);
}

static void test_process_root_ignores_thread_order(void **state)
{
    (void)state;
    struct chain_thread a[2], b[2];
    memset(a, 0, sizeof a);
    a[0].count = 3;
    a[0].head[0] = 7;
    a[1].count = 5;
    a[1].head[0] = 2;
    b[0] = a[1];
    b[1] = a[0];
    struct chain_field f = { 3, 4, "main" };
    uint8_t ra[32], rb[32];
    chain_process_root(&f, 1, a, 2, ra);
    chain_process_root(&f, 1, b, 2, rb);
    assert_memory_equal(ra, rb, 32);
    a[0].count = 4; /* one more record on one thread changes the root */
    chain_process_root(&f, 1, a, 2, rb);
    assert_memory_not_equal(ra, rb, 32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_returns_what_the_writer_recorded),
        cmocka_unit_test(test_chain_head_is_sha256_over_the_record_hashes),
        cmocka_unit_test(test_openssl_path_reads_the_same_heads_and_root),
        cmocka_unit_test(test_cut_file_reads_to_last_whole_record_and_says_truncated),
        cmocka_unit_test(test_flipped_byte_stops_reading_at_the_damaged_frame),
        cmocka_unit_test(test_not_a_trace_and_other_versions_are_refused),
        cmocka_unit_test(test_random_damage_never_crashes_the_reader),
        cmocka_unit_test(test_process_root_ignores_thread_order),
        cmocka_unit_test(test_opened_run_reads_through_cursors_what_loading_reads),
        cmocka_unit_test(test_random_damage_reads_alike_opened_or_loaded),
        cmocka_unit_test(test_a_whole_trace_is_complete_and_its_file_is_0600),
        cmocka_unit_test(test_incomplete_mark_is_read_back_with_its_reason_records_kept),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    if (getenv("TEST_TRACE_EVP"))
        return rc;
    if (!sha256_fast_available()) {
        print_message("no SHA-NI here: the trace above was written on the OpenSSL path "
                      "already, and is not compared with a SHA-NI one\n");
        return rc;
    }
    /* Again, written on the OpenSSL path; its root must be first_root. */
    pid_t pid = fork();
    if (pid == 0) {
        setenv("TEST_TRACE_EVP", first_root, 1);
        execl("/proc/self/exe", "test_trace", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        print_message("the run on the OpenSSL path failed (status %d)\n", status);
        return rc ? rc : 1;
    }
    return rc;
}
