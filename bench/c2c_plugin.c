/*
 * Cache-line sharing between threads, counted in emulation: a plugin for
 * QEMU's user-mode emulator (qemu-x86_64, QEMU 7.2's plugin API, version
 * 1) for machines without the hardware memory events `perf c2c` needs
 * (virtual machines). It sees every load and store the program's threads
 * make (not the kernel's copies into its buffers) and keeps, for each
 * 64-byte line, which threads hold a copy and which one modified it last,
 * as a MESI cache would. Two events are counted, each against the
 * instruction (its function) that caused it:
 *
 *   hitm   a load or store of a line another thread modified last: the line
 *          moves from that thread's cache (perf c2c's HITM);
 *   inval  a store to a line other threads hold a clean copy of: theirs are
 *          invalidated.
 *
 * A hot path that shares no line between threads causes neither per I/O.
 * bench/c2c.py runs iolab under it at two runtimes and divides the growth
 * of each count by the growth of the I/Os, so that what setup and the end
 * of the run share (handing a clone its state, merging its results) drops
 * out.
 *
 *   cc -O2 -shared -fPIC -o c2c_plugin.so bench/c2c_plugin.c
 *   qemu-x86_64 -plugin ./c2c_plugin.so,out=FILE PROGRAM ARGS...
 *
 * FILE gets "total hitm H inval I" and then one "site hitm H inval I SYMBOL"
 * line per function, most events first. The declarations below are the
 * plugin API's, written out so that no QEMU headers are needed.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct {
    const char *target_name;
    struct {
        int min;
        int cur;
    } version;
    bool system_emulation;
    union {
        struct {
            int smp_vcpus;
            int max_vcpus;
        } system;
    };
} qemu_info_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int, qemu_plugin_meminfo_t, uint64_t, void *);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t, void *);
extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, qemu_plugin_vcpu_tb_trans_cb_t);
extern void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *, qemu_plugin_vcpu_mem_cb_t,
                                             enum qemu_plugin_cb_flags, enum qemu_plugin_mem_rw,
                                             void *);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, qemu_plugin_udata_cb_t, void *);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
extern struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *, size_t);
extern uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *);
extern const char *qemu_plugin_insn_symbol(const struct qemu_plugin_insn *);
extern bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* Lines: open addressing on the line's address (+1, so 0 is empty). The
 * state packs the threads holding a copy (bits 0 to 55, thread index mod
 * 56) and the thread that modified it last, plus one (bits 56 to 63; 0:
 * the line is clean). */
#define LINE_BITS 24
#define LINES (1u << LINE_BITS)
#define HOLDERS ((1ull << 56) - 1)
static _Atomic uint64_t line_key[LINES];
static _Atomic uint64_t line_state[LINES];
static _Atomic uint64_t lines_full;

/* Sites: one per function (by symbol name), shared by its instructions. */
struct site {
    const char *sym;
    _Atomic uint64_t hitm, inval;
    struct site *next;
};
static struct site *sites;
static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;
static char *out_path;

static _Atomic uint64_t *state_of(uint64_t line)
{
    uint64_t key = line + 1;
    uint32_t i = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - LINE_BITS));
    for (uint32_t probe = 0; probe < 64; probe++, i = (i + 1) & (LINES - 1)) {
        uint64_t k = atomic_load_explicit(&line_key[i], memory_order_acquire);
        if (k == key)
            return &line_state[i];
        if (k == 0) {
            uint64_t empty = 0;
            if (atomic_compare_exchange_strong(&line_key[i], &empty, key) || empty == key)
                return &line_state[i];
        }
    }
    atomic_fetch_add(&lines_full, 1);
    return NULL;
}

static void on_mem(unsigned int cpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
    struct site *s = udata;
    bool store = qemu_plugin_mem_is_store(info);
    _Atomic uint64_t *st = state_of(vaddr >> 6);
    if (!st)
        return;
    uint64_t me = 1ull << (cpu % 56), owner_me = (uint64_t)(cpu % 56 + 1) << 56;
    uint64_t old = atomic_load_explicit(st, memory_order_relaxed);
    for (;;) {
        uint64_t owner = old & ~HOLDERS, holders = old & HOLDERS;
        bool hitm = owner != 0 && owner != owner_me;
        bool inval = store && !hitm && (holders & ~me) != 0;
        uint64_t next;
        if (store)
            next = owner_me | me;
        else if (hitm)
            next = holders | me; /* the modified line is shared now, clean */
        else
            next = old | me;
        if (next == old)
            return;
        if (atomic_compare_exchange_weak_explicit(st, &old, next, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            if (hitm)
                atomic_fetch_add_explicit(&s->hitm, 1, memory_order_relaxed);
            if (inval)
                atomic_fetch_add_explicit(&s->inval, 1, memory_order_relaxed);
            return;
        }
    }
}

static struct site *site_of(const char *sym)
{
    if (!sym)
        sym = "?";
    pthread_mutex_lock(&sites_lock);
    struct site *s = sites;
    while (s && strcmp(s->sym, sym) != 0)
        s = s->next;
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s)
            abort();
        s->sym = strdup(sym);
        s->next = sites;
        sites = s;
    }
    pthread_mutex_unlock(&sites_lock);
    return s;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
                                         site_of(qemu_plugin_insn_symbol(insn)));
    }
}

static int by_events(const void *a, const void *b)
{
    const struct site *x = *(struct site *const *)a, *y = *(struct site *const *)b;
    uint64_t ex = x->hitm + x->inval, ey = y->hitm + y->inval;
    return ex < ey ? 1 : ex > ey ? -1 : 0;
}

static void on_exit_(qemu_plugin_id_t id, void *udata)
{
    (void)id;
    (void)udata;
    size_t n = 0;
    uint64_t hitm = 0, inval = 0;
    for (struct site *s = sites; s; s = s->next, n++) {
        hitm += s->hitm;
        inval += s->inval;
    }
    struct site **all = calloc(n ? n : 1, sizeof *all);
    if (!all)
        return;
    n = 0;
    for (struct site *s = sites; s; s = s->next)
        all[n++] = s;
    qsort(all, n, sizeof *all, by_events);
    FILE *f = out_path ? fopen(out_path, "w") : stderr;
    if (!f)
        return;
    fprintf(f, "total hitm %llu inval %llu lines_untracked %llu\n", (unsigned long long)hitm,
            (unsigned long long)inval, (unsigned long long)lines_full);
    for (size_t i = 0; i < n && all[i]->hitm + all[i]->inval > 0; i++)
        fprintf(f, "site hitm %llu inval %llu %s\n", (unsigned long long)all[i]->hitm,
                (unsigned long long)all[i]->inval, all[i]->sym);
    if (f != stderr)
        fclose(f);
    free(all);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
                                                              const qemu_info_t *info, int argc,
                                                              char **argv)
{
    if (info->system_emulation) {
        fprintf(stderr, "c2c_plugin: user-mode emulation only (qemu-x86_64)\n");
        return -1;
    }
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0) {
            out_path = strdup(argv[i] + 4);
        } else {
            fprintf(stderr, "c2c_plugin: unknown argument %s (out=FILE)\n", argv[i]);
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_exit_, NULL);
    return 0;
}
